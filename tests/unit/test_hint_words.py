"""An error's next step names an operation; each interface spells it its own way.

No module below the interfaces (``cli/``, ``http/``, ``openstack/``) spells a
``tripleo-flow`` command or an HTTP route in a message: it names an operation of
:mod:`tripleo_flow.exceptions.operations`, which the CLI spells as a command and the
HTTP API as a request (or says only the server can do it).  Records an older version
kept, with the words themselves, still read as they were.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tripleo_flow import exceptions
from tripleo_flow.cli import command_table
from tripleo_flow.cli import hint_words as cli_words
from tripleo_flow.engine.store import error_records, execution_records
from tripleo_flow.exceptions import operations
from tripleo_flow.http import hint_words as http_words
from tripleo_flow.http.app import ROUTES

PACKAGE = Path(__file__).resolve().parents[2] / "tripleo_flow"

#: The interfaces: they word the operations.
INTERFACES = ("cli", "http", "openstack")

#: ``tripleo-flow`` followed by one of its commands, or by a command's first word where
#: the constant ends (an f-string's value follows: ``tripleo-flow launch {service}``).
COMMAND = re.compile(r"tripleo-flow ({})(\b|$)|tripleo-flow ({}) $".format(
    "|".join(sorted(command_table.COMMANDS, key=len, reverse=True)),
    "|".join(sorted({name.split()[0] for name in command_table.COMMANDS}))))
#: A route of this HTTP API (Heat's and Ironic's own ``/v1/`` are not).
ROUTE = re.compile(r"/v1/({})\b".format("|".join(sorted(
    {route.path.split("/")[2] for route in ROUTES}))))

#: module -> why its strings may still name a command or a route (only shrinks).
ALLOWED: dict[str, str] = {
    "config.py": "option help texts: they describe what an option is for, naming the "
                 "command or the request it is about; no error's next step",
    "config_api.py": "the same, for the [api] and [limits] options (split from config.py)",
}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def spelled(source: str, name: str = "<module>") -> list[str]:
    """The string constants of ``source`` (docstrings aside) that spell a command or a
    route."""
    tree = ast.parse(source, name)
    skip = _docstrings(tree)
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in skip
            and (COMMAND.search(node.value) or ROUTE.search(node.value))]


def _below() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py")
                  if p.relative_to(PACKAGE).parts[0] not in INTERFACES)


def test_no_module_below_the_interfaces_spells_a_command_or_a_route() -> None:
    modules = _below()
    assert len(modules) > 100
    found = {str(m.relative_to(PACKAGE)): spelled(m.read_text(), str(m)) for m in modules}
    found = {k: v for k, v in found.items() if v and k not in ALLOWED}
    assert found == {}
    assert all((PACKAGE / k).exists() for k in ALLOWED)  # the allow-list only shrinks


def test_the_check_sees_a_command_and_a_route_but_no_docstring() -> None:
    source = ('"""Run tripleo-flow plan list."""\n'
              'def f(plan):\n    """tripleo-flow deploy."""\n'
              '    raise ValueError(f"see: tripleo-flow deployment status --plan {plan}")\n'
              'X = "GET /v1/plans"\nY = "tripleo-flow passes no parameter"\n'
              'Z = f"Stop it: tripleo-flow launch {s}"\nH = "http://h:8004/v1/admin"\n')
    assert sorted(spelled(source)) == ["GET /v1/plans", "Stop it: tripleo-flow launch ",
                                       "see: tripleo-flow deployment status --plan "]


@pytest.mark.parametrize("interface,spellings", [
    (operations.CLI, cli_words.COMMANDS), (operations.API, http_words.REQUESTS)])
def test_every_operation_has_each_interfaces_words_or_is_server_only(
        interface: str, spellings: dict[str, str]) -> None:
    assert operations.check(interface, spellings) == []


def test_the_operations_check_finds_what_is_missing_or_wrong() -> None:
    cli = dict(cli_words.COMMANDS)
    del cli["deploy"]
    cli["no.such"] = "x"
    cli["plan.history"] = "plan history {name}"
    api = {**http_words.REQUESTS, "heat.status": "GET /v1/heat"}
    assert sorted(operations.check(operations.CLI, cli)) == [
        "deploy: not spelled", "no.such: no such operation",
        "plan.history: 'plan history {name}' names 'name'"]
    assert operations.check(operations.API, api) == ["heat.status: server only, yet spelled"]


def test_a_hint_names_a_known_operation_with_its_arguments() -> None:
    with pytest.raises(ValueError):
        exceptions.Hint("see it with", "deployment.status")
    with pytest.raises(ValueError):
        exceptions.Hint("see it with", "no.such.operation")


def test_a_python_caller_with_no_interface_reads_the_operation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(operations, "_SPELLINGS", {})
    error = exceptions.PlanNotFound("oc")
    assert str(error) == ("Plan 'oc' does not exist. Create it with: "
                          "operation plan.create(plan='oc')")
    cli_words.install()
    assert str(exceptions.PlanNotFound("oc")) == (
        "Plan 'oc' does not exist. Create it with: tripleo-flow plan create oc --templates DIR")


#: A task's error as an older version kept it: its hints' words themselves.
OLD_RECORD = {"class": "PlanNotFound", "text": "Plan 'oc' does not exist.",
              "hints": [{"lead": "Create it with", "command": "plan create oc --templates DIR",
                         "request": "POST /v1/plans?name=oc", "sep": " ", "tail": ""}]}


def test_an_error_an_older_version_kept_reads_as_it_did() -> None:
    error = error_records.rebuild(OLD_RECORD)
    assert isinstance(error, exceptions.PlanNotFound)
    assert str(error) == str(exceptions.PlanNotFound("oc"))
    assert error.render(exceptions.API) == exceptions.PlanNotFound("oc").render(exceptions.API)
    assert error.hints[0].as_json() == exceptions.PlanNotFound("oc").hints[0].as_json()


def test_an_error_is_kept_as_its_operation_and_read_back() -> None:
    error = exceptions.StackFailed("oc", "CREATE_FAILED", "boom", [])
    kept = error_records.describe(error)
    assert kept is not None and kept["hints"] == [
        {"lead": "See them again with", "op": "deployment.failures", "args": {"plan": "oc"},
         "sep": " ", "tail": ""}]
    again = error_records.rebuild(kept)
    assert again is not None and str(again) == str(error)
    assert again.render(exceptions.API) == error.render(exceptions.API)


class _Detail:
    def __init__(self, meta: dict) -> None:
        self.uuid, self.name, self.state, self.meta = "e1", "w", "FAILURE", meta


def test_an_execution_record_words_its_error_as_the_reader_does() -> None:
    error = exceptions.PlanNotFound("oc")
    new = execution_records.to_execution(_Detail(
        {"error": str(error), "error_record": error_records.describe(error)}))
    assert new.error_api == "Plan 'oc' does not exist. Create it with: POST /v1/plans?name=oc"
    assert new.hints == [{"command": "tripleo-flow plan create oc --templates DIR",
                          "request": "POST /v1/plans?name=oc"}]
    old = execution_records.to_execution(_Detail(  # an older version's: its words kept
        {"error": str(error), "error_api": "kept words", "error_hints": [{"command": "c"}],
         "error_record": OLD_RECORD}))
    assert (old.error_api, old.hints) == (new.error_api, new.hints)
    older = execution_records.to_execution(_Detail(
        {"error": "boom", "error_api": "kept words", "error_hints": [{"command": "c"}]}))
    assert (older.error_api, older.hints) == ("kept words", [{"command": "c"}])


def test_a_worker_words_its_errors_as_the_process_that_started_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tripleo_flow.client import session

    started: dict = {}
    monkeypatch.setattr(session.subprocess, "Popen",
                        lambda args, **kw: started.update(args=args, **kw))
    session.Session.spawn_worker(
        type("C", (), {"data_dir": tmp_path, "conf": None})(), "e1")  # type: ignore[arg-type]
    assert started["args"][2] == "tripleo_flow.client.worker"
    worded = str(exceptions.PlanNotFound("oc"))
    monkeypatch.setattr(operations, "_SPELLINGS", {})  # the worker, as it starts
    monkeypatch.setattr(operations.os, "environ", started["env"])
    operations.install_exported()
    assert str(exceptions.PlanNotFound("oc")) == worded
    assert exceptions.PlanNotFound("oc").render(exceptions.API).endswith("POST /v1/plans?name=oc")


@pytest.mark.parametrize("op", sorted(cli_words.COMMANDS))
def test_every_command_a_hint_names_is_a_command_of_the_cli(op: str) -> None:
    args = {a: "x" for a in operations.OPERATIONS[op].args}
    if "verb" in args:
        args["verb"] = "pause"
    if "kind" in args:
        args["kind"] = "update"
    words = cli_words.COMMANDS[op].format(**args)
    names = set(command_table.COMMANDS) | set(getattr(command_table, "RENAMED", {}))
    assert any(words == n or words.startswith(n + " ") for n in names), words
