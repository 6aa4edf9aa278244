"""The minor update's pure rules (:mod:`tripleo_flow.core.update`), the plan's
environments list it changes and the CLI's required ``--limit``."""

from __future__ import annotations

import pytest

from tripleo_flow import exceptions
from tripleo_flow.cli.update import UpdateRun
from tripleo_flow.core import update

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
