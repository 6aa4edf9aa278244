"""A second run of each ``heat.*`` action, with the same inputs, on a real native heat-all
(issue 17: a resumed workflow runs its interrupted task again from its start).

One heat-dir goes through the whole life cycle (three launches of heat-all in all, so
it is one test): each action runs once, the heat-dir is looked at (the heat-all
processes of its heat.conf, run.json, the status, the database dump and what it
holds, the stacks Heat lists), the action runs again with the same inputs, and the
test checks what the action's :class:`~tripleo_flow.actions.base.Rerun` promises.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import shutil
import sqlite3
import subprocess
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.engine_helpers import MemoryJournal
from tests.functional.heat.conftest import heat_processes
from tests.plan_state import state_diff, store_state
from tripleo_flow import exceptions
from tripleo_flow.actions.base import Rerun
from tripleo_flow.actions.registry import ActionRegistry
from tripleo_flow.actions.schema import CACHE_OBJECT
from tripleo_flow.client import Client
from tripleo_flow.client.plans import sample_plan_dir
from tripleo_flow.heat.client import HeatClient
from tripleo_flow.heat.workdir import HeatDir

pytestmark = pytest.mark.functional

REGISTRY = ActionRegistry.load()
TEMPLATE = Path(__file__).with_name("small-stack.yaml")
#: What a relaunch of the same heat-dir changes by itself: its process and start time.
#: What each launch has of its own (its process; its port: a free one per launch).
PER_PROCESS = ("pid", "started_at", "port", "endpoint")


def _digest(path: Path) -> str | None:
    return hashlib.md5(path.read_bytes()).hexdigest() if path.exists() else None


def _dumped_stacks(dump: Path) -> list[tuple[str, str, str]]:
    """(name, action, status) of every top-level stack the SQL dump holds, loaded on its
    own."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(dump.read_text())
        return db.execute("SELECT name, action, status FROM stack WHERE owner_id IS NULL "
                          "ORDER BY name").fetchall()
    finally:
        db.close()


def _state(client: Client, work: HeatDir) -> dict[str, Any]:
    record = work.read_run()
    status = REGISTRY.get("heat.status")(client._session.context).execute(
        heat_dir=str(work.root), heat_type="native")
    stacks = None
    if status["api_answers"]:
        found = HeatClient(status["endpoint"]).find_stack("small")
        stacks = found and (found["stack_name"], found["stack_status"])
    database = Path(record["database"]["path"]) if record else None
    return {"processes": len(heat_processes(work.conf_file)),
            "run": {k: v for k, v in (record or {}).items() if k not in PER_PROCESS},
            "database": database is not None and database.exists(),
            "status": {k: _any_port(v) if isinstance(v, str) else v
                       for k, v in {**status, "detail": re.sub(
                           r"pid \d+", "pid N", status["detail"])}.items()},
            "stacks": stacks,
            "dump": _digest(work.dump_file),
            "dumped": _dumped_stacks(work.dump_file) if work.dump_file.exists() else None}


def _any_port(text: str) -> str:
    """``text`` with any loopback port as ``PORT`` (each launch takes its own)."""
    return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text)


def _outcome(client: Client, name: str, inputs: dict[str, Any]) -> Any:
    try:
        return REGISTRY.get(name)(client._session.context).execute(**inputs)
    except exceptions.TripleoFlowError as exc:
        return exc


def _twice(client: Client, look: Callable[[], dict[str, Any]], name: str,
           inputs: dict[str, Any]) -> tuple[Any, Any, dict[str, Any], dict[str, Any]]:
    """Run ``name`` twice, looking at the state (``look``) before and after each run;
    check its Rerun; both outcomes and the states after each run."""
    rerun = REGISTRY.get(name).rerun
    before = look()
    first = _outcome(client, name, inputs)
    assert not isinstance(first, exceptions.TripleoFlowError), f"{name} failed: {first}"
    middle = look()
    second = _outcome(client, name, inputs)
    after = look()
    if rerun is Rerun.READS:
        assert middle == before == after, f"{name} is declared as only reading"
        assert second == first
    elif rerun is Rerun.REFUSES:
        assert middle != before, f"{name} changed nothing on its first run"
        assert isinstance(second, exceptions.TripleoFlowError), second
        assert after == middle, f"a refused {name} changed something"
    else:
        assert rerun is Rerun.CONVERGES, rerun
        assert not isinstance(second, exceptions.TripleoFlowError), \
            f"a second {name} failed: {second}"
    return first, second, middle, after


def twice(client: Client, work: HeatDir, name: str, **inputs: Any
          ) -> tuple[Any, Any, dict[str, Any], dict[str, Any]]:
    """A heat.* action twice, on the heat-dir ``work``."""
    return _twice(client, lambda: _state(client, work), name,
                  {"heat_dir": str(work.root), "heat_type": "native", **inputs})


def test_each_heat_action_run_twice(client: Client, tmp_path: Path) -> None:
    work = HeatDir(tmp_path / "work")

    # heat.status reads: twice the same answer, before anything runs.
    first, _, state, _ = twice(client, work, "heat.status")
    assert (first["running"], first["detail"], state["dump"]) == (False, "not running", None)

    # heat.launch refuses a second run: the Heat it started goes on, untouched.
    first, second, state, after = twice(client, work, "heat.launch")
    assert isinstance(second, exceptions.HeatRunning)
    assert str(work.root) in str(second) and "--kill" in str(second)
    assert [h.op for h in second.hints] == ["heat.kill"]
    assert work.read_run() is not None
    assert state["processes"] == after["processes"] == 1
    assert state["status"]["running"] and state["status"]["api_answers"]

    # A stack, for the dump and restore to carry.
    heat = HeatClient(first["endpoint"])
    heat.create_stack({"stack_name": "small", "template": yaml.safe_load(TEMPLATE.read_text()),
                       "parameters": {"length": 7}})
    assert heat.wait("small", interval=0.5)["stack_status"] == "CREATE_COMPLETE"
    pid = (work.read_run() or {})["pid"]

    # heat.status reads, while Heat runs.
    first, _, state, _ = twice(client, work, "heat.status")
    assert first["running"] and first["api_answers"]
    assert state["stacks"] == ("small", "CREATE_COMPLETE")

    # heat.dump_db converges: the dump holds the stack, Heat runs on as it was.
    first, second, state, after = twice(client, work, "heat.dump_db")
    assert first == second == str(work.dump_file)
    assert state["dumped"] == after["dumped"] == [("small", "CREATE", "COMPLETE")]
    assert {k: v for k, v in after.items() if k != "dump"} == \
        {k: v for k, v in state.items() if k != "dump"}
    assert (work.read_run() or {})["pid"] == pid
    # The second run keeps the first run's dump aside as the one to put back on undo
    # (there was none before the first run): what DumpHeatDatabase.revert restores.
    previous = work.dump_file.with_name(work.dump_file.name + ".prev")
    assert _digest(previous) == state["dump"]
    # Re-run by a resumed execution (with the task's undo journal), it keeps the copy
    # of the dump there was before its first run, which a revert then puts back.
    work.dump_file.write_bytes(b"-- the dump before\n")
    journaled = dataclasses.replace(client._session.context, undo_journal=MemoryJournal())
    action = REGISTRY.get("heat.dump_db")(journaled)
    inputs = {"heat_dir": str(work.root), "heat_type": "native"}
    action.execute(**inputs)
    result = action.execute(**inputs)
    assert previous.read_bytes() == b"-- the dump before\n"
    action.revert(result=result, **inputs)
    assert work.dump_file.read_bytes() == b"-- the dump before\n"
    # the stack's dump again
    REGISTRY.get("heat.dump_db")(client._session.context).execute(**inputs)

    # heat.restore_db converges: one Heat again, on the dump's stack (a new process).
    first, second, state, after = twice(client, work, "heat.restore_db")
    assert {k: v for k, v in second.items() if k != "endpoint"} == \
        {k: v for k, v in first.items() if k != "endpoint"}
    # each run starts a Heat of its own, on a port of its own: the second's runs now
    assert second["endpoint"] == f"http://127.0.0.1:{(work.read_run() or {})['port']}/v1/admin"
    assert after == state
    assert after["processes"] == 1 and after["stacks"] == ("small", "CREATE_COMPLETE")
    assert (work.read_run() or {})["pid"] != pid

    # heat.kill converges: the second finds nothing to stop and keeps the first's dump.
    first, second, state, after = twice(client, work, "heat.kill")
    assert first["dump"] == str(work.dump_file) and first["stopped"]
    assert second == {"heat_dir": str(work.root), "dump": None, "stopped": []}
    assert after == state
    assert (state["processes"], state["run"], state["database"]) == (0, {}, False)
    assert state["dumped"] == [("small", "CREATE", "COMPLETE")]

    # heat.status reads, once Heat is gone.
    first, _, state, _ = twice(client, work, "heat.status")
    assert not first["running"] and first["dump"] == str(work.dump_file)


def test_parameters_get_twice_reads_the_same_schema(client: Client) -> None:
    """parameters.get reads: the plan is unchanged and the schema is the same.  The
    first run launches a private Heat (and caches the schema with the plan, derived
    data :mod:`tests.plan_state` leaves out); the second answers from that cache."""
    client.plans.create("p", sample=True)
    before = store_state(client._session.store)
    first = _outcome(client, "parameters.get", {"plan": "p"})
    middle = store_state(client._session.store)
    cache = client._session.store.get_object("p", CACHE_OBJECT)
    second = _outcome(client, "parameters.get", {"plan": "p"})
    assert REGISTRY.get("parameters.get").rerun is Rerun.READS
    assert state_diff(before, middle) == [] and state_diff(middle,
                                                           store_state(client._session.store)) == []
    assert client._session.store.get_object("p", CACHE_OBJECT) == cache
    assert (first["cached"], second["cached"]) == (False, True)
    assert {**second, "cached": False} == first
    assert first["parameters"]["ControllerCount"]["value"] == 1
    parent = client.data_dir / "parameters-heat"
    assert heat_processes(parent) == [] and list(parent.iterdir()) == []


def test_ansible_check_twice_reads(client: Client, ansible_venv: Path, tmp_path: Path) -> None:
    """ansible.check (the deploy workflow's first look at Ansible) reads: the same
    ansible-playbook twice, nothing written; a missing one is the same clear error."""
    client.conf.set_override("venv", str(ansible_venv), group="ansible")
    before = sorted(tmp_path.rglob("*"))
    first = _outcome(client, "ansible.check", {})
    second = _outcome(client, "ansible.check", {})
    assert REGISTRY.get("ansible.check").rerun is Rerun.READS
    assert first == second == {"ansible_playbook": str(ansible_venv / "bin" / "ansible-playbook")}
    assert sorted(tmp_path.rglob("*")) == before
    client.conf.set_override("venv", str(tmp_path / "no-ansible"), group="ansible")
    missing = [_outcome(client, "ansible.check", {}) for _ in range(2)]
    assert all(isinstance(m, exceptions.AnsibleNotInstalled) for m in missing)
    assert str(missing[0]) == str(missing[1]) and "no-ansible" in str(missing[0])


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def _work_files(work: Path) -> dict[str, str | None]:
    """The digest of each file a deploy step writes in the work dir (not Heat's own)."""
    names = ("stack-request.json", "outputs.yaml", "environment.yaml", "heat-db-dump.sql")
    return {name: _digest(work / name) for name in names}


def _deploy_state(client: Client, work: Path) -> dict[str, Any]:
    cd = work / "config-download"
    return {"files": _work_files(work), "store": store_state(client._session.store),
            "config_download": (_git(cd, "rev-parse", "HEAD^{tree}"),
                                _git(cd, "rev-list", "--count", "HEAD"))}


def _deploy_twice(client: Client, work: Path, name: str, **inputs: Any
                  ) -> tuple[Any, Any, dict[str, Any], dict[str, Any]]:
    """A deploy.* action twice, on the work dir ``work``."""
    return _twice(client, lambda: _deploy_state(client, work), name, inputs)


def test_deploy_steps_after_the_stack_twice(client: Client, tmp_path: Path) -> None:
    """The deploy workflow's steps after the stack (those ``deploy --config-download-only``
    runs, on the stack a deploy of the sample plan kept), each twice with the inputs
    the workflow gives it."""
    work = tmp_path / "work"
    client.plans.create("oc", sample=True)
    client.deployments.create("oc", heat_type="native", work_dir=work)
    ids = {"plan": "oc", "work_dir": str(work)}

    request, _, state, _ = _deploy_twice(client, work, "deploy.kept_stack", **ids)
    assert request["file"] == str(work / "stack-request.json")

    # As the workflow does: the plan is DEPLOYING again (its record without stack status).
    _outcome(client, "deploy.start", {**ids, "heat_type": "native"})
    heat = _outcome(client, "deploy.launch_heat", {"work_dir": str(work),
                                                    "heat_type": "native"})
    assert heat["restored"] is True
    # In the process that launched it (alive: a lost claim, not a kill -9), a second
    # launch is refused; after a kill -9 the resumed execution launches Heat again
    # (test_deploy_crash.py::test_a_deploy_killed_while_the_stack_is_created_resumes).
    again = _outcome(client, "deploy.launch_heat", {"work_dir": str(work),
                                                     "heat_type": "native"})
    assert isinstance(again, exceptions.HeatRunning)

    # The work dir's own Heat is read, whatever endpoint the input names.
    elsewhere = {**heat, "endpoint": "http://127.0.0.1:9/v1/admin"}
    first, second, state, after = _deploy_twice(client, work, "deploy.check_kept_stack",
                                                heat=elsewhere, **ids)
    assert first["status"] == second["status"] == "CREATE_COMPLETE"
    assert after == state  # the stack status recorded once, the same again
    status = client.deployments.status("oc")
    assert (status["deployment_status"], status["stack_status"]) == ("DEPLOYING",
                                                                     "CREATE_COMPLETE")

    outputs, second, state, after = _deploy_twice(client, work, "deploy.save_outputs",
                                                  heat=heat, stack_request=request, **ids)
    assert second == {**outputs, "backup": {"outputs.yaml": "outputs.yaml.prev",
                                            "environment.yaml": "environment.yaml.prev"}}
    assert after == state  # the same outputs and environment, from the same stack
    assert outputs["servers"] == ["oc-controller-0", "oc-novacompute-0"]

    cd_first, cd_second, state, after = _deploy_twice(
        client, work, "deploy.config_download", stack_outputs=outputs, **ids)
    assert cd_second["files"] == cd_first["files"] and cd_second["previous"] == \
        cd_first["commit"]
    # The same project; the second run commits it again (an empty commit: each run of
    # config-download is one commit, see WriteConfigDownload).
    assert after["config_download"][0] == state["config_download"][0]
    assert int(after["config_download"][1]) == int(state["config_download"][1]) + 1
    assert {k: v for k, v in after.items() if k != "config_download"} == \
        {k: v for k, v in state.items() if k != "config_download"}

    done, second, state, after = _deploy_twice(
        client, work, "deploy.finish", heat_type="native", config_download=cd_first, **ids)
    assert done["deployment_status"] == "DEPLOY_SUCCESS"
    assert done["commit"] == second["commit"] == cd_first["commit"]
    assert {**second, "updated_at": None} == {**done, "updated_at": None}
    status = client.deployments.status("oc")
    assert (status["deployment_status"], status["commit"]) == ("DEPLOY_SUCCESS",
                                                               cd_first["commit"])


def test_deploy_check_twice_writes_the_same_request(client: Client, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """deploy.check converges when a resumed execution runs it again: the re-run gets
    its first run's DeployIdentifier (the run's time) and its copy of the request the
    work dir held before, from the task's journal, so it writes the same request and
    its undo still puts back the one before.  (Outside a workflow each run is a new
    check: a new identifier.)"""
    from tripleo_flow.actions import deploy_stack

    clock = iter(range(1_800_000_000, 1_800_000_100))
    monkeypatch.setattr(deploy_stack, "time", types.SimpleNamespace(
        time=lambda: float(next(clock))))  # each check a second later
    templates = Path(shutil.copytree(sample_plan_dir(), tmp_path / "templates"))
    root = templates / "overcloud.j2.yaml"  # as THT's: a DeployIdentifier parameter
    root.write_text(root.read_text().replace(
        "parameters:\n", "parameters:\n  DeployIdentifier:\n    type: number\n"
        "    default: 0\n", 1))
    client.plans.create("oc", templates)
    work = tmp_path / "work"
    work.mkdir()
    (work / "stack-request.json").write_bytes(b'{"the": "request before"}')
    inputs = {"plan": "oc", "work_dir": str(work)}
    action = REGISTRY.get("deploy.check")(
        dataclasses.replace(client._session.context, undo_journal=MemoryJournal()))
    first = action.execute(**inputs)
    request = (work / "stack-request.json").read_bytes()
    second = action.execute(**inputs)
    assert REGISTRY.get("deploy.check").rerun is Rerun.CONVERGES
    assert second == first and (work / "stack-request.json").read_bytes() == request
    assert b"DeployIdentifier: 1800000000" in request
    assert (work / "stack-request.json.prev").read_bytes() == b'{"the": "request before"}'
    action.revert(result=second, **inputs)
    assert (work / "stack-request.json").read_bytes() == b'{"the": "request before"}'
    # Without a journal (two checks, not a re-run): a new identifier each time.
    plain = REGISTRY.get("deploy.check")(client._session.context)
    assert plain.execute(**inputs)["sha256"] != plain.execute(**inputs)["sha256"]
