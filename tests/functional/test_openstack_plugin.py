"""``openstack tripleo ...`` (python-openstackclient with our plugin) runs the
tripleo-flow commands: the real ``openstack`` command, in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from tripleo_flow.openstack import commands


def openstack(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "openstack"
    assert exe.exists(), "python-openstackclient is not installed in this venv"
    conf = tmp_path / "tripleo-flow.conf"
    conf.write_text(f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    env["HOME"] = str(tmp_path)
    return subprocess.run([str(exe), "--tripleo-config-file", str(conf), "tripleo", *args],
                          capture_output=True, text=True, env=env, timeout=120, check=False)


def test_every_tripleo_flow_command_is_an_openstack_tripleo_command() -> None:
    ours = {ep.name: ep for ep in metadata.entry_points(group="tripleo_flow.cli")}
    theirs = {ep.name: ep for ep in metadata.entry_points(group="openstack.tripleo.v1")}
    assert set(theirs) == {f"tripleo_{n}" for n in ours if n != "api_serve"}
    for name, entry in theirs.items():
        adapted = entry.load()
        original = ours[name.removeprefix("tripleo_")].load()
        assert issubclass(adapted, original) and adapted.take_action is original.take_action
        assert adapted.auth_required is False


def test_openstack_tripleo_plan_commands(tmp_path: Path) -> None:
    created = openstack(tmp_path, "plan", "create", "overcloud", "--sample", "-f", "json")
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["name"] == "overcloud"

    listed = openstack(tmp_path, "plan", "list", "-f", "json")
    assert listed.returncode == 0, listed.stderr
    assert [p["name"] for p in json.loads(listed.stdout)] == ["overcloud"]

    changed = openstack(tmp_path, "parameters", "set", "--plan", "overcloud",
                        "ComputeCount=2", "-f", "json")
    assert changed.returncode == 0, changed.stderr
    assert "ComputeCount" in changed.stdout

    # The singular name (the OpenStack client's form) beside the old one, same command.
    roles = openstack(tmp_path, "role", "list", "--plan", "overcloud", "-f", "value",
                      "-c", "name")
    assert roles.returncode == 0, roles.stderr
    assert "Controller" in roles.stdout.split()
    listed = subprocess.run([str(Path(sys.executable).parent / "openstack"), "help"],
                            capture_output=True, text=True, timeout=120, check=True,
                            env=dict(os.environ, HOME=str(tmp_path))).stdout
    assert "  tripleo role list  " in listed
    assert "tripleo roles list" not in listed

    missing = openstack(tmp_path, "plan", "show", "nope")
    assert missing.returncode == 3  # not found, as tripleo-flow exits
    assert "Plan 'nope' does not exist." in missing.stderr


def test_the_adapted_command_builds_its_client_from_the_config(tmp_path: Path) -> None:
    shim = commands.AppShim(object())
    os.environ[commands.plugin.CONFIG_ENV] = str(tmp_path / "none.conf")
    try:
        (tmp_path / "none.conf").write_text(f"[DEFAULT]\ndata_dir = {tmp_path / 'd'}\n")
        assert str(shim.client.data_dir) == str(tmp_path / "d")
    finally:
        del os.environ[commands.plugin.CONFIG_ENV]
        shim.close_client()


def test_openstack_tripleo_workflow_run_and_execution_resume_async(tmp_path: Path) -> None:
    """``--async`` works as in tripleo-flow: the run goes on in a detached process."""
    from tripleo_flow.client import Client
    from tripleo_flow.client.plans import sample_plan_dir

    started = openstack(tmp_path, "workflow", "run", "create_deployment_plan", "--async",
                        "--input", "plan=overcloud", "--input", f"templates={sample_plan_dir()}",
                        "-f", "json")
    assert started.returncode == 0, started.stderr
    execution = json.loads(started.stdout)
    assert execution["State"] in ("PENDING", "RUNNING")
    client = Client.from_config_files([str(tmp_path / "tripleo-flow.conf")])
    try:
        done = client.executions.follow(execution["ID"], timeout=120)
        assert done.state == "SUCCESS", done.error
        assert [p["name"] for p in client.plans.list()] == ["overcloud"]
    finally:
        client.close()
    # Ended: returned unchanged, as Mistral's resume of a workflow that is not paused.
    again = openstack(tmp_path, "execution", "resume", execution["ID"], "--async")
    assert again.returncode == 0, again.stderr
    assert "SUCCESS" in again.stdout
