"""Real validations (validations-common, tripleo-validations) run with Ansible on localhost.

Through the Python API and the CLI: metadata, a passing and a failing run (check-cpu
with a core count no machine has), results kept with the plan and read back by a new
Client, a validation whose hosts are missing reported as skipped, and a stop that
leaves no Ansible process behind.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from tests.functional.validations.conftest import TEST_VALIDATIONS, make_client
from tripleo_flow import exceptions
from tripleo_flow.client import Client
from tripleo_flow.plans.plan import PlanRepository
from tripleo_flow.validations import runner, runs_dir

pytestmark = pytest.mark.functional

#: check-cpu's parameter: passes with 1 core, fails on any machine with 100000.
PASS_CPU, FAIL_CPU = {"minimal_cpu_count": 1}, {"minimal_cpu_count": 100000}


def test_list_and_show_read_the_playbooks_metadata(vclient: Client) -> None:
    every = {v["id"]: v for v in vclient.validations.list()}
    assert {"no-op", "check-cpu", "check-ram", "dns", "undercloud-debug"} <= set(every)
    assert len(every) > 60  # validations-common + tripleo-validations
    assert every["slow-sleep"]["groups"] == ["tripleo-flow-tests"]  # validations_dirs
    assert [v["id"] for v in vclient.validations.list(group="no-op")] == ["no-op"]
    assert "dns" in [v["id"] for v in vclient.validations.list(category="networking")]
    pre = [v["id"] for v in vclient.validations.list(group="pre-deployment")]
    assert "dns" in pre and "no-op" not in pre
    cpu = vclient.validations.get("check-cpu")
    assert cpu["parameters"] == {"minimal_cpu_count": 8}
    assert cpu["hosts"] == "localhost" and "prep" in cpu["groups"]
    assert cpu["path"].endswith("validation-playbooks/check-cpu.yaml")
    with pytest.raises(exceptions.ValidationNotFound, match="validation list"):
        vclient.validations.get("no-such-validation")
    with pytest.raises(exceptions.ValidationNotFound):
        vclient.validations.get("../../etc/passwd")


def test_pass_fail_and_skip_with_results_kept_with_the_plan(
        vclient: Client, plan: str, tmp_path: Path, validations_venv: Path) -> None:
    done = vclient.validations.run(["no-op", "check-cpu", "undercloud-debug"], plan=plan,
                                   inventory="localhost", extra_vars=PASS_CPU)
    by_name = {r["validation"]: r for r in done["results"]}
    assert by_name["no-op"]["status"] == "PASSED"
    assert by_name["check-cpu"]["status"] == "PASSED"
    assert by_name["check-cpu"]["hosts"] == {"localhost": "PASSED"}
    assert by_name["check-cpu"]["duration"] > 0
    skipped = by_name["undercloud-debug"]
    assert skipped["status"] == "SKIPPED"
    assert skipped["reasons"][0]["reason"] == "skipped: needs undercloud in the inventory"
    assert done["counts"] == {"PASSED": 2, "SKIPPED": 1}

    failed = vclient.validations.run(["check-cpu"], plan=plan, inventory="localhost",
                                     extra_vars=FAIL_CPU)["results"][0]
    assert failed["status"] == "FAILED"
    assert failed["hosts"] == {"localhost": "FAILED"}
    assert "should be at least 100000" in failed["reasons"][0]["reason"]

    # A new Client (a restart) reads them back from the plan store.
    again = make_client(tmp_path / "data", validations_venv)
    try:
        kept = again.validations.results(plan=plan, validation="check-cpu")
        assert [r["status"] for r in kept] == ["FAILED", "PASSED"]
        assert "log" not in kept[0]
        shown = again.validations.get_result(failed["id"], plan=plan)
        assert "PLAY RECAP" in shown["log"] and shown["extra_vars"] == FAIL_CPU
        assert again.validations.results() == []  # none kept without a plan
        store_names = again._session.store.list_objects(plan + "-messages", prefix="validations/")
        assert len(store_names) == 4
    finally:
        again.close()
    with pytest.raises(exceptions.ValidationResultNotFound):
        vclient.validations.get_result(failed["id"])  # it is the plan's, not local


def test_the_plans_inventory_is_the_default(vclient: Client, plan: str,
                                            tmp_path: Path) -> None:
    with pytest.raises(exceptions.WorkflowFailed, match="no deployment with a config-download"):
        vclient.validations.run(["no-op"], plan=plan)
    project = tmp_path / "config-download"
    project.mkdir()
    (project / "tripleo-ansible-inventory.yaml").write_text(yaml.safe_dump(
        {"Controller": {"hosts": {"localhost": {"ansible_connection": "local"}}}}))
    PlanRepository(vclient._session.store).set_deployment_status(
        plan, {"deployment_status": "DEPLOY_SUCCESS", "config_download": str(project)})
    done = vclient.validations.run(["no-op"], plan=plan)
    assert done["inventory"] == f"plan {plan}"
    assert done["results"][0]["status"] == "PASSED"
    # An inventory file is recorded by its name only: records are shown over HTTP,
    # which never names a path of the server.
    by_file = vclient.validations.run(
        ["no-op"], inventory=str(project / "tripleo-ansible-inventory.yaml"))
    assert by_file["inventory"] == "file tripleo-ansible-inventory.yaml"
    assert str(tmp_path) not in json.dumps(vclient.validations.results())


def test_bad_input_changes_nothing(vclient: Client, tmp_path: Path) -> None:
    with pytest.raises(exceptions.InvalidInput, match="not a validation name"):
        vclient.validations.run(["no-op;rm"])
    with pytest.raises(exceptions.WorkflowFailed, match="is not a file"):
        vclient.validations.run(["no-op"], inventory=str(tmp_path / "missing.yaml"))
    with pytest.raises(exceptions.WorkflowFailed, match="No validation 'ghost'"):
        vclient.validations.run(["ghost"], inventory="localhost")
    assert vclient.validations.results() == []


def _processes_with(text: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmdline:
            found.append(f"{entry.name}: {cmdline}")
    return found


def test_stop_leaves_no_ansible_process(vclient: Client) -> None:
    execution = vclient.executions.create("tripleo.validations.run", {
        "validations": ["slow-sleep", "no-op"], "localhost": True,
        "extra_vars": {"sleep_seconds": 3141}, "run_id": runner.new_run_id()}, wait=False)
    run_dir = runs_dir(vclient.conf) / execution.input["run_id"]
    deadline = time.monotonic() + 60
    while not _processes_with("sleep 3141"):
        assert time.monotonic() < deadline, "the slow validation never started its task"
        time.sleep(0.2)
    pgid = runner.running(run_dir)["slow-sleep"]
    assert _processes_with(str(run_dir))  # ansible-playbook itself

    stopped = vclient.validations.stop(execution.id)
    assert stopped["stopped"] == ["slow-sleep"]
    assert _processes_with("sleep 3141") == []
    assert _processes_with(str(run_dir)) == []
    with pytest.raises(ProcessLookupError):
        os.killpg(pgid, 0)

    deadline = time.monotonic() + 30
    while vclient.executions.get(execution.id).state in ("RUNNING", "PENDING"):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    ended = vclient.executions.get(execution.id)
    assert ended.state == "ERROR", ended
    assert "slow-sleep: stopped" in (ended.error or "")
    statuses = {r["validation"]: r["status"] for r in vclient.validations.results()}
    assert statuses == {"slow-sleep": "STOPPED", "no-op": "STOPPED"}  # no-op never started
    with pytest.raises(exceptions.ValidationsNotRunning):
        vclient.validations.stop(execution.id)


@pytest.fixture
def cli(tmp_path: Path, validations_venv: Path):  # type: ignore[no-untyped-def]
    exe = shutil.which("tripleo-flow", path=str(Path(os.sys.executable).parent))
    assert exe, "tripleo-flow is not installed in this virtualenv (pip install -e .)"
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path / "home"),
               TRIPLEO_FLOW_VALIDATIONS_VENV=str(validations_venv))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([exe, *args], env=env, capture_output=True, text=True,
                              timeout=300)
    return run


def test_cli_runs_lists_and_shows(cli) -> None:  # type: ignore[no-untyped-def]
    listed = json.loads(cli("validation", "list", "--group", "no-op", "-f", "json").stdout)
    assert [v["id"] for v in listed] == ["no-op"]
    shown = json.loads(cli("validation", "show", "check-ram", "-f", "json").stdout)
    assert shown["parameters"] == {"minimal_ram_gb": 24}

    ok = cli("validation", "run", "--validation", "no-op,check-cpu", "--inventory",
             "localhost", "--extra-vars", "minimal_cpu_count=1", "-f", "json")
    assert ok.returncode == 0, ok.stderr
    assert [r["status"] for r in json.loads(ok.stdout)] == ["PASSED", "PASSED"]
    assert "check-cpu: PASSED (localhost PASSED)" in ok.stderr  # per-validation progress

    bad = cli("validation", "run", "--validation", "check-cpu", "--extra-vars",
              "minimal_cpu_count=100000", "-f", "json")
    assert bad.returncode == 6, bad.stderr
    row = json.loads(bad.stdout)[0]
    assert row["status"] == "FAILED" and "at least 100000" in row["reasons"]

    results = json.loads(cli("validation", "results", "--validation", "check-cpu",
                             "-f", "json").stdout)
    assert [r["status"] for r in results] == ["FAILED", "PASSED"]
    one = json.loads(cli("validation", "show-result", row["id"], "-f", "json").stdout)
    assert one["status"] == "FAILED" and "PLAY RECAP" in one["log"]

    missing = cli("validation", "show", "ghost")
    assert missing.returncode == 3 and "validation list" in missing.stderr


def test_a_missing_venv_says_how_to_build_it(tmp_path: Path) -> None:
    client = make_client(tmp_path / "data", tmp_path / "no-venv")
    try:
        with pytest.raises(exceptions.ValidationsNotInstalled, match="setup-validations.sh"):
            client.validations.list()
    finally:
        client.close()



def test_parameters_are_never_templates_nor_ansible_settings(vclient: Client,
                                                             tmp_path: Path) -> None:
    marker = tmp_path / "templated"
    template = "{{ lookup('pipe', 'touch " + str(marker) + "') }}"
    done = vclient.validations.run(["dns"], inventory="localhost",
                                   extra_vars={"server_to_lookup": template})
    assert done["results"][0]["status"] == "FAILED"  # getent of the literal text
    assert not marker.exists()
    with pytest.raises(exceptions.InvalidInput, match="Ansible connection"):
        vclient.validations.run(["no-op"], inventory="localhost",
                                extra_vars={"ansible_python_interpreter": "/bin/sh"})
    with pytest.raises(exceptions.WorkflowFailed, match="Ansible connection"):
        vclient.executions.create("tripleo.validations.run", {
            "validations": ["no-op"], "localhost": True,
            "extra_vars": {"ansible_connection": "ssh"}})


def test_a_rerun_kills_what_a_crashed_attempt_left(vclient: Client) -> None:
    """A resumed execution runs the validation again (at least once): the Ansible process
    group its crashed first attempt left running is ended before the new run starts."""
    run_id = runner.new_run_id()
    work = runs_dir(vclient.conf) / run_id / "no-op"
    work.mkdir(parents=True)
    leftover = subprocess.Popen(["sleep", "3142"], start_new_session=True)
    try:
        (work / "pgid").write_text(str(leftover.pid))
        done = vclient.executions.create("tripleo.validations.run", {
            "validations": ["no-op"], "localhost": True, "run_id": run_id})
        assert done.output["results"][0]["status"] == "PASSED"
        assert leftover.wait(timeout=10) == -9
    finally:
        leftover.kill()
        leftover.wait()


def _cli_env(tmp_path: Path, validations_venv: Path) -> tuple[str, dict[str, str]]:
    """The ``tripleo-flow`` executable and an environment of its own under ``tmp_path``
    that also finds the test-only validations (slow-sleep)."""
    exe = shutil.which("tripleo-flow", path=str(Path(os.sys.executable).parent))
    assert exe
    conf = tmp_path / "tripleo-flow.conf"
    conf.write_text(f"[validations]\nvalidations_dirs = {TEST_VALIDATIONS}\n")
    return exe, dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"),
                     HOME=str(tmp_path / "home"),
                     TRIPLEO_FLOW_VALIDATIONS_VENV=str(validations_venv),
                     TRIPLEO_FLOW_CONFIG_FILE=str(conf))


@pytest.mark.parametrize("how", ["stop", "sigint", "sigterm"])
def test_cli_run_stopped_by_command_or_signal(tmp_path: Path, validations_venv: Path,
                                              how: str) -> None:
    """``validation stop`` from another process, or Ctrl-C / SIGTERM to ``validation run``
    (whose Ansible runs in a session of its own), ends the run with nothing left."""
    exe, env = _cli_env(tmp_path, validations_venv)
    running = subprocess.Popen([exe, "validation", "run", "--validation", "slow-sleep",
                                "--extra-vars", "sleep_seconds=3143", "-f", "json"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        deadline = time.monotonic() + 60
        while not _processes_with("sleep 3143"):
            assert time.monotonic() < deadline and running.poll() is None, running.stderr
            time.sleep(0.2)
        if how == "stop":
            listed: list[dict[str, str]] = []
            while not listed:  # the running process records its execution in the database
                assert time.monotonic() < deadline
                listed = json.loads(subprocess.run(
                    [exe, "execution", "list", "-f", "json"], env=env, capture_output=True,
                    text=True, timeout=60, check=True).stdout)
            stopped = subprocess.run([exe, "validation", "stop", listed[-1]["ID"], "-f",
                                      "json"], env=env, capture_output=True, text=True,
                                     timeout=60)
            assert stopped.returncode == 0, stopped.stderr
            assert json.loads(stopped.stdout)["stopped"] == ["slow-sleep"]
            assert _processes_with("sleep 3143") == []
        else:
            running.send_signal(signal.SIGINT if how == "sigint" else signal.SIGTERM)
        out, err = running.communicate(timeout=60)
        assert running.returncode == 6 and "slow-sleep: stopped" in err, err
        assert _processes_with("sleep 3143") == []
    finally:
        if running.poll() is None:
            running.kill()
            running.wait()
        # A CLI killed outright leaves its Ansible process group (its own session).
        for run_dir in (tmp_path / "xdg/tripleo-flow/validations/runs").glob("*"):
            runner.stop(run_dir)


def test_a_killed_cli_takes_its_ansible_with_it(tmp_path: Path, validations_venv: Path) -> None:
    """``kill -9`` of ``validation run``: its Ansible (a session of its own, which no
    signal of the terminal reaches) is tethered to it and ends too."""
    exe, env = _cli_env(tmp_path, validations_venv)
    running = subprocess.Popen([exe, "validation", "run", "--validation", "slow-sleep",
                                "--extra-vars", "sleep_seconds=2718"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not _processes_with("sleep 2718"):
            assert time.monotonic() < deadline and running.poll() is None
            time.sleep(0.2)
    finally:
        running.kill()
        running.wait()
    def left() -> list[str]:  # the task's sleep, and anything of the run (its supervisor)
        return _processes_with("sleep 2718") + _processes_with(str(tmp_path / "xdg"))

    deadline = time.monotonic() + 15
    while left() and time.monotonic() < deadline:
        time.sleep(0.2)
    remaining = left()
    for run_dir in (tmp_path / "xdg/tripleo-flow/validations/runs").glob("*"):
        runner.stop(run_dir)  # whatever a failure of this test would leave
    assert remaining == []
