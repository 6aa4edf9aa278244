"""The reference config-download, made by tripleo-common itself, and the comparison with ours.

:func:`reference_project` restores a kept deployment's Heat database on a fresh native
heat-all (``launch heat --restore-db``), runs ``tests/oracle/tripleo_common_render.py``
with the python of the pinned tripleo-common virtualenv (``tools/setup-tripleo-common.sh``)
against it, and stops Heat again.  :func:`differences` compares two projects file by
file after YAML load (text where a file is not YAML), the inventory included.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
RENDER = ROOT / "tests" / "oracle" / "tripleo_common_render.py"
DEFAULT_VENVS = Path.home() / ".local/share/tripleo-flow/tripleo-common"
#: The reference of each THT series: its OpenStack release's tripleo-common.
SERIES = {"18": "18.0.0", "12": "12.1.0"}
#: What a project holds besides the files both write: git's, and the empty
#: ansible-runner directories tripleo-common makes (no files: never compared).
IGNORED_PARTS = {".git"}
IGNORED_FILES = {".gitignore"}


def venv(version: str) -> Path:
    """The tripleo-common virtualenv of ``version``; FAILS the test when it is missing."""
    root = Path(os.environ.get("TRIPLEO_FLOW_TRIPLEO_COMMON_VENVS", DEFAULT_VENVS))
    path = root / version
    if not (path / "bin" / "python").exists():
        pytest.fail(f"No tripleo-common {version} virtualenv at {path}: run "
                    "tools/setup-tripleo-common.sh (TRIPLEO_FLOW_TRIPLEO_COMMON_VENVS moves it).")
    return path


def venv_python_or_skip(version: str) -> Path:
    """The python of tripleo-common ``version``'s virtualenv; skips the test when it is
    missing, FAILS it instead in CI (``TRIPLEO_FLOW_CI=1``)."""
    root = Path(os.environ.get("TRIPLEO_FLOW_TRIPLEO_COMMON_VENVS", DEFAULT_VENVS))
    python = root / version / "bin" / "python"
    if not python.exists():
        reason = (f"No tripleo-common {version} virtualenv at {python.parent.parent}: run "
                  "tools/setup-tripleo-common.sh")
        if os.environ.get("TRIPLEO_FLOW_CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return python


def reference_project(client: Any, heat_dir: Path, plan: str, version: str,
                      out: Path) -> dict[str, Any]:
    """tripleo-common ``version``'s config-download of the stack kept in ``heat_dir``,
    written to ``out``; returns what the oracle printed (its version and Python)."""
    python = venv(version) / "bin" / "python"
    # No type named: the Heat that made the stack (its dump's kind) is started again.
    launched = client.heat.launch(str(heat_dir), None, restore_db=True)
    try:
        done = subprocess.run(
            [str(python), str(RENDER), "--endpoint", launched["endpoint"], "--plan", plan,
             "--out", str(out)],
            capture_output=True, text=True, timeout=600, check=False)
    finally:
        client.heat.kill(str(heat_dir))
    assert done.returncode == 0, f"tripleo-common {version} failed:\n{done.stderr[-4000:]}"
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def files(root: Path) -> dict[str, Path]:
    """The project's files by relative path (git's left out)."""
    found: dict[str, Path] = {}
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if path.is_file() and not IGNORED_PARTS & set(relative.parts) \
                and relative.as_posix() not in IGNORED_FILES:
            found[relative.as_posix()] = path
    return found


def load(path: Path) -> Any:
    """A file's data: YAML when it parses, else its text."""
    text = path.read_text()
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def _walk(ours: Any, theirs: Any, where: str) -> Iterator[str]:
    if isinstance(ours, Mapping) and isinstance(theirs, Mapping):
        for key in sorted(set(ours) | set(theirs), key=str):
            if key not in theirs:
                yield f"{where}/{key}: only ours ({_short(ours[key])})"
            elif key not in ours:
                yield f"{where}/{key}: only tripleo-common's ({_short(theirs[key])})"
            else:
                yield from _walk(ours[key], theirs[key], f"{where}/{key}")
    elif ours != theirs:
        yield f"{where}: ours {_short(ours)} != tripleo-common's {_short(theirs)}"


def data_differences(ours: Any, theirs: Any, where: str = "") -> list[str]:
    """Every differing value of two loaded documents, one line each (``where/key/...: ...``)."""
    return list(_walk(ours, theirs, where))


def _short(value: Any) -> str:
    text = json.dumps(value, default=str, sort_keys=True)
    return text if len(text) < 300 else text[:300] + "..."


def differences(ours: Path, theirs: Path,
                allowed: Mapping[str, str] | None = None) -> list[str]:
    """Every difference between two projects, one line each: files only one side has,
    and each differing value (a path into the loaded data).  ``allowed`` maps a
    difference's path (``file/key/...``) to the reason we differ; those are left out."""
    allowed = allowed or {}
    mine, reference = files(ours), files(theirs)
    found = [f"{p}: file only ours" for p in sorted(set(mine) - set(reference))]
    found += [f"{p}: file only tripleo-common's" for p in sorted(set(reference) - set(mine))]
    for path in sorted(set(mine) & set(reference)):
        found += list(_walk(load(mine[path]), load(reference[path]), path))
    return [line for line in found if line.split(":", 1)[0] not in allowed]


__all__ = ["SERIES", "data_differences", "differences", "files", "load", "reference_project",
           "venv", "venv_python_or_skip"]
