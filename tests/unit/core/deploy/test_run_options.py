"""tripleoclient's options of the lifecycle runs (:mod:`tripleo_flow.core.deploy.run_options`),
the host overrides they put in the overlay inventory, and upgrade converge's forbidden
parameters (:mod:`tripleo_flow.core.deploy.update`): table-driven, no I/O."""

from __future__ import annotations

from typing import Any

import pytest

from tripleo_flow import exceptions
from tripleo_flow.cli.deploy import Deploy
from tripleo_flow.cli.update import ExternalUpdateRun, UpdateRun, UpgradeConverge, UpgradeRun
from tripleo_flow.core.deploy import ansible, run_options, update


@pytest.mark.parametrize(("given", "merged"), [
    # tripleoclient's parse_extra_vars: key=value pairs split at white space ...
    (["a=1 b=two"], {"a": "1", "b": "two"}),
    # ... YAML/JSON objects, shallow-merged in order, the later ones winning.
    (['{"a": 1, "b": [1, 2]}', "a=3"], {"a": "3", "b": [1, 2]}),
    (["nested: {x: 1}", "nested={}"], {"nested": "{}"}),
    (["url=http://h/?q=1"], {"url": "http://h/?q=1"}),  # the first '=' splits
    ([], {}), (None, {}), ({"given": True}, {"given": True}),
])
def test_extra_vars_merge_as_tripleoclient(given: Any, merged: dict[str, Any]) -> None:
    assert run_options.parse_extra_vars(given) == merged


def test_extra_vars_files_are_read_by_the_caller_only() -> None:
    files = {"/here/vars.yaml": "from_file: 1\nb: 2\n", "/here/list.yaml": "- 1\n",
             "/here/bad.yaml": "a: [\n"}
    assert run_options.parse_extra_vars(["b=1", "@/here/vars.yaml"], files.__getitem__) == {
        "b": 2, "from_file": 1}
    with pytest.raises(exceptions.InvalidInput, match="names a file"):
        run_options.parse_extra_vars(["@/etc/passwd"])
    for name in ("list", "bad"):
        with pytest.raises(exceptions.InvalidInput, match=f"/here/{name}.yaml"):
            run_options.parse_extra_vars([f"@/here/{name}.yaml"], files.__getitem__)


@pytest.mark.parametrize(("given", "match"), [
    (["novalue"], "Invalid format"), (["=x"], "Invalid format"),
    (["bad-name=1"], "variable name"), ([3], "not a string"),
    ({"a": object()}, "JSON"), ("@/etc/shadow", "names a file"),
])
def test_bad_extra_vars_are_refused(given: Any, match: str) -> None:
    with pytest.raises(exceptions.InvalidInput, match=match):
        run_options.parse_extra_vars(given)


@pytest.mark.parametrize("hostile", ["@/etc/passwd", "a=1", ["a=1"], 3, {"a b": 1}])
def test_the_workflow_input_takes_a_mapping_only(hostile: Any) -> None:
    with pytest.raises(exceptions.InvalidInput):
        run_options.check_extra_vars(hostile)


@pytest.mark.parametrize(("given", "used"), [(None, None), (0, None), (1, 1), (25, 25)])
def test_forks(given: Any, used: Any) -> None:
    assert run_options.check_forks(given) == used


@pytest.mark.parametrize("bad", [-1, "4", 2.5, True])
def test_bad_forks_are_refused(bad: Any) -> None:
    with pytest.raises(exceptions.InvalidInput, match="ansible_forks"):
        run_options.check_forks(bad)


@pytest.mark.parametrize(("given", "ok"), [
    ("tripleo-admin", True), ("heat_admin", True), (None, True), ("", True),
    ("root; rm -rf /", False), ("a\nb", False), ("-oProxyCommand=x", False), (7, False)])
def test_ssh_user(given: Any, ok: bool) -> None:
    if ok:
        assert run_options.check_ssh_user(given) == (given or None)
    else:
        with pytest.raises(exceptions.InvalidInput, match="user name"):
            run_options.check_ssh_user(given)


INVENTORY = {"Undercloud": {"hosts": {"undercloud": {}}},
             "Compute": {"hosts": {"c-0": {}}, "vars": {"ansible_ssh_user": "heat-admin"}}}


@pytest.mark.parametrize(("connection", "user", "host_vars"), [
    ("local", None, {"ansible_connection": "local", "ansible_python_interpreter": "/py"}),
    (None, "tripleo-admin", {"ansible_ssh_user": "tripleo-admin",
                             "ansible_user": "tripleo-admin"}),
    ("ssh", "u", {"ansible_connection": "ssh", "ansible_ssh_user": "u", "ansible_user": "u"}),
])
def test_overlay_inventory(connection: Any, user: Any, host_vars: dict[str, str]) -> None:
    overlay = ansible.connection_inventory(INVENTORY, connection, "/py", user)
    assert overlay == {"all": {"hosts": {"c-0": host_vars, "undercloud": host_vars}}}


def test_cli_options_as_tripleoclient() -> None:
    run = UpdateRun(None, None).get_parser("x").parse_args(
        ["--limit", "c-0", "--ansible-forks", "7", "--ssh-user", "u",
         "--static-inventory", "inv.yaml", "--playbook", "all"])
    assert UpdateRun(None, None).run_options(run) == {
        "work_dir": None, "ansible_tags": None, "ansible_skip_tags": None,
        "ansible_connection": None, "ansible_forks": 7, "ssh_user": "u",
        "static_inventory": "inv.yaml", "ansible_verbosity": 0}
    assert update.playbooks(run.playbook, "update") == list(update.UPDATE.playbooks)
    upgrade = UpgradeRun(None, None).get_parser("x").parse_args(["--limit", "c", "--playbook"])
    assert update.playbooks(upgrade.playbook, "upgrade") == list(update.UPGRADE.playbooks)
    external = ExternalUpdateRun(None, None).get_parser("x").parse_args(
        ["-e", "a=1", "--extra-vars", "@f.yaml", "-y"])
    assert external.extra_vars == ["a=1", "@f.yaml"] and external.yes
    with pytest.raises(SystemExit):  # tripleoclient's update run takes no -e
        UpdateRun(None, None).get_parser("x").parse_args(["--limit", "c", "-e", "a=1"])
    # converge and deploy: tripleoclient's deploy option.
    for command in (UpgradeConverge, Deploy):
        parsed = command(None, None).get_parser("x").parse_args(["--ansible-forks", "5"])
        assert parsed.ansible_forks == 5


@pytest.mark.parametrize(("documents", "found"), [
    ([("env.yaml", {"parameter_defaults": {"ContainerImagePrepare": [
        {"set": {"ceph3_namespace": "x", "tag": "t"}}]}})], ["env.yaml: ceph3_namespace"]),
    ([("a.yaml", {"parameter_defaults": {"tag_stein": 1}}),
      ("b.yaml", {"resource_registry": {"tag_stein": 1}})], ["a.yaml: tag_stein"]),
    ([("plan parameters", {"parameter_defaults": {"NtpServer": ["x"]}})], []),
    ([("empty", None)], []),
])
def test_upgrade_converge_forbidden_parameters(documents: Any, found: list[str]) -> None:
    assert update.forbidden_parameters(documents) == found
    if found:
        with pytest.raises(exceptions.InvalidInput, match="Nothing was changed"):
            update.check_converge(documents, "upgrade")
    update.check_converge(documents, "update")  # tripleoclient checks upgrades only
