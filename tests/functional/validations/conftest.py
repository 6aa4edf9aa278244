"""A Client with the validations virtualenv (tools/setup-validations.sh) and the test-only
validations of tests/validations, on a local store in a temporary data directory."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tripleo_flow.client import Client
from tripleo_flow.client.plans import sample_plan_dir

DEFAULT_VALIDATIONS_VENV = Path.home() / ".local/share/tripleo-flow/validations-venv"
#: Test-only validation playbooks (a slow one, for stop).
TEST_VALIDATIONS = Path(__file__).resolve().parents[2] / "validations"


@pytest.fixture(scope="session")
def validations_venv() -> Path:
    venv = Path(os.environ.get("TRIPLEO_FLOW_VALIDATIONS_VENV", DEFAULT_VALIDATIONS_VENV))
    if not (venv / "bin" / "ansible-playbook").exists() or not (
            venv / "share/ansible/validation-playbooks/no-op.yaml").exists():
        pytest.fail(f"No validations virtualenv at {venv}: run tools/setup-validations.sh "
                    "(and set TRIPLEO_FLOW_VALIDATIONS_VENV).")
    return venv


def make_client(data_dir: Path, venv: Path) -> Client:
    return Client.from_config_files([], data_dir=str(data_dir), validations__venv=str(venv),
                                    validations__validations_dirs=[str(TEST_VALIDATIONS)])


@pytest.fixture
def vclient(tmp_path: Path, validations_venv: Path) -> Iterator[Client]:
    client = make_client(tmp_path / "data", validations_venv)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def plan(vclient: Client) -> str:
    vclient.plans.create("oc", sample_plan_dir())
    return "oc"
