"""The console script's exit (:func:`tripleo_flow.cli.main.fast_exit`): exit handlers
run and output is flushed, the interpreter's teardown of every object is skipped, and
a process with another thread still running exits normally (waiting for it).  A
process's own exit is the subject: a functional test, though it needs no service."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent("""\
    import atexit, sys, threading, time
    from pathlib import Path
    from tripleo_flow.cli.main import fast_exit

    out = Path(sys.argv[1])

    class Torn:
        # Runs only when the interpreter tears its objects down.
        def __del__(self):
            (out / "teardown").write_text("ran")

    keep = Torn()
    atexit.register(lambda: (out / "atexit").write_text("ran"))
    if sys.argv[2] == "thread":
        def late():
            time.sleep(0.5)
            (out / "thread").write_text("done")
        threading.Thread(target=late).start()
    sys.stdout.write("x" * 100000)  # buffered: a pipe is not a terminal
    fast_exit(5)
    """)


def run(tmp_path: Path, mode: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    return subprocess.run([sys.executable, str(script), str(tmp_path), mode],
                          capture_output=True, text=True, timeout=60, check=False)


def test_the_exit_runs_the_handlers_flushes_output_and_skips_the_teardown(tmp_path):
    done = run(tmp_path, "alone")
    assert done.returncode == 5, done.stderr
    assert done.stdout == "x" * 100000
    assert (tmp_path / "atexit").read_text() == "ran"
    assert not (tmp_path / "teardown").exists()


def test_a_thread_still_running_gets_the_normal_exit_that_waits_for_it(tmp_path):
    done = run(tmp_path, "thread")
    assert done.returncode == 5, done.stderr
    assert done.stdout == "x" * 100000
    assert (tmp_path / "thread").read_text() == "done"
    assert (tmp_path / "atexit").read_text() == "ran"


def test_the_console_script_is_the_fast_exit():
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "tripleo-flow"]
    assert script.value == "tripleo_flow.cli.main:console_main"
