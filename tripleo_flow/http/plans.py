"""Plan resources: plans, capabilities, environments, parameters, roles, networks,
passwords and the deployment status.  Each handler reads the request, calls one method of
:class:`tripleo_flow.client.Client` and writes its result."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import falcon

from tripleo_flow import exceptions
from tripleo_flow.common import secret_masking
from tripleo_flow.core.plan import secrets
from tripleo_flow.http.bodies import save_body
from tripleo_flow.http.json_bodies import body
from tripleo_flow.http.routes import (
    ARRAY,
    BOOL,
    GZIP,
    OBJECT,
    PLAN_NAME,
    STRING,
    UPLOAD_ERRORS,
    Operation,
    Param,
    Route,
    with_client,
)
from tripleo_flow.plans import sources

if TYPE_CHECKING:
    from tripleo_flow.client import Client

#: How a refusal names the plan archive of a request body.
UPLOADED = "the uploaded archive"

#: Query parameters naming a file of the uploaded tree to use as the plan's roles,
#: networks or VIP data (the CLI's -r, -n and --vip-file), and the plan file each becomes.
DATA_FILE_PARAMS = {"roles_file": "roles_data.yaml", "networks_file": "network_data.yaml",
                    "vip_file": "vip_data.yaml"}


@contextmanager
def uploaded_tarball(req: falcon.Request, limit: int) -> Iterator[Path]:
    """Write the request body (a .tar.gz of at most ``limit`` bytes, 0: any size) to a
    private temporary file, removed when the block ends.  A refusal of that file names
    it "the uploaded archive", never by the server's file name."""
    with tempfile.TemporaryDirectory(prefix="tripleo-flow-upload-") as tmp:
        path = Path(tmp) / "plan.tar.gz"
        save_body(req, path, limit, "Send the plan as a .tar.gz request body "
                                    "(Content-Type: application/gzip).")
        try:
            yield path
        except exceptions.InvalidArchive as exc:
            if exc.source not in (str(path), path.name):
                raise
            raise exc.labelled(UPLOADED) from None


class DataFiles(TypedDict, total=False):
    """Keyword arguments of ``create_plan``/``update_plan`` naming data files."""

    roles_file: Path
    networks_file: Path
    vip_file: Path


def data_files(req: falcon.Request, tarball: Path | None, limits: Any) -> DataFiles:
    """The roles/networks/VIP data files the query names, each a file of the uploaded
    tree (its path inside the tarball, without the tree's top directory), copied next
    to the tarball: keyword arguments for ``create_plan``/``update_plan``.

    :raises InvalidInput: a name that is not a file of the upload (or no upload).
    """
    wanted: dict[str, str] = {}
    for param in DATA_FILE_PARAMS:
        value = req.get_param(param)
        if value:
            wanted[param] = value
    if not wanted:
        return DataFiles()
    if tarball is None:
        raise exceptions.InvalidInput(
            f"{', '.join(sorted(wanted))} name(s) a file of the uploaded plan: send the plan "
            "as a .tar.gz body (not sample=true).")
    files = sources.read_tarball(tarball.name, tarball.read_bytes(),
                                 max_size=limits.archive_max_size,
                                 max_members=limits.archive_max_members)
    given = DataFiles()
    for param, member in wanted.items():
        clean = "/".join(part for part in member.split("/") if part not in ("", "."))
        if clean not in files:
            raise exceptions.InvalidInput(
                f"{param}={member!r} is not a file of the uploaded plan: give its path "
                f"inside the tarball (for example {DATA_FILE_PARAMS[param]}).")
        target = tarball.parent / f"{param}.yaml"
        target.write_bytes(files[clean])
        given[param] = target  # type: ignore[literal-required]  # a DATA_FILE_PARAMS key
    return given


class Plans:
    def __init__(self, client: Client, max_upload: int) -> None:
        self.client = client
        self.max_upload = max_upload

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self.client.plans.list()

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        name = req.get_param("name", required=True)
        description = req.get_param("description", default="")
        if req.get_param_as_bool("sample", default=False):
            data_files(req, None, self.client.conf.limits)
            result = self.client.plans.create(name, description=description, sample=True)
        else:
            with uploaded_tarball(req, self.max_upload) as path:
                result = self.client.plans.create(
                    name, path, description, **data_files(req, path, self.client.conf.limits))
        resp.status = falcon.HTTP_201
        resp.location = f"/v1/plans/{name}"
        resp.media = result


class Plan:
    def __init__(self, client: Client, max_upload: int) -> None:
        self.client = client
        self.max_upload = max_upload

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.plans.get(name)

    def on_put(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        with uploaded_tarball(req, self.max_upload) as path:
            resp.media = self.client.plans.update(
                name, path, **data_files(req, path, self.client.conf.limits))

    def on_delete(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        self.client.plans.delete(name, force=req.get_param_as_bool("force", default=False))
        resp.status = falcon.HTTP_204


class PlanExport:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        with tempfile.TemporaryDirectory(prefix="tripleo-flow-export-") as tmp:
            path = self.client.plans.export(name, Path(tmp) / f"{name}.tar.gz", secrets=False)
            resp.data = Path(path).read_bytes()
        resp.content_type = "application/gzip"
        resp.downloadable_as = f"{name}.tar.gz"


class PlanHistory:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.plans.history(name)


class PlanRestore:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_post(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        media = body(req)
        resp.media = self.client.plans.restore(
            name, media["version"], keep_passwords=media.get("keep_passwords", True))


class Capabilities:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.capabilities.get(name)

    def on_put(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        media = body(req)
        resp.media = {"environments": self.client.capabilities.update(
            name, media["environments"], media.get("purge", False))}


class Environments:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.environments.list(name)

    def on_post(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        media = body(req)
        added = self.client.environments.add(name, media["environments"],
                                             position=media.get("position"))
        resp.media = {"added": added, "environments": self.client.environments.list(name)}


class EnvironmentsRemove:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_post(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        removed = self.client.environments.remove(name, body(req)["paths"])
        resp.media = {"removed": removed, "environments": self.client.environments.list(name)}


def _known_secrets(client: Client, name: str) -> list[str]:
    """The plan's password values: masked wherever an answer would contain one."""
    return [v for v in client.passwords.get(name).values() if isinstance(v, str)]


class Parameters:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = secrets.mask_parameters(self.client.parameters.get(name),
                                             _known_secrets(self.client, name))

    def on_put(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        media = body(req)
        values, validate = media["parameters"], media.get("validate", False)
        if secret_masking.is_masked(values):
            raise exceptions.InvalidInput(
                f"A parameter value holds {secret_masking.MASK}, the mask this API shows in place "
                "of a secret: send the real value, or leave that parameter out.")
        resp.media = {"changed": self.client.parameters.set(name, values, validate)}


class ParametersReset:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_post(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        names = body(req).get("names")
        resp.media = {"reset": self.client.parameters.reset(name, names)}


class ParameterSchema:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = secrets.mask_schema(self.client.parameters.schema(name),
                                         _known_secrets(self.client, name))


def data_list(req: falcon.Request, noun: str) -> list[Any] | str:
    """The body's ``noun`` list, or its ``yaml``: the text of a file holding it (as
    ``role set FILE`` reads; parsed by the Python API within the YAML limits)."""
    media = body(req)
    return media["yaml"] if "yaml" in media else media[noun]  # type: ignore[no-any-return]


def data_list_body(noun: str) -> dict[str, Any]:
    """The body of ``PUT .../roles`` or ``.../networks``: the list, or a file's text."""
    return {"type": "object", "oneOf": [{"required": [noun]}, {"required": ["yaml"]}],
            "properties": {noun: {"type": "array", "items": OBJECT},
                           "yaml": {**STRING, "description": "The text of a YAML file "
                                    f"holding the list of {noun}."}}}


class Roles:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.roles.list(
            name, detail=req.get_param_as_bool("detail", default=False))

    def on_put(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = {"roles": self.client.roles.set(name, data_list(req, "roles"))}


class Networks:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.networks.list(
            name, detail=req.get_param_as_bool("detail", default=False))

    def on_put(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = {"networks": self.client.networks.set(name, data_list(req, "networks"))}


class Passwords:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        if req.get_param_as_bool("values", default=False):
            raise exceptions.InvalidInput(
                "Password values are never served over the HTTP API: it lists their "
                "names. Read the values on the server itself (the plan's passwords).")
        resp.media = sorted(self.client.passwords.get(name))


class Deployment:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.deployments.status(name)


class DeploymentServers:
    """``GET /v1/plans/{name}/deployment/servers``: host names by role, as
    ``tripleo.scale.delete_nodes`` takes them."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.deployments.servers(name)


class DeploymentFailures:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.deployments.failures(name)


TAGS = ("plans",)
#: An environment file and the files it refers to, by path relative to its directory.
ENVIRONMENT_FILE = {"type": "object", "required": ["name", "files"], "properties": {
    "name": STRING, "files": {"type": "object", "additionalProperties": STRING}}}
#: Files of the uploaded tree to use as roles, networks, VIP data (CLI -r, -n, --vip-file).
DATA_FILE_QUERY = tuple(Param(name, STRING) for name in DATA_FILE_PARAMS)


def _uploading(resource: Any) -> Any:
    """``make`` for a resource that takes a plan archive within ``[api] max_upload_size``."""
    return lambda s: resource(s.client, s.client.conf.api.max_upload_size)


ROUTES = [
    Route("/v1/plans", "plans", _uploading(Plans), {
        "get": Operation("List plans", response=ARRAY, errors=(503,), tags=TAGS),
        "post": Operation(
            "Create a plan from a .tar.gz body (or the shipped sample)", status=201,
            body={}, body_type=GZIP, body_required=False, tags=TAGS, errors=UPLOAD_ERRORS,
            params=(Param("name", PLAN_NAME, required=True), Param("description", STRING),
                    Param("sample", BOOL), *DATA_FILE_QUERY))}),
    Route("/v1/plans/{name}", "plan", _uploading(Plan), {
        "get": Operation("Show a plan", tags=TAGS),
        "put": Operation("Replace a plan's templates from a .tar.gz body", body={},
                         body_type=GZIP, tags=TAGS, errors=UPLOAD_ERRORS,
                         params=DATA_FILE_QUERY),
        "delete": Operation("Delete a plan", status=204, response=None,
                            params=(Param("force", BOOL),), tags=TAGS)}),
    Route("/v1/plans/{name}/export", "plan_export", with_client(PlanExport), {
        "get": Operation("Download a plan as .tar.gz (without its secrets)", response={},
                         response_type=GZIP, tags=TAGS)}),
    Route("/v1/plans/{name}/history", "plan_history", with_client(PlanHistory), {
        "get": Operation("Versions of plan-environment.yaml, newest first", response=ARRAY,
                         tags=TAGS)}),
    Route("/v1/plans/{name}/restore", "plan_restore", with_client(PlanRestore), {
        "post": Operation("Make an earlier plan-environment.yaml current (the current "
                          "passwords kept unless keep_passwords is false)", tags=TAGS,
                          body={"type": "object", "required": ["version"],
                                "properties": {"version": STRING,
                                               "keep_passwords": BOOL}})}),
    Route("/v1/plans/{name}/capabilities", "capabilities", with_client(Capabilities), {
        "get": Operation("Capabilities map with the enabled environments", tags=TAGS),
        "put": Operation("Enable or disable environments", tags=TAGS, body={
            "type": "object", "required": ["environments"],
            "properties": {"environments": {"type": "object", "additionalProperties": BOOL,
                                            "description": "Environment paths to true "
                                                           "or false."},
                           "purge": BOOL}})}),
    Route("/v1/plans/{name}/environments", "environments", with_client(Environments), {
        "get": Operation("The plan's environments in order (user ones last)", response=ARRAY,
                         tags=TAGS),
        "post": Operation(
            "Add user environment files, each with the files it refers to", tags=TAGS,
            body={"type": "object", "required": ["environments"], "properties": {
                "environments": {"type": "array", "minItems": 1, "items": ENVIRONMENT_FILE},
                "position": {"type": "integer", "minimum": 1}}})}),
    Route("/v1/plans/{name}/environments/remove", "environments_remove",
          with_client(EnvironmentsRemove), {
              "post": Operation("Remove user environments (by plan path) and their files",
                                tags=TAGS, body={
                                    "type": "object", "required": ["paths"], "properties": {
                                        "paths": {"type": "array", "minItems": 1,
                                                  "items": STRING,
                                                  "description": "The user environments' "
                                                                 "plan paths."}}})}),
    Route("/v1/plans/{name}/parameters", "parameters", with_client(Parameters), {
        "get": Operation("Parameter values set on the plan", tags=TAGS),
        "put": Operation("Set parameter values", tags=TAGS, body={
            "type": "object", "required": ["parameters"],
            "properties": {"parameters": OBJECT, "validate": BOOL}})}),
    Route("/v1/plans/{name}/parameters/reset", "parameters_reset",
          with_client(ParametersReset), {
              "post": Operation("Remove parameter values (all unless names are given)",
                                tags=TAGS, body_required=False, body={
                                    "type": "object", "properties": {
                                        "names": {"type": "array", "items": STRING}}})}),
    Route("/v1/plans/{name}/parameters/schema", "parameter_schema",
          with_client(ParameterSchema), {
              "get": Operation("Every parameter of the stack tree (validated by an "
                               "ephemeral Heat)", tags=TAGS)}),
    Route("/v1/plans/{name}/roles", "roles", with_client(Roles), {
        "get": Operation("Roles of the plan", response=ARRAY, params=(Param("detail", BOOL),),
                         tags=TAGS),
        "put": Operation("Replace the plan's roles: a list, or the text of a "
                         "roles_data.yaml", tags=TAGS, body=data_list_body("roles"))}),
    Route("/v1/plans/{name}/networks", "networks", with_client(Networks), {
        "get": Operation("Networks of the plan", response=ARRAY,
                         params=(Param("detail", BOOL),), tags=TAGS),
        "put": Operation("Replace the plan's networks: a list, or the text of a "
                         "network_data.yaml", tags=TAGS, body=data_list_body("networks"))}),
    Route("/v1/plans/{name}/passwords", "passwords", with_client(Passwords), {
        "get": Operation("Password names (their values are never served)",
                         response={"type": "array", "items": STRING}, tags=TAGS)}),
    Route("/v1/plans/{name}/deployment", "deployment", with_client(Deployment), {
        "get": Operation("The plan's last deployment status", tags=TAGS)}),
    Route("/v1/plans/{name}/deployment/servers", "deployment_servers",
          with_client(DeploymentServers), {
              "get": Operation("The servers of the last deployment (host names by role), "
                               "as workflow tripleo.scale.delete_nodes takes them",
                               tags=TAGS)}),
    Route("/v1/plans/{name}/deployment/failures", "deployment_failures",
          with_client(DeploymentFailures), {
              "get": Operation("Resources that failed in the last deployment",
                               response=ARRAY, tags=TAGS)}),
]
