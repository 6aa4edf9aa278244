"""``kill -9`` of ``overcloud upgrade prepare`` (sample plan with THT's lifecycle
environments, real native heat-all) while Heat updates the stack, then ``execution
resume``: the resumed ``tripleo.upgrade.prepare`` execution does not put the prepare
environment in the plan twice, takes the killed stack update over and ends as a prepare
that was never killed (the environment sent once, DEPLOY_SUCCESS, no Heat left)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.functional.heat.lifecycle import lifecycle_templates
from tests.functional.heat.test_deploy_crash import ROOT, Deploy
from tests.functional.heat.test_deploy_progress import _conf_file
from tripleo_flow.api import Client, workbooks
from tripleo_flow.core import heatfiles, update

pytestmark = pytest.mark.functional

UPGRADE_URL = heatfiles.BASE_URL + update.UPGRADE.prepare_environment


def _cli_json(deploy: Deploy, *args: str) -> object:
    done = subprocess.run(deploy.cli(*args, "-f", "json"), capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_an_upgrade_prepare_killed_while_the_stack_is_updated_resumes(
        tmp_path: Path, heat_venv: Path) -> None:
    conf = _conf_file(tmp_path, heat_venv)
    deploy = Deploy(tmp_path, conf)
    with Client.from_config_files([str(conf)]) as client:
        client.create_plan("oc", lifecycle_templates(tmp_path / "templates"))
        client.deploy("oc", work_dir=deploy.work)

    proc = deploy.start(command=("overcloud", "upgrade", "prepare", "--stack", "oc", "-y"))
    # Heat says the stack is being updated.
    deploy.kill_at(proc, deploy.stack_in_progress, "the stack being updated", 0.1)
    listed = _cli_json(deploy, "execution", "list")
    assert isinstance(listed, list)
    [killed] = [row for row in listed if row["Workflow"] == workbooks.UPGRADE_PREPARE]
    assert killed["State"] == "INTERRUPTED", killed
    assert deploy.status()["deployment_status"] == "DEPLOY_INTERRUPTED"
    with Client.from_config_files([str(conf)]) as client:
        entries = client.store.get_object("oc", "plan-environment.yaml")
    assert update.is_prepared(yaml.safe_load(entries)["environments"], "upgrade")

    resumed = _cli_json(deploy, "execution", "resume", killed["ID"])
    assert isinstance(resumed, dict) and resumed["State"] == "SUCCESS", resumed
    assert deploy.status()["deployment_status"] == "DEPLOY_SUCCESS"
    sent = json.loads((deploy.work / "stack-request.json").read_text())["environment_files"]
    assert sent.count(UPGRADE_URL) == 1, sent
    with Client.from_config_files([str(conf)]) as client:
        plan_env = yaml.safe_load(client.store.get_object("oc", "plan-environment.yaml"))
        assert [e["path"] for e in plan_env["environments"]].count(
            update.UPGRADE.prepare_environment) == 1
        heat = yaml.safe_load((deploy.work / "environment.yaml").read_text())
        assert heat["environment_files"] == sent
        # Prepared: upgrade run now goes past its check (to the playbooks).
        done = client.upgrade_run("oc", "oc-controller-0", work_dir=deploy.work,
                                  playbooks=["deploy_steps_playbook.yaml"],
                                  ansible_connection="local")
        assert done["limit"] == "oc-controller-0"
    deploy.assert_no_heat([])
