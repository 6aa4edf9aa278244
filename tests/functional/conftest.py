"""Fixtures shared by the functional tests of several directories."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DEFAULT_HEAT_VENV = Path.home() / ".local/share/tripleo-flow/heat-venv"


@pytest.fixture(scope="session")
def heat_venv() -> Path:
    venv = Path(os.environ.get("TRIPLEO_FLOW_HEAT_VENV", DEFAULT_HEAT_VENV))
    if not (venv / "bin" / "heat-all").exists() or not (venv / "bin" / "openstack").exists():
        pytest.fail(f"No Heat virtualenv at {venv}: run `tripleo-flow heat install` (or "
                    "tools/setup-heat.sh) and set TRIPLEO_FLOW_HEAT_VENV.")
    return venv
