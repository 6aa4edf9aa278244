"""What a person sees: ``workflow run`` under tmux draws a bar; through a pipe, plain lines."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

WORKBOOK = textwrap.dedent("""\
    version: '2.0'
    name: progress_demo
    workflows:
      three_steps:
        tasks:
          one:
            action: std.sleep
            input: {seconds: 0.2}
            on-success: two
          two:
            action: std.sleep
            input: {seconds: 0.2}
            on-success: three
          three:
            action: std.echo
            input: {output: done}
    """)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    exe = shutil.which("tripleo-flow", path=os.path.dirname(sys.executable))
    assert exe, "tripleo-flow is not installed in this virtualenv"
    environ = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path),
                   PATH=os.path.dirname(exe) + os.pathsep + os.environ["PATH"])
    book = tmp_path / "progress_demo.yaml"
    book.write_text(WORKBOOK)
    subprocess.run([exe, "workbook", "create", str(book)], env=environ, check=True,
                   capture_output=True, timeout=60)
    return environ


def test_bar_on_a_terminal(env: dict[str, str], tmp_path: Path) -> None:
    tmux = shutil.which("tmux")
    if tmux is None:
        pytest.fail("tmux is not installed: run tools/run-tests.sh (apt-get install tmux)")
    session = f"tf-{uuid.uuid4().hex[:8]}"
    command = ("tripleo-flow workflow run three_steps -f value -c State; "
               "echo __FINISHED__; sleep 60")
    subprocess.run([tmux, "new-session", "-d", "-s", session, "-x", "120", "-y", "30",
                    "bash", "--norc", "-c", command], env=env, check=True, timeout=30)
    try:
        deadline = time.monotonic() + 90
        screen = ""
        while time.monotonic() < deadline:
            screen = subprocess.run([tmux, "capture-pane", "-p", "-t", session],
                                    capture_output=True, text=True, check=True).stdout
            if "__FINISHED__" in screen:
                break
            time.sleep(0.2)
        lines = [line.rstrip() for line in screen.splitlines()]
        assert "__FINISHED__" in lines, screen
        assert "[########################] tasks done 3/3" in lines, screen
        assert "SUCCESS" in lines, screen
        # Each task's events stay readable above the bar, each on a line of its own.
        for task in ("one", "two", "three"):
            assert any(line.endswith(f"{task} succeeded") for line in lines), screen
        assert not any("tasks done 1/3" in line for line in lines), screen  # redrawn in place
    finally:
        subprocess.run([tmux, "kill-session", "-t", session], check=False, timeout=30)


def test_plain_lines_through_a_pipe(env: dict[str, str]) -> None:
    proc = subprocess.run(["tripleo-flow", "workflow", "run", "three_steps", "-f", "value",
                           "-c", "State"], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "SUCCESS"
    assert "\r" not in proc.stderr
    counts = [line for line in proc.stderr.splitlines() if line.startswith("tasks done")]
    assert counts == ["tasks done 0/3", "tasks done 1/3", "tasks done 2/3", "tasks done 3/3"]
