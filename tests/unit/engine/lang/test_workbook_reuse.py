"""A workbook text read before is not parsed again, and a workflow's own checks are made
once (:func:`~tripleo_flow.engine.lang.workbook_loader.read_file`,
:func:`~tripleo_flow.engine.lang.workbook_validator.validate_workflow`); what changes
the answer (the text, the limits, the actions) is read every time."""

from __future__ import annotations

from pathlib import Path

import pytest

from tripleo_flow.actions import std
from tripleo_flow.common import safe_yaml
from tripleo_flow.engine.lang import expressions, workbook_loader, workbook_validator
from tripleo_flow.engine.lang.workbook_loader import WorkbookLimits

TEXT = """version: '2.0'
name: reuse
workflows:
  wf:
    output:
      said: <% $.said %>
    tasks:
      say:
        action: std.echo
        input:
          output: {said}
        publish:
          said: <% task().result %>
"""


def _write(path: Path, said: str = "hello") -> Path:
    path.write_text(TEXT.format(said=said))
    return path


def test_the_same_text_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                      ) -> None:
    parsed: list[str] = []
    parse = safe_yaml.parse_yaml
    monkeypatch.setattr(safe_yaml, "parse_yaml", lambda text: parsed.append(text) or parse(text))
    path = _write(tmp_path / "reuse.yaml")
    first, problems = workbook_loader.read_file(path)
    again, _ = workbook_loader.read_file(path)
    assert first is not None and again is first and len(parsed) == 1
    problems.append("a caller's own")  # type: ignore[arg-type]
    assert workbook_loader.read_file(path)[1] == []  # each caller gets its own list


def test_a_changed_text_or_other_limits_are_read_again(tmp_path: Path) -> None:
    path = _write(tmp_path / "reuse.yaml")
    first, _ = workbook_loader.read_file(path)
    _write(path, said="bye")
    changed, _ = workbook_loader.read_file(path)
    assert changed is not first and changed is not None
    assert changed.workflows["wf"].tasks["say"].input == {"output": "bye"}
    refused, problems = workbook_loader.read_file(path, WorkbookLimits(max_tasks=0))
    assert refused is None and "workbook_max_tasks (0)" in str(problems[0])


def test_the_kept_workbooks_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    monkeypatch.setattr(workbook_loader, "PARSED_KEPT", 2)
    paths = [_write(tmp_path / f"reuse{i}.yaml") for i in range(3)]
    first = [workbook_loader.read_file(p)[0] for p in paths]
    assert workbook_loader.read_file(paths[2])[0] is first[2]
    assert workbook_loader.read_file(paths[0])[0] is not first[0]  # the oldest went
    assert len(workbook_loader._PARSED) <= 2


def test_a_workflow_s_own_checks_are_made_once_its_calls_every_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[object] = []
    check = expressions.check
    monkeypatch.setattr(expressions, "check",
                        lambda value: checked.append(value) or check(value))
    workbook, _ = workbook_loader.read_file(_write(tmp_path / "reuse.yaml", "<% $.said %>"))
    assert workbook is not None
    workflow = workbook.workflows["wf"]

    def problems(actions: dict[str, type[std.Action]]) -> list[str]:
        return [p.message for p in workbook_validator.validate_workflow(
            workflow, actions, {}, lambda _ref, _near: None)]

    assert problems({"std.echo": std.Echo}) == []
    looked = len(checked)
    assert looked > 0
    (unknown,) = problems({})
    assert unknown.startswith("unknown action 'std.echo'")
    assert len(checked) == looked  # only what the task calls was looked at again
