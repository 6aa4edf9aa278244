"""The progress display: a bar on a terminal, plain lines elsewhere."""

from __future__ import annotations

import io

import pytest

from tripleo_flow.cli.progress import Progress, render_bar
from tripleo_flow.core.deploy.progress import (
    PercentSteps,
    PlanProgress,
    StackProgress,
    count_resources,
    plan_stage,
    stack_share,
)
from tripleo_flow.plans.transfer import CountingReader, TransferMeter


@pytest.mark.parametrize("done, total, width, expected", [
    (0, 10, 10, "[----------]"),
    (5, 10, 10, "[#####-----]"),
    (10, 10, 10, "[##########]"),
    (12, 10, 10, "[##########]"),   # never past full
    (-1, 10, 10, "[----------]"),
    (0, 0, 4, "[----]"),            # nothing known yet
    (1, 3, 6, "[##----]"),
])
def test_render_bar(done: int, total: int, width: int, expected: str) -> None:
    assert render_bar(done, total, width) == expected


def test_plain_lines_only_when_something_changes() -> None:
    out = io.StringIO()
    bar = Progress(out, "resources complete", tty=False)
    bar.update(0, 3, "CREATE_IN_PROGRESS")
    bar.update(0, 3, "CREATE_IN_PROGRESS")
    bar.note("  event one")
    bar.update(3, 3, "CREATE_COMPLETE")
    bar.finish()
    assert out.getvalue() == ("resources complete 0/3 CREATE_IN_PROGRESS\n"
                              "  event one\n"
                              "resources complete 3/3 CREATE_COMPLETE\n")
    assert "\r" not in out.getvalue()


def test_terminal_bar_redraws_one_line_and_keeps_notes_above() -> None:
    out = io.StringIO()
    bar = Progress(out, "tasks done", tty=True)
    bar.update(1, 2)
    bar.note("[t] a succeeded")
    bar.update(2, 2)
    bar.finish()
    text = out.getvalue()
    # What a terminal shows: apply carriage returns line by line.
    screen = [segment.split("\r")[-1].rstrip() for segment in text.split("\n")]
    assert screen == ["[t] a succeeded", f"{render_bar(2, 2)} tasks done 2/2", ""]


def test_plain_lines_every_step_percent_and_at_the_end() -> None:
    out = io.StringIO()
    bar = Progress(out, "Uploading", tty=False, plain_step=25)
    for done in range(0, 101, 5):
        bar.update(done, 100, "KiB")
    assert out.getvalue().splitlines() == [
        "Uploading 0/100 KiB", "Uploading 25/100 KiB", "Uploading 50/100 KiB",
        "Uploading 75/100 KiB", "Uploading 100/100 KiB"]


@pytest.mark.parametrize("calls, forwarded", [
    ([(0, 200), (1, 200), (2, 200), (3, 200), (4, 200)], [(0, 200), (2, 200), (4, 200)]),
    ([(5, 10), (5, 10), (10, 10), (10, 10)], [(5, 10), (10, 10)]),
    ([(0, 0)], [(0, 0)]),                     # nothing to do is done
    ([(3, 1000), (2, 1000)], [(3, 1000)]),    # never backwards
])
def test_percent_steps_forward_each_whole_percent_once(
        calls: list[tuple[int, int]], forwarded: list[tuple[int, int]]) -> None:
    got: list[tuple[int, int]] = []
    steps = PercentSteps(lambda done, total: got.append((done, total)))
    for done, total in calls:
        steps(done, total)
    assert got == forwarded


def test_plan_stage_wraps_counts_in_plan_progress() -> None:
    got: list[PlanProgress] = []
    assert plan_stage(None, "oc", "upload") is None
    stage = plan_stage(got.append, "oc", "upload")
    assert stage is not None
    stage(50, 100)
    stage(100, 100)
    assert got == [PlanProgress("oc", "upload", 50, 100), PlanProgress("oc", "upload", 100, 100)]


def test_transfer_meter_counts_a_resent_part_once() -> None:
    got: list[tuple[int, int]] = []
    meter = TransferMeter(300, lambda done, total: got.append((done, total)))
    first, second = meter.part("a"), meter.part("b")
    first(100)
    second(50)
    first(0)      # part a is sent again (a retried request)
    first(100)
    second(100)
    meter.add(100)
    assert got == [(100, 300), (150, 300), (50, 300), (150, 300), (200, 300), (300, 300)]


def test_counting_reader_reports_positions_and_returns_the_data() -> None:
    positions: list[int] = []
    reader = CountingReader(b"abcdefghij", positions.append)
    chunks = [reader.read(4), reader.read(4), reader.read(4), reader.read(4)]
    assert b"".join(chunks) == b"abcdefghij" and chunks[-1] == b""
    assert positions == [4, 8, 10]
    assert len(CountingReader(b"abc")) == 3 and CountingReader(b"abc").read() == b"abc"


def _event(task: str, event: str, progress: dict[str, object] | None = None) -> object:
    from tripleo_flow.engine.compile.runner import ProgressEvent

    return ProgressEvent("e", "wf", task, event, 0.0, progress=progress)


def test_workflow_task_progress_plain_lines_every_ten_percent() -> None:
    from tripleo_flow.cli.workflows import TaskProgress

    out = io.StringIO()
    view = TaskProgress(Progress(out, "tasks done", tty=False), 2)
    view(_event("deploy_stack", "started"))
    for done in range(0, 21):
        view(_event("deploy_stack", "progress",
                    {"stage": "stack", "done": done, "total": 20, "status": "CREATE_X"}))
    view(_event("deploy_stack", "succeeded"))
    lines = [line.split("] ", 1)[-1] for line in out.getvalue().splitlines()
             if "deploy_stack: stack" in line]
    assert lines == [f"deploy_stack: stack {d}/20 CREATE_X" for d in range(0, 21, 2)]
    assert out.getvalue().splitlines()[-1] == "tasks done 1/2"


def test_workflow_task_progress_beside_the_bar_on_a_terminal() -> None:
    from tripleo_flow.cli.workflows import TaskProgress

    out = io.StringIO()
    view = TaskProgress(Progress(out, "tasks done", tty=True), 2)
    view(_event("create", "progress", {"stage": "upload", "done": 3, "total": 4,
                                       "status": ""}))
    assert out.getvalue().endswith(f"{render_bar(0, 2)} tasks done 0/2 (create: upload 3/4)")


def test_workflow_task_progress_prints_a_new_status_at_the_same_step() -> None:
    from tripleo_flow.cli.workflows import TaskProgress

    out = io.StringIO()
    view = TaskProgress(Progress(out, "tasks done", tty=False), 1)
    for done, total, status in [(1, 4, "CREATE_IN_PROGRESS"), (16, 16, "CREATE_IN_PROGRESS"),
                                (16, 16, "CREATE_IN_PROGRESS"), (16, 16, "CREATE_COMPLETE")]:
        view(_event("deploy_stack", "progress",
                    {"stage": "stack", "done": done, "total": total, "status": status}))
    lines = [line.split("] ", 1)[-1] for line in out.getvalue().splitlines()]
    assert lines == ["deploy_stack: stack 1/4 CREATE_IN_PROGRESS",
                     "deploy_stack: stack 16/16 CREATE_IN_PROGRESS",
                     "deploy_stack: stack 16/16 CREATE_COMPLETE"]


# -- a stack's share of the work done (issue 30: a bar that never runs backwards) --------

def _resource(stack: str, name: str, status: str, nested: str | None = None
              ) -> dict[str, object]:
    """A resource as Heat's listing with ``nested_depth`` shows it (links by id)."""
    links = [{"rel": "self", "href": f"http://h/v1/t/stacks/s-{stack}/{stack}/resources/{name}"},
             {"rel": "stack", "href": f"http://h/v1/t/stacks/s-{stack}/{stack}"}]
    if nested is not None:
        links.append({"rel": "nested", "href": f"http://h/v1/t/stacks/s-{nested}/{nested}"})
    return {"resource_name": name, "resource_status": status, "links": links}


def _creation() -> list[list[dict[str, object]]]:
    """Looks at a stack being created: root (a, group, b); group's nested stack (two
    members, each a nested stack of two resources) appears later, as Heat lists them."""
    wip, done, init = "CREATE_IN_PROGRESS", "CREATE_COMPLETE", "INIT_COMPLETE"
    return [
        [_resource("root", "a", wip), _resource("root", "group", init),
         _resource("root", "b", init)],
        [_resource("root", "a", done), _resource("root", "group", wip, "g"),
         _resource("root", "b", init)],
        [_resource("root", "a", done), _resource("root", "group", wip, "g"),
         _resource("root", "b", wip),
         _resource("g", "0", wip, "m0"), _resource("g", "1", wip, "m1"),
         _resource("m0", "x", done), _resource("m0", "y", wip),
         _resource("m1", "x", init), _resource("m1", "y", init)],
        [_resource("root", "a", done), _resource("root", "group", wip, "g"),
         _resource("root", "b", done),
         _resource("g", "0", done, "m0"), _resource("g", "1", wip, "m1"),
         _resource("m0", "x", done), _resource("m0", "y", done),
         _resource("m1", "x", done), _resource("m1", "y", wip)],
        [_resource("root", "a", done), _resource("root", "group", done, "g"),
         _resource("root", "b", done),
         _resource("g", "0", done, "m0"), _resource("g", "1", done, "m1"),
         _resource("m0", "x", done), _resource("m0", "y", done),
         _resource("m1", "x", done), _resource("m1", "y", done)],
    ]


def test_a_stack_share_never_goes_down_while_the_plain_count_does() -> None:
    looks = _creation()
    shares = [stack_share(look, "root") for look in looks]
    counts = [count_resources(look) for look in looks]
    plain = [done / total for done, total in counts]
    assert shares == sorted(shares) and shares[0] == 0.0 and shares[-1] == 1.0
    # the problem the share solves: the count's total grows, its fraction goes backwards
    assert [total for _, total in counts] == [3, 3, 9, 9, 9]
    assert any(later < earlier for earlier, later in zip(plain, plain[1:], strict=False))
    # a resource with a nested stack weighs what that stack has done: 1 (a) + 1/2 (m0)
    # x 1/2 (group's members) ... of the root's three resources
    assert shares[2] == pytest.approx((1 + (0.5 + 0.0) / 2 + 0) / 3)


def test_a_stack_share_needs_to_know_which_stack_each_resource_is_in() -> None:
    assert stack_share([{"resource_name": "a", "resource_status": "CREATE_COMPLETE"}],
                       "root") is None
    assert stack_share([_resource("other", "a", "CREATE_COMPLETE")], "root") is None
    # a nested link back to a stack on the path counts nothing (and does not loop)
    assert stack_share([_resource("root", "a", "CREATE_IN_PROGRESS", "root"),
                        _resource("root", "b", "CREATE_COMPLETE")], "root") == 0.5


def test_stack_progress_fraction_is_its_share_else_its_count() -> None:
    assert StackProgress("oc", "CREATE_IN_PROGRESS", 3, 9, share=0.75).fraction() == 0.75
    assert StackProgress("oc", "CREATE_IN_PROGRESS", 3, 9).fraction() == pytest.approx(1 / 3)
    assert StackProgress("oc", "CREATE_IN_PROGRESS", 0, 0).fraction() == 1.0


def test_the_terminal_bar_is_drawn_from_the_share_when_there_is_one() -> None:
    out = io.StringIO()
    bar = Progress(out, "resources complete", tty=True)
    bar.update(3, 9, "(stack oc CREATE_IN_PROGRESS)", share=0.75)
    assert out.getvalue().startswith("\r" + render_bar(3, 4) + " 75% resources complete 3/9")
    plain = io.StringIO()
    Progress(plain, "resources complete", tty=False).update(3, 9, "x", share=0.5)
    assert plain.getvalue() == "50% resources complete 3/9 x\n"
