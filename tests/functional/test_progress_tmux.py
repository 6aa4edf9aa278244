"""What a person sees: ``workflow run`` and ``plan create`` under tmux draw bars;
through a pipe, plain lines."""

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

from tests.plan_trees import basic_tree, write_tree

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
    screen = run_in_tmux(tmux, env, "tripleo-flow workflow run three_steps -f value -c State")
    lines = [line.rstrip() for line in screen.splitlines()]
    assert "[########################] tasks done 3/3" in lines, screen
    assert "SUCCESS" in lines, screen
    # Each task's events stay readable above the bar, each on a line of its own.
    for task in ("one", "two", "three"):
        assert any(line.endswith(f"{task} succeeded") for line in lines), screen
    assert not any("tasks done 1/3" in line for line in lines), screen  # redrawn in place


def run_in_tmux(tmux: str, env: dict[str, str], command: str) -> str:
    """Run ``command`` in a 120x30 tmux pane; the screen once it has finished."""
    session = f"tf-{uuid.uuid4().hex[:8]}"
    subprocess.run([tmux, "new-session", "-d", "-s", session, "-x", "120", "-y", "30",
                    "bash", "--norc", "-c", f"{command}; echo __FINISHED__; sleep 60"],
                   env=env, check=True, timeout=30)
    try:
        deadline = time.monotonic() + 90
        screen = ""
        while time.monotonic() < deadline:
            screen = subprocess.run([tmux, "capture-pane", "-p", "-t", session],
                                    capture_output=True, text=True, check=True).stdout
            if "__FINISHED__" in screen:
                break
            time.sleep(0.2)
        assert "__FINISHED__" in [line.rstrip() for line in screen.splitlines()], screen
        return screen
    finally:
        subprocess.run([tmux, "kill-session", "-t", session], check=False, timeout=30)


def test_plan_create_bars_on_a_terminal(env: dict[str, str], tmp_path: Path) -> None:
    tmux = shutil.which("tmux")
    if tmux is None:
        pytest.fail("tmux is not installed: run tools/run-tests.sh (apt-get install tmux)")
    templates = write_tree(tmp_path / "t", basic_tree())
    screen = run_in_tmux(tmux, env, f"tripleo-flow plan create oc --templates {templates} "
                         "-f value -c name")
    lines = [line.rstrip() for line in screen.splitlines()]
    checked = [line for line in lines if "Checking templates (oc)" in line]
    uploaded = [line for line in lines if "Uploading templates (oc)" in line]
    # One finished bar per stage, each redrawn in place on its own line.
    assert len(checked) == 1 and checked[0].startswith("[" + "#" * 24 + "]"), screen
    assert len(uploaded) == 1 and uploaded[0].startswith("[" + "#" * 24 + "]"), screen
    done, total = uploaded[0].split()[-2].split("/")
    assert done == total and int(total) > 0, screen
    assert "oc" in lines, screen


def test_plan_create_plain_lines_through_a_pipe(env: dict[str, str], tmp_path: Path) -> None:
    files = basic_tree()
    for i in range(60):  # enough files for every 10% step to show
        files[f"extra/file-{i:02d}.yaml"] = f"value: {i}\n" * 50
    templates = write_tree(tmp_path / "t", files)
    proc = subprocess.run(["tripleo-flow", "plan", "create", "oc", "--templates", str(templates),
                           "-f", "value", "-c", "name"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "oc" and "\r" not in proc.stderr
    uploads = [line for line in proc.stderr.splitlines() if line.startswith("Uploading")]
    checks = [line for line in proc.stderr.splitlines() if line.startswith("Checking")]
    for lines in (checks, uploads):
        assert 2 <= len(lines) <= 11, proc.stderr   # every 10%, not every file or block
        counts = [tuple(int(n) for n in line.split()[3].split("/")) for line in lines]
        assert counts[-1][0] == counts[-1][1] and counts == sorted(counts), proc.stderr
    assert uploads[-1].endswith("KiB") and checks[-1].endswith("files")


def test_plain_lines_through_a_pipe(env: dict[str, str]) -> None:
    proc = subprocess.run(["tripleo-flow", "workflow", "run", "three_steps", "-f", "value",
                           "-c", "State"], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "SUCCESS"
    assert "\r" not in proc.stderr
    counts = [line for line in proc.stderr.splitlines() if line.startswith("tasks done")]
    assert counts == ["tasks done 0/3", "tasks done 1/3", "tasks done 2/3", "tasks done 3/3"]
