"""Whole deployments of the sample plan with the plan in Swift (and locally) on container
Heat, on a pod Heat (heat-api + heat-engine on MariaDB and RabbitMQ), and on the same
layout as child processes (heat type ``processes``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.functional.heat.conftest import heat_processes, make_conf
from tripleo_flow.client import Client
from tripleo_flow.core.deploy.progress import StackProgress
from tripleo_flow.heat import podman_api, process
from tripleo_flow.heat.workdir import HeatDir
from tripleo_flow.plans.store import PlanStore
from tripleo_flow.plans.swift import SwiftStore

pytestmark = pytest.mark.functional


def _heat_containers(podman_url: str | None, work: Path) -> list[str]:
    if podman_url is None:
        return []
    token = HeatDir(work).token
    with podman_api.connect(podman_url, Path("/nonexistent")) as client:
        return [c.name for c in client.containers.list(all=True) if token in c.name]


def _deploy_and_check(client: Client, work: Path, heat_type: str,
                      podman_url: str | None) -> None:
    client.plans.create("oc", sample=True)
    reports: list[StackProgress] = []
    result = client.deployments.create("oc", heat_type=heat_type, work_dir=work,
                                       progress=reports.append)
    assert result["deployment_status"] == "DEPLOY_SUCCESS"
    assert result["heat_type"] == heat_type
    assert reports and reports[-1].status == "CREATE_COMPLETE"
    assert reports[-1].complete == reports[-1].total > 0
    status = client.deployments.status("oc")  # read back from the plan store
    assert status["deployment_status"] == "DEPLOY_SUCCESS"
    inventory = yaml.safe_load((work / "config-download/tripleo-ansible-inventory.yaml")
                               .read_text())
    assert list(inventory["oc_Compute"]["hosts"]) == ["oc-novacompute-0"]
    assert HeatDir(work).dump_file.stat().st_size > 0
    assert HeatDir(work).read_run() is None
    assert _heat_containers(podman_url, work) == []
    assert heat_processes(HeatDir(work).conf_file) == []


def test_deploy_sample_plan_with_container_heat(plan_store: PlanStore, tmp_path: Path,
                                                heat_venv: Path, podman_url: str,
                                                heat_image: str) -> None:
    client = Client(make_conf(tmp_path, heat_venv, podman_url=podman_url, image=heat_image),
                    store=plan_store)
    work = tmp_path / "work"
    try:
        _deploy_and_check(client, work, "container", podman_url)
        if isinstance(plan_store, SwiftStore):  # the status lives in Swift, not on disk
            assert not (tmp_path / "data" / "plans").exists()
    finally:
        client.heat.kill(str(work), "container")


def test_deploy_sample_plan_with_pod_heat_on_mariadb(swift_store: SwiftStore, tmp_path: Path,
                                                     heat_venv: Path, podman_url: str,
                                                     heat_image: str) -> None:
    client = Client(make_conf(tmp_path, heat_venv, podman_url=podman_url, image=heat_image,
                              engine_workers=2), store=swift_store)
    work = tmp_path / "work"
    try:
        _deploy_and_check(client, work, "pod", podman_url)
    finally:
        client.heat.kill(str(work), "pod")


def test_deploy_sample_plan_with_processes_heat(plan_store: PlanStore, tmp_path: Path,
                                                heat_venv: Path) -> None:
    client = Client(make_conf(tmp_path, heat_venv, engine_workers=2), store=plan_store)
    work = tmp_path / "work"
    try:
        _deploy_and_check(client, work, "processes", None)
        services = Path("/dev/shm") / f"tripleo-flow-heat-{HeatDir(work).token}-services"
        assert process.find_naming(str(services)) == [] and not services.exists()
    finally:
        client.heat.kill(str(work), "processes")
