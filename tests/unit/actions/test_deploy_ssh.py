"""The SSH user and key config-download's inventory and ansible.cfg name: the deploy's
inputs, else ``[ansible]``'s, else TripleO's default; a bad value is refused before
anything is written.  Real TaskFlow engine, real files, no mocks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from taskflow import engines
from taskflow.patterns import linear_flow

from tests.engine_helpers import ActionTask
from tests.unit.actions.test_deploy_actions import OUTPUTS
from tripleo_flow import config, exceptions
from tripleo_flow.actions.base import ActionContext
from tripleo_flow.actions.deploy_outputs import WriteConfigDownload
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.lock import PlanLocks

KEY = "KEY"  # replaced by a real key file of the test
CONF_KEY = "CONF_KEY"


def _render(tmp_path: Path, conf_values: dict[str, str], inputs: dict[str, Any]
            ) -> tuple[dict[str, Any], str]:
    conf = config.new_conf()
    for name, value in conf_values.items():
        conf.set_override(name, value, group="ansible")
    context = ActionContext(store=LocalStore(tmp_path / "plans"),
                            locks=PlanLocks(f"file://{tmp_path / 'locks'}", 5), conf=conf)
    work = tmp_path / "work"
    flow = linear_flow.Flow("t").add(ActionTask(WriteConfigDownload(context)))
    engines.load(flow, store={"plan": "oc", "work_dir": str(work), "stack_outputs": OUTPUTS,
                              **inputs}).run()
    project = work / "config-download"
    inventory = yaml.safe_load((project / "tripleo-ansible-inventory.yaml").read_text())
    return inventory["oc_Compute"]["vars"], (project / "ansible.cfg").read_text()


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, str]:
    made = {}
    for name in (KEY, CONF_KEY):
        path = tmp_path / name.lower()
        path.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
        made[name] = str(path)
    return made


@pytest.mark.parametrize("conf_values,inputs,user,key", [
    ({}, {}, "tripleo-admin", None),
    ({"ssh_user": "heat-admin", "ssh_private_key": CONF_KEY}, {}, "heat-admin", CONF_KEY),
    ({"ssh_user": "heat-admin", "ssh_private_key": CONF_KEY},
     {"overcloud_ssh_user": "cloud-user", "overcloud_ssh_key": KEY}, "cloud-user", KEY),
    ({}, {"overcloud_ssh_user": None, "overcloud_ssh_key": KEY}, "tripleo-admin", KEY),
])
def test_inventory_and_ansible_cfg_name_the_user_and_key(
        tmp_path: Path, keys: dict[str, str], conf_values: dict[str, str],
        inputs: dict[str, Any], user: str, key: str | None) -> None:
    conf_values = {k: keys.get(v, v) for k, v in conf_values.items()}
    inputs = {k: keys.get(v, v) if isinstance(v, str) else v for k, v in inputs.items()}
    group_vars, ansible_cfg = _render(tmp_path, conf_values, inputs)
    assert group_vars["ansible_ssh_user"] == user
    assert f"remote_user = {user}\n" in ansible_cfg
    if key is None:
        assert "ansible_ssh_private_key_file" not in group_vars
        assert "private_key_file" not in ansible_cfg
    else:
        assert group_vars["ansible_ssh_private_key_file"] == keys[key]
        assert f"private_key_file = {keys[key]}\n" in ansible_cfg
        assert "BEGIN" not in ansible_cfg  # the path, never the key


@pytest.mark.parametrize("inputs,message", [
    ({"overcloud_ssh_key": "/nonexistent/id_rsa"}, "is not a file"),
    ({"overcloud_ssh_user": "a user"}, "is not a user name"),
    ({"overcloud_ssh_user": " "}, "is not a user name"),
])
def test_a_bad_user_or_key_is_refused_before_writing(tmp_path: Path, inputs: dict[str, Any],
                                                     message: str) -> None:
    with pytest.raises(exceptions.InvalidInput, match=message):
        _render(tmp_path, {}, inputs)
    assert not (tmp_path / "work" / "config-download").exists()
