"""Each change of an ephemeral Heat is a recorded execution (issue 28 item 3).

``Client.heat.launch``, ``kill_heat``, ``dump_heat_db`` and ``restore_heat_db`` (and
``tripleo-flow launch heat [--restore-db|--kill]``, which call them) ran their Heat
action outside any workflow, recording nothing: they run the workflows
``tripleo.heat.launch``, ``kill``, ``dump_db`` and ``restore_db`` now, on a real
native Heat.  Each shows what it did as before; a refusal is recorded ERROR with
the failed task, raises (exits) with its kind, and changes nothing.  Reading a Heat's
status records nothing.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.functional.heat.conftest import heat_processes, make_conf
from tests.functional.heat.test_deploy_progress import _conf_file
from tests.functional.http.conftest import finished, serving
from tripleo_flow import exceptions
from tripleo_flow.cli.main import main
from tripleo_flow.client import Client
from tripleo_flow.heat.workdir import HeatDir

pytestmark = pytest.mark.functional
HEAT = "tripleo.heat."


def _runs(client: Client, workflow: str) -> list[tuple[str, str, list[str]]]:
    """``(state, heat_dir input, ["task STATE", ...])`` of each execution of Heat
    workflow ``workflow``, oldest first."""
    return [(e.state, Path(e.input["heat_dir"]).name,
             [f"{t.name} {t.state}" for t in client.tasks.list(e.id)])
            for e in client.executions.list(HEAT + workflow)]


@pytest.fixture
def client(tmp_path: Path, heat_venv: Path) -> Iterator[Client]:
    with Client(make_conf(tmp_path, heat_venv)) as api:
        yield api
        api.heat.kill(str(tmp_path / "work"))


def test_each_heat_change_from_the_python_api_is_an_execution(client: Client,
                                                               tmp_path: Path) -> None:
    heat_dir = str(tmp_path / "work")
    work = HeatDir(heat_dir)

    launched = client.heat.launch(heat_dir, "native")
    assert launched["heat_type"] == "native" and launched["endpoint"].endswith("/v1/admin")
    # A second launch is refused; the running Heat goes on answering.
    with pytest.raises(exceptions.HeatRunning):
        client.heat.launch(heat_dir, "native")
    status = client.heat.status(heat_dir)
    assert status["running"] is True and status["api_answers"] is True
    assert status["endpoint"] == launched["endpoint"]

    assert client.heat.dump_db(heat_dir) == str(work.dump_file)
    restored = client.heat.restore_db(heat_dir)
    # Restarted on a port of its own again, the one its run record names.
    assert restored["endpoint"] == client.heat.status(heat_dir)["endpoint"]
    assert restored["endpoint"].endswith(f":{(work.read_run() or {})['port']}/v1/admin")
    assert restored["heat_dir"] == launched["heat_dir"]
    killed = client.heat.kill(heat_dir)
    assert killed["dump"] == str(work.dump_file) and killed["stopped"]
    assert heat_processes(work.conf_file) == []

    # Refused with nothing running: the dump the kill made is kept as it is.
    dump = work.dump_file.read_bytes()
    with pytest.raises(exceptions.HeatError, match="No Heat database to dump"):
        client.heat.dump_db(heat_dir)
    assert work.dump_file.read_bytes() == dump
    # Refused without a dump: no Heat started there.
    empty = str(tmp_path / "empty")
    with pytest.raises(exceptions.DumpNotFound):
        client.heat.restore_db(empty, "native")
    assert client.heat.status(empty, "native")["running"] is False

    assert _runs(client, "launch") == [("SUCCESS", "work", ["launch_heat SUCCESS"]),
                                       ("ERROR", "work", ["launch_heat ERROR"])]
    assert _runs(client, "dump_db") == [("SUCCESS", "work", ["dump_db SUCCESS"]),
                                        ("ERROR", "work", ["dump_db ERROR"])]
    assert _runs(client, "restore_db") == [("SUCCESS", "work", ["restore_db SUCCESS"]),
                                           ("ERROR", "empty", ["restore_db ERROR"])]
    assert _runs(client, "kill") == [("SUCCESS", "work", ["kill_heat SUCCESS"])]
    failed = [e.failed_task for e in client.executions.list() if e.state == "ERROR"]
    assert failed == ["launch_heat", "dump_db", "restore_db"]
    # the status reads (three) are no executions
    assert len(client.executions.list()) == 7


def test_launch_heat_from_the_cli_is_an_execution(tmp_path: Path, heat_venv: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    conf_file = _conf_file(tmp_path, heat_venv)
    conf = ["--config-file", str(conf_file)]
    heat_dir = str(tmp_path / "work")

    def run(*args: str) -> dict:
        assert main([*conf, *args, "-f", "json"]) == 0
        return json.loads(capsys.readouterr().out)

    with Client.from_config_files([str(conf_file)]) as client:
        try:
            # The launching command (a process of its own) ends; its Heat runs on.
            exe = shutil.which("tripleo-flow", path=os.path.dirname(sys.executable))
            assert exe, "tripleo-flow is not installed in this virtualenv"
            proc = subprocess.run([exe, *conf, "launch", "heat", "--heat-type", "native",
                                   "--heat-dir", heat_dir, "-f", "json"],
                                  capture_output=True, text=True, timeout=300, check=True)
            launched = json.loads(proc.stdout)
            assert launched["endpoint"].endswith("/v1/admin")
            assert main([*conf, "launch", "heat", "--heat-dir", heat_dir]) == 4  # conflict
            assert "A Heat is already running" in capsys.readouterr().err
            assert run("heat", "status", "--heat-dir", heat_dir)["api_answers"] is True
            killed = run("launch", "heat", "--heat-dir", heat_dir, "--kill")
            assert killed["dump"] and killed["stopped"]
            again = run("launch", "heat", "--heat-dir", heat_dir, "--restore-db")
            assert again["endpoint"] == run("heat", "status", "--heat-dir", heat_dir)["endpoint"]
            empty = str(tmp_path / "empty")
            assert main([*conf, "launch", "heat", "--heat-type", "native", "--heat-dir",
                         empty, "--restore-db"]) == 3  # not found
            assert "No Heat database dump" in capsys.readouterr().err
            assert run("heat", "status", "--heat-dir", empty,
                       "--heat-type", "native")["running"] is False
        finally:
            run("launch", "heat", "--heat-dir", heat_dir, "--kill")

        assert _runs(client, "launch") == [
            ("SUCCESS", "work", ["launch_heat SUCCESS"]),
            ("ERROR", "work", ["launch_heat ERROR"]),
            ("SUCCESS", "work", ["launch_heat SUCCESS"]),
            ("ERROR", "empty", ["launch_heat ERROR"])]
        assert _runs(client, "kill") == [("SUCCESS", "work", ["kill_heat SUCCESS"])] * 2
        assert [e.input.get("restore_db") for e in client.executions.list(HEAT + "launch")] == [
            False, False, True, True]
        assert len(client.executions.list()) == 6


def test_an_http_client_names_a_heat_dir_in_the_servers_work_area(tmp_path: Path) -> None:
    """Over the HTTP API a Heat workflow's heat_dir is a plain name under the server's
    work area (or a path under ``[api] allowed_paths``): any other is refused before
    an execution exists, and nothing is made there."""
    conf = make_conf(tmp_path, tmp_path / "no-venv")  # no Heat starts here
    token = secrets.token_hex(16)
    conf.set_override("auth_token", token, group="api")
    outside = tmp_path / "outside"
    with Client(conf) as client, serving(client, token) as api:
        for workflow in ("launch", "kill", "dump_db", "restore_db"):
            for hostile in ("../escape", str(outside), "/etc"):
                refused = api("POST", f"/v1/workflows/{HEAT}{workflow}/executions",
                              json={"input": {"heat_dir": hostile, "heat_type": "native"}})
                assert refused.status_code == 400, refused.text
                assert "must be a plain name" in refused.json()["error"]["message"]
        assert client.executions.list() == []
        started = api("POST", f"/v1/workflows/{HEAT}kill/executions",
                      json={"input": {"heat_dir": "mine"}})
        assert started.status_code == 202, started.text
        ended = finished(api, started.json()["id"])
        assert ended["state"] == "SUCCESS" and ended["output"]["killed"]["stopped"] == []
        assert ended["input"] == {"heat_dir": "<data>/work/mine"}
    assert not outside.exists() and not (tmp_path.parent / "escape").exists()
