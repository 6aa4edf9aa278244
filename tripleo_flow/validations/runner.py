"""Run one validation playbook with ansible-playbook, and stop runs.

Each run of a validation gets ``<runs_dir>/<run id>/<validation>/``: its Ansible
state, the framework's JSON log (validations-libs' ``vf_validation_json`` callback,
enabled by ``ANSIBLE_CALLBACKS_ENABLED``: validations-libs 1.9 only sets the
``CALLBACK_WHITELIST`` that current Ansible ignores), its output, the extra vars file
(0600: never on the command line) and, while it runs, ``pgid``: ansible-playbook
leads a process group of its own, which :func:`stop` ends (SIGTERM, then SIGKILL),
leaving no Ansible process behind.  A ``stopped`` marker in the run directory keeps
the validations not yet started from starting.
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from tripleo_flow.common import secret_masking
from tripleo_flow.core.deploy import ansible
from tripleo_flow.core.deploy import validations as core
from tripleo_flow.validations import SHARE
from tripleo_flow.validations.catalog import Found
from tripleo_flow.workspace import files as private_files
from tripleo_flow.workspace import tethered

PGID_FILE, STOP_MARKER, OUTPUT_FILE, LOGS_DIR = "pgid", "stopped", "output.log", "logs"
EXTRA_VARS_FILE = "extra-vars.yaml"
LOCAL_INVENTORY = "localhost-inventory.yaml"
#: Seconds a stopped run's process group has to exit on SIGTERM before SIGKILL.
STOP_GRACE = 5.0
#: The supervisor that ties a run's process group to this process.
_PATHS = {"ANSIBLE_ROLES_PATH": "roles", "ANSIBLE_LIBRARY": "library",
          "ANSIBLE_LOOKUP_PLUGINS": "lookup_plugins",
          "ANSIBLE_CALLBACK_PLUGINS": "callback_plugins",
          "ANSIBLE_MODULE_UTILS": "module_utils", "ANSIBLE_FILTER_PLUGINS": "filter_plugins"}


def new_run_id() -> str:
    return uuid.uuid4().hex


def check_run_id(run_id: str) -> str:
    """:raises ValueError: ``run_id`` is not what :func:`new_run_id` makes."""
    if not (isinstance(run_id, str) and len(run_id) == 32
            and all(c in "0123456789abcdef" for c in run_id)):
        raise ValueError(f"{str(run_id)[:40]!r} is not a validation run id")
    return run_id


def localhost_inventory(venv: Path, run_dir: Path) -> Path:
    """Write (once) and return the inventory of this machine for a run."""
    path = run_dir / LOCAL_INVENTORY
    if not path.exists():
        python = str(venv / "bin" / "python")
        private_files.write_private(path, yaml.safe_dump(core.localhost_inventory(python)).encode())
    return path


def environment(venv: Path, found: Found, work: Path, run_id: str) -> dict[str, str]:
    """ansible-playbook's environment: the framework's content paths (a playbook
    directory's own ``roles``/``library`` first), the JSON log callback, the venv's
    bin on PATH."""
    share = venv / SHARE
    paths = {}
    for variable, sub in _PATHS.items():
        dirs = [d for d in (found.path.parent / sub, found.path.parent.parent / sub, share / sub)
                if d.is_dir()]
        if dirs:
            paths[variable] = os.pathsep.join(dict.fromkeys(str(d) for d in dirs))
    env = ansible.environment(os.environ, str(work / "ansible-home"), paths)
    env.update({"ANSIBLE_CALLBACKS_ENABLED": "vf_validation_json",
                "VALIDATIONS_LOG_DIR": str(work / LOGS_DIR), "ANSIBLE_UUID": run_id,
                "PATH": os.pathsep.join([str(venv / "bin"), os.environ.get("PATH", "")])})
    return env


def _inventory_hosts(inventory: Path) -> tuple[dict[str, Any] | None, list[str]]:
    try:
        data = yaml.safe_load(inventory.read_bytes())
    except (OSError, yaml.YAMLError):
        return None, []
    if not isinstance(data, dict):
        return None, []
    return data, ansible.inventory_hosts(data)


def _read_log(logs: Path) -> dict[str, Any] | None:
    for path in sorted(logs.glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            return data
    return None


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def run(venv: Path, found: Found, inventory: Path, inventory_label: str,
        extra_vars: Mapping[str, Any], run_dir: Path, run_id: str) -> dict[str, Any]:
    """Run ``found`` against ``inventory``; the result record (not stored here).

    :raises ValueError: an extra var is not a validation parameter
        (:func:`~tripleo_flow.core.deploy.validations.check_extra_vars`).
    """
    core.check_extra_vars(extra_vars)
    validation = found.validation
    work = run_dir / validation.id
    started, clock = _now(), time.monotonic()
    shown_vars, _ = secret_masking.redact(dict(extra_vars))
    record: dict[str, Any] = {
        "id": f"{run_id}-{validation.id}", "run_id": run_id, "validation": validation.id,
        "name": validation.name, "groups": list(validation.groups),
        "inventory": inventory_label, "extra_vars": shown_vars, "started_at": started}
    inventory_data, hosts = _inventory_hosts(inventory)
    missing = (core.missing_hosts(validation.hosts, inventory_data)
               if inventory_data is not None else [])
    output = ""
    if (run_dir / STOP_MARKER).exists():
        result = {"status": core.STOPPED, "hosts": {},
                  "reasons": [{"host": "", "reason": "stopped before it started"}]}
    elif missing:
        result = core.skipped_result(validation.id, missing)
    else:
        private_files.make_dirs(work / LOGS_DIR)
        private_files.make_dirs(work / "ansible-home" / "tmp")
        private_files.write_private(work / EXTRA_VARS_FILE, core.extra_vars_file(extra_vars))
        command = ansible.playbook_command(
            str(venv / "bin" / "ansible-playbook"), str(found.path), [str(inventory)],
            ["--extra-vars", f"@{work / EXTRA_VARS_FILE}"])
        returncode = tethered.run_in_group(command, work, work / OUTPUT_FILE,
                                           environment(venv, found, work, run_id),
                                           work / PGID_FILE)
        if returncode != 0 and (run_dir / STOP_MARKER).exists():
            returncode = -signal.SIGTERM  # ansible-playbook exits 1 or 99 on SIGTERM
        output = (work / OUTPUT_FILE).read_text(errors="replace")
        result = core.result_from_log(_read_log(work / LOGS_DIR), returncode, output, hosts)
    record.update(result)
    record.update({"finished_at": _now(),
                   "duration": round(time.monotonic() - clock, 3),
                   "log": core.log_tail(output)})
    return record


def running(run_dir: Path) -> dict[str, int]:
    """``{validation: process group}`` of the validations of a run running now."""
    found = {}
    for path in sorted(run_dir.glob(f"*/{PGID_FILE}")):
        pgid = tethered.live_group(path)
        if pgid is not None:
            found[path.parent.name] = pgid
    return found


def stop(run_dir: Path, grace: float = STOP_GRACE) -> list[str]:
    """Stop a run: no validation of it starts any more, and the running one's
    process group gets SIGTERM, then SIGKILL after ``grace`` seconds.

    :returns: the validations that were running.
    """
    private_files.make_dirs(run_dir)
    (run_dir / STOP_MARKER).touch(mode=0o600)
    groups = running(run_dir)
    for pgid in groups.values():
        tethered.kill_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(tethered.kill_group(g, 0) for g in groups.values()):
        time.sleep(0.1)
    for pgid in groups.values():
        tethered.kill_group(pgid, signal.SIGKILL)
    return sorted(groups)


__all__ = ["check_run_id", "environment", "localhost_inventory", "new_run_id", "run",
           "running", "stop"]
