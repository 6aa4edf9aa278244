"""``plan restore`` keeps the plan's passwords (issue 29): restoring the first
version (written before passwords were generated) over HTTP or the CLI used to
drop all of them, with no execution recorded; the next update then generated new
ones for a cloud running with the old.  The version's own passwords are taken only
when asked (``keep_passwords: false``, ``--restore-passwords``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.functional.http.conftest import Api

RESTORE = "tripleo.plan.restore_deployment_plan"


def _first_version(api: Api, plan: str) -> str:
    history = api("GET", f"/v1/plans/{plan}/history").json()
    first = history[-1]["version"]
    data = api.client._session.store.get_object(plan, "plan-environment.yaml", version_id=first)
    assert not yaml.safe_load(data).get("passwords")  # before they were generated
    return first


def test_restoring_the_first_version_over_http_keeps_the_passwords(api: Api) -> None:
    assert api("POST", "/v1/plans?name=p&sample=true").status_code == 201
    assert api("PUT", "/v1/plans/p/parameters",
               json={"parameters": {"ComputeCount": 3}}).status_code == 200
    passwords = api.client.passwords.get("p")
    assert len(passwords) > 20
    first = _first_version(api, "p")

    restored = api("POST", "/v1/plans/p/restore", json={"version": first})
    assert restored.status_code == 200, restored.text
    assert restored.json()["passwords_kept"] is True
    assert api.client.passwords.get("p") == passwords
    assert api.client.parameters.get("p")["ComputeCount"] == 1  # the version is restored
    [execution] = api("GET", "/v1/executions", params={"workflow": RESTORE}).json()
    assert execution["state"] == "SUCCESS"
    assert not any(value in json.dumps(execution) for value in map(str, passwords.values()))

    # Asked for: the version's own passwords (none).
    dropped = api("POST", "/v1/plans/p/restore",
                  json={"version": first, "keep_passwords": False})
    assert dropped.status_code == 200 and dropped.json()["passwords_kept"] is False
    assert not api.client.passwords.get("p")
    # A bad version is refused as before, and recorded as a failed execution.
    missing = api("POST", "/v1/plans/p/restore", json={"version": "no-such-version"})
    assert missing.status_code == 404, missing.text
    states = sorted(e["state"] for e in api("GET", "/v1/executions",
                                            params={"workflow": RESTORE}).json())
    assert states[0] == "ERROR" and states.count("SUCCESS") == 2


def test_restoring_through_the_cli_keeps_the_passwords(tmp_path: Path) -> None:
    exe = shutil.which("tripleo-flow", path=os.path.dirname(sys.executable))
    assert exe
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path / "home"))

    def run(*args: str) -> str:
        proc = subprocess.run([exe, *args], env=env, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def passwords() -> dict[str, str]:
        rows = json.loads(run("passwords", "show", "--plan", "oc", "--show-values",
                              "-f", "json"))
        return {row["name"]: row["value"] for row in rows}

    run("plan", "create", "oc", "--sample")
    run("parameters", "set", "--plan", "oc", "ComputeCount=3")
    before = passwords()
    first = json.loads(run("plan", "history", "oc", "-f", "json"))[-1]["version"]
    shown = json.loads(run("plan", "restore", "oc", first, "-f", "json"))
    assert shown["passwords_kept"] is True and passwords() == before
    shown = json.loads(run("plan", "restore", "oc", first, "--restore-passwords", "-f", "json"))
    assert shown["passwords_kept"] is False and not passwords()
    executions = json.loads(run("execution", "list", "-f", "json"))
    assert sum(1 for e in executions if e["Workflow"] == RESTORE) == 2, executions
