"""What TripleO refuses in a major upgrade (and the external update), refused by every
interface before anything runs: the Python API, ``tripleo-flow overcloud ...``,
``openstack tripleo overcloud ...`` and the HTTP API's generic executions endpoint.

On a plan that is not prepared (no Heat needed: each run stops at its first task,
``update.check_prepared``, before Ansible; the prepare at ``update.set_stage`` when the
templates lack THT's upgrade-prepare.yaml).  Nothing changes: the plan environment
stays byte for byte, no deployment appears."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.functional.heat.lifecycle import lifecycle_templates
from tests.functional.http.conftest import finished, serving
from tripleo_flow import exceptions
from tripleo_flow.client import Client, workbooks
from tripleo_flow.client.update import LifecycleManager

pytestmark = pytest.mark.functional

PLAN, BARE = "oc", "bare"


def _run(exe: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    return subprocess.run([str(Path(sys.executable).parent / exe), *args], input=stdin,
                          capture_output=True, text=True, timeout=120, check=False, env=env)


def _state(conf: Path) -> tuple[bytes, bytes, list[str]]:
    with Client.from_config_files([str(conf)]) as client:
        plans = [client._session.store.get_object(p, "plan-environment.yaml") for p in (PLAN, BARE)]
        listed = sorted(json.dumps(p, sort_keys=True) for p in client.plans.list())
        return plans[0], plans[1], listed


def _plans(tmp_path: Path) -> tuple[Path, str]:
    """A configuration whose data dir has plan PLAN and plan BARE (templates without
    THT's lifecycle environments), and the work dir none of the refusals may make."""
    conf = tmp_path / "tripleo-flow.conf"
    conf.write_text(f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n")
    with Client.from_config_files([str(conf)]) as client:
        client.plans.create(PLAN, lifecycle_templates(tmp_path / "t1"))
        client.plans.create(BARE, lifecycle_templates(tmp_path / "t2", environments=False))
    return conf, str(tmp_path / "work")


def test_upgrade_runs_before_a_prepare_are_refused_everywhere(tmp_path: Path) -> None:
    conf, work = _plans(tmp_path)
    with Client.from_config_files([str(conf)]) as client:
        # The previous release's image settings, which upgrade converge refuses.
        stein = tmp_path / "stein.yaml"
        stein.write_text("parameter_defaults:\n  ContainerImagePrepare:\n"
                         "    - set: {namespace_stein: old, tag: t}\n")
        client.environments.add(PLAN, [str(stein)])
    before = _state(conf)

    with Client.from_config_files([str(conf)]) as client:
        with pytest.raises(exceptions.UpdateNotPrepared, match="major upgrade") as raised:
            client.upgrades.run(PLAN, "Compute", work_dir=work)
        assert f"overcloud upgrade prepare --stack {PLAN}" in str(raised.value)
        with pytest.raises(exceptions.UpdateNotPrepared, match="upgrade prepare"):
            client.upgrades.external_run(PLAN, work_dir=work)
        with pytest.raises(exceptions.UpdateNotPrepared, match="update prepare"):
            client.updates.external_run(PLAN, work_dir=work)
        with pytest.raises(exceptions.InvalidInput, match="needs --limit"):
            client.upgrades.run(PLAN, "", work_dir=work)
        with pytest.raises(exceptions.InvalidInput, match="not a playbook"):
            client.upgrades.run(PLAN, "Compute", playbooks=["../x.yaml"], work_dir=work)
        with pytest.raises(exceptions.InvalidInput, match="Unknown lifecycle"):
            LifecycleManager(client._session, "sideways", client.deployments).external_run(
                PLAN, work_dir=work)
        with pytest.raises(exceptions.TripleoFlowError, match="upgrade-prepare.yaml"):
            client.upgrades.prepare(BARE, work_dir=work)
        # As tripleoclient's check_forbidden_params: before the stack is touched.
        with pytest.raises(exceptions.TripleoFlowError,
                           match=r"Upgrade converge refused.*stein.yaml: namespace_stein"):
            client.upgrades.converge(PLAN, work_dir=work)
        with pytest.raises(exceptions.InvalidInput, match="ansible_forks"):
            client.upgrades.converge(PLAN, work_dir=work, ansible_forks=-2)

    cli = ("tripleo-flow", "--config-file", str(conf), "overcloud")
    done = _run(*cli, "upgrade", "run", "--stack", PLAN, "-y", "--work-dir", work)
    assert done.returncode == 2 and "--limit" in done.stderr, done.stderr
    for command, names in ((("upgrade", "run", "--limit", "Compute"), "upgrade"),
                           (("external-upgrade", "run"), "upgrade"),
                           (("external-update", "run", "--limit", "a,b"), "update")):
        done = _run(*cli, *command, "--stack", PLAN, "-y", "--work-dir", work)
        assert done.returncode == 4, (command, done.stderr)
        assert f"overcloud {names} prepare --stack {PLAN}" in done.stderr
    for bad, expected in ((("-e", "novalue"), "Invalid format"),
                          (("-e", f"@{tmp_path / 'none.yaml'}"), "Cannot read extra vars"),
                          (("--ansible-forks", "-1"), "ansible_forks"),
                          (("--ssh-user", "a b"), "user name")):
        done = _run(*cli, "external-update", "run", "--stack", PLAN, "-y", "--work-dir",
                    work, *bad)
        assert done.returncode == 2 and expected in done.stderr, (bad, done.stderr)
    done = _run(*cli, "upgrade", "prepare", "--stack", PLAN, "--work-dir", work, stdin="n\n")
    assert done.returncode == 2 and "Upgrade not confirmed" in done.stderr, done.stderr
    assert "You are about to run an UPGRADE command" in done.stdout
    done = _run(*cli, "upgrade", "prepare", "--stack", BARE, "-y", "--work-dir", work)
    assert done.returncode != 0 and "upgrade-prepare.yaml" in done.stderr, done.stderr

    done = _run("openstack", "--tripleo-config-file", str(conf), "tripleo", "overcloud",
                "upgrade", "run", "--stack", PLAN, "-y", "--limit", "Compute",
                "--work-dir", work)
    assert done.returncode == 4, done.stderr
    assert "No major upgrade is prepared" in done.stderr

    with Client.from_config_files([str(conf)]) as client:
        client.conf.set_override("auth_token", "t0ken", group="api")
        client.conf.set_override("allowed_paths", [str(tmp_path)], group="api")
        with serving(client, "t0ken") as api:
            for name, expected in ((workbooks.UPGRADE_RUN, "No major upgrade"),
                                   (workbooks.EXTERNAL_UPGRADE_RUN, "No major upgrade"),
                                   (workbooks.EXTERNAL_UPDATE_RUN, "No minor update")):
                started = api("POST", f"/v1/workflows/{name}/executions", json={
                    "input": {"plan": PLAN, "work_dir": work, "limit": "Compute"}})
                assert started.status_code == 202, started.text
                ended = finished(api, started.json()["id"])
                assert ended["state"] == "ERROR"
                assert expected in json.dumps(ended)
            # Without a limit: the execution starts, its first task refuses it.
            started = api("POST", f"/v1/workflows/{workbooks.UPGRADE_RUN}/executions",
                          json={"input": {"plan": PLAN, "work_dir": work}})
            ended = finished(api, started.json()["id"])
            assert ended["state"] == "ERROR" and "needs --limit" in json.dumps(ended)
            # tripleoclient's run options, hostile: refused by the first task (no Ansible
            # run, nothing changed), or before any execution for a server path.
            for inputs, expected in (
                    ({"extra_vars": "@/etc/passwd"}, "extra_vars must be a mapping"),
                    ({"extra_vars": ["@/etc/passwd"]}, "extra_vars must be a mapping"),
                    ({"extra_vars": {"a b": 1}}, "not an Ansible variable name"),
                    ({"ansible_forks": "9; rm"}, "ansible_forks must be"),
                    ({"ssh_user": "-oProxyCommand=x"}, "is not a user name"),
                    ({"static_inventory": str(tmp_path / "none.yaml")}, "is not a file")):
                started = api("POST", f"/v1/workflows/{workbooks.EXTERNAL_UPDATE_RUN}/"
                              "executions", json={"input": {"plan": PLAN, "work_dir": work,
                                                            **inputs}})
                assert started.status_code == 202, started.text
                ended = finished(api, started.json()["id"])
                assert ended["state"] == "ERROR" and expected in json.dumps(ended), ended
            started = api("POST", f"/v1/workflows/{workbooks.UPGRADE_RUN}/executions",
                          json={"input": {"plan": PLAN, "work_dir": work, "limit": "c",
                                          "static_inventory": "/etc/hosts"}})
            assert started.status_code == 400, started.text
            assert "static_inventory" in started.text
            # The deploy's lifecycle input is checked by its first task.
            started = api("POST", f"/v1/workflows/{workbooks.DEPLOY}/executions", json={
                "input": {"plan": PLAN, "work_dir": work, "lifecycle": "sideways"}})
            ended = finished(api, started.json()["id"])
            assert ended["state"] == "ERROR" and "Unknown lifecycle" in json.dumps(ended)
        runs = [e.state for e in client.executions.list(workbooks.UPGRADE_RUN)]
    # The API's run without a prepare, the CLI's, openstack's, the HTTP two; the others
    # were refused before any execution.
    assert runs == ["ERROR"] * 5, runs
    assert _state(conf) == before
    assert not (tmp_path / "work").exists()


def test_tripleoclients_deploy_options_are_refused_by_name_everywhere(tmp_path: Path) -> None:
    """tripleoclient's deploy options that tripleo-flow does not take on a prepare or
    converge: refused before any execution by the CLI (both), the HTTP API and the
    Python API's generic run, naming what to use instead; nothing changes."""
    conf, work = _plans(tmp_path)
    before = _state(conf)

    cli = ("tripleo-flow", "--config-file", str(conf), "overcloud")
    for command, option, expected in (
            (("update", "prepare"), ("--templates", str(tmp_path / "t1")),
             f"tripleo-flow plan update {PLAN} --templates DIR"),
            (("upgrade", "prepare"), ("--overcloud-ssh-network", "ctlplane"),
             "does not run enable_ssh_admin"),
            (("upgrade", "converge"), ("-r", "roles.yaml"), f"role set --plan {PLAN} FILE"),
            (("update", "converge"), ("--config-download-only",), "deploy --plan"),
            (("upgrade", "prepare"), ("--limit", "Compute"), "a prepare runs no playbook")):
        done = _run(*cli, *command, "--stack", PLAN, "-y", "--work-dir", work, *option)
        assert done.returncode == 2, (command, option, done.stderr)
        assert expected in done.stderr and "nothing was changed" in done.stderr, done.stderr
    done = _run("openstack", "--tripleo-config-file", str(conf), "tripleo", "overcloud",
                "upgrade", "prepare", "--stack", PLAN, "-y", "--ntp-server", "pool.ntp.org")
    assert done.returncode == 2, done.stderr
    assert f"parameter set --plan {PLAN} NtpServer=VALUE" in done.stderr

    with Client.from_config_files([str(conf)]) as client:
        with pytest.raises(exceptions.InvalidInput, match="takes tripleoclient's 'stack'"):
            client.executions.create(workbooks.UPDATE_PREPARE, {"plan": PLAN, "stack": PLAN,
                                                                "work_dir": work})
        client.conf.set_override("auth_token", "t0ken", group="api")
        client.conf.set_override("allowed_paths", [str(tmp_path)], group="api")
        with serving(client, "t0ken") as api:
            for name, inputs, expected in (
                    (workbooks.UPGRADE_PREPARE, {"templates": "/usr/share/tht"},
                     f"PUT /v1/plans/{PLAN} with a .tar.gz"),
                    (workbooks.UPDATE_CONVERGE, {"environment_files": ["e.yaml"]},
                     "as user_environments"),
                    (workbooks.UPGRADE_CONVERGE, {"ntp_server": "x"},
                     f"PUT /v1/plans/{PLAN}/parameters")):
                started = api("POST", f"/v1/workflows/{name}/executions", json={
                    "input": {"plan": PLAN, "work_dir": work, **inputs}})
                assert started.status_code == 400, started.text
                assert expected in started.text, started.text
            # A verbosity ansible-playbook has no flag for: refused by the first task.
            started = api("POST", f"/v1/workflows/{workbooks.UPGRADE_RUN}/executions",
                          json={"input": {"plan": PLAN, "work_dir": work, "limit": "c",
                                          "ansible_verbosity": 9}})
            assert started.status_code == 202, started.text
            ended = finished(api, started.json()["id"])
            assert ended["state"] == "ERROR" and "ansible_verbosity must be" in \
                json.dumps(ended), ended
    assert _state(conf) == before
    assert not (tmp_path / "work").exists()
