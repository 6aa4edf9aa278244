"""Workbook and action resources: the catalog the workflows come from, as the CLI's
``workbook list|validate|create|update|delete`` and ``action list|show``.

A workbook travels as its YAML text (``{"definition": TEXT, "filename": NAME}``); the
handler keeps it in a private temporary directory for the Python API, which reads
files, and words its refusals with the file's own name, never the server's path.
Shipped workbooks are read-only here as in the CLI (409).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import falcon

from tripleo_flow import exceptions
from tripleo_flow.http.json_bodies import body
from tripleo_flow.http.routes import ARRAY, Operation, Route, with_client

if TYPE_CHECKING:
    from tripleo_flow.client import Client

TAGS = ("workbooks",)
_DEFINITION = {"type": "object", "required": ["definition"], "properties": {
    "definition": {"type": "string", "description": "The workbook's YAML text."},
    "filename": {"type": "string", "description": "Its file name, used in the refusals "
                                                  "(default workbook.yaml)."}}}

def entry_body(entry: Any) -> dict[str, Any]:
    """A catalog entry as the API shows it (its file by name only)."""
    workbook = entry.workbook
    return {"name": entry.name, "shipped": entry.shipped, "file": entry.path.name,
            "description": getattr(workbook, "description", "") or "",
            "workflows": sorted(workbook.workflows) if workbook else [],
            "problems": [_problem(p, entry.path.name) for p in entry.problems]}


def _problem(problem: Any, name: str) -> str:
    return str(problem).replace(str(problem.path), name, 1) if problem.path else str(problem)


def _filename(media: dict[str, Any]) -> str:
    name = media.get("filename", "workbook.yaml")
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(name).name)[:100].lstrip(".")
    return name if name.endswith((".yaml", ".yml")) else f"{name or 'workbook'}.yaml"


@contextmanager
def _uploaded(media: dict[str, Any]) -> Iterator[Path]:
    """The body's workbook as a file; a refusal names the file, not where it was kept."""
    text = media["definition"]
    with tempfile.TemporaryDirectory(prefix="tripleo-flow-workbook-") as tmp:
        path = Path(tmp) / _filename(media)
        path.write_text(text, encoding="utf-8")
        try:
            yield path
        except exceptions.TripleoFlowError as error:
            raise _reworded(error, tmp, path) from None


def _reworded(error: exceptions.TripleoFlowError, tmp: str,
              path: Path) -> exceptions.TripleoFlowError:
    # its text: its next steps are worded again below, naming the file as it was sent
    message = error.text.replace(f"{tmp}/", "")
    name = re.search(r"Workbook '([^']*)'", message)
    if isinstance(error, exceptions.InvalidWorkbook):
        return exceptions.InvalidWorkbook(message)
    if isinstance(error, exceptions.Conflict):
        hints = [exceptions.Hint("Replace it with", "workbook.update",
                                 {"path": path.name})] if "already exists" in message else []
        return exceptions.Conflict(message, hints=hints)
    if isinstance(error, exceptions.NotFound) and name:
        return exceptions.NotFound(message, hints=[exceptions.Hint(
            "Add it with", "workbook.create", {"path": path.name})])
    return error


class Workbooks:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = [entry_body(e) for e in self.client.workbooks.list()]

    def _install(self, req: falcon.Request, install: Callable[[Path], Any]) -> dict[str, Any]:
        with _uploaded(body(req)) as path:
            return entry_body(install(path))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self._install(req, self.client.workbooks.create)
        resp.status = falcon.HTTP_201
        resp.location = f"/v1/workbooks/{resp.media['name']}"

    def on_put(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self._install(req, self.client.workbooks.update)


class ValidateWorkbook:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        with _uploaded(body(req)) as path:
            self.client.workbooks.check([path])
        resp.media = {"valid": True}


class Workbook:
    def __init__(self, client: Client) -> None:
        self.client = client

    def _entry(self, name: str) -> Any:
        for entry in self.client.workbooks.list():
            if entry.name == name:
                return entry
        raise exceptions.NotFound(f"Workbook {name!r} does not exist.", hints=[
            exceptions.Hint("List workbooks with", "workbook.list")])

    def on_get(self, req: falcon.Request, resp: falcon.Response, workbook: str) -> None:
        entry = self._entry(workbook)
        resp.media = {**entry_body(entry),
                      "definition": entry.definition()}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, workbook: str) -> None:
        self.client.workbooks.delete(workbook)
        resp.status = falcon.HTTP_204


def action_body(info: Any) -> dict[str, Any]:
    return {"name": info.name, "description": info.description, "target": info.target,
            "error": info.error,
            "inputs": [{"name": i.name, "type": i.type, "required": i.required,
                        **({} if i.required else {"default": i.default})}
                       for i in info.inputs]}


class Actions:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = [action_body(a) for a in self.client.actions.list()]


class Action:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, action: str) -> None:
        resp.media = action_body(self.client.actions.get(action))


ROUTES = [
    Route("/v1/workbooks", "workbooks", with_client(Workbooks), {
        "get": Operation("List the shipped and user workbooks, their workflows and "
                         "problems", response=ARRAY, tags=TAGS),
        "post": Operation("Add a user workbook (checked first)", status=201,
                          body=_DEFINITION, tags=TAGS),
        "put": Operation("Replace the user workbook of the same name (checked first)",
                         body=_DEFINITION, tags=TAGS)}),
    Route("/v1/workbooks/validate", "workbooks_validate", with_client(ValidateWorkbook), {
        "post": Operation("Check a workbook without adding it: 200 when valid, 400 with "
                          "every problem otherwise", body=_DEFINITION, tags=TAGS)}),
    Route("/v1/workbooks/{workbook}", "workbook", with_client(Workbook), {
        "get": Operation("A workbook and its YAML text", tags=TAGS),
        "delete": Operation("Delete a user workbook", status=204, response=None,
                            tags=TAGS)}),
    Route("/v1/actions", "actions", with_client(Actions), {
        "get": Operation("List the actions workbook tasks may run, with their inputs",
                         response=ARRAY, tags=TAGS)}),
    Route("/v1/actions/{action}", "action", with_client(Action), {
        "get": Operation("An action: its description, inputs and entry point", tags=TAGS)}),
]
