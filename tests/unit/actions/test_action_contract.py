"""The action contract (issue 28): a plain class with ``execute`` and, only where it
undoes something, ``revert``; ``keep-result: false`` is refused only where a revert
needs the result."""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from taskflow import atom

from tests.engine_helpers import ACTIONS, Host
from tripleo_flow import exceptions
from tripleo_flow.actions import validations
from tripleo_flow.actions.base import Action, reverter
from tripleo_flow.actions.registry import ActionRegistry

#: The installed actions (the entry points of setup.cfg).
REGISTRY = ActionRegistry.load()
#: Installed actions that change nothing, or nothing that can be undone.
UNDO_NOTHING = ["deploy.stack", "deploy.kept_stack", "deploy.check_kept_stack",
                "deploy.save_outputs", "deploy.run_ansible", "nodes.check",
                "nodes.find_existing", "nodes.select", "nodes.inspect", "nodes.delete",
                "nodes.choose", "nodes.unprovision_select", "nodes.undeploy",
                "validations.select", "validations.run", "validations.check"]
#: Installed actions whose revert undoes what they did.
UNDO = ["plan.create", "parameters.update", "passwords.rotate", "heat.launch",
        "deploy.check", "nodes.register", "nodes.deploy"]


@pytest.mark.parametrize("name", sorted(REGISTRY.classes()))
def test_an_action_is_a_plain_class_whose_revert_says_what_it_undoes(name: str) -> None:
    cls = REGISTRY.get(name)
    assert not issubclass(cls, atom.Atom)
    assert not hasattr(cls, "default_provides")
    if cls.has_revert():
        assert inspect.getdoc(cls.revert), f"{name}: revert() says what it undoes"  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", UNDO_NOTHING)
def test_an_action_that_undoes_nothing_has_no_revert(name: str) -> None:
    cls = REGISTRY.get(name)
    assert not cls.has_revert() and reverter(cls(None)) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("name", UNDO)
def test_an_action_that_undoes_has_its_revert(name: str) -> None:
    cls = REGISTRY.get(name)
    assert cls.has_revert() and reverter(cls(None)) is not None  # type: ignore[arg-type]


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", {**ACTIONS, "validations.check":
                                    validations.CheckValidations})
    yield host
    host._session.close_workflows()


def _install(host: Host, tmp_path: Path, action: str) -> None:
    path = tmp_path / "keep.yaml"
    path.write_text("version: '2.0'\nname: keep\n" + textwrap.dedent(f"""
        workflows:
          wf:
            input:
              - results
            output:
              counts: <% $.counts %>
            tasks:
              sum:
                action: {action}
                input:
                  results: <% $.results %>
                publish:
                  counts: <% task().result.counts %>
                keep-result: false
        """))
    host.workbooks.create(path)


def test_keep_result_false_runs_where_the_action_has_no_revert(host: Host,
                                                                tmp_path: Path) -> None:
    """``validations.check`` undoes nothing (it had a revert that did nothing, which
    refused ``keep-result: false``): its task publishes from the result and drops it."""
    _install(host, tmp_path, "validations.check")
    results = [{"status": "PASSED"}, {"status": "FAILED"}, {"status": "PASSED"}]
    execution = host.executions.create("keep.wf", {"results": results})
    assert execution.state == "SUCCESS", execution.error
    assert execution.output == {"counts": {"PASSED": 2, "FAILED": 1}}
    [task] = host.tasks.list(execution.id)
    assert task.result is None and task.published == {"counts": {"PASSED": 2, "FAILED": 1}}


def test_keep_result_false_is_still_refused_where_a_revert_needs_the_result(
        host: Host, tmp_path: Path) -> None:
    path = tmp_path / "keep.yaml"
    path.write_text(textwrap.dedent("""\
        version: '2.0'
        name: keep
        workflows:
          wf:
            tasks:
              record:
                action: test.record path="/nonexistent" value="a"
                keep-result: false
        """))
    with pytest.raises(exceptions.TripleoFlowError, match="'keep-result: false' cannot be "
                       "used with action 'test.record': undoing it needs its result"):
        host.workbooks.create(path)


def test_a_registered_action_is_built_with_its_context_alone() -> None:
    """As Mistral's actions, no engine arguments (name, provides...) are taken."""
    echo = REGISTRY.get("std.echo")
    with pytest.raises(TypeError):
        echo(None, name="x")  # type: ignore[arg-type,call-arg]
    assert echo(None).execute(output="hi") == "hi"  # type: ignore[arg-type]
    assert isinstance(echo(None), Action)  # type: ignore[arg-type]
