"""A workflow checked before is not checked again while its calls find what they found
(:func:`~tripleo_flow.engine.lang.workbook_validator.validate_workflow`): the shipped
workflows are checked at every catalog read, and a user workbook, the actions or the
interfaces' words can change what a name finds, so each case here changes one of them
between two checks of the same parsed workflow and expects what a first check gives.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import ACTIONS
from tripleo_flow.actions import std
from tripleo_flow.actions.registry import ActionRegistry
from tripleo_flow.client import workbooks
from tripleo_flow.engine.lang import workbook_loader, workbook_validator
from tripleo_flow.engine.lang.action import Action
from tripleo_flow.engine.lang.workbook_model import WorkflowSpec
from tripleo_flow.exceptions import operations

SHIPPED = """\
version: '2.0'
name: base
workflows:
  main:
    tasks:
      call:
        workflow: helper
        input:
          x: 1
      act:
        action: t.act
        input:
          x: 1
        keep-result: false
"""


def _helper(workbook: str, inputs: str = "[x]") -> str:
    return textwrap.dedent(f"""\
        version: '2.0'
        name: {workbook}
        workflows:
          helper:
            input: {inputs}
            tasks:
              one:
                action: std.noop
        """)


class TakesX(Action):
    def execute(self, x: int) -> int:
        return x


class TakesY(Action):
    def execute(self, y: int) -> int:
        return y


class TakesXAndUndoes(TakesX):
    def revert(self, result: Any, x: int, **kwargs: Any) -> None:
        """Undoes nothing (a test double)."""


ACTS: dict[str, type[Action]] = {"t.act": TakesX, "std.noop": std.Noop}


@pytest.fixture
def fresh() -> Iterator[None]:
    """No workflow checked before this test (nor kept from it)."""
    workbook_validator._CHECKED.clear()
    yield
    workbook_validator._CHECKED.clear()


def _catalog(shipped: Path, user: Path, actions: Mapping[str, type[Action]] = ACTS,
             broken: Mapping[str, str] | None = None) -> workbook_loader.Catalog:
    return workbook_loader.load_catalog([(shipped, True), (user, False)], actions, broken)


def _problems(catalog: workbook_loader.Catalog, name: str = "base") -> list[str]:
    return [p.message for p in catalog.entries[name].problems]


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    shipped, user = tmp_path / "shipped", tmp_path / "user"
    shipped.mkdir()
    user.mkdir()
    (shipped / "base.yaml").write_text(SHIPPED)
    return shipped, user


def _main(catalog: workbook_loader.Catalog) -> WorkflowSpec:
    found = catalog.lookup("base.main")
    assert found is not None
    return found


def test_a_user_workbook_that_adds_or_changes_a_name_is_seen(tmp_path: Path, fresh: None
                                                             ) -> None:
    shipped, user = _dirs(tmp_path)
    first = _catalog(shipped, user)
    assert _problems(first) == ["unknown workflow 'helper'"]
    (user / "one.yaml").write_text(_helper("one"))
    added = _catalog(shipped, user)
    assert _main(added) is _main(first)  # the same parsed workflow, checked before
    assert _problems(added) == []
    (user / "one.yaml").write_text(_helper("one", "[x, z]"))
    assert _problems(_catalog(shipped, user)) == [
        "missing required input 'z' of workflow 'one.helper'"]
    (user / "one.yaml").write_text(_helper("one", "[]"))
    assert _problems(_catalog(shipped, user)) == [
        "unexpected input 'x' for workflow 'one.helper' (its inputs: none)"]
    (user / "one.yaml").unlink()
    assert _problems(_catalog(shipped, user)) == ["unknown workflow 'helper'"]


def test_a_second_user_workflow_of_the_same_name_makes_the_name_unknown(
        tmp_path: Path, fresh: None) -> None:
    shipped, user = _dirs(tmp_path)
    (user / "one.yaml").write_text(_helper("one"))
    assert _problems(_catalog(shipped, user)) == []
    (user / "two.yaml").write_text(_helper("two"))  # 'helper' is now ambiguous
    assert _problems(_catalog(shipped, user)) == ["unknown workflow 'helper'"]


def test_a_user_workflow_cannot_take_a_shipped_one_s_place(tmp_path: Path, fresh: None
                                                           ) -> None:
    shipped, user = _dirs(tmp_path)
    (shipped / "helpers.yaml").write_text(_helper("helpers"))
    assert _problems(_catalog(shipped, user)) == []
    (user / "one.yaml").write_text(_helper("one", "[x, z]"))  # a second 'helper'
    catalog = _catalog(shipped, user)
    assert _problems(catalog) == []  # the shipped one is meant
    assert _problems(catalog, "one") == []


@pytest.mark.parametrize("second, broken, expected", [
    ({"t.act": TakesY}, None, ["unexpected input 'x' for action 't.act' (its inputs: y)",
                               "missing required input 'y' of action 't.act'"]),
    ({"t.act": TakesXAndUndoes}, None, [
        "'keep-result: false' cannot be used with action 't.act': undoing it needs its "
        "result"]),
    (ACTS, {"t.act": "No module named 'gone'"}, [
        "action 't.act' cannot be loaded: No module named 'gone'"]),
], ids=["other-inputs", "undoes", "broken"])
def test_other_actions_are_seen(tmp_path: Path, fresh: None,
                                second: Mapping[str, type[Action]],
                                broken: Mapping[str, str] | None, expected: list[str]) -> None:
    shipped, user = _dirs(tmp_path)
    (user / "one.yaml").write_text(_helper("one"))
    assert _problems(_catalog(shipped, user)) == []
    assert _problems(_catalog(shipped, user, {**second, "std.noop": std.Noop}, broken)) \
        == expected
    assert _problems(_catalog(shipped, user)) == []


def test_an_ad_hoc_action_of_a_user_workbook_is_seen(tmp_path: Path, fresh: None) -> None:
    """An action a user workbook defines (a new class at every read) is checked as it
    is now: the same name, based on another action, takes other inputs."""
    shipped, user = _dirs(tmp_path)
    (shipped / "base.yaml").write_text(SHIPPED.replace("t.act", "mine.act"))

    def adhoc(base: str, name: str) -> None:
        (user / "mine.yaml").write_text(_helper("mine") + textwrap.dedent(f"""\
            actions:
              act:
                base: {base}
                input: [{name}]
                base-input:
                  {name}: <% $.{name} %>
            """))

    actions = {**ACTS, "t.other": TakesY}
    adhoc("t.act", "x")
    assert _problems(_catalog(shipped, user, actions)) == []
    adhoc("t.other", "y")
    assert _problems(_catalog(shipped, user, actions)) == [
        "unexpected input 'x' for action 'mine.act' (its inputs: y)",
        "missing required input 'y' of action 'mine.act'"]


def test_an_unknown_action_is_named_in_the_words_of_the_time(
        tmp_path: Path, fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped, user = _dirs(tmp_path)
    (user / "one.yaml").write_text(_helper("one"))
    monkeypatch.setitem(operations._SPELLINGS, operations.CLI, {"action.list": "actions"})
    (before,) = _problems(_catalog(shipped, user, {"std.noop": std.Noop}))
    assert before == "unknown action 't.act' (list actions with: tripleo-flow actions)"
    monkeypatch.setitem(operations._SPELLINGS, operations.CLI, {"action.list": "act ls"})
    (after,) = _problems(_catalog(shipped, user, {"std.noop": std.Noop}))
    assert after == "unknown action 't.act' (list actions with: tripleo-flow act ls)"


def test_a_workflow_checked_before_is_not_checked_again(
        tmp_path: Path, fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped, user = _dirs(tmp_path)
    (user / "one.yaml").write_text(_helper("one"))
    checked: list[str] = []
    real = workbook_validator._check_calls
    monkeypatch.setattr(workbook_validator, "_check_calls",
                        lambda wf, spec, answers: checked.append(wf.full_name)
                        or real(wf, spec, answers))
    _catalog(shipped, user)
    assert sorted(set(checked)) == ["base.main", "one.helper"]
    checked.clear()
    (user / "two.yaml").write_text(_helper("two").replace("helper", "other"))
    _catalog(shipped, user)
    assert checked == ["two.other"]  # the new workflow only


def _all_problems(registry: ActionRegistry) -> dict[str, list[Any]]:
    catalog = workbook_loader.load_catalog([(workbook_loader.SHIPPED_DIR, True)],
                                           registry.classes(), registry.broken(),
                                           made=workbooks.ACTION_WORKFLOWS)
    return {name: entry.problems for name, entry in catalog.entries.items()}


@pytest.mark.parametrize("registry", [ActionRegistry.load,
                                      lambda: ActionRegistry.from_classes(ACTIONS)],
                         ids=["registered", "tests-actions"])
def test_the_shipped_workbooks_have_the_problems_a_first_check_finds(
        fresh: None, monkeypatch: pytest.MonkeyPatch,
        registry: Callable[[], ActionRegistry]) -> None:
    """Every shipped workbook, with the product's actions (no problem) and with the
    tests' (every TripleO action unknown): read again (each workflow checked before),
    its problems are those of a check that keeps nothing."""
    actions = registry()
    first = _all_problems(actions)
    assert len(workbook_validator._CHECKED) >= 40
    again = _all_problems(registry())
    monkeypatch.setattr(workbook_validator, "LOCAL_KEPT", 0)  # nothing kept
    workbook_validator._CHECKED.clear()
    unkept = _all_problems(registry())
    made = {w.workbook for w in workbooks.ACTION_WORKFLOWS} - {
        workbook_loader.read_file(path)[0].name  # type: ignore[union-attr]
        for path in workbook_loader.workbook_files(workbook_loader.SHIPPED_DIR)}
    assert again == first == unkept and len(first) == len(
        workbook_loader.workbook_files(workbook_loader.SHIPPED_DIR)) + len(made)
