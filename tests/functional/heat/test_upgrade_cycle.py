"""A whole major upgrade, prepare, run, external-upgrade run and converge, on the sample
plan with real Heat and real Ansible (local connection): the workflows of
``workbooks/upgrade.yaml`` end to end, and what the prepare sends compared with what
python-tripleoclient's ``overcloud upgrade prepare`` would send.

What tripleoclient does (read in its code for facts, stable/wallaby and master):

- ``tripleoclient/v1/overcloud_upgrade.py`` ``UpgradePrepare`` is ``DeployOvercloud``
  with ``template = constants.UPGRADE_PREPARE_ENV``
  (``environments/lifecycle/upgrade-prepare.yaml``) put by
  ``utils.prepend_environment`` at index 0 of the operator's ``-e`` files (so after
  the templates' own environments and before every operator's one); a missing file
  is refused ("Expected environment file ... not found"); ``forbidden_params`` is
  empty for the prepare.  It sets no parameter of its own: the stack parameters are
  the deploy's (``overcloud_deploy.py`` ``_update_parameters``: ``RootStackName``, a new
  ``DeployIdentifier = int(time.time())``, ``StackAction`` UPDATE for an existing
  stack); the upgrade's parameters (``UpgradeInitCommonCommand``, ``UpgradeLeappTo*``,
  ``ServerDeletionPolicy: retain``, ``UpgradeLevelNovaCompute: auto``) come from THT's
  environment file itself, and ``UpgradeInitCommand``/``UpgradeLeappEnabled`` from the
  operator's own ``-e`` files.
- ``UpgradeRun`` requires ``--limit`` (``playbook_limit_parse``: split at ``,`` `` `` ``:``,
  joined with ``:``) and runs ``constants.MAJOR_UPGRADE_PLAYBOOKS`` (upgrade steps,
  deploy steps, post upgrade steps, in that order) unless ``--playbook`` names others
  (``all``: the default); ``--tags``/``--skip-tags`` go to ansible-playbook.
- ``overcloud_external_upgrade.py`` ``ExternalUpgradeRun`` runs
  ``EXTERNAL_UPGRADE_PLAYBOOKS`` (``external_upgrade_steps_playbook.yaml``) with an
  optional ``--limit``; ``overcloud_external_update.py`` the same with
  ``external_update_steps_playbook.yaml``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

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
UPGRADE_URL = heatfiles.BASE_URL + update.UPGRADE.prepare_environment
UPDATE_URL = heatfiles.BASE_URL + update.UPDATE.prepare_environment
USER_ENVIRONMENT = {"name": "operator.yaml",
                    "files": {"operator.yaml": "parameter_defaults:\n  UpgradeInitCommand: ''\n"}}
CONTROLLER, COMPUTE = "oc-controller-0", "oc-novacompute-0"


def _request(work: Path) -> dict[str, Any]:
    return dict(json.loads((work / "stack-request.json").read_text()))


def _deploy_parameters(request: dict[str, Any]) -> dict[str, Any]:
    text = request["files"][heatfiles.BASE_URL + ".tripleo-flow/deploy-parameters.yaml"]
    return dict(yaml.safe_load(text)["parameter_defaults"])


def tripleoclient_environments(deployed: list[str], prepare_url: str) -> list[str]:
    """The environment files tripleoclient's prepare sends where the deploy sent
    ``deployed``: ``prepend_environment`` puts the prepare file first of the operator's
    ``-e`` files (our user environments), after the templates' own."""
    users = [i for i, url in enumerate(deployed)
             if url.startswith(heatfiles.BASE_URL + "user-environments/")]
    at = users[0] if users else len(deployed)
    return [*deployed[:at], prepare_url, *deployed[at:]]


def _recap(work: Path) -> dict[str, dict[str, int]]:
    return testhosts.recap((work / "ansible.log").read_text())


def test_upgrade_prepare_run_external_converge(tmp_path: Path, heat_venv: Path) -> None:
    find_ansible_playbook()
    work = tmp_path / "work"
    client = Client(make_conf(tmp_path, heat_venv))
    try:
        client.plans.create(PLAN, lifecycle_templates(tmp_path / "templates"))
        client.environments.add(PLAN, [USER_ENVIRONMENT])
        client.deployments.create(PLAN, work_dir=work)
        deployed = _request(work)
        # Nothing prepared: every run of the upgrade refused before anything runs.
        with pytest.raises(exceptions.UpdateNotPrepared, match="upgrade prepare"):
            client.upgrades.run(PLAN, CONTROLLER, work_dir=work)
        with pytest.raises(exceptions.UpdateNotPrepared, match="upgrade prepare"):
            client.upgrades.external_run(PLAN, work_dir=work)
        with pytest.raises(exceptions.InvalidInput, match="needs --limit"):
            client.upgrades.run(PLAN, " , ", work_dir=work)

        prepared = client.upgrades.prepare(PLAN, work_dir=work)
        assert (prepared["deployment_status"], prepared["stack_status"]) == (
            "DEPLOY_SUCCESS", "UPDATE_COMPLETE")
        sent = _request(work)
        # tripleoclient's environment list and parameters.
        assert sent["environment_files"] == tripleoclient_environments(
            deployed["environment_files"], UPGRADE_URL)
        assert UPDATE_URL not in sent["environment_files"]
        assert yaml.safe_load(sent["files"][UPGRADE_URL])["parameter_defaults"][
            "ServerDeletionPolicy"] == "retain"
        before, after = _deploy_parameters(deployed), _deploy_parameters(sent)
        assert after["DeployIdentifier"] != before["DeployIdentifier"]
        assert after["RootStackName"] == PLAN
        assert (before["StackAction"], after["StackAction"]) == ("CREATE", "UPDATE")
        assert after["UpdateIdentifier"] == ""
        heat = yaml.safe_load((work / "environment.yaml").read_text())
        assert heat["environment_files"] == sent["environment_files"]
        # An upgrade prepared is not an update prepared.
        with pytest.raises(exceptions.UpdateNotPrepared, match="update prepare"):
            client.updates.external_run(PLAN, work_dir=work)

        # A failed run says what it left: nothing is reverted (the hosts keep what ran).
        with pytest.raises(exceptions.AnsibleFailed) as raised:  # the item's kind
            client.upgrades.run(PLAN, "no-such-host", work_dir=work, ansible_connection="local")
        assert "Playbook 'upgrade_steps_playbook.yaml'" in str(raised.value)
        assert "nothing was reverted" in str(raised.value)
        assert "the deployment was reverted" not in str(raised.value)

        # upgrade run: the three playbooks, in tripleoclient's order, on the limit only.
        done = client.upgrades.run(PLAN, CONTROLLER, work_dir=work, ansible_connection="local")
        assert done["playbooks"] == list(update.UPGRADE.playbooks)
        assert done["limit"] == CONTROLLER
        assert [r["playbook"] for r in done["runs"]] == done["playbooks"]
        recap = _recap(work)  # the last one: post upgrade steps
        assert set(recap) == {CONTROLLER} and recap[CONTROLLER]["failed"] == 0, recap
        assert "post_upgrade_steps_playbook" in (work / "ansible.log").read_text()

        # external-upgrade run: from the undercloud, no limit needed.
        done = client.upgrades.external_run(PLAN, work_dir=work, ansible_connection="local",
                                            ansible_skip_tags="opendev-validation")
        assert done["playbooks"] == ["external_upgrade_steps_playbook.yaml"]
        assert done["limit"] is None
        recap = _recap(work)
        assert set(recap) == {"undercloud"}, recap

        # A plain deploy meanwhile sends no lifecycle environment (tripleoclient's
        # overcloud deploy sends the -e files given); the upgrade stays prepared.
        client.deployments.create(PLAN, work_dir=work)
        assert _request(work)["environment_files"] == deployed["environment_files"]
        client.upgrades.run(PLAN, CONTROLLER, work_dir=work, ansible_connection="local",
                            playbooks=["post_upgrade_steps_playbook.yaml"])

        converged = client.upgrades.converge(PLAN, work_dir=work, ansible_connection="local")
        assert converged["stack_status"] == "UPDATE_COMPLETE"
        assert UPGRADE_URL not in _request(work)["environment_files"]
        assert _request(work)["environment_files"] == deployed["environment_files"]
        assert set(_recap(work)) == {CONTROLLER, COMPUTE}
        with pytest.raises(exceptions.UpdateNotPrepared):
            client.upgrades.run(PLAN, CONTROLLER, work_dir=work)
    finally:
        client.close()
