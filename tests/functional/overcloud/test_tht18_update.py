"""``overcloud update prepare|run`` on the real THT 18.0.0 stack.

The prepare is the scale-down chain's later deploy (``tht18_scale_down``: after the
delete, the plan is deployed again by ``update_prepare``, so one stack update proves
both that the removal policies are sent again and what the prepare sends).  What
python-tripleoclient's ``UpdatePrepare`` sends (read for facts): the deploy of
``overcloud deploy`` with THT's ``environments/lifecycle/update-prepare.yaml``
inserted before the operator's ``-e`` files (``utils.prepend_environment``), a new
``DeployIdentifier`` and the other deploy parameters as any deploy, and no playbook.

``update run`` needs the update prepared and ``--limit``; config-download's
``update_steps_playbook.yaml`` then stops here before any host is contacted: its
Controller play uses ``pacemaker_resource``, the module of openstack's
ansible-pacemaker, which no package here installs (:data:`STOPPED_AT`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.functional.http.conftest import finished, serving
from tests.functional.overcloud.conftest import Deployment, ScaleDown, copy_deployment
from tests.functional.overcloud.test_tht18_scaledown import _cli, _plan_environment, _plan_state
from tripleo_flow import exceptions
from tripleo_flow.client import workbooks
from tripleo_flow.core.deploy import update
from tripleo_flow.core.plan import heatfiles

pytestmark = pytest.mark.functional

PREPARE_URL = heatfiles.BASE_URL + update.PREPARE_ENVIRONMENT
#: Where ``update_steps_playbook.yaml`` stops on this machine (ansible-playbook's
#: refusal of the playbook, before its first task).
STOPPED_AT = "couldn't resolve module/action 'pacemaker_resource'"


def _request(work: Path) -> dict[str, Any]:
    return dict(json.loads((work / "stack-request.json").read_text()))


def _deploy_parameters(request: dict[str, Any]) -> dict[str, Any]:
    text = request["files"][heatfiles.BASE_URL + ".tripleo-flow/deploy-parameters.yaml"]
    return dict(yaml.safe_load(text)["parameter_defaults"])


def _tripleoclient_order(before: list[str]) -> list[str]:
    """The environments tripleoclient's update prepare sends where ``before`` was the
    deploy's: update-prepare.yaml first of the operator's -e files (the user
    environments), after the plan's own."""
    users = [i for i, url in enumerate(before)
             if url.startswith(heatfiles.BASE_URL + "user-environments/")]
    at = users[0] if users else len(before)
    return [*before[:at], PREPARE_URL, *before[at:]]


def test_the_update_prepare_sends_what_tripleoclient_sends(
        tht18_scale_down: ScaleDown) -> None:
    after = tht18_scale_down.after
    assert after.result["deployment_status"] == "DEPLOY_SUCCESS"
    assert after.result["stack_status"] == "UPDATE_COMPLETE"
    before = _request(tht18_scale_down.after_delete)
    sent = _request(after.work_dir)
    assert PREPARE_URL not in before["environment_files"]
    assert sent["environment_files"] == _tripleoclient_order(before["environment_files"])
    # Heat got the same list (its view of the stack's environment).
    heat = yaml.safe_load((after.work_dir / "environment.yaml").read_text())
    assert heat["environment_files"] == sent["environment_files"]
    # THT's own file, as tripleoclient reads it from --templates.
    tht = after.root / "data" / "plans" / after.plan / "objects" / update.PREPARE_ENVIRONMENT
    assert yaml.safe_load(sent["files"][PREPARE_URL]) == yaml.safe_load(tht.read_text())
    assert yaml.safe_load(sent["files"][PREPARE_URL])["resource_registry"] == {
        "OS::TripleO::Tasks::*PreConfig": "OS::Heat::None",
        "OS::TripleO::Tasks::*PostConfig": "OS::Heat::None"}
    # A new DeployIdentifier (software deployments run again), no UpdateIdentifier.
    old, new = _deploy_parameters(before), _deploy_parameters(sent)
    assert new["DeployIdentifier"] != old["DeployIdentifier"]
    assert new["UpdateIdentifier"] == "" and new["RootStackName"] == after.plan
    assert heat["parameters"]["DeployIdentifier"] == new["DeployIdentifier"]
    # The plan remembers the prepared update (update run is allowed now).
    entries = yaml.safe_load(_plan_environment(after).read_text())["environments"]
    assert update.is_prepared(entries)
    # config-download written again with the update steps.
    assert (after.config_download / "update_steps_playbook.yaml").is_file()


def test_update_run_is_refused_before_a_prepare_from_every_interface(
        tht18_deployment: Deployment, heat_venv: Path, tmp_path: Path) -> None:
    """No update prepared, or no --limit: refused by the Python API, the CLI and the
    HTTP API before anything runs, naming what to run; nothing changes."""
    copy = copy_deployment(tht18_deployment, tmp_path / "oc", heat_venv)
    plan, work = copy.plan, str(copy.work_dir)
    before = _plan_state(copy)
    client = copy.client()
    try:
        with pytest.raises(exceptions.UpdateNotPrepared, match="update prepare"):
            client.updates.run(plan, "compute-0", work_dir=work)
        with pytest.raises(exceptions.InvalidInput, match="needs --limit"):
            client.updates.run(plan, "", work_dir=work)
        with pytest.raises(exceptions.InvalidInput, match="not a playbook"):
            client.updates.run(plan, "Compute", playbooks=["../../etc/x.yaml"], work_dir=work)
    finally:
        client.close()
    done = _cli(copy.conf_file, "overcloud", "update", "run", "--stack", plan, "-y",
                "--work-dir", work)
    assert done.returncode == 2 and "--limit" in done.stderr, done.stderr
    done = _cli(copy.conf_file, "overcloud", "update", "run", "--stack", plan, "-y",
                "--work-dir", work, "--limit", "compute-0")
    assert done.returncode == 4, done.stderr
    assert f"overcloud update prepare --stack {plan}" in done.stderr
    done = _cli(copy.conf_file, "overcloud", "update", "prepare", "--stack", plan,
                "--work-dir", work, stdin="n\n")
    assert done.returncode == 2 and "not confirmed" in done.stderr, done.stderr

    client = copy.client()
    client.conf.set_override("auth_token", "t0ken", group="api")
    client.conf.set_override("allowed_paths", [str(copy.root)], group="api")
    with serving(client, "t0ken") as api:
        started = api("POST", f"/v1/workflows/{workbooks.UPDATE_RUN}/executions",
                      json={"input": {"plan": plan, "work_dir": work, "limit": "Compute"}})
        assert started.status_code == 202, started.text
        ended = finished(api, started.json()["id"])
        assert ended["state"] == "ERROR"
        assert "No minor update is prepared" in json.dumps(ended)
        runs = [e.state for e in api.client.executions.list(workbooks.UPDATE_RUN)]
    # Started and failed at their first task: the API's and the CLI's run without a
    # prepare, and the HTTP one; the others were refused before any execution.
    assert runs == ["ERROR"] * 3
    assert _plan_state(copy) == before


def test_update_run_runs_the_update_steps_with_the_limit(
        tht18_scale_down: ScaleDown, heat_venv: Path, ansible_venv: Path,
        tmp_path: Path) -> None:
    """On the prepared deployment, ``update run --limit compute-1`` runs
    config-download's update steps playbook with the limit, twice (a resumed
    execution runs it again): ansible-playbook refuses the playbook before its first
    task, on the missing ansible-pacemaker module; no host is contacted, nothing
    changes."""
    copy = copy_deployment(tht18_scale_down.after, tmp_path / "oc", heat_venv, ansible_venv)
    before = _plan_state(copy)
    client = copy.client()
    try:
        for _ in range(2):
            # The with-items task of the playbooks reports the item's failure, of its
            # kind (its hints and exit code), as a deploy's Ansible step does.
            with pytest.raises(exceptions.AnsibleFailed) as raised:
                client.updates.run(copy.plan, "compute-1", work_dir=copy.work_dir,
                                   ansible_tags="setup_packages")
            assert "Playbook 'update_steps_playbook.yaml'" in str(raised.value)
            assert "exit 4" in str(raised.value)
            out = (copy.work_dir / "ansible.log").read_text()
            assert STOPPED_AT in out, out[-2000:]
            assert "PLAY RECAP" not in out
            assert _plan_state(copy) == before
    finally:
        client.close()
