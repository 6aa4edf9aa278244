"""``kill -9`` of ``overcloud upgrade prepare`` (sample plan with THT's lifecycle
environments, real native heat-all) while Heat updates the stack, then ``execution
resume``: the resumed ``tripleo.upgrade.prepare`` execution does not put the prepare
environment in the plan twice, takes the killed stack update over and ends as a prepare
that was never killed (the environment sent once, DEPLOY_SUCCESS, no Heat left).

And ``kill -9`` of ``overcloud upgrade run`` between two of its playbooks (a crash
point at the start of the second), then ``execution resume``: every playbook runs once
on the limit (each run of the sample's lifecycle playbooks appends a line to a trace
file), with the options the killed command was given, and the resumed execution ends
SUCCESS; ``kill -9`` of ``overcloud update run`` while its playbook runs: ansible-playbook
dies with it, and the resumed execution runs that playbook again, then the next."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from tests.functional.heat.lifecycle import SLEEP_ENV, TRACE_ENV, lifecycle_templates
from tests.functional.heat.test_deploy_crash import ROOT, Deploy
from tests.functional.heat.test_deploy_progress import _conf_file
from tripleo_flow.actions.ansible import PGID_FILE
from tripleo_flow.client import Client, workbooks
from tripleo_flow.common.crashpoints import ENV as CRASH_ENV
from tripleo_flow.core.deploy import update
from tripleo_flow.core.plan import heatfiles
from tripleo_flow.workspace import tethered

pytestmark = pytest.mark.functional

UPGRADE_URL = heatfiles.BASE_URL + update.UPGRADE.prepare_environment


def _cli_json(deploy: Deploy, *args: str, **env: str) -> object:
    done = subprocess.run(deploy.cli(*args, "-f", "json"), capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **env},
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_an_upgrade_prepare_killed_while_the_stack_is_updated_resumes(
        tmp_path: Path, heat_venv: Path) -> None:
    conf = _conf_file(tmp_path, heat_venv)
    deploy = Deploy(tmp_path, conf)
    with Client.from_config_files([str(conf)]) as client:
        client.plans.create("oc", lifecycle_templates(tmp_path / "templates"))
        client.deployments.create("oc", work_dir=deploy.work)

    proc = deploy.start(command=("overcloud", "upgrade", "prepare", "--stack", "oc", "-y"))
    # Heat says the stack is being updated.
    deploy.kill_at(proc, deploy.stack_in_progress, "the stack being updated", 0.1)
    listed = _cli_json(deploy, "execution", "list")
    assert isinstance(listed, list)
    [killed] = [row for row in listed if row["Workflow"] == workbooks.UPGRADE_PREPARE]
    assert killed["State"] == "INTERRUPTED", killed
    assert deploy.status()["deployment_status"] == "DEPLOY_INTERRUPTED"
    with Client.from_config_files([str(conf)]) as client:
        entries = client._session.store.get_object("oc", "plan-environment.yaml")
    assert update.is_prepared(yaml.safe_load(entries)["environments"], "upgrade")

    resumed = _cli_json(deploy, "execution", "resume", killed["ID"])
    assert isinstance(resumed, dict) and resumed["State"] == "SUCCESS", resumed
    assert deploy.status()["deployment_status"] == "DEPLOY_SUCCESS"
    sent = json.loads((deploy.work / "stack-request.json").read_text())["environment_files"]
    assert sent.count(UPGRADE_URL) == 1, sent
    with Client.from_config_files([str(conf)]) as client:
        plan_env = yaml.safe_load(client._session.store.get_object("oc", "plan-environment.yaml"))
        assert [e["path"] for e in plan_env["environments"]].count(
            update.UPGRADE.prepare_environment) == 1
        heat = yaml.safe_load((deploy.work / "environment.yaml").read_text())
        assert heat["environment_files"] == sent
        # Prepared: upgrade run now goes past its check (to the playbooks).
        done = client.upgrades.run("oc", "oc-controller-0", work_dir=deploy.work,
                                   playbooks=["deploy_steps_playbook.yaml"],
                                   ansible_connection="local")
        assert done["limit"] == "oc-controller-0"
    deploy.assert_no_heat([])


def _killed_run(deploy: Deploy, trace: Path, kind: str, second: str,
                *options: str) -> str:
    """``overcloud <kind> run`` killed (crash point) as ``second`` starts; its id."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), TRACE_ENV: str(trace),
           CRASH_ENV: f"ansible.run:{second}"}
    done = subprocess.run(deploy.cli("overcloud", kind, "run", "--stack", "oc", "-y",
                                     "--limit", "oc-controller-0", "--work-dir",
                                     str(deploy.work), "--ansible-connection", "local",
                                     *options),
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert done.returncode == -9, (done.returncode, done.stderr[-3000:])
    listed = _cli_json(deploy, "execution", "list")
    assert isinstance(listed, list)
    [killed] = [row for row in listed if row["Workflow"] == f"tripleo.{kind}.run"
                and row["State"] != "SUCCESS"]
    assert killed["State"] == "INTERRUPTED", killed
    return str(killed["ID"])


def _resume(deploy: Deploy, trace: Path, execution: str) -> object:
    return _cli_json(deploy, "execution", "resume", execution, **{TRACE_ENV: str(trace)})


def test_update_and_upgrade_runs_killed_between_playbooks_resume(
        tmp_path: Path, heat_venv: Path) -> None:
    conf = _conf_file(tmp_path, heat_venv)
    deploy = Deploy(tmp_path, conf)
    trace = tmp_path / "trace"
    with Client.from_config_files([str(conf)]) as client:
        client.plans.create("oc", lifecycle_templates(tmp_path / "templates"))
        client.deployments.create("oc", work_dir=deploy.work)
        client.upgrades.prepare("oc", work_dir=deploy.work)

    killed = _killed_run(deploy, trace, "upgrade", "deploy_steps_playbook.yaml",
                         "--ansible-forks", "3")
    assert trace.read_text().splitlines() == ["upgrade_steps_playbook oc-controller-0"]
    resumed = _resume(deploy, trace, killed)
    assert isinstance(resumed, dict) and resumed["State"] == "SUCCESS", resumed
    # Each playbook once, in tripleoclient's order (deploy steps: not the sample's trace).
    assert trace.read_text().splitlines() == ["upgrade_steps_playbook oc-controller-0",
                                              "post_upgrade_steps_playbook oc-controller-0"]
    with Client.from_config_files([str(conf)]) as client:
        output = client.executions.get(killed).output or {}
        assert [r["playbook"] for r in output["runs"]] == list(update.UPGRADE.playbooks)
        assert {r["forks"] for r in output["runs"]} == {"3"}  # the killed run's option

        # update run: prepared (the upgrade's environment out), then killed for real
        # while its first playbook runs.
        client.updates.prepare("oc", work_dir=deploy.work)
    trace.unlink()
    env = {**os.environ, "PYTHONPATH": str(ROOT), TRACE_ENV: str(trace), SLEEP_ENV: "600"}
    proc = subprocess.Popen(
        deploy.cli("overcloud", "update", "run", "--stack", "oc", "-y", "--limit",
                   "oc-controller-0", "--work-dir", str(deploy.work), "--ansible-connection",
                   "local", "--playbook", "update_steps_playbook.yaml",
                   "post_upgrade_steps_playbook.yaml"),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=env)
    deploy.wait_for(proc, lambda: trace.exists() and bool(trace.read_text()), "the playbook")
    group = tethered.live_group(deploy.work / PGID_FILE)
    assert group is not None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # ansible-playbook (sleeping in its task) died with it: nothing runs beside a resume.
    deadline = time.monotonic() + 15
    while tethered.kill_group(group, 0):
        assert time.monotonic() < deadline, "ansible-playbook outlived its killed run"
        time.sleep(0.05)
    listed = _cli_json(deploy, "execution", "list")
    assert isinstance(listed, list)
    [killed] = [row["ID"] for row in listed if row["Workflow"] == "tripleo.update.run"]
    resumed = _resume(deploy, trace, killed)
    assert isinstance(resumed, dict) and resumed["State"] == "SUCCESS", resumed
    # The interrupted playbook runs again from its start (as a rerun of tripleoclient's
    # would); the next one once.
    assert trace.read_text().splitlines() == ["update_steps_playbook oc-controller-0",
                                              "update_steps_playbook oc-controller-0",
                                              "post_upgrade_steps_playbook oc-controller-0"]
    deploy.assert_no_heat([])
