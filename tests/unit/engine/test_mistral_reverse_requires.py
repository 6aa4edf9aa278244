"""A reverse workflow runs a task only once every task it requires succeeded, as
Mistral's (issue 26).

Mistral's reverse workflow controller schedules a task when each of its ``requires``
has a task execution in SUCCESS (``_is_satisfied_task`` in
``mistral/workflow/reverse_workflow.py``): a task whose requirement failed never runs,
nor does anything that requires it; the branches that do not depend on the failed task
still run to their end, and the workflow fails.  Ours ran the dependent task and undid
it as the workflow failed (``do b`` then ``undo b``): an action with an effect outside
the workflow had run although what it needs had failed.
"""

from __future__ import annotations

from pathlib import Path

from tests.engine_helpers import Host
from tests.unit.engine.test_mistral_reverse_subworkflows import host as host  # fixture
from tests.unit.engine.test_mistral_subworkflows import FAILED, Run

WORKFLOW = """
    wf:
      type: reverse
      input: [path, fail]
      tasks:
        first:
          action: test.record path=<% $.path %> value="first" fail=<% $.fail %>
        second:
          action: test.record path=<% $.path %> value="second"
          requires: [first]
        third:
          action: test.record path=<% $.path %> value="third"
          requires: [second, other]
        other:
          action: test.record path=<% $.path %> value="other"
    """


def test_a_failed_requirement_runs_nothing_that_requires_it(host: Host, tmp_path: Path
                                                            ) -> None:
    log = tmp_path / "log"
    run = Run(host, tmp_path, WORKFLOW, path=str(log), fail=True)
    assert run.state == FAILED and run.error is not None
    assert "boom first" in str(run.error)
    done = log.read_text().splitlines()
    # The independent branch ran (and, the workflow having failed, was undone: ours
    # reverts a failed workflow: a deliberate difference named in
    # test_mistral_error_semantics).
    assert "do other" in done
    assert not any(line.endswith(("second", "third")) for line in done), done
    assert run.tasks["second"].state == run.tasks["third"].state == "SKIPPED"


def test_every_requirement_succeeded_runs_the_task(host: Host, tmp_path: Path) -> None:
    """The same workflow without the failure: each task once, after what it requires."""
    log = tmp_path / "log"
    run = Run(host, tmp_path, WORKFLOW, path=str(log), fail=False)
    assert run.state == "SUCCESS", run.error
    done = log.read_text().splitlines()
    assert sorted(done) == ["do first", "do other", "do second", "do third"]
    assert done.index("do first") < done.index("do second") < done.index("do third")
    assert done.index("do other") < done.index("do third")
