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

from tests.functional.heat import lifecycle
from tests.functional.heat.conftest import make_conf
from tests.functional.heat.lifecycle import lifecycle_templates
from tests.functional.overcloud import testhosts
from tripleo_flow import exceptions
from tripleo_flow.actions.ansible import find_ansible_playbook
from tripleo_flow.client import Client
from tripleo_flow.core.deploy import update
from tripleo_flow.core.plan import heatfiles

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
        client.plans.create(PLAN, templates)
        first = client.deployments.create(PLAN, work_dir=work)
        assert first["stack_status"] == "CREATE_COMPLETE"
        assert PREPARE_URL not in _sent(work)
        with pytest.raises(exceptions.UpdateNotPrepared):
            client.updates.run(PLAN, "oc-controller-0", work_dir=work)

        # tripleoclient's deploy options on the prepare: --environment-directory's files
        # (name order) then -e's become the plan's user environments, sent after THT's
        # update-prepare.yaml; --overcloud-ssh-user is the inventory's.
        envs = tmp_path / "envs"
        envs.mkdir()
        for name in ("20-second.yaml", "10-first.yaml"):
            (envs / name).write_text("parameter_defaults: {}\n")
        (tmp_path / "last.yaml").write_text("parameter_defaults: {}\n")
        prepared = client.updates.prepare(PLAN, work_dir=work, environment_directories=[envs],
                                          environments=[str(tmp_path / "last.yaml")],
                                          overcloud_ssh_user="ops-admin")
        assert (prepared["deployment_status"], prepared["stack_status"]) == (
            "DEPLOY_SUCCESS", "UPDATE_COMPLETE")
        users = [e["path"] for e in client.environments.list(PLAN) if e["user"]]
        assert [p.rsplit("/", 1)[1] for p in users] == [
            "10-first.yaml", "20-second.yaml", "last.yaml"], users
        sent = _sent(work)
        assert PREPARE_URL in sent
        assert sent.index(PREPARE_URL) < min(sent.index(heatfiles.BASE_URL + p)
                                             for p in users), sent
        inventory = (work / "config-download" / "tripleo-ansible-inventory.yaml").read_text()
        assert "ansible_ssh_user: ops-admin" in inventory
        environment = yaml.safe_load((work / "environment.yaml").read_text())
        assert PREPARE_URL in environment["environment_files"]

        done = client.updates.run(PLAN, "oc-controller-0", work_dir=work,
                                  playbooks=["deploy_steps_playbook.yaml"],
                                  ansible_connection="local", ansible_forks=3,
                                  ansible_verbosity=2)
        assert done["playbooks"] == ["deploy_steps_playbook.yaml"]
        assert done["limit"] == "oc-controller-0"
        [run] = done["runs"]
        assert run["forks"] == "3"  # --ansible-forks: ANSIBLE_FORKS of the run
        assert "-vv" in run["command"]  # tripleoclient's -v level (cliff's 2: -v given)
        assert run["command"][-3:] == ["--limit", "oc-controller-0",
                                       "deploy_steps_playbook.yaml"], run["command"]
        assert "--extra-vars" not in run["command"]  # tripleoclient's update run has no -e
        recap = testhosts.recap((work / "ansible.log").read_text())
        assert set(recap) == {"oc-controller-0"}, recap  # the limit only
        assert recap["oc-controller-0"]["failed"] == 0
        # external-update run: from the undercloud; no limit needed; no upgrade prepared.
        done = client.updates.external_run(PLAN, work_dir=work, ansible_connection="local")
        assert (done["playbooks"], done["limit"]) == (["external_update_steps_playbook.yaml"],
                                                      None)
        assert set(testhosts.recap((work / "ansible.log").read_text())) == {"undercloud"}
        _external_run_options(client, tmp_path, work)
        with pytest.raises(exceptions.UpdateNotPrepared, match="upgrade prepare"):
            client.upgrades.run(PLAN, "oc-controller-0", work_dir=work)

        converged = client.updates.converge(PLAN, work_dir=work, ansible_connection="local",
                                            ansible_verbosity=1)
        assert (converged["deployment_status"], converged["stack_status"]) == (
            "DEPLOY_SUCCESS", "UPDATE_COMPLETE")
        # -v reached the deploy steps run: ansible-playbook names its config file.
        assert "config file" in (work / "ansible.log").read_text()
        assert PREPARE_URL not in _sent(work)
        recap = testhosts.recap((work / "ansible.log").read_text())
        assert set(recap) == {"oc-controller-0", "oc-novacompute-0"}, recap
        # Converged: no update prepared any more.
        with pytest.raises(exceptions.UpdateNotPrepared):
            client.updates.run(PLAN, "oc-controller-0", work_dir=work)
    finally:
        client.close()



def _external_run_options(client: Client, tmp_path: Path, work: Path) -> None:
    """tripleoclient's options of external-update run reach the real run: what the
    playbook (on this machine) saw of ``-e`` (key=value, then an @FILE read here),
    ``--ansible-forks``, ``--ssh-user`` and ``--static-inventory``."""
    report = tmp_path / "report.json"
    (tmp_path / "vars.yaml").write_text(
        yaml.safe_dump({"sample_more": [1, {"b": 2}], lifecycle.REPORT_VAR: str(report)}))
    project = work / "config-download"
    inventory = yaml.safe_load((project / "tripleo-ansible-inventory.yaml").read_text())
    inventory["Undercloud"].setdefault("vars", {})["sample_inventory"] = "static"
    static = tmp_path / "static-inventory.yaml"
    static.write_text(yaml.safe_dump(inventory))
    done = client.updates.external_run(PLAN, work_dir=work, ansible_connection="local",
                                       ansible_forks=2,
                                       ssh_user="tripleo-admin", static_inventory=static,
                                       extra_vars=["sample_extra=one sample_more=overridden",
                                                   f"@{tmp_path / 'vars.yaml'}"])
    assert json.loads(report.read_text()) == {
        "extra": "one", "more": [1, {"b": 2}], "forks": 2, "user": "tripleo-admin",
        "inventory": "static"}
    [run] = done["runs"]
    extra = work / "ansible-extra-vars.json"
    assert run["command"][1:3] == ["--inventory", str(static)]
    assert ["--extra-vars", f"@{extra}"] == run["command"][-3:-1]
    assert extra.stat().st_mode & 0o777 == 0o600
    assert json.loads(extra.read_text())["sample_extra"] == "one"
    # Without options, the run is as before: the project's inventory, no extra vars.
    report.unlink()
    done = client.updates.external_run(PLAN, work_dir=work, ansible_connection="local")
    assert "--extra-vars" not in done["runs"][0]["command"] and not extra.exists()
    assert not report.exists()
    with pytest.raises(exceptions.InvalidInput, match="not a file"):
        client.updates.external_run(PLAN, work_dir=work, static_inventory=tmp_path / "no")
    with pytest.raises(exceptions.InvalidInput, match="Invalid format"):
        client.updates.external_run(PLAN, work_dir=work, extra_vars=["novalue"])
