"""The config-download projects of the real THT 12.1.0 and 18.0.0 deployments, file by file.

Each project is held against what TripleO's config-download writes for the same
stack (tests/tripleo_layout.py, from the saved outputs), and every file that a
playbook or task file includes statically (``import_playbook``, ``include_tasks``,
``import_tasks``, ``script``, and ``tasks_from`` in tripleo-ansible's roles) must
exist (tripleo_flow/core/deploy/playbook_includes.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests import tripleo_layout
from tests.functional.overcloud.conftest import Deployment
from tripleo_flow.actions.ansible import content_paths
from tripleo_flow.core.deploy import playbook_includes

pytestmark = pytest.mark.functional

DEPLOYMENTS = ["tht12_deployment", "tht18_deployment"]
#: The top-level files of a config-download directory that Red Hat's director guide
#: documents ("config-download top level files", RHOSP 16.0) and rendering writes (the
#: others, ansible.log, ansible-errors.json, ansible-playbook-command.sh, ssh_private_key
#: and overcloud-config.tar.gz, come from running it); fast_forward_upgrade_playbook
#: only while THT has it (12.1.0).
DOCUMENTED = {"ansible.cfg", "tripleo-ansible-inventory.yaml", "deploy_steps_playbook.yaml",
              "pre_upgrade_rolling_steps_playbook.yaml", "upgrade_steps_playbook.yaml",
              "post_upgrade_steps_playbook.yaml", "update_steps_playbook.yaml"}


def read_project(root: Path) -> dict[str, bytes]:
    """Every file of a project (``.git`` left out), ``{relative path: bytes}``."""
    return {path.relative_to(root).as_posix(): path.read_bytes()
            for path in root.rglob("*")
            if path.is_file() and ".git" not in path.relative_to(root).parts}


def role_task_files(venv: Path) -> dict[str, set[str]]:
    """The roles of the Ansible venv's tripleo-ansible: name -> files of its ``tasks/``."""
    roles_dir = Path(content_paths(str(venv))["ANSIBLE_ROLES_PATH"])
    return {role.name: {p.relative_to(role / "tasks").as_posix()
                        for p in (role / "tasks").rglob("*") if p.is_file()}
            for role in roles_dir.iterdir() if (role / "tasks").is_dir()}


@pytest.mark.parametrize("fixture", DEPLOYMENTS)
def test_the_project_has_the_files_tripleo_writes(fixture: str,
                                                 request: pytest.FixtureRequest) -> None:
    deployment: Deployment = request.getfixturevalue(fixture)
    saved = yaml.safe_load((deployment.work_dir / "outputs.yaml").read_text())
    expected = (tripleo_layout.tripleo_files(saved) | tripleo_layout.CLIENT_FILES
                | tripleo_layout.OUR_FILES)
    have = set(read_project(deployment.config_download))
    assert sorted(expected - have) == [], "missing"
    assert sorted(have - expected) == [], "not written by TripleO"
    assert sorted(DOCUMENTED - have) == []
    assert ("fast_forward_upgrade_playbook.yaml" in have) == (fixture == "tht12_deployment")
    # The shape that matters most, stated plainly (the spec could be wrong too).
    assert {"deploy_steps_playbook.yaml", "deployments.yaml", "templates/heat-config.j2",
            "group_vars/Controller", "host_vars/controller-0", "host_vars/compute-0",
            "Controller/deploy_steps_tasks_step0.yaml",
            "Compute/deploy_steps_tasks_step5.yaml"} <= have
    if fixture == "tht12_deployment":  # Ussuri: the controller's os-net-config script
        assert {"Controller/NetworkConfig", "Controller/controller-0/NetworkConfig"} <= have
    else:  # 18.x: the tripleo_network_config role, from group_vars
        assert not [p for p in have if p.endswith("NetworkConfig")]
        group_vars = yaml.safe_load((deployment.config_download / "group_vars" /
                                     "Controller").read_text())
        assert "tripleo_network_config_template" in group_vars


#: ``tasks_from`` of roles that the Ansible venv's tripleo-ansible (the newest, for
#: 18.x) does not have, by THT version: Ussuri's docker tasks use the role of
#: ansible-role-container-registry (not installed by tools/setup-ansible.sh), and its
#: external upgrade tasks a tripleo_transfer file later tripleo-ansible removed.  A
#: run reaching them fails; the syntax check passes (include_role is dynamic).
MISSING_ROLE_FILES = {
    "tht12_deployment": {("container-registry", "docker"),
                         ("container-registry", "docker-login"),
                         ("container-registry", "docker-update"),
                         ("tripleo_transfer", "cleanup.yml")},
    "tht18_deployment": set(),
}


@pytest.mark.parametrize("fixture", DEPLOYMENTS)
def test_every_static_include_names_a_file_that_exists(
        fixture: str, request: pytest.FixtureRequest, ansible_venv: Path) -> None:
    deployment: Deployment = request.getfixturevalue(fixture)
    files = read_project(deployment.config_download)
    assert "deploy_steps_playbook.yaml" in playbook_includes.playbooks(files)
    problems = playbook_includes.problems(files, role_task_files(ansible_venv))
    # Every file of the project a playbook or task file names statically exists.
    assert [str(p) for p in problems if p.include.kind != "tasks_from"] == []
    # And the role files, but for those the installed content lacks (see above).
    roles = {(p.include.role, p.include.target) for p in problems
             if p.include.kind == "tasks_from"}
    assert roles == MISSING_ROLE_FILES[fixture]
