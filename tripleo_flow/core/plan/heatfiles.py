"""The body of a Heat template request built from a plan's files (pure, no I/O).

The one builder of what Heat receives for a plan, used for ``validate`` (the
parameter schema) and for stack create and update (:mod:`stack_request`).
Heat finds nested templates, ``get_file`` contents and environment files only
in the request's ``files`` mapping, under the exact string the template uses.
Like heatclient's ``template_utils``, every relative reference is rewritten to
an absolute URL (under :data:`BASE_URL`, the plan's root) and the referenced
object, template or not, stored under that URL, so ``puppet/role.yaml``
referring to ``../deployed-server/node.yaml`` resolves the way it does on disk.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin

from tripleo_flow import exceptions
from tripleo_flow.common.safe_yaml import load_yaml
from tripleo_flow.core.plan import secrets
from tripleo_flow.core.plan.planenv import PLAN_ENVIRONMENT

#: Where a plan's objects live in the URLs sent to Heat.
BASE_URL = "file:///plan/"
#: The name of the environment holding plan-environment's passwords and parameter_defaults.
USER_ENVIRONMENT = ".tripleo-flow/plan-environment-parameters.yaml"
_TEMPLATE_SUFFIXES = (".yaml", ".yml", ".template")
#: Plan objects never sent to Heat as a template or a ``get_file`` (they hold the
#: plan's passwords, or its own records).
_PRIVATE_PREFIX = ".tripleo-flow/"


def _dumps(obj: Any) -> str:
    return json.dumps(obj, default=str)


def _is_template(value: Any) -> bool:
    return isinstance(value, str) and "::" not in value and value.endswith(_TEMPLATE_SUFFIXES)


def object_name(url: str) -> str:
    """The plan object of a URL made by this module (``file:///plan/a/b.yaml`` -> ``a/b.yaml``)."""
    return url[len(BASE_URL):] if url.startswith(BASE_URL) else url


class _Builder:
    def __init__(self, plan_files: Mapping[str, bytes]) -> None:
        self.plan_files = plan_files
        self.files: dict[str, str] = {}

    def read(self, url: str, referrer: str) -> bytes:
        name = object_name(url)
        if not url.startswith(BASE_URL) or name not in self.plan_files:
            raise exceptions.InvalidTemplate(
                object_name(referrer), f"it refers to {name!r}, which is not in the plan; "
                "add the file to the plan or fix the reference")
        return self.plan_files[name]

    def private(self, url: str, referrer: str, parsed: Any = None) -> bytes:
        """The object at ``url``, refused if it holds the plan's secrets: a template or
        an output reading ``plan-environment.yaml`` (or an environment holding a
        password) would put every password into the stack.  ``parsed``: its content
        is known to hold none (a template: its values are schemas)."""
        data = self.read(url, referrer)
        name = object_name(url)
        if (name == PLAN_ENVIRONMENT or name.startswith(_PRIVATE_PREFIX)
                or _holds_secrets(data if parsed is None else parsed)):
            raise exceptions.InvalidTemplate(
                object_name(referrer), f"it reads {name!r}, which holds the plan's passwords "
                "or secret parameters; a template may not read it (with get_file or as a "
                "nested template): pass the values it needs as parameters")
        return data

    def template(self, url: str, referrer: str) -> dict[str, Any]:
        """Load, rewrite and store the template at ``url``; return it."""
        data = load_yaml(self.private(url, referrer, {}), object_name(url))
        if not isinstance(data, dict):
            raise exceptions.InvalidTemplate(object_name(url), "a template must be a mapping")
        self.files[url] = ""  # reserve: recursion through cycles stops here
        self._walk(data, url)
        self.files[url] = _dumps(data)
        return data

    def _walk(self, node: Any, base: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "get_file" and isinstance(value, str):
                    url = urljoin(base, value)
                    if url not in self.files:
                        self.files[url] = self.private(url, base).decode("utf-8", "replace")
                    node[key] = url
                elif key == "type" and _is_template(value):
                    node[key] = self._nested(value, base)
                else:
                    self._walk(value, base)
        elif isinstance(node, list):
            for item in node:
                self._walk(item, base)

    def _nested(self, ref: str, base: str) -> str:
        url = urljoin(base, ref)
        if url not in self.files:
            self.template(url, base)
        return url

    def environment(self, env: dict[str, Any], url: str, base: str | None = None) -> None:
        """Rewrite the registry of ``env`` (relative to ``base``, default ``url``) and
        store it at ``url``."""
        registry = env.get("resource_registry")
        if isinstance(registry, dict):
            self._registry(registry, base or url)
        self.files[url] = _dumps(env)

    def _registry(self, registry: dict[str, Any], base: str) -> None:
        for key, value in registry.items():
            if key == "resources" and isinstance(value, dict):
                for mapping in value.values():
                    if isinstance(mapping, dict):
                        self._registry(mapping, base)
            elif _is_template(value):
                registry[key] = self._nested(value, base)


def _holds_secrets(data: Any) -> bool:
    """Whether ``data`` (bytes or parsed) is an environment with a password or a
    secret ``parameter_defaults`` value."""
    if isinstance(data, bytes):
        if b":" not in data:
            return False
        try:
            data = load_yaml(data, "get_file")
        except exceptions.TripleoFlowError:
            return False  # not YAML: a script, a certificate...
    if not isinstance(data, Mapping):
        return False
    return bool(secrets.environment_secrets(
        {k: data.get(k) for k in ("passwords", "parameter_defaults")}))


def build_request(plan_files: Mapping[str, bytes],
                  plan_env: Mapping[str, Any]) -> dict[str, Any]:
    """``template``, ``files``, ``environment_files`` and ``environment`` of a
    rendered plan: the body of Heat's ``POST /validate``, and of ``POST /stacks``
    once a stack name is added.

    :param plan_files: the plan's objects by name, rendered ones included (read on access).
    :param plan_env: the parsed plan-environment: its ``template``, its
        ``environments`` (``path`` or inline ``data``) in order, then its
        generated ``passwords`` and its ``parameter_defaults`` (which win) as the
        last environment.
    :raises InvalidTemplate: for a missing or unparsable file.
    """
    builder = _Builder(plan_files)
    root = str(plan_env.get("template") or "overcloud.yaml")
    root_url = urljoin(BASE_URL, root)
    template = builder.template(root_url, "plan-environment.yaml")
    env_urls: list[str] = []
    for index, entry in enumerate(plan_env.get("environments") or []):
        if "path" in entry:
            url = urljoin(BASE_URL, str(entry["path"]))
            env = load_yaml(builder.read(url, "plan-environment.yaml"), str(entry["path"]))
        else:
            url = urljoin(BASE_URL, f".tripleo-flow/inline-environment-{index}.yaml")
            env = entry.get("data")
        if not isinstance(env, dict):
            env = {}
        # An inline environment's paths are relative to the plan's root, as a file's
        # are to its own directory.
        builder.environment(env, url, None if "path" in entry else BASE_URL)
        env_urls.append(url)
    user_url = urljoin(BASE_URL, USER_ENVIRONMENT)
    user = {**(plan_env.get("passwords") or {}), **(plan_env.get("parameter_defaults") or {})}
    builder.environment({"parameter_defaults": user}, user_url)
    env_urls.append(user_url)
    del builder.files[root_url]  # the root travels as "template"
    return {"template": template, "files": builder.files, "environment_files": env_urls,
            "environment": {}}
