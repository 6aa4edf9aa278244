"""The Heat stack request of a plan, and the checks made before a deployment.

Pure: from the plan's files (rendered ones included) and its
plan-environment, build the body of Heat's ``POST /stacks`` with the one
request builder (:func:`heatfiles.build_request`: template, files, environment
files in order, the user's parameter values last), add the computed parameters
(first) and the ones a deploy owns (last), and compare against the last
deployment's saved environment.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.common import safe_yaml, secret_masking, yaql_compat
from tripleo_flow.core.plan import container_images, heatfiles, parameter_tree, secrets

#: Parameters that must not change between deployments (changing them breaks the cloud).
IMMUTABLE_PARAMETERS = ("CephClusterFSID",)
#: The environment of the parameters a deploy owns (last: they win).
CLIENT_ENVIRONMENT = ".tripleo-flow/deploy-parameters.yaml"
#: The environment of computed parameters (first: every other value wins).
COMPUTED_ENVIRONMENT = ".tripleo-flow/computed-parameters.yaml"
#: Heat's timeout of a stack create or update, in minutes (as TripleO's client).
TIMEOUT_MINUTES = 240


def stack_request(stack: str, files: Mapping[str, bytes],
                  plan_env: Mapping[str, Any]) -> dict[str, Any]:
    """The body of ``POST /stacks`` (or ``PUT`` for an update) for a plan.

    :param stack: the stack name (the plan's name).
    :param files: every file of the plan, rendered ones included.
    :param plan_env: the parsed plan-environment.
    :raises InvalidTemplate: when the template or an environment is missing or bad,
        or a yaql expression uses ``format`` in a form yaql 3 cannot run
        (:mod:`yaql_compat` rewrites the others; the plan's files stay as they are).
    """
    root = str(plan_env.get("template") or "overcloud.yaml")
    request = yaql_compat.rewrite_request(heatfiles.build_request(files, plan_env),
                                          heatfiles.object_name, root)
    return {"stack_name": stack, **request, "timeout_mins": TIMEOUT_MINUTES}


def add_environment(request: Mapping[str, Any], name: str, parameter_defaults: Mapping[str, Any],
                    first: bool = False) -> dict[str, Any]:
    """A copy of ``request`` with one more environment of ``parameter_defaults``.

    :param name: the environment's plan-relative name (its URL is under the plan's root).
    :param first: before every other environment (its values lose to all of them)
        instead of after them (its values win).
    """
    url = heatfiles.BASE_URL + name
    envs = [u for u in request["environment_files"] if u != url]
    files = {**request["files"],
             url: safe_yaml.dump_yaml({"parameter_defaults": dict(parameter_defaults)}).decode()}
    return {**request, "files": files,
            "environment_files": [url, *envs] if first else [*envs, url]}


def client_parameters(declared: Iterable[str], stack: str, action: str,
                      deploy_identifier: int) -> dict[str, Any]:
    """The parameters a deploy sets each time (as TripleO's client), for those the
    stack tree declares: ``StackAction`` (CREATE or UPDATE), ``DeployIdentifier``
    (new each deploy, so software deployments run again), ``UpdateIdentifier``
    (empty: no minor update) and ``RootStackName``.  (The tree, not only the root:
    THT 12.1.0's common/post.yaml needs StackAction, which its root does not declare.)"""
    names = set(declared)
    values = {"StackAction": action, "DeployIdentifier": deploy_identifier,
              "UpdateIdentifier": "", "RootStackName": stack}
    return {name: value for name, value in values.items() if name in names}


def set_stack_action(request: Mapping[str, Any], action: str) -> dict[str, Any]:
    """A copy of ``request`` whose deploy parameters say ``action`` (CREATE or UPDATE),
    known once Heat says whether the stack exists."""
    url = heatfiles.BASE_URL + CLIENT_ENVIRONMENT
    text = request["files"].get(url)
    if text is None:
        return dict(request)
    env = safe_yaml.load_yaml(text, CLIENT_ENVIRONMENT) or {}
    values = dict(env.get("parameter_defaults") or {})
    if "StackAction" not in values:
        return dict(request)
    values["StackAction"] = action
    return add_environment(request, CLIENT_ENVIRONMENT, values)


@dataclass(frozen=True)
class DeployRequest:
    """A stack request ready for Heat, with what the checks found."""

    request: dict[str, Any]
    images: container_images.Prepared
    missing: list[parameter_tree.Missing]
    #: yaql expressions that may fail in Heat with some data (:func:`yaql_compat.risky`).
    risky: list[str] = field(default_factory=list)


def deploy_request(stack: str, files: Mapping[str, bytes], plan_env: Mapping[str, Any],
                   deploy_identifier: int, action: str = "CREATE") -> DeployRequest:
    """The stack request of a deploy: the plan's request, the container image
    parameters computed from ``ContainerImagePrepare`` for the image parameters
    of the stack tree (first: every value set elsewhere wins), and the parameters
    a deploy owns (last; ``action`` is the expected StackAction, which
    :func:`set_stack_action` corrects once Heat says whether the stack exists);
    then the parameters of the whole tree still without a value, and the yaql
    expressions that may fail with some data.

    :raises InvalidTemplate: when the template or an environment is missing or bad.
    :raises InvalidParameter: when ``ContainerImagePrepare`` is malformed.
    """
    root = str(plan_env.get("template") or "overcloud.yaml")
    request = stack_request(stack, files, plan_env)
    tree = parameter_tree.walk(request, root)
    images = container_images.prepare(
        [name for name in tree.declared if container_images.is_image_parameter(name)],
        effective_parameters(request).get(container_images.PARAMETER))
    request = add_environment(request, COMPUTED_ENVIRONMENT, images.parameters, first=True)
    request = add_environment(request, CLIENT_ENVIRONMENT, client_parameters(
        tree.declared, stack, action, deploy_identifier))
    missing = parameter_tree.walk(request, root).missing
    return DeployRequest(request, images, missing,
                         yaql_compat.risky(request, heatfiles.object_name, root))


def effective_parameters(request: Mapping[str, Any]) -> dict[str, Any]:
    """Parameter values the request sets, environment files merged in order."""
    values: dict[str, Any] = {}
    for path in request["environment_files"]:
        env = safe_yaml.load_yaml(request["files"][path], path) or {}
        for key in ("parameters", "parameter_defaults"):
            values.update(env.get(key) or {})
    return values


def check_against_last(request: Mapping[str, Any],
                       last_env: Mapping[str, Any] | None) -> list[str]:
    """Compare with the last deployment's saved environment; return warnings.

    :raises InvalidInput: when an immutable parameter (CephClusterFSID) changed.
    """
    if not last_env:
        return []
    now = effective_parameters(request)
    before = last_env.get("parameters") or {}
    for name in IMMUTABLE_PARAMETERS:
        if name in before and now.get(name) != before[name]:
            plan = request["stack_name"]
            change = ("" if secret_masking.is_secret_name(name)  # its values are not shown
                      else f" ({before[name]!r} -> {now.get(name)!r})")
            raise exceptions.InvalidInput(
                f"Parameter {name} changed since the last deployment{change}; it cannot "
                "change on a deployed cloud.",
                hints=[exceptions.Hint("Set it back with", "parameter.set",
                                       {"plan": plan, "name": name, "value": "..."})])
    now_names = {heatfiles.object_name(url) for url in request["environment_files"]}
    gone = [heatfiles.object_name(p) for p in last_env.get("environment_files") or []]
    return [f"Environment {p} was used by the last deployment and is not used now."
            for p in gone if p not in now_names]


def request_secrets(request: Mapping[str, Any]) -> set[str]:
    """The secret values a stack (or validate) request sends Heat: the passwords and
    secret-named parameters of its environment files, its environment and its
    parameters: all a template can make Heat's errors quote."""
    files = request.get("files") or {}
    sources = [files.get(url) for url in request.get("environment_files") or []]
    sources += [request.get("environment"), {"parameters": request.get("parameters")}]
    found: set[str] = set()
    for source in sources:
        if isinstance(source, (str, bytes)):
            try:
                source = safe_yaml.load_yaml(source, "environment")
            except exceptions.TripleoFlowError:
                continue  # Heat refuses it before any template runs
        found |= secrets.environment_secrets(source)
    return found
