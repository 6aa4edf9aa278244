"""The minor update's pure rules (:mod:`tripleo_flow.core.deploy.update`), the plan's
environments list it changes and the CLI's required ``--limit``."""

from __future__ import annotations

import pytest

from tripleo_flow import exceptions
from tripleo_flow.cli.update import UpdateRun
from tripleo_flow.core.deploy import update

OWN = [{"path": "overcloud-resource-registry-puppet.yaml"},
       {"path": "deployed-servers-environment.yaml"}]
USER = [{"path": "user-environments/1/post-deploy.yaml"},
        {"path": "user-environments/2/mine.yaml"}]
THT18 = ["environments/lifecycle/update-prepare.yaml",
         "environments/lifecycle/upgrade-prepare.yaml"]
WITH_CONVERGE = [*THT18, "environments/lifecycle/update-converge.yaml"]


def test_prepare_puts_the_environment_before_the_operators_ones() -> None:
    # tripleoclient prepends it to the -e files: after the plan's own environments.
    entries = update.with_stage(OWN + USER, "prepare", THT18)
    assert entries == [*OWN, {"path": update.PREPARE_ENVIRONMENT}, *USER]
    assert update.is_prepared(entries)
    assert not update.is_prepared(OWN + USER)
    # Twice is once.
    assert update.with_stage(entries, "prepare", THT18) == entries


def test_converge_takes_the_prepare_environment_out() -> None:
    prepared = update.with_stage(OWN + USER, "prepare", THT18)
    # THT 18.0.0 has no update-converge.yaml: the plan is as before the prepare.
    assert update.with_stage(prepared, "converge", THT18) == OWN + USER
    # Templates that have one get it in the prepare environment's place.
    assert update.with_stage(prepared, "converge", WITH_CONVERGE) == [
        *OWN, {"path": update.CONVERGE_ENVIRONMENT}, *USER]
    assert not update.is_prepared(update.with_stage(prepared, "converge", WITH_CONVERGE))


def test_prepare_is_refused_without_the_environment_in_the_templates() -> None:
    with pytest.raises(exceptions.InvalidInput, match="update-prepare.yaml"):
        update.with_stage(OWN, "prepare", [])
    with pytest.raises(exceptions.InvalidInput, match="stage"):
        update.with_stage(OWN, "upgrade", THT18)


@pytest.mark.parametrize(("given", "sent"), [
    ("compute-0", "compute-0"),
    ("compute-0,compute-1", "compute-0:compute-1"),
    (" Controller, compute-1 :compute-5", "Controller:compute-1:compute-5"),
])
def test_the_limit_is_sent_as_tripleoclient_parses_it(given: str, sent: str) -> None:
    assert update.parse_limit(given) == sent


@pytest.mark.parametrize("limit", [None, "", " , ", 3])
def test_run_without_a_limit_is_refused(limit: object) -> None:
    with pytest.raises(exceptions.InvalidInput, match="limit"):
        update.parse_limit(limit)


def test_the_playbooks_run() -> None:
    assert update.playbooks(None) == ["update_steps_playbook.yaml"]
    assert update.playbooks(["all"]) == ["update_steps_playbook.yaml"]
    assert update.playbooks(["update_steps_playbook.yaml", "deploy_steps_playbook.yaml"]) \
        == ["update_steps_playbook.yaml", "deploy_steps_playbook.yaml"]
    for bad in (["../etc/passwd.yaml"], ["/tmp/x.yaml"], ["x.sh"], [3], {"a": 1}):
        with pytest.raises(exceptions.InvalidInput):
            update.playbooks(bad)


def test_the_cli_requires_limit_as_tripleoclient() -> None:
    parser = UpdateRun(None, None).get_parser("update run")
    with pytest.raises(SystemExit):
        parser.parse_args(["--stack", "overcloud", "-y"])
    args = parser.parse_args(["--stack", "oc", "--limit", "Compute", "--playbook",
                              "update_steps_playbook.yaml", "--tags", "a", "--skip-tags",
                              "b", "-y"])
    assert (args.plan, args.limit, args.playbook, args.tags, args.skip_tags, args.yes) == (
        "oc", "Compute", ["update_steps_playbook.yaml"], "a", "b", True)


UPGRADE = {"path": update.UPGRADE.prepare_environment}
UPDATE = {"path": update.PREPARE_ENVIRONMENT}


def test_an_upgrade_prepare_takes_the_place_of_an_update_prepare() -> None:
    updating = update.with_stage(OWN + USER, "prepare", THT18)
    upgrading = update.with_stage(updating, "prepare", THT18, kind="upgrade")
    assert upgrading == [*OWN, UPGRADE, *USER]
    assert update.is_prepared(upgrading, "upgrade") and not update.is_prepared(upgrading)
    assert update.with_stage(upgrading, "converge", THT18, kind="upgrade") == OWN + USER
    with pytest.raises(exceptions.InvalidInput, match="upgrade-prepare.yaml"):
        update.with_stage(OWN, "prepare", THT18[:1], kind="upgrade")
    with pytest.raises(exceptions.InvalidInput, match="lifecycle kind"):
        update.with_stage(OWN, "prepare", THT18, kind="downgrade")


def test_only_the_prepare_and_converge_deploys_send_the_lifecycle_environment() -> None:
    # tripleoclient sends update-prepare.yaml with the prepare only; a plain overcloud
    # deploy sends the -e files given (no lifecycle environment).
    prepared = [*OWN, UPDATE, *USER]
    assert update.sent_environments(prepared, "update") == prepared
    assert update.sent_environments(prepared, None) == OWN + USER
    assert update.sent_environments(prepared, "upgrade") == OWN + USER
    converged = [*OWN, {"path": update.CONVERGE_ENVIRONMENT}, *USER]
    assert update.sent_environments(converged, "update") == converged
    assert update.sent_environments(converged, None) == OWN + USER


def test_the_upgrade_runs_tripleoclients_major_upgrade_playbooks_in_order() -> None:
    # constants.MAJOR_UPGRADE_PLAYBOOKS, EXTERNAL_UPGRADE_PLAYBOOKS, EXTERNAL_UPDATE_PLAYBOOKS
    assert update.playbooks(None, "upgrade") == [
        "upgrade_steps_playbook.yaml", "deploy_steps_playbook.yaml",
        "post_upgrade_steps_playbook.yaml"]
    assert update.playbooks(["all"], "upgrade") == update.playbooks([], "upgrade")
    assert update.UPGRADE.external == ("external_upgrade_steps_playbook.yaml",)
    assert update.UPDATE.external == ("external_update_steps_playbook.yaml",)
    # external runs take an optional limit, parsed the same way
    assert update.parse_limit(None, required=False) is None
    assert update.parse_limit("a, b", required=False) == "a:b"
