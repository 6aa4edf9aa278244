"""A reverse (graph-compiled) parent of a cancelled sub-workflow, as Mistral's
(issue 26).

Mistral's ``test_cancel_child_workflow`` (openstack/mistral
``mistral/tests/unit/engine/test_workflow_cancel.py``) with a reverse parent: the task
whose sub-workflow was cancelled reads CANCELLED with the child's message once the
child ended; the task that requires it never runs; the parent's other branch runs to
its end; then the parent ends CANCELLED with ``Cancelled tasks: taskx``
(``check_and_complete``: a cancel wins over an unhandled error too).  The state
machine's parent is tested in ``test_mistral_cancel``.

``task(NAME)`` of a task the current one does not require reads its latest execution,
or null if it did not run, as Mistral's (test_mistral_task_function).  A task whose
requirement failed never runs (``next`` after ``other`` failed), as Mistral's
(test_mistral_reverse_requires).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine_helpers import Host
from tests.pause_helpers import _effects
from tests.pause_helpers import host as host  # the fixture
from tests.unit.engine.test_mistral_cancel import (
    SUB,
    WHERE,
    _install,
    _task_states,
    cancel_child_then_end,
)

#: SUB's parent made a reverse workflow with another branch (held at ``gate2``).
REVERSE = SUB.replace("""\
    wf:
      input: [log, gate]
      tasks:
        taskx:
          workflow: subwf log=<% $.log %> gate=<% $.gate %>
""", """\
    wf:
      type: reverse
      input: [log, gate, gate2, fail]
      tasks:
        taskx:
          workflow: subwf log=<% $.log %> gate=<% $.gate %>
        after_x:
          action: test.record path=<% $.log %> value="after_x"
          requires: [taskx]
        other:
          action: test.hold gate=<% $.gate2 %> fail=<% $.fail %>
        next:
          action: test.record path=<% $.log %> value="next"
          requires: [other]
""")
assert REVERSE != SUB


@WHERE
@pytest.mark.parametrize("fail", [False, True], ids=["other-succeeds", "other-fails"])
def test_cancel_child_of_a_reverse_workflow(host: Host, tmp_path: Path, where: str,
                                            fail: bool) -> None:
    name = _install(host, tmp_path, REVERSE)
    log = tmp_path / "log"
    ident = cancel_child_then_end(host, tmp_path, f"{name}.wf", where, log=str(log),
                                  fail=fail)
    top = host.executions.get(ident)
    states = {n: s for n, (s, _info) in _task_states(host, ident).items()}
    assert states["taskx"] == "CANCELLED" and states.get("after_x", "SKIPPED") == "SKIPPED"
    if fail:
        assert states["other"] == "ERROR" and top.error is None
        assert states.get("next", "SKIPPED") == "SKIPPED" and "do next" not in _effects(log)
    else:
        assert states["other"] == states["next"] == "SUCCESS"
        assert _effects(log) == ["do next"]
    before = _effects(log)
    assert host.executions.resume(ident).state == "CANCELLED"
    host._session.runner().wait_background(60)
    assert _effects(log) == before
