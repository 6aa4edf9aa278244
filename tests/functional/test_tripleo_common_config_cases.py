"""tripleo-common's own config-download test cases (``tests/utils/test_config.py``), differentially.

The situations of tripleo-common 18.0.0's ``Config.download_config`` / ``write_config``
cases that need no software deployment: per-role task files and their per-step splits
(``when`` as a string, a list, or no step), ``step_config``, ``RoleConfig``'s files and
external tasks, ``RoleGroupVars`` and ``AnsibleHostVarsMap``.  Fixture outputs of our
own making; tripleo-common itself (``tests/oracle/tripleo_common_config.py`` in its
pinned virtualenv, with a Heat client of its own making) writes the project, and
:func:`tripleo_flow.core.deploy.config_download.render` renders ours: every file both write
must load to the same data; the files only we write, and the outcomes that differ,
are named with the reason.

Not ported here: the software-deployment cases (``get_deployment_data``,
``os-apply-config`` deployments, deployment names and uuids), which need Heat's
resources: the real-stack differential test
(``tests/functional/overcloud/test_tripleo_common_oracle.py``) covers them; the git
and directory plumbing (``create_config_dir``, ``initialize_git_repo``).

Skips when the tripleo-common virtualenv is missing, FAILS instead in CI.
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.functional.test_tripleo_common_inventory_cases import BASE, ENVIRONMENT
from tests.oracle import reference as oracle
from tripleo_flow.core.deploy import config_download

pytestmark = pytest.mark.functional

SCRIPT = Path(oracle.ROOT) / "tests" / "oracle" / "tripleo_common_config.py"
#: Files we write that tripleo-common's download_config does not, and why.
OURS_ONLY = {
    "ansible.cfg": "tripleoclient's, written beside the project (see the real-stack test)",
    "tripleo-ansible-inventory.yaml": "written by generate_tripleo_ansible_inventory, not "
                                      "download_config (test_tripleo_common_inventory_cases)",
}
#: ... and without RoleConfig's global_vars (THT always has it) the playbooks' include_vars
#: of global_vars.yaml would fail: we write deploy_steps_max and the plan's name.
NO_GLOBAL_VARS = {"global_vars.yaml": "THT's RoleConfig global_vars absent (see above)"}

CONFIG: dict[str, Any] = {
    **copy.deepcopy(BASE),
    "RoleData": {
        "Controller": {
            "config_settings": {"tripleo::haproxy::user": "admin"},
            "service_names": ["keystone", "haproxy"],
            "step_config": "include ::tripleo::profile::base::sshd\n",
            "upgrade_tasks": [{"name": "stop", "debug": "msg=a", "when": "step|int == 1"},
                              {"name": "both", "debug": "msg=b",
                               "when": ["x.rc == 0", "step|int == 2", False]}],
            "deploy_steps_tasks": [{"name": "always", "debug": "msg=c"},
                                   {"name": "three", "debug": "msg=d", "when": "step|int == 3"}],
            "host_prep_tasks": [{"name": "prep", "debug": "msg=e"}],
            "post_upgrade_tasks": [{"name": "post", "debug": "msg=f", "when": "step|int == 0"}]},
        "Compute": {"config_settings": {}, "service_names": ["nova_compute"],
                    "upgrade_tasks": [],
                    "update_tasks": [{"name": "up", "debug": "msg=g", "when": "step|int == 5"}]},
        "Custom": {"service_names": []},
    },
    "RoleConfig": {
        "foo_config": "foo",
        "external_deploy_steps_tasks": [{"name": "ext", "debug": "msg=h",
                                         "when": "step|int == 1"}],
        "upgrade_steps_playbook": [{"hosts": "all", "tasks": []}],
    },
    "RoleGroupVars": {"Controller": {"gv": 1}, "Compute": {"gv": 2}, "Custom": {}},
    "AnsibleHostVarsMap": {"Controller": {f"ctl-{i}": {"hv": i} for i in range(3)},
                           "Compute": {"cmp-0": {"hv": [4]}}, "Custom": {"cus-0": {"x": "y"}}},
}


def _with(**changes: Any) -> dict[str, Any]:
    outputs = copy.deepcopy(CONFIG)
    outputs.update(changes)
    return outputs


#: name -> (outputs, {file: reason} for the files only ours).
CASES: dict[str, tuple[dict[str, Any], dict[str, str]]] = {
    "roles_tasks_and_vars": (_with(), {**OURS_ONLY, **NO_GLOBAL_VARS}),
    "global_vars_from_role_config": (
        _with(RoleConfig={**CONFIG["RoleConfig"],
                          "global_vars": {"deploy_steps_max": 6, "extra": True}}),
        OURS_ONLY),
    "only_role_data": (_with(RoleConfig={}), {**OURS_ONLY, **NO_GLOBAL_VARS}),
}

#: Where tripleo-common fails and we write: name -> (outputs, its exception, outputs on
#: which it writes what we write for the first, {difference: why}).
THEY_FAIL: dict[str, tuple[dict[str, Any], str, dict[str, Any], dict[str, str]]] = {
    # tripleo-common indexes RoleGroupVars by each role with servers (KeyError); THT
    # gives every role one; we write the role's group_vars empty, as it does for {}.
    "role_without_group_vars": (
        _with(RoleGroupVars={"Controller": {"gv": 1}, "Compute": {"gv": 2}}), "KeyError",
        _with(), {}),
    # tripleo-common's host_vars template appends '{}' to the YAML when a host's
    # variables are empty, and its own check refuses the file; ours is valid YAML.
    "host_with_empty_host_vars": (
        _with(AnsibleHostVarsMap={**CONFIG["AnsibleHostVarsMap"], "Compute": {"cmp-0": {}}}),
        "ScannerError", _with(),
        {"host_vars/cmp-0/hv": "the variable the equivalent outputs give the host"}),
}


def _theirs(outputs: dict[str, Any], out: Path) -> dict[str, Any]:
    python = oracle.venv_python_or_skip("18.0.0")
    done = subprocess.run([str(python), str(SCRIPT), str(out)],
                          input=json.dumps({"plan": "overcloud", "outputs": outputs}),
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    printed = dict(json.loads(done.stdout.strip().splitlines()[-1]))
    assert printed["tripleo_common"] == "18.0.0"
    return printed


def _ours(outputs: dict[str, Any], out: Path) -> None:
    for relative, data in config_download.render("overcloud", outputs,
                                                 environment=ENVIRONMENT).items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


@pytest.mark.parametrize("name", sorted(CASES))
def test_config_download_equals_tripleo_common_18(name: str, tmp_path: Path) -> None:
    outputs, ours_only = CASES[name]
    assert "error" not in _theirs(outputs, tmp_path / "theirs")
    _ours(outputs, tmp_path / "ours")
    found = oracle.differences(tmp_path / "ours", tmp_path / "theirs")
    assert sorted(found) == sorted(f"{path}: file only ours" for path in ours_only)
    shared = set(oracle.files(tmp_path / "ours")) & set(oracle.files(tmp_path / "theirs"))
    assert len(shared) > 20  # the role, step, group_vars and host_vars files at least


@pytest.mark.parametrize("name", sorted(THEY_FAIL))
def test_named_outcome_differences(name: str, tmp_path: Path) -> None:
    outputs, raised, equivalent, allowed = THEY_FAIL[name]
    assert _theirs(outputs, tmp_path / "failed").get("error") == raised
    assert "error" not in _theirs(equivalent, tmp_path / "theirs")
    _ours(outputs, tmp_path / "ours")
    found = oracle.differences(tmp_path / "ours", tmp_path / "theirs")
    expected = {f"{path}: file only ours" for path in {**OURS_ONLY, **NO_GLOBAL_VARS}}
    assert {line for line in found if line.split(":", 1)[0] not in allowed} == expected
    assert {line.split(":", 1)[0] for line in found} >= set(allowed)
