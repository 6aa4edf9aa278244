"""Fixtures for functional tests against a real heat-all.

Needs: the Heat virtualenv (``tripleo-flow heat install``; its path in
``TRIPLEO_FLOW_HEAT_VENV``, default ``~/.local/share/tripleo-flow/heat-venv``)
and, for the MariaDB tests, Debian's mariadb-server and mariadb-client.  A
missing piece FAILS the tests.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.functional.conftest import DEFAULT_HEAT_VENV
from tests.functional.mariadb import PrivateMariaDB
from tripleo_flow import config
from tripleo_flow.client import Client
from tripleo_flow.core.deploy.progress import StackProgress

DEFAULT_VENV = DEFAULT_HEAT_VENV


@pytest.fixture(scope="session")
def mariadb(mariadb_server: PrivateMariaDB) -> PrivateMariaDB:
    """The session's private MariaDB (Heat launches make databases and users on it)."""
    return mariadb_server


def make_conf(tmp_path: Path, venv: Path, **heat: object):  # type: ignore[no-untyped-def]
    conf = config.new_conf()
    conf([], project="tripleo-flow", default_config_files=[], default_config_dirs=[])
    conf.set_override("data_dir", str(tmp_path / "data"))
    conf.set_override("venv", str(venv), group="heat")
    conf.set_override("clouds_yaml", str(tmp_path / "clouds.yaml"), group="heat")
    conf.set_override("api_timeout", 180.0, group="heat")
    for key, value in heat.items():
        conf.set_override(key, value, group="heat")
    return conf


@pytest.fixture
def client(tmp_path: Path, heat_venv: Path) -> Iterator[Client]:
    api = Client(make_conf(tmp_path, heat_venv))
    yield api
    api.heat.kill(str(tmp_path / "work"))


class OpenStack:
    """The real openstack client of the Heat virtualenv, on a clouds.yaml."""

    def __init__(self, venv: Path, clouds_yaml: str) -> None:
        self.binary = str(venv / "bin" / "openstack")
        self.env = {**os.environ, "OS_CLIENT_CONFIG_FILE": clouds_yaml}
        for key in ("OS_CLOUD", "OS_AUTH_URL", "OS_TOKEN", "OS_ENDPOINT"):
            self.env.pop(key, None)

    def __call__(self, *args: str) -> str:
        proc = subprocess.run([self.binary, "--os-cloud", "heat", *args], env=self.env,
                              capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode == 0, f"openstack {' '.join(args)} failed: {proc.stderr}"
        return proc.stdout


def heat_processes(conf_file: Path) -> list[int]:
    """Pids of live processes whose command line names ``conf_file``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if str(conf_file) in cmd and state != "Z":
            pids.append(int(entry.name))
    return pids


def check_create_progress(reports: list[StackProgress]) -> None:
    """A stack create's progress as a bar reads it: its share of the work never goes
    down and ends full, and it is worked out from the nested stacks Heat lists (not the
    plain count, whose total grows as nested stacks appear)."""
    assert reports and reports[-1].status == "CREATE_COMPLETE"
    shares = [r.fraction() for r in reports]
    assert all(r.share is not None for r in reports)
    assert shares == sorted(shares) and shares[-1] == 1.0, shares
    assert any(r.total and abs(r.fraction() - r.complete / r.total) > 1e-6
               for r in reports[:-1]), [(r.complete, r.total, r.share) for r in reports]
