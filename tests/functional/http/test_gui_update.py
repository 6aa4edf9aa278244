"""The GUI's "Minor update" section (``overcloud update prepare|run|converge``) in a real
browser against a real ``api serve``, a real native heat-all and real Ansible (local
connection): a whole update cycle of the sample plan with THT's update-prepare
environment, each step started through its workflow over the HTTP API after the CLI's
confirmation and followed live, and the refusals in the server's words (run before
prepare, a playbook that is not one, no limit), with nothing started or changed.

The server allows plan code (``[api] allow_plan_code``): update run and converge run
config-download's playbooks on it. What the workflows do is proven in
tests/functional/heat/test_update_cycle.py; here, that the GUI gives them what the CLI
gives and shows what they answer.

Screenshots go to the test's tmp dir, and to ``$TRIPLEO_FLOW_SCREENSHOTS`` when set.
"""

from __future__ import annotations

import json
import tarfile
import tempfile
from pathlib import Path

import pytest

from tests.functional.heat import lifecycle
from tests.functional.heat.lifecycle import lifecycle_templates
from tests.functional.heat.test_update_cycle import PREPARE_URL
from tests.functional.http.conftest import Api, finished, running_api
from tests.functional.http.test_gui_browser import (
    DEPLOY_MS,
    Shots,
    answer_dialogs,
    chromium_page,
    log_in,
    use_native_heat,
)
from tests.functional.overcloud import testhosts
from tripleo_flow import exceptions
from tripleo_flow.core.deploy import update

pytestmark = pytest.mark.functional

PLAN = "up"
PROMPT = ("overcloud update {} of plan up\nYou are about to run an UPDATE command. Take a "
          "backup first. Are you sure you want to update?")


def _runs(api: Api) -> list[dict]:  # type: ignore[type-arg]
    return [e for e in api("GET", "/v1/executions").json()
            if e["workflow"].startswith("tripleo.update.")]


def _tarball(tmp_path: Path) -> bytes:
    tree = lifecycle_templates(tmp_path / "templates")
    archive = tmp_path / "templates.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tree, arcname="templates")
    return archive.read_bytes()


NIC = "heat_template_version: wallaby\nresources: {}\n"
DIR_FILES = ["10-dir.yaml", "20-dir.yaml", "nic/ctl.yaml", "notes.txt"]


def _files(root: Path) -> tuple[Path, Path, Path, Path]:
    """An environment directory (two environments, the first naming a template of its
    own, a file that is no environment), a -e file, an environment naming a file
    outside its directory, and a baremetal deployment file that is not YAML."""
    env_dir = root / "environments"
    (env_dir / "nic").mkdir(parents=True)
    (env_dir / "10-dir.yaml").write_text(
        "resource_registry:\n  OS::TripleO::GuiUpdateNic: nic/ctl.yaml\n")
    (env_dir / "nic/ctl.yaml").write_text(NIC)
    (env_dir / "20-dir.yaml").write_text("parameter_defaults:\n  GuiUpdateDir: two\n")
    (env_dir / "notes.txt").write_text("not an environment\n")
    extra = root / "extra.yaml"
    extra.write_text("parameter_defaults:\n  GuiUpdateExtra: three\n")
    hostile = root / "hostile.yaml"
    hostile.write_text("resource_registry:\n  OS::TripleO::GuiUpdateNic: /etc/tripleo/nic.yaml\n")
    servers = root / "servers.yaml"
    servers.write_text("- name: Controller\n  count: [1\n")
    return env_dir, extra, hostile, servers


def _prepared(api: Api) -> bool:
    return update.is_prepared(api("GET", f"/v1/plans/{PLAN}/environments").json())


def test_the_gui_runs_a_minor_update_cycle(tmp_path: Path, ansible_venv: Path) -> None:
    from playwright.sync_api import Page, expect

    overrides: dict[str, dict[str, object]] = {
        "api": {"allow_plan_code": True}, "ansible": {"venv": str(ansible_venv)}}
    with running_api(tmp_path, overrides) as api, chromium_page() as opened:
        use_native_heat(api)
        created = api("POST", "/v1/plans", params={"name": PLAN}, data=_tarball(tmp_path),
                      headers={"Content-Type": "application/gzip"})
        assert created.status_code == 201, created.text
        started = api("POST", "/v1/workflows/deploy/executions",
                      json={"input": {"plan": PLAN, "heat_type": "native", "work_dir": PLAN}})
        assert started.status_code == 202, started.text
        assert finished(api, started.json()["id"], DEPLOY_MS / 1000)["state"] == "SUCCESS"
        work = tmp_path / "data" / "work" / PLAN
        env_dir, extra_env, hostile_env, bad_servers = _files(tmp_path / "files")

        page: Page = opened  # type: ignore[assignment]
        dialogs = answer_dialogs(page, [True, False, True, True, True, True, True, True, True,
                                        True, True])
        console_errors: list[str] = []
        page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
        shot = Shots(page, tmp_path / "screenshots", "update")
        log_in(page, api)
        page.get_by_role("link", name=PLAN, exact=True).click()
        section = page.locator("section#update")
        expect(section.get_by_role("heading", name="Minor update")).to_be_visible()
        expect(page.locator("#update-stage")).to_contain_text("Not prepared")
        run = section.locator("form[data-operation=run]")
        end = page.locator("#update-progress #execution-end")
        shot("section")

        # Run without a limit: said at once, nothing asked, nothing started.
        run.get_by_role("button", name="Update run").click()
        expect(page.locator("#update-run-error")).to_contain_text("Give the limit")
        assert dialogs == [] and _runs(api) == []

        # Run before prepare: confirmed, started, refused by the workflow in its words.
        run.get_by_label("Limit").fill(f"{PLAN}-controller-0")
        run.get_by_label("Ansible connection").fill("local")
        run.get_by_role("button", name="Update run").click()
        expect(end).to_contain_text("ERROR", timeout=DEPLOY_MS)
        expect(end.get_by_role("alert")).to_contain_text(
            f"No minor update is prepared for plan '{PLAN}'")
        expect(end).to_contain_text("nothing was changed")
        assert dialogs == [PROMPT.format("run")]
        shot("run-refused")

        # Prepare: a dismissed confirmation starts nothing; a confirmed one updates the
        # stack with the update-prepare environment, followed to UPDATE_COMPLETE.
        prepare = section.locator("form[data-operation=prepare]")
        expect(section.get_by_label("Work dir")).to_have_value(PLAN)
        prepare.get_by_role("button", name="Update prepare").click()
        expect(page.get_by_role("status")).to_contain_text("update prepare not confirmed")
        assert len(_runs(api)) == 1 and not _prepared(api)
        # (tripleoclient's --overcloud-ssh-user, --environment-directory and -e, as the
        # Deploy form's: the directory's *.yaml files first, with the files they refer to)
        prepare.get_by_label("Overcloud SSH user").fill("tripleo-admin")
        prepare.get_by_label("Environment directory").set_input_files(str(env_dir))
        prepare.get_by_label("Environment files").set_input_files(str(extra_env))
        shot("prepare-files")
        prepare.get_by_role("button", name="Update prepare").click()
        expect(end).to_contain_text("SUCCESS", timeout=DEPLOY_MS)
        expect(page.locator("#update-progress #stack-counts")).to_contain_text(
            "UPDATE_COMPLETE")
        expect(page.locator("#update-progress #stack-progress")).to_have_attribute("value", "1")
        expect(page.locator("#deployment-status")).to_contain_text("DEPLOY_SUCCESS")
        expect(page.locator("#update-stage")).to_contain_text("Prepared")
        assert _prepared(api)
        sent = json.loads((work / "stack-request.json").read_text())["environment_files"]
        assert PREPARE_URL in sent
        users = [e["path"] for e in api("GET", f"/v1/plans/{PLAN}/environments").json()
                 if e.get("user")]
        assert [u.rsplit("/", 1)[1] for u in users] == ["10-dir.yaml", "20-dir.yaml",
                                                          "extra.yaml"], users
        assert all(any(u in s for s in sent) for u in users), sent
        shot("prepared")

        # A playbook that is not a file of the project: refused, in the server's words.
        run.get_by_label("Playbooks").fill("../site.yaml")
        run.get_by_role("button", name="Update run").click()
        expect(end.get_by_role("alert")).to_contain_text(
            "'../site.yaml' is not a playbook of the config-download project",
            timeout=DEPLOY_MS)

        # Forks that are not a whole number: said at once, nothing asked or started.
        run.get_by_label("Playbooks").fill("deploy_steps_playbook.yaml")
        run.get_by_label("Ansible forks").fill("two")
        run.get_by_role("button", name="Update run").click()
        expect(page.locator("#update-run-error")).to_contain_text(
            "Give the ansible forks as a whole number")
        assert len(_runs(api)) == 3

        # Run on the limit only (the sample has no update steps: its deploy steps).
        run.get_by_label("Ansible forks").fill("2")
        run.get_by_label("Skip tags").fill("no_such_tag")
        run.get_by_label("Ansible verbosity").fill("2")  # the CLI's -v level
        run.get_by_role("button", name="Update run").click()
        expect(end).to_contain_text("SUCCESS", timeout=DEPLOY_MS)
        expect(page.locator("#update-progress #events")).to_contain_text("run_playbooks")
        recap = testhosts.recap((work / "ansible.log").read_text())
        assert set(recap) == {f"{PLAN}-controller-0"}, recap
        shot("run")

        # External-update run with tripleoclient's run options: extra vars that are not
        # name=value pairs are said at once; given right, the playbook (on this machine)
        # reports what it got: the extra vars, the forks and the SSH user.
        external = section.locator("form[data-operation=external-run]")
        expect(external.get_by_role("heading", name="overcloud external-update run")
               ).to_be_visible()
        external.get_by_label("Extra vars").fill("novalue")
        external.get_by_role("button", name="External update run").click()
        expect(page.locator("#update-external-run-error")).to_contain_text(
            "'novalue' has no name=")
        assert len(_runs(api)) == 4
        report = tmp_path / "report.json"
        external.get_by_label("Extra vars").fill(
            f"sample_extra=one {lifecycle.REPORT_VAR}={report}")
        external.get_by_label("Ansible connection").fill("local")
        external.get_by_label("Ansible forks").fill("2")
        external.get_by_label("SSH user").fill("tripleo-admin")
        external.get_by_role("button", name="External update run").click()
        expect(end).to_contain_text("SUCCESS", timeout=DEPLOY_MS)
        assert json.loads(report.read_text()) == {
            "extra": "one", "more": None, "forks": 2, "user": "tripleo-admin",
            "inventory": "generated"}
        shot("external-run")

        # Converge: the environment out, the stack updated, the deploy steps on every node.
        converge = section.locator("form[data-operation=converge]")
        converge.get_by_label("Ansible connection").fill("local")
        converge.get_by_role("button", name="Update converge").click()
        expect(end).to_contain_text("SUCCESS", timeout=DEPLOY_MS)
        expect(page.locator("#update-progress #stack-counts")).to_contain_text(
            "UPDATE_COMPLETE")
        expect(page.locator("#update-stage")).to_contain_text("Not prepared")
        assert not _prepared(api)
        sent = json.loads((work / "stack-request.json").read_text())["environment_files"]
        assert PREPARE_URL not in sent
        recap = testhosts.recap((work / "ansible.log").read_text())
        assert set(recap) == {f"{PLAN}-controller-0", f"{PLAN}-novacompute-0"}, recap
        shot("converged")

        # What each run got: the CLI's inputs, through the same workflows.
        runs = sorted(_runs(api), key=lambda e: e["created_at"])
        assert [(e["workflow"].rsplit(".", 1)[1], e["state"]) for e in runs] == [
            ("run", "ERROR"), ("prepare", "SUCCESS"), ("run", "ERROR"),
            ("run", "SUCCESS"), ("external_run", "SUCCESS"), ("converge", "SUCCESS")], runs
        assert runs[3]["input"]["limit"] == f"{PLAN}-controller-0"
        assert runs[3]["input"]["playbooks"] == ["deploy_steps_playbook.yaml"]
        assert runs[3]["input"]["ansible_connection"] == "local"
        assert runs[3]["input"]["ansible_skip_tags"] == "no_such_tag"
        assert runs[3]["input"].get("ansible_tags") is None  # empty: not sent
        assert runs[3]["input"]["ansible_forks"] == 2
        assert runs[3]["input"]["ansible_verbosity"] == 2
        [played] = api("GET", f"/v1/executions/{runs[3]['id']}").json()["output"]["runs"]
        assert "-vv" in played["command"], played
        assert runs[1]["input"]["overcloud_ssh_user"] == "tripleo-admin"
        assert "run_validations" not in runs[1]["input"]  # unchecked: not sent
        # the -e inputs the CLI sends: {"name", "files"}, the directory's first
        assert [(e["name"], sorted(e["files"])) for e in runs[1]["input"]["user_environments"]
                ] == [("10-dir.yaml", DIR_FILES), ("20-dir.yaml", DIR_FILES),
                      ("extra.yaml", ["extra.yaml"])]
        assert runs[1]["input"]["user_environments"][0]["files"]["nic/ctl.yaml"] == NIC
        assert "baremetal_deployment" not in runs[1]["input"]
        assert "user_environments" not in runs[5]["input"]  # none chosen: the plan's kept
        # (the execution record shows the server's temporary directory as <tmp>)
        assert runs[4]["input"]["extra_vars"] == {
            "sample_extra": "one",
            lifecycle.REPORT_VAR: str(report).replace(tempfile.gettempdir(), "<tmp>", 1)}
        assert runs[4]["input"]["ssh_user"] == "tripleo-admin"
        assert runs[5]["input"].get("run_ansible", True) is True
        update_external = ("overcloud external-update run of plan up\nYou are about to run "
                           "an UPDATE command. Take a backup first. Are you sure you want "
                           "to update?")
        assert dialogs[:7] == [PROMPT.format(op) for op in (
            "run", "prepare", "prepare", "run", "run")] + [
            update_external, PROMPT.format("converge")]

        # The major upgrade beside it, drawn from its own table: not prepared after the
        # converge; its run needs a limit (said at once); the run and the external-upgrade
        # run, confirmed in the upgrade's words, are refused by their own workflows.
        upgrade = page.locator("section#upgrade")
        expect(upgrade.get_by_role("heading", name="Major upgrade")).to_be_visible()
        expect(page.locator("#upgrade-stage")).to_contain_text(
            "Not prepared (overcloud upgrade prepare first)")
        upgrade_end = page.locator("#upgrade-progress #execution-end")
        upgrade_run = upgrade.locator("form[data-operation=run]")
        upgrade_run.get_by_role("button", name="Upgrade run").click()
        expect(page.locator("#upgrade-run-error")).to_contain_text("Give the limit")
        upgrade_run.get_by_label("Limit").fill(f"{PLAN}-controller-0")
        upgrade_run.get_by_role("button", name="Upgrade run").click()
        expect(upgrade_end.get_by_role("alert")).to_contain_text(
            f"No major upgrade is prepared for plan '{PLAN}'", timeout=DEPLOY_MS)
        external = upgrade.locator("form[data-operation=external-run]")
        expect(external.get_by_role("heading", name="overcloud external-upgrade run")
               ).to_be_visible()
        external.get_by_role("button", name="External upgrade run").click()
        expect(upgrade_end.get_by_role("alert")).to_contain_text(
            f"No major upgrade is prepared for plan '{PLAN}'", timeout=DEPLOY_MS)
        shot("upgrade-refused")
        upgrades = sorted((e for e in api("GET", "/v1/executions").json()
                           if e["workflow"].startswith("tripleo.upgrade.")),
                          key=lambda e: e["created_at"])
        assert [(e["workflow"], e["state"]) for e in upgrades] == [
            ("tripleo.upgrade.run", "ERROR"),
            ("tripleo.upgrade.external_run", "ERROR")], upgrades
        assert upgrades[0]["input"]["limit"] == f"{PLAN}-controller-0"
        assert "limit" not in upgrades[1]["input"]  # optional and empty: not sent
        upgrade_prompt = ("You are about to run an UPGRADE command. Take a backup first. "
                          "Are you sure you want to upgrade?")
        assert dialogs[-2:] == [
            f"overcloud upgrade run of plan {PLAN}\n{upgrade_prompt}",
            f"overcloud external-upgrade run of plan {PLAN}\n{upgrade_prompt}"]
        assert not _prepared(api)

        # The upgrade prepare's file options refuse what the CLI refuses, in its words:
        # an environment referring outside its directory, a baremetal file not YAML.
        # (the CLI's words: what its Python API call answers)
        with pytest.raises(exceptions.InvalidTemplate) as cli_env:
            api.client.upgrades.prepare(PLAN, environments=[str(hostile_env)])
        with pytest.raises(exceptions.TripleoFlowError) as cli_servers:
            api.client.upgrades.prepare(PLAN, baremetal_deployment=str(bad_servers))
        before = api("GET", f"/v1/plans/{PLAN}/environments").json()
        upgrade_prepare = upgrade.locator("form[data-operation=prepare]")
        upgrade_prepare.get_by_label("Environment files").set_input_files(str(hostile_env))
        upgrade_prepare.get_by_role("button", name="Upgrade prepare").click()
        expect(upgrade_end.get_by_role("alert")).to_contain_text(
            cli_env.value.reason, timeout=DEPLOY_MS)
        shot("upgrade-prepare-env-refused")
        upgrade_prepare.get_by_label("Environment files").set_input_files([])
        upgrade_prepare.get_by_label("Baremetal deployment").set_input_files(str(bad_servers))
        upgrade_prepare.get_by_role("button", name="Upgrade prepare").click()
        expect(upgrade_end.get_by_role("alert")).to_contain_text(
            cli_servers.value.text, timeout=DEPLOY_MS)
        shot("upgrade-prepare-baremetal-refused")
        assert api("GET", f"/v1/plans/{PLAN}/environments").json() == before
        prepares = [e for e in api("GET", "/v1/executions").json()
                    if e["workflow"] == "tripleo.upgrade.prepare"]
        assert [e["state"] for e in prepares] == ["ERROR"] * 3, prepares  # 1 CLI, 2 GUI
        assert [e["input"]["user_environments"][0]["name"] for e in prepares
                if e["input"].get("user_environments")] == ["hostile.yaml"]
        assert console_errors == [], console_errors
