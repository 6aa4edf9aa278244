"""Heat's own virtualenv (``tripleo-flow heat install``).

openstack-heat's pinned dependencies conflict with tripleo-flow's, so Heat
lives in a virtualenv of its own, installed from PyPI with the short
constraints list shipped in this package (``constraints.txt``, which says why
each pin is there).  The openstack client and heatclient go in the same
virtualenv, so ``<venv>/bin/openstack stack list`` works against a launched
Heat.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import IO

from tripleo_flow import exceptions

HEAT_VERSION = "24.1.2"
PACKAGES = [f"openstack-heat=={HEAT_VERSION}", "PyMySQL", "python-openstackclient",
            "python-heatclient"]


@dataclass(frozen=True)
class HeatVenv:
    """What ``heat install`` produced."""

    path: str
    heat_version: str
    installed: bool

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "heat_version": self.heat_version,
                "installed": self.installed}


def constraints_text() -> str:
    """The pins shipped with tripleo-flow for the Heat virtualenv."""
    return resources.files("tripleo_flow.heat").joinpath("constraints.txt").read_text()


def installed_version(venv: Path) -> str | None:
    """The openstack-heat version in ``venv`` (None when absent or broken)."""
    python = venv / "bin" / "python"
    if not (venv / "bin" / "heat-all").exists() or not python.exists():
        return None
    proc = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('openstack-heat'))"],
        capture_output=True, text=True, check=False)
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def install(venv: Path, python: str | None = None, force: bool = False,
            log: Path | None = None) -> HeatVenv:
    """Create ``venv`` with openstack-heat and its clients; skip when already there."""
    if not force and installed_version(venv) == HEAT_VERSION:
        return HeatVenv(str(venv), HEAT_VERSION, installed=False)
    venv.parent.mkdir(parents=True, exist_ok=True)
    out: IO[bytes] | None = open(log, "ab") if log else None  # noqa: SIM115
    try:
        _run([python or sys.executable, "-m", "venv", "--clear", str(venv)], out)
        constraints = venv / "tripleo-flow-constraints.txt"
        constraints.write_text(constraints_text())
        _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
              "--disable-pip-version-check", "-c", str(constraints), *PACKAGES], out)
    finally:
        if out:
            out.close()
    version = installed_version(venv)
    if version != HEAT_VERSION:
        raise exceptions.HeatError(
            f"The Heat virtualenv {venv} has openstack-heat {version} after install, "
            f"not {HEAT_VERSION}."
        )
    return HeatVenv(str(venv), HEAT_VERSION, installed=True)


def _run(argv: list[str], out: IO[bytes] | None) -> None:
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out or subprocess.PIPE,
                          stderr=subprocess.STDOUT, check=False, env={**os.environ})
    if proc.returncode != 0:
        tail = (proc.stdout or b"").decode(errors="replace").strip().splitlines()[-10:]
        raise exceptions.HeatError(
            f"Installing Heat failed: {' '.join(argv[:3])}... exited {proc.returncode}.\n"
            + "\n".join(tail) + "\nCheck that PyPI is reachable, then run:",
            hints=[exceptions.Hint("", "heat.install_force")])
