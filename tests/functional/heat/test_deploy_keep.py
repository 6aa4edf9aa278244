"""A finished stack is never thrown away (issue 11, item 6).

On a real native heat-all with the sample plan: when config-download or Ansible fails
after the stack is CREATE_COMPLETE or UPDATE_COMPLETE, the stack's dump, its outputs
and (when written) the config-download commit are kept, the status says so, and
``deploy --config-download-only`` re-runs only the steps after the stack.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.functional.heat.conftest import heat_processes, make_conf
from tripleo_flow import exceptions
from tripleo_flow.actions.deploy_heat import FAILED_DUMP, PRE_DEPLOY_DUMP
from tripleo_flow.client import Client
from tripleo_flow.heat.workdir import HeatDir
from tripleo_flow.plans.local import LocalStore

pytestmark = pytest.mark.functional


@pytest.fixture
def client(tmp_path: Path, heat_venv: Path) -> Client:
    return Client(make_conf(tmp_path, heat_venv), store=LocalStore(tmp_path / "plans"))


def _stack_ids(work: Path) -> set[str]:
    """The ids of every stack (top and nested) in the work dir's Heat dump."""
    dump = HeatDir(work).dump_file.read_text()
    return set(re.findall(r"INSERT INTO \"?stack\"? VALUES\('([0-9a-f-]+)'", dump))


def _commits(repo: Path) -> int:
    out = subprocess.run(["git", "-C", str(repo), "rev-list", "--count", "HEAD"],
                         check=True, capture_output=True, text=True).stdout
    return int(out)


def _hosts(work: Path) -> set[str]:
    outputs = yaml.safe_load((work / "outputs.yaml").read_text())
    return set(outputs["deployments"])


def test_failed_config_download_keeps_the_created_stack(client: Client,
                                                        tmp_path: Path) -> None:
    work = tmp_path / "work"
    client.plans.create("oc", sample=True)
    with pytest.raises(exceptions.NoKeptStack):  # nothing deployed yet: refused, no change
        client.deployments.create("oc", work_dir=work, config_download_only=True)
    assert client.deployments.status("oc")["deployment_status"] == "NONE"

    work.mkdir()
    (work / "config-download").write_text("a file where the project goes\n")
    with pytest.raises(Exception) as failed:
        client.deployments.create("oc", work_dir=work)
    assert "config-download" in str(failed.value) or "Not a directory" in str(failed.value)

    status = client.deployments.status("oc")
    assert status["deployment_status"] == "DEPLOY_FAILED"
    assert status["stack_status"] == "CREATE_COMPLETE"
    assert "tripleo-flow deploy --plan oc --config-download-only" in status["message"]
    assert heat_processes(HeatDir(work).conf_file) == []
    created = _stack_ids(work)
    assert created  # the finished stack's dump is kept ...
    assert _hosts(work) == {"oc-controller-0", "oc-novacompute-0"}  # ... with its outputs

    (work / "config-download").unlink()
    result = client.deployments.create("oc", work_dir=work, config_download_only=True)
    assert result["deployment_status"] == "DEPLOY_SUCCESS"
    assert result["stack_status"] == "CREATE_COMPLETE"  # neither re-created nor updated
    assert _stack_ids(work) == created
    assert (work / "config-download" / "host_vars" / "oc-novacompute-0").is_file()
    assert _commits(work / "config-download") == 1
    assert heat_processes(HeatDir(work).conf_file) == []


def test_failed_ansible_keeps_the_updated_stack(client: Client, tmp_path: Path) -> None:
    work = tmp_path / "work"
    client.plans.create("oc", sample=True)
    client.deployments.create("oc", work_dir=work)
    created = _stack_ids(work)

    # The update finishes, then Ansible fails (no such connection plugin).
    client.parameters.set("oc", {"ComputeCount": 2})
    with pytest.raises(exceptions.AnsibleFailed):
        client.deployments.create("oc", work_dir=work, run_ansible=True,
                                  ansible_connection="no_such_connection_plugin")
    status = client.deployments.status("oc")
    assert status["deployment_status"] == "DEPLOY_FAILED"
    assert status["stack_status"] == "UPDATE_COMPLETE"
    assert "--config-download-only" in status["message"]
    heat = HeatDir(work)
    # The updated stack is the current dump: no pre-update copy put back, none failed.
    assert not (heat.root / PRE_DEPLOY_DUMP).exists()
    assert not (heat.root / FAILED_DUMP).exists()
    updated = _stack_ids(work)
    assert updated > created  # the new compute's nested stacks are in the dump
    assert _hosts(work) == {"oc-controller-0", "oc-novacompute-0", "oc-novacompute-1"}
    cd = work / "config-download"
    assert _commits(cd) == 2 and (cd / "host_vars" / "oc-novacompute-1").is_file()

    # Only the steps after the stack run again, this time with a working connection.
    result = client.deployments.create("oc", work_dir=work, config_download_only=True,
                                       run_ansible=True, ansible_connection="local")
    assert result["deployment_status"] == "DEPLOY_SUCCESS"
    assert result["stack_status"] == "UPDATE_COMPLETE"
    assert _stack_ids(work) == updated
    assert "oc-novacompute-1" in (work / "ansible.log").read_text()
    assert heat_processes(heat.conf_file) == []

    # -e or a baremetal file with --config-download-only would be silently ignored.
    with pytest.raises(exceptions.InvalidInput, match="config-download-only"):
        client.deployments.create("oc", work_dir=work, config_download_only=True,
                                  baremetal_deployment="- name: Controller\n  count: 1\n")
    # So would Ansible's tags without --run-ansible.
    with pytest.raises(exceptions.InvalidInput, match="with --run-ansible"):
        client.deployments.create("oc", work_dir=work, config_download_only=True,
                                  ansible_tags="step0")
