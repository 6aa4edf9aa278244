"""Plan resources: plans, capabilities, environments, parameters, roles, networks,
passwords and the deployment status.  Each handler reads the request, calls one method of
:class:`tripleo_flow.api.Client` and writes its result."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import falcon

from tripleo_flow import exceptions
from tripleo_flow.core import secrets
from tripleo_flow.http.bodies import save_body
from tripleo_flow.plans import sources

if TYPE_CHECKING:
    from tripleo_flow.api import Client

#: Query parameters naming a file of the uploaded tree to use as the plan's roles,
#: networks or VIP data (the CLI's -r, -n and --vip-file), and the plan file each becomes.
DATA_FILE_PARAMS = {"roles_file": "roles_data.yaml", "networks_file": "network_data.yaml",
                    "vip_file": "vip_data.yaml"}


def json_object(req: falcon.Request) -> dict[str, Any]:
    """The request's JSON body, which must be an object."""
    try:
        media = req.get_media(default_when_empty=None)
    except falcon.MediaMalformedError as exc:
        cause = exc.__cause__
        if isinstance(cause, exceptions.TripleoFlowError):  # refused by http.media.loads
            raise cause from None
        raise exceptions.InvalidInput(
            f"The request body is not valid JSON: {cause or exc}") from exc
    if not isinstance(media, dict):
        raise exceptions.InvalidInput("The request body must be a JSON object.")
    return media


def field(media: dict[str, Any], name: str, kind: type | tuple[type, ...],
          default: Any = ..., what: str = "") -> Any:
    """``media[name]`` checked against ``kind`` (required unless a default is given)."""
    if name not in media or media[name] is None:
        if default is ...:
            raise exceptions.InvalidInput(f"The request body needs {name!r}{what}.")
        return default
    value = media[name]
    if not isinstance(value, kind):
        names = "/".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise exceptions.InvalidInput(f"{name!r} must be of type {names}{what}.")
    return value


def string_list(media: dict[str, Any], name: str) -> list[str] | None:
    value = field(media, name, list, None)
    if value is not None and not all(isinstance(v, str) for v in value):
        raise exceptions.InvalidInput(f"{name!r} must be a list of strings.")
    return value


@contextmanager
def uploaded_tarball(req: falcon.Request, limit: int) -> Iterator[Path]:
    """Write the request body (a .tar.gz of at most ``limit`` bytes, 0: any size) to a
    private temporary file, removed when the block ends."""
    with tempfile.TemporaryDirectory(prefix="tripleo-flow-upload-") as tmp:
        path = Path(tmp) / "plan.tar.gz"
        save_body(req, path, limit, "Send the plan as a .tar.gz request body "
                                    "(Content-Type: application/gzip).")
        yield path


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
        resp.media = self.client.list_plans()

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        name = req.get_param("name", required=True)
        description = req.get_param("description", default="")
        if req.get_param_as_bool("sample", default=False):
            data_files(req, None, self.client.conf.limits)
            result = self.client.create_plan(name, description=description, sample=True)
        else:
            with uploaded_tarball(req, self.max_upload) as path:
                result = self.client.create_plan(
                    name, path, description, **data_files(req, path, self.client.conf.limits))
        resp.status = falcon.HTTP_201
        resp.location = f"/v1/plans/{name}"
        resp.media = result


class Plan:
    def __init__(self, client: Client, max_upload: int) -> None:
        self.client = client
        self.max_upload = max_upload

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.show_plan(name)

    def on_put(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        with uploaded_tarball(req, self.max_upload) as path:
            resp.media = self.client.update_plan(
                name, path, **data_files(req, path, self.client.conf.limits))

    def on_delete(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        self.client.delete_plan(name, force=req.get_param_as_bool("force", default=False))
        resp.status = falcon.HTTP_204


class PlanExport:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        with tempfile.TemporaryDirectory(prefix="tripleo-flow-export-") as tmp:
            path = self.client.export_plan(name, Path(tmp) / f"{name}.tar.gz", secrets=False)
            resp.data = Path(path).read_bytes()
        resp.content_type = "application/gzip"
        resp.downloadable_as = f"{name}.tar.gz"


class PlanHistory:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.plan_history(name)


class PlanRestore:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_post(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        media = json_object(req)
        version = field(media, "version", str)
        keep = field(media, "keep_passwords", bool, True)
        resp.media = self.client.restore_plan(name, version, keep_passwords=keep)


class Capabilities:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.get_capabilities(name)

    def on_put(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        media = json_object(req)
        environments = field(media, "environments", dict)
        if not all(isinstance(v, bool) for v in environments.values()):
            raise exceptions.InvalidInput("'environments' maps environment paths to true/false.")
        purge = field(media, "purge", bool, False)
        resp.media = {"environments": self.client.update_capabilities(name, environments,
                                                                      purge)}


class Environments:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.list_environments(name)

    def on_post(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        media = json_object(req)
        environments = field(media, "environments", list)
        if not all(isinstance(e, dict) for e in environments):
            raise exceptions.InvalidInput(
                "'environments' is a list of {\"name\": FILE, \"files\": {PATH: TEXT}}.")
        position = field(media, "position", int, None)
        if isinstance(position, bool):
            raise exceptions.InvalidInput("'position' must be an integer.")
        added = self.client.add_environments(name, environments, position=position)
        resp.media = {"added": added, "environments": self.client.list_environments(name)}


class EnvironmentsRemove:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_post(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        paths = string_list(json_object(req), "paths")
        if not paths:
            raise exceptions.InvalidInput("The request body needs 'paths' (a list of the "
                                          "user environments' plan paths).")
        removed = self.client.remove_environments(name, paths)
        resp.media = {"removed": removed, "environments": self.client.list_environments(name)}


def _known_secrets(client: Client, name: str) -> list[str]:
    """The plan's password values: masked wherever an answer would contain one."""
    return [v for v in client.get_passwords(name).values() if isinstance(v, str)]


class Parameters:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = secrets.mask_parameters(self.client.get_parameters(name),
                                               _known_secrets(self.client, name))

    def on_put(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        media = json_object(req)
        values = field(media, "parameters", dict)
        validate = field(media, "validate", bool, False)
        if secrets.is_masked(values):
            raise exceptions.InvalidInput(
                f"A parameter value holds {secrets.MASK}, the mask this API shows in place "
                "of a secret: send the real value, or leave that parameter out.")
        resp.media = {"changed": self.client.set_parameters(name, values, validate)}


class ParametersReset:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_post(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        names = string_list(json_object(req), "names") if req.content_length else None
        resp.media = {"reset": self.client.reset_parameters(name, names)}


class ParameterSchema:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = secrets.mask_schema(self.client.get_parameter_schema(name),
                                           _known_secrets(self.client, name))


def data_list(req: falcon.Request, noun: str) -> list[Any] | str:
    """The body's ``noun`` list, or its ``yaml``: the text of a file holding it (as
    ``role set FILE`` reads; parsed by the Python API within the YAML limits)."""
    media = json_object(req)
    if (noun in media) == ("yaml" in media):
        raise exceptions.InvalidInput(
            f"The request body needs either {noun!r} (a list) or 'yaml' (the text of a "
            f"YAML file holding the list of {noun}).")
    if "yaml" in media:
        return field(media, "yaml", str)  # type: ignore[no-any-return]
    return field(media, noun, list)  # type: ignore[no-any-return]


class Roles:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.list_roles(
            name, detail=req.get_param_as_bool("detail", default=False))

    def on_put(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = {"roles": self.client.set_roles(name, data_list(req, "roles"))}


class Networks:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.list_networks(
            name, detail=req.get_param_as_bool("detail", default=False))

    def on_put(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = {"networks": self.client.set_networks(name, data_list(req, "networks"))}


class Passwords:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        if req.get_param_as_bool("values", default=False):
            raise exceptions.InvalidInput(
                "Password values are never served over the HTTP API: it lists their "
                "names. Read the values on the server itself (the plan's passwords).")
        resp.media = sorted(self.client.get_passwords(name))


class Deployment:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.deployment_status(name)


class DeploymentServers:
    """``GET /v1/plans/{name}/deployment/servers``: host names by role, as
    ``tripleo.scale.delete_nodes`` takes them."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.deployment_servers(name)


class DeploymentFailures:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.deployment_failures(name)
