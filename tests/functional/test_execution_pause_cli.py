"""``tripleo-flow execution pause ID`` (issue 26): a ``workflow run`` in one CLI process,
paused from another CLI process, as ``mistral execution-update -s PAUSED`` pauses a
running execution.  Its running task (a ``std.http`` request the local server holds
until the pause is asked) ends, the next one never starts (the server counts the
requests each ``std.http`` task sends), the run ends PAUSED; ``execution resume``
then runs it to SUCCESS with every task run once.
Refused pauses (an ended, a paused, an unknown execution) exit with their kind's
code and change nothing.  Both engines: a compiled graph, and the state machine (a
``join`` makes the workflow run there).
"""

from __future__ import annotations

import collections
import http.server
import json
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import until

EXE = str(Path(sys.executable).parent / "tripleo-flow")


class _Counter(http.server.BaseHTTPRequestHandler):
    seen: collections.Counter[str]
    #: Set: the request for /slow is answered (until then, its task runs).
    release: threading.Event

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.seen[self.path.strip("/")] += 1
        if self.path == "/slow":
            self.release.wait(120)
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        """Quiet."""


Counter = tuple[str, collections.Counter[str], threading.Event]


@pytest.fixture
def counter() -> Iterator[Counter]:
    """A local HTTP server: its URL, how often each path was asked for, and the event
    that lets it answer /slow."""
    seen: collections.Counter[str] = collections.Counter()
    release = threading.Event()
    handler = type("Handler", (_Counter,), {"seen": seen, "release": release})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen, release
    finally:
        release.set()
        server.shutdown()
        server.server_close()
        thread.join(10)


def _workbook(join: bool) -> str:
    return textwrap.dedent(f"""\
        version: '2.0'
        name: pausing_cli
        workflows:
          chain:
            input: [url]
            tasks:
              first:
                action: std.http url=<% $.url + '/first' %>
                on-success: [slow]
              slow:
                action: std.http url=<% $.url + '/slow' %>
                on-success: [after]
              after:
                action: std.http url=<% $.url + '/after' %>
                on-success: [last]
              last:
                {"join: all" if join else ""}
                action: std.http url=<% $.url + '/last' %>
        """)


def _cli(conf: Path, *args: str, code: int = 0) -> Any:
    done = subprocess.run([EXE, "--config-file", str(conf), *args, "-f", "json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == code, (done.returncode, done.stderr[-3000:])
    return json.loads(done.stdout) if code == 0 else done.stderr




@pytest.mark.parametrize("join", [False, True], ids=["graph", "state-machine"])
def test_execution_pause_from_another_cli_process(
        tmp_path: Path, counter: Counter, join: bool) -> None:
    url, seen, release = counter
    conf = tmp_path / "tripleo-flow.conf"
    conf.write_text(f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n")
    workbook = tmp_path / "pausing_cli.yaml"
    workbook.write_text(_workbook(join))
    _cli(conf, "workbook", "create", str(workbook))
    run = subprocess.Popen([EXE, "--config-file", str(conf), "workflow", "run",
                            "pausing_cli.chain", "--input", f"url={url}", "-f", "json"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        until("the slow task's request", lambda: seen["slow"] == 1)  # it runs
        [listed] = _cli(conf, "execution", "list")
        ident = listed["ID"]
        asked = _cli(conf, "execution", "pause", ident)
        # Mistral's PAUSED at once; its running task ends first
        assert (asked["ID"], asked["State"]) == (ident, "PAUSED")
        time.sleep(1)
        assert run.poll() is None  # it waits for its running task
        release.set()
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(10)
    assert run.returncode == 0, err[-3000:]
    assert json.loads(out)["State"] == "PAUSED"
    assert _cli(conf, "execution", "show", ident)["State"] == "PAUSED"
    assert dict(seen) == {"first": 1, "slow": 1}  # the next task never started
    tasks = {t["Task"]: t["State"] for t in _cli(conf, "execution", "tasks", ident)}
    assert tasks["first"] == tasks["slow"] == "SUCCESS"
    assert tasks.get("after", "PENDING") == "PENDING"

    # Paused already: left as it is, as Mistral's pause of a paused workflow.
    assert _cli(conf, "execution", "pause", ident)["State"] == "PAUSED"
    assert _cli(conf, "execution", "show", ident)["State"] == "PAUSED"

    resumed = _cli(conf, "execution", "resume", ident)
    assert resumed["State"] == "SUCCESS"
    assert dict(seen) == {"first": 1, "slow": 1, "after": 1, "last": 1}  # each once
    tasks = {t["Task"]: t["State"] for t in _cli(conf, "execution", "tasks", ident)}
    assert tasks == dict.fromkeys(["first", "slow", "after", "last"], "SUCCESS")

    ended = _cli(conf, "execution", "pause", ident, code=4)
    assert "has already ended (SUCCESS)" in ended
    assert _cli(conf, "execution", "show", ident)["State"] == "SUCCESS"
    assert "no-such-execution" in _cli(conf, "execution", "pause", "no-such-execution",
                                       code=3)  # NotFound
    assert dict(seen) == {"first": 1, "slow": 1, "after": 1, "last": 1}
