"""tripleoclient's deprecated-service check (``check_deprecated_service_is_enabled``)
on the ``-e`` files of deploy and update/upgrade prepare: a warning per service, then
its question; no yes, nothing changes."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures_plans import make_client
from tripleo_flow.plans.local import LocalStore

pytestmark = pytest.mark.functional

ODL = "OS::TripleO::Services::OpenDaylightApi"


def _envs(root: Path) -> dict[str, Path]:
    root.mkdir()
    texts = {"odl.yaml": f"resource_registry:\n  {ODL}: odl-api.yaml\n",
             "off.yaml": f"resource_registry:\n  {ODL}: OS::Heat::None\n",
             "plain.yaml": "parameter_defaults: {ComputeCount: 2}\n"}
    for name, text in texts.items():
        (root / name).write_text(text)
    (root / "odl-api.yaml").write_text("heat_template_version: rocky\n")
    return {name: root / name for name in texts}


def test_the_python_api_names_each_enabled_service(tmp_path: Path) -> None:
    envs = _envs(tmp_path / "envs")
    client = make_client(tmp_path, LocalStore(tmp_path / "plans"))
    try:
        [warning] = client.deployments.deprecated_services(
            [envs["plain.yaml"], envs["off.yaml"], envs["odl.yaml"]])
        assert warning.startswith(f"service {ODL} is enabled in odl.yaml. OpenDaylight")
        assert client.deployments.deprecated_services([envs["off.yaml"],
                                                       envs["plain.yaml"]]) == []
    finally:
        client.close()


def test_the_cli_refuses_without_a_yes(tmp_path: Path) -> None:
    envs = _envs(tmp_path / "envs")
    conf = tmp_path / "tripleo-flow.conf"
    conf.write_text(f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n")
    env = {**os.environ, "HOME": str(tmp_path / "home")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tripleo_flow.cli.main",
                               "--config-file", str(conf), *args], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120, env=env)

    assert run("plan", "create", "overcloud", "--sample").returncode == 0
    before = run("plan", "environment", "list", "overcloud", "-f", "value").stdout
    # -y answers the update's own question, not this one (as tripleoclient).
    for command in (["deploy", "--plan", "overcloud"],
                    ["overcloud", "update", "prepare", "--plan", "overcloud", "-y"],
                    ["overcloud", "upgrade", "prepare", "--plan", "overcloud", "-y"]):
        proc = run(*command, "-e", str(envs["plain.yaml"]), "-e", str(envs["odl.yaml"]))
        assert proc.returncode == 2, (command, proc.stderr)
        assert f"WARNING: service {ODL} is enabled in odl.yaml." in proc.stderr
        assert "Action not confirmed, exiting" in proc.stderr
        assert "Traceback" not in proc.stderr
    assert run("plan", "environment", "list", "overcloud", "-f", "value").stdout == before
