"""tripleoclient's ``overcloud deploy`` options on ``update|upgrade prepare|converge``
(``DeployOvercloud`` subclasses take them all): each is taken, accepted as a no-op, or
refused before anything runs with what to use instead; and the ansible-playbook
verbosity tripleoclient derives from its ``-v``/``--debug``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from tripleo_flow import exceptions
from tripleo_flow.cli.deploy import Deploy, deploy_options, verbosity
from tripleo_flow.cli.update import (
    ExternalUpgradeRun,
    UpdateConverge,
    UpdatePrepare,
    UpdateRun,
    UpgradeConverge,
    UpgradePrepare,
)
from tripleo_flow.client.deploy import environment_files
from tripleo_flow.core.deploy import lifecycle_options, run_options
from tripleo_flow.exceptions.kinds import API

#: Every option of python-tripleoclient's DeployOvercloud parser (master, Feb 2021:
#: tripleoclient/v1/overcloud_deploy.py), with a value where it takes one.
TRIPLEOCLIENT_DEPLOY = [
    ["--templates"], ["--templates", "/usr/share/tht"], ["--stack", "oc"],
    ["--timeout", "240"], ["-t", "240"], ["--libvirt-type", "qemu"],
    ["--ntp-server", "pool.ntp.org"], ["--no-proxy", "a,b"],
    ["--overcloud-ssh-user", "heat-admin"], ["--overcloud-ssh-key", "k"],
    ["--overcloud-ssh-network", "ctlplane"], ["--overcloud-ssh-enable-timeout", "600"],
    ["--overcloud-ssh-port-timeout", "300"], ["-e", "e.yaml"],
    ["--environment-file", "e.yaml"], ["--environment-directory", "d"],
    ["-r", "roles.yaml"], ["--roles-file", "roles.yaml"], ["-n", "n.yaml"],
    ["--networks-file", "n.yaml"], ["-p", "p.yaml"], ["--plan-environment-file", "p.yaml"],
    ["--no-cleanup"], ["--update-plan-only"], ["--validation-errors-nonfatal"],
    ["--validation-warnings-fatal"], ["--disable-validations"], ["--inflight-validations"],
    ["--dry-run"], ["--run-validations"], ["--skip-postconfig"], ["--force-postconfig"],
    ["--skip-deploy-identifier"], ["--answers-file", "a.yaml"],
    ["--disable-password-generation"], ["--deployed-server"], ["--config-download"],
    ["--no-config-download"], ["--stack-only"], ["--config-download-only"],
    ["--output-dir", "o"], ["--override-ansible-cfg", "a.cfg"],
    ["--config-download-timeout", "30"], ["--deployment-python-interpreter", "/py"],
    ["-b", "bm.yaml"], ["--baremetal-deployment", "bm.yaml"], ["--limit", "c-0"],
    ["--tags", "t"], ["--skip-tags", "t"], ["--ansible-forks", "3"],
    ["--disable-container-prepare"], ["-y"], ["--yes"],
]
COMMANDS = {"update prepare": UpdatePrepare, "update converge": UpdateConverge,
            "upgrade prepare": UpgradePrepare, "upgrade converge": UpgradeConverge}
#: What prepare takes as tripleoclient's converge does, but refuses (no playbook runs).
PLAYBOOK_ONLY = {"--limit", "--tags", "--skip-tags", "--ansible-forks"}


def _parse(command: type, argv: list[str]) -> argparse.Namespace:
    return command(None, None).get_parser("x").parse_args(argv)


def _refused(argv: list[str], stage: str) -> bool:
    flag = argv[0]
    if stage == "prepare" and flag in PLAYBOOK_ONLY:
        return True
    return any(flag in option.flags for option in lifecycle_options.REFUSED)


@pytest.mark.parametrize("name", sorted(COMMANDS))
@pytest.mark.parametrize("argv", TRIPLEOCLIENT_DEPLOY, ids=lambda a: " ".join(a))
def test_every_tripleoclient_deploy_option_is_taken_or_refused_by_name(
        name: str, argv: list[str]) -> None:
    command = COMMANDS[name]
    args = _parse(command, argv)  # argparse knows it (no "unrecognized arguments")
    stage = name.split()[1]
    if _refused(argv, stage):
        with pytest.raises(exceptions.InvalidInput) as raised:
            command(None, None).refuse_client_options(args, stage)
        message = str(raised.value)
        assert argv[0] in message and f"tripleo-flow's {name}" in message, message
        assert "nothing was changed" in message
    else:
        command(None, None).refuse_client_options(args, stage)


def test_the_refusals_name_what_to_use_in_each_interfaces_words() -> None:
    args = _parse(UpdatePrepare, ["--templates", "/tht", "--stack", "oc"])
    with pytest.raises(exceptions.InvalidInput) as raised:
        UpdatePrepare(None, None).refuse_client_options(args, "prepare")
    assert "tripleo-flow plan update oc --templates DIR" in str(raised.value)
    assert "PUT /v1/plans/oc with a .tar.gz" in raised.value.render(API)
    args = _parse(UpgradeConverge, ["--ntp-server", "pool.ntp.org"])
    with pytest.raises(exceptions.InvalidInput,
                       match="parameter set --plan overcloud NtpServer=VALUE"):
        UpgradeConverge(None, None).refuse_client_options(args, "converge")
    # SSH admin: tripleo-flow runs no enable_ssh_admin, and says so.
    args = _parse(UpgradePrepare, ["--overcloud-ssh-port-timeout", "30"])
    with pytest.raises(exceptions.InvalidInput, match="does not run enable_ssh_admin"):
        UpgradePrepare(None, None).refuse_client_options(args, "prepare")


@pytest.mark.parametrize(("workflow", "inputs", "expected"), [
    ("tripleo.update.prepare", {"plan": "oc", "templates": "/tht"},
     "PUT /v1/plans/oc with a .tar.gz"),
    ("tripleo.upgrade.converge", {"plan": "oc", "roles_file": "r.yaml"},
     "PUT /v1/plans/oc/roles"),
    ("tripleo.update.converge", {"plan": "oc", "environment_files": ["e.yaml"]},
     "as user_environments"),
    ("tripleo.upgrade.prepare", {"plan": "oc", "overcloud_ssh_network": "ctlplane"},
     "enable_ssh_admin"),
    ("tripleo.update.prepare", {"plan": "oc", "stack": "oc"}, "as plan"),
])
def test_the_workflows_refuse_tripleoclients_input_names(
        workflow: str, inputs: dict[str, Any], expected: str) -> None:
    with pytest.raises(exceptions.InvalidInput) as raised:
        lifecycle_options.check_inputs(workflow, inputs)
    assert expected in raised.value.render(API)


@pytest.mark.parametrize(("workflow", "inputs"), [
    ("tripleo.update.prepare", {"plan": "oc", "user_environments": [],
                                "run_validations": True, "overcloud_ssh_user": "u"}),
    ("tripleo.deploy.deploy", {"plan": "oc", "templates": "x"}),  # not a lifecycle one
    ("tripleo.update.run", {"plan": "oc", "limit": "c"}),
])
def test_other_inputs_and_workflows_pass(workflow: str, inputs: dict[str, Any]) -> None:
    lifecycle_options.check_inputs(workflow, inputs)


def test_the_deploy_options_reach_the_api_as_deploys() -> None:
    argv = ["-e", "a.yaml", "--environment-file", "b.yaml", "--environment-directory", "d",
            "-b", "bm.yaml", "--run-validations", "--overcloud-ssh-user", "admin",
            "--overcloud-ssh-key", "id", "--disable-validations", "--stack-only"]
    expected = {"environments": ["a.yaml", "b.yaml"], "environment_directories": ["d"],
                "baremetal_deployment": "bm.yaml", "run_validations": True,
                "overcloud_ssh_user": "admin", "overcloud_ssh_key": "id"}
    for command in (UpdatePrepare, UpgradePrepare):
        assert deploy_options(_parse(command, argv)) == expected
    for command in (UpdateConverge, UpgradeConverge):
        args = _parse(command, argv)
        assert deploy_options(args) == expected and args.stack_only
    assert _parse(UpdateConverge, ["--no-config-download"]).stack_only
    assert deploy_options(_parse(Deploy, argv[:-2])) == expected
    assert deploy_options(_parse(UpdatePrepare, []))["environments"] is None


def test_environment_directories_give_their_yaml_files_in_name_order(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    for directory, names in ((first, ("b.yaml", "a.yaml", "c.yml", "z.txt")),
                             (second, ("0.yaml",))):
        directory.mkdir()
        for name in names:
            (directory / name).write_text("{}\n")
    (first / "d.yaml").mkdir()  # a directory is not an environment
    assert environment_files([first, str(second)], default=False) == [
        str(first / "a.yaml"), str(first / "b.yaml"), str(second / "0.yaml")]
    with pytest.raises(exceptions.InvalidInput, match="is not a directory"):
        environment_files([tmp_path / "none"])


@pytest.mark.parametrize(("debug", "level", "used"), [
    (False, 0, 0), (False, 1, 0), (False, 2, 2), (False, 4, 4), (False, 9, 6),
    (True, 1, 3), (True, 0, 3),
])
def test_verbosity_as_tripleoclients_playbook_verbosity(debug: bool, level: int,
                                                         used: int) -> None:
    assert run_options.cli_verbosity(debug, level) == used
    command = UpdateRun(None, argparse.Namespace(debug=debug, verbose_level=level))
    assert verbosity(command) == used


def test_verbosity_reaches_every_run_and_converge() -> None:
    app_args = argparse.Namespace(debug=False, verbose_level=3)
    run = UpdateRun(None, app_args)
    args = run.get_parser("x").parse_args(["--limit", "c-0"])
    assert run.run_options(args)["ansible_verbosity"] == 3
    external = ExternalUpgradeRun(None, app_args)
    args = external.get_parser("x").parse_args([])
    assert external.run_options(args)["ansible_verbosity"] == 3


@pytest.mark.parametrize(("given", "flag"), [(None, []), (0, []), (1, ["-v"]),
                                             (3, ["-vvv"]), (6, ["-vvvvvv"])])
def test_verbosity_flag(given: Any, flag: list[str]) -> None:
    assert run_options.verbosity_args(run_options.check_verbosity(given)) == flag


@pytest.mark.parametrize("bad", [-1, 7, "2", 1.5, True, "-vv"])
def test_bad_verbosity_is_refused(bad: Any) -> None:
    with pytest.raises(exceptions.InvalidInput, match="ansible_verbosity must be"):
        run_options.check_verbosity(bad)


@pytest.mark.parametrize(("argv", "used"), [
    ([], 0), (["-v"], 2), (["-v", "-v"], 3), (["--debug"], 3), (["-q"], 0)])
def test_the_apps_own_options_give_tripleoclients_verbosity(argv: list[str],
                                                             used: int) -> None:
    from tripleo_flow.cli.main import TripleoFlowApp

    options, _ = TripleoFlowApp().parser.parse_known_args(
        [*argv, "overcloud", "update", "run"])
    assert verbosity(UpdateRun(None, options)) == used
