"""A whole minor update, prepare, run, external-update run and converge, on the sample
plan with real Heat and real Ansible (local connection): the workflows of
``workbooks/update.yaml`` end to end.  (The sample plan has no update steps: ``run``
runs its deploy steps playbook by ``--playbook``; THT's update environment and
playbook are proven on the real THT 18.0.0 stack in
``tests/functional/overcloud/test_tht18_update.py``.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.functional.heat.conftest import make_conf
from tests.functional.heat.lifecycle import lifecycle_templates
from tests.functional.overcloud import testhosts
from tripleo_flow import exceptions
from tripleo_flow.actions.ansible import find_ansible_playbook
from tripleo_flow.api import Client
from tripleo_flow.core import heatfiles, update

pytestmark = pytest.mark.functional

PLAN = "oc"
PREPARE_URL = heatfiles.BASE_URL + update.PREPARE_ENVIRONMENT


def _sent(work: Path) -> list[str]:
    return list(json.loads((work / "stack-request.json").read_text())["environment_files"])


def test_prepare_run_converge(tmp_path: Path, heat_venv: Path) -> None:
    find_ansible_playbook()
    templates = lifecycle_templates(tmp_path / "templates")
    work = tmp_path / "work"
    client = Client(make_conf(tmp_path, heat_venv))
    try:
        client.create_plan(PLAN, templates)
        first = client.deploy(PLAN, work_dir=work)
        assert first["stack_status"] == "CREATE_COMPLETE"
        assert PREPARE_URL not in _sent(work)
        with pytest.raises(exceptions.UpdateNotPrepared):
            client.update_run(PLAN, "oc-controller-0", work_dir=work)

        prepared = client.update_prepare(PLAN, work_dir=work)
        assert (prepared["deployment_status"], prepared["stack_status"]) == (
            "DEPLOY_SUCCESS", "UPDATE_COMPLETE")
        assert PREPARE_URL in _sent(work)
        environment = yaml.safe_load((work / "environment.yaml").read_text())
        assert PREPARE_URL in environment["environment_files"]

        done = client.update_run(PLAN, "oc-controller-0", work_dir=work,
                                 playbooks=["deploy_steps_playbook.yaml"],
                                 ansible_connection="local")
        assert done["playbooks"] == ["deploy_steps_playbook.yaml"]
        assert done["limit"] == "oc-controller-0"
        recap = testhosts.recap((work / "ansible.log").read_text())
        assert set(recap) == {"oc-controller-0"}, recap  # the limit only
        assert recap["oc-controller-0"]["failed"] == 0
        # external-update run: from the undercloud; no limit needed; no upgrade prepared.
        done = client.external_run("update", PLAN, work_dir=work, ansible_connection="local")
        assert (done["playbooks"], done["limit"]) == (["external_update_steps_playbook.yaml"],
                                                      None)
        assert set(testhosts.recap((work / "ansible.log").read_text())) == {"undercloud"}
        with pytest.raises(exceptions.UpdateNotPrepared, match="upgrade prepare"):
            client.upgrade_run(PLAN, "oc-controller-0", work_dir=work)

        converged = client.update_converge(PLAN, work_dir=work, ansible_connection="local")
        assert (converged["deployment_status"], converged["stack_status"]) == (
            "DEPLOY_SUCCESS", "UPDATE_COMPLETE")
        assert PREPARE_URL not in _sent(work)
        recap = testhosts.recap((work / "ansible.log").read_text())
        assert set(recap) == {"oc-controller-0", "oc-novacompute-0"}, recap
        # Converged: no update prepared any more.
        with pytest.raises(exceptions.UpdateNotPrepared):
            client.update_run(PLAN, "oc-controller-0", work_dir=work)
    finally:
        client.close()
