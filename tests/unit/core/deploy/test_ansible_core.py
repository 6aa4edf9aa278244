"""The ansible-playbook command and connection inventory (pure, table-driven)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tripleo_flow import exceptions
from tripleo_flow.actions import ansible as actions_ansible
from tripleo_flow.core.deploy import ansible

INVENTORY = {
    "Controller": {"hosts": {"c-0": {"ansible_host": "10.0.0.1"}}},
    "Compute": {"hosts": {"n-0": {}, "n-1": {}}},
    "allovercloud": {"children": {"Controller": {}, "Compute": {}}},
    "overcloud": {"children": {"allovercloud": {"children": {"Extra": {"hosts": {"x": {}}}}}}},
    "empty": None,
}


def test_inventory_hosts_walks_groups_and_children() -> None:
    assert ansible.inventory_hosts(INVENTORY) == ["c-0", "n-0", "n-1", "x"]


@pytest.mark.parametrize(("connection", "python", "values"), [
    ("local", "/v/bin/python", {"ansible_connection": "local",
                                "ansible_python_interpreter": "/v/bin/python"}),
    ("local", None, {"ansible_connection": "local"}),
    ("ssh", "/v/bin/python", {"ansible_connection": "ssh"}),
])
def test_connection_inventory(connection: str, python: str | None,
                              values: dict[str, Any]) -> None:
    overlay = ansible.connection_inventory(INVENTORY, connection, python)
    assert list(overlay) == ["all"]
    assert overlay["all"]["hosts"] == {h: values for h in ("c-0", "n-0", "n-1", "x")}


@pytest.mark.parametrize(("inventories", "extra", "expected"), [
    (["inv.yaml"], [], ["/b/ansible-playbook", "--inventory", "inv.yaml", "play.yaml"]),
    (["a", "b"], ["--check"],
     ["/b/ansible-playbook", "--inventory", "a", "--inventory", "b", "--check", "play.yaml"]),
])
def test_playbook_command(inventories: list[str], extra: list[str],
                          expected: list[str]) -> None:
    assert ansible.playbook_command("/b/ansible-playbook", "play.yaml", inventories,
                                    extra) == expected


def test_environment_keeps_ansible_state_in_the_given_home() -> None:
    env = ansible.environment({"PATH": "/bin", "ANSIBLE_HOME": "/root/.ansible"}, "/w/h")
    assert env["PATH"] == "/bin"
    assert env["ANSIBLE_HOME"] == "/w/h" and env["ANSIBLE_LOCAL_TEMP"] == "/w/h/tmp"
    assert env["ANSIBLE_NOCOLOR"] == "1"


def test_tripleo_ansible_paths_name_only_the_directories_present() -> None:
    paths = ansible.tripleo_ansible_paths("/v/share/ansible", ["roles", "plugins/modules"])
    assert paths == {"ANSIBLE_ROLES_PATH": "/v/share/ansible/roles",
                     "ANSIBLE_LIBRARY": "/v/share/ansible/plugins/modules"}
    env = ansible.environment({"PATH": "/bin", "ANSIBLE_HOME": "/elsewhere"}, "/h", paths)
    assert env["ANSIBLE_ROLES_PATH"] == "/v/share/ansible/roles"
    assert env["ANSIBLE_HOME"] == "/h"  # ours wins over the caller's


def test_an_ansible_venv_gives_its_playbook_and_its_tripleo_ansible_content(
        tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    playbook = venv / "bin" / "ansible-playbook"
    playbook.write_text("#!/bin/sh\n")
    playbook.chmod(0o755)
    for sub in ("roles", "plugins/action", "plugins/filter"):
        (venv / "share/ansible" / sub).mkdir(parents=True)
    assert actions_ansible.find_ansible_playbook(str(venv)) == str(playbook)
    share = venv / "share/ansible"
    assert actions_ansible.content_paths(str(venv)) == {
        "ANSIBLE_ROLES_PATH": f"{share}/roles",
        "ANSIBLE_ACTION_PLUGINS": f"{share}/plugins/action",
        "ANSIBLE_FILTER_PLUGINS": f"{share}/plugins/filter"}
    assert actions_ansible.content_paths(None) == {}


def test_an_ansible_venv_without_ansible_playbook_says_how_to_build_it(tmp_path: Path) -> None:
    with pytest.raises(exceptions.AnsibleNotInstalled, match="tools/setup-ansible.sh"):
        actions_ansible.find_ansible_playbook(str(tmp_path / "none"))


@pytest.mark.parametrize(("tags", "skip", "limit", "args"), [
    (None, None, None, []),
    ("facts,step0", "external", None, ["--tags", "facts,step0", "--skip-tags", "external"]),
    ("", None, "Controller", ["--limit", "Controller"]),
])
def test_selection_args(tags: str | None, skip: str | None, limit: str | None,
                        args: list[str]) -> None:
    assert ansible.selection_args(tags, skip, limit) == args


@pytest.mark.parametrize("tags,skip,limit,excluded,validations,args", [
    (None, None, None, [], False, ["--skip-tags", "opendev-validation"]),
    ("step1", "x,y", None, [], False,
     ["--tags", "step1", "--skip-tags", "opendev-validation,x,y"]),
    (None, None, None, ["c-3", "", "c-4"], False,
     ["--skip-tags", "opendev-validation", "--limit", "!c-3:!c-4"]),
    (None, None, "c-0", ["c-3"], True, ["--limit", "c-0"]),  # a given limit is kept as is
])
def test_deploy_selection_as_tripleoclient(tags: str | None, skip: str | None,
                                           limit: str | None, excluded: list[str],
                                           validations: bool, args: list[str]) -> None:
    assert ansible.deploy_selection(tags, skip, limit, excluded, validations) == args


@pytest.mark.parametrize("key,value", [
    ("ANSIBLE_FORKS", "8"), ("ANSIBLE_REMOTE_USER", "tripleo-admin"),
    ("ANSIBLE_PRIVATE_KEY_FILE", "/k"),
    ("ANSIBLE_GATHER_SUBSET", "!all,min"), ("ANSIBLE_GATHERING", "smart"),
    ("ANSIBLE_STDOUT_CALLBACK", "tripleo_dense"), ("ANSIBLE_CACHE_PLUGIN_CONNECTION", "/f"),
    ("ANSIBLE_CALLBACKS_ENABLED", "tripleo_dense,tripleo_profile_tasks,tripleo_states"),
    ("TRIPLEO_PLAN_NAME", "oc"), ("ANSIBLE_SSH_RETRIES", "3"), ("ANSIBLE_TIMEOUT", "600"),
])
def test_deploy_settings_as_tripleoclient(key: str, value: str) -> None:
    assert ansible.deploy_settings("oc", "tripleo-admin", "/k", "/f", cpu_count=2)[key] == value


@pytest.mark.parametrize("cpus,forks,expected", [(2, None, "8"), (64, None, "100"), (2, 3, "3")])
def test_deploy_forks(cpus: int, forks: int | None, expected: str) -> None:
    assert ansible.deploy_settings("oc", "u", None, "/f", cpus, forks)["ANSIBLE_FORKS"] == expected


def test_no_callbacks_or_key_when_missing() -> None:
    settings = ansible.deploy_settings("oc", "u", None, "/f", 2, callbacks=False)
    assert not {"ANSIBLE_BECOME", "ANSIBLE_STDOUT_CALLBACK", "ANSIBLE_PRIVATE_KEY_FILE"} & set(
        settings)


@pytest.mark.parametrize("inventory,login", [
    ({"Undercloud": {"vars": {"ansible_connection": "local"}},
      "Compute": {"children": {"oc_Compute": {}}},
      "oc_Compute": {"vars": {"ansible_ssh_user": "heat-admin",
                              "ansible_ssh_private_key_file": "/k"}}}, ("heat-admin", "/k")),
    ({"oc_Compute": {"vars": {"ansible_ssh_user": "core"}}}, ("core", None)),
    ({}, ("tripleo-admin", None)),
])
def test_ssh_login(inventory: dict[str, Any], login: tuple[str, str | None]) -> None:
    assert ansible.ssh_login(inventory, "tripleo-admin") == login


@pytest.mark.parametrize("output,expected", [
    ("PLAY [x]\n2026 | u |      FATAL | Say step 1 | h0 | error={\"msg\": \"step 1\"}\n"
     "~~~ Summary ~~~\nh0 : ok=1 failed=1\n",
     ['2026 | u |      FATAL | Say step 1 | h0 | error={"msg": "step 1"}']),
    ("TASK [a]\nfatal: [h1]: FAILED! => {\"msg\": \"boom\"}\n\nPLAY RECAP\nh1 : failed=1\n",
     ['fatal: [h1]: FAILED! => {"msg": "boom"}']),
    ("a\nb\n\nc\n", ["b", "c"]),
])
def test_failure_lines(output: str, expected: list[str]) -> None:
    assert ansible.failure_lines(output, 2) == expected
