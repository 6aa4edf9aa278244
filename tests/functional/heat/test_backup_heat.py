"""A Heat database dump kept in a deployment's work dir survives ``backup create`` /
``backup restore`` onto a fresh data directory: ``launch heat --restore-db`` there
brings the stack back.  A Heat still running from the work dir refuses the backup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.functional.heat.conftest import OpenStack, make_conf
from tripleo_flow import exceptions
from tripleo_flow.client import Client

pytestmark = pytest.mark.functional
TEMPLATE = str(Path(__file__).with_name("small-stack.yaml"))


def test_a_kept_heat_dump_is_restored_with_the_data_dir(tmp_path: Path, heat_venv: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    archive = tmp_path / "backup.tar.gz"
    with Client(make_conf(old, heat_venv)) as client:
        heat_dir = str(client.data_dir / "deployments" / "small")
        try:
            ep = client.heat.launch(heat_dir, "native")
            OpenStack(heat_venv, ep["clouds_yaml"])(
                "stack", "create", "-t", TEMPLATE, "--parameter", "length=5", "--wait", "small")
            with pytest.raises(exceptions.Conflict, match="launched heat runs"):
                client.backups.create(archive)
            assert not archive.exists()
        finally:
            client.heat.kill(heat_dir)
        written = client.backups.create(archive)
    assert written["kept"] == ["deployments", "executions.sqlite"]

    with Client(make_conf(new, heat_venv)) as client:
        client.backups.restore(archive)
        heat_dir = str(client.data_dir / "deployments" / "small")
        try:
            ep = client.heat.launch(heat_dir, "native", restore_db=True)
            listed = json.loads(OpenStack(heat_venv, ep["clouds_yaml"])(
                "stack", "list", "-f", "json"))
            assert [(s["Stack Name"], s["Stack Status"]) for s in listed] == [
                ("small", "CREATE_COMPLETE")]
        finally:
            client.heat.kill(heat_dir)
