"""The progress display: a bar on a terminal, plain lines elsewhere."""

from __future__ import annotations

import io

import pytest

from tripleo_flow.cli.progress import Progress, render_bar


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
