"""Backups over the HTTP API with the real server (waitress) on real data directories
(local plan store, SQLite executions database): made with a required passphrase,
listed, downloaded as encrypted bytes only, deleted, and restored from an upload on a
fresh data directory (through the API and through the CLI); refusals (no or a short
passphrase, a bad id, a wrong passphrase, a truncated, unencrypted or unknown
archive, a data directory in use without force) change nothing, and the passphrase is
never answered, logged or stored (issues 27 and 30)."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import secrets
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.functional.http.conftest import Api, finished, serving
from tests.functional.http.test_async_completion import WORKBOOK, _complete, _start, _waiting
from tripleo_flow import config
from tripleo_flow.client import Client
from tripleo_flow.common import sealing

pytestmark = pytest.mark.functional

PASSPHRASE = "correct horse battery staple"


@contextlib.contextmanager
def served(data_dir: Path) -> Iterator[Api]:
    """The API over a client whose every state is in ``data_dir`` (the defaults)."""
    conf = config.new_conf()
    conf([], project="tripleo-flow", default_config_files=[], default_config_dirs=[])
    conf.set_override("data_dir", str(data_dir))
    token = secrets.token_hex(16)
    conf.set_override("auth_token", token, group="api")
    with serving(Client(conf), token) as api:
        yield api


def state(data_dir: Path) -> dict[str, str]:
    """The content of every file a backup keeps (plans, the executions database and
    its write-ahead log, where its latest changes are)."""
    kept = [p for top in ("plans", "executions.sqlite", "executions.sqlite-wal") for p in
            ([data_dir / top] if (data_dir / top).is_file() else
             sorted((data_dir / top).rglob("*")))]
    return {str(p.relative_to(data_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in kept if p.is_file()}


def upload(api: Api, data: bytes) -> str:
    sent = api("POST", "/v1/uploads", data=data,
               headers={"Content-Type": "application/octet-stream"})
    assert sent.status_code == 201, sent.text
    return str(sent.json()["id"])


def refused(api: Api, body: dict[str, object], status: int, words: str) -> str:
    answer = api("POST", "/v1/backups/restore", json=body)
    assert answer.status_code == status, answer.text
    message = str(answer.json()["error"]["message"])
    assert words in message, message
    return message


@pytest.fixture
def source(tmp_path: Path) -> Iterator[Api]:
    """A server with a plan whose parameter was set (a plan history of two versions)."""
    with served(tmp_path / "a") as api:
        api.client.plans.create("oc", sample=True)
        api.client.parameters.set("oc", {"ComputeCount": 3})
        yield api


def test_backup_round_trip_onto_fresh_data_dirs(source: Api, tmp_path: Path,
                                                caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    backups = source.client.data_dir / "backups"
    # No passphrase, or a short one: refused, nothing written.
    for body, words in (({}, "passphrase"), ({"passphrase": ""}, "passphrase"),
                        ({"passphrase": "short"}, "backup_passphrase_min_length"),
                        ({"passphrase": PASSPHRASE, "output": "/tmp/x"}, "Unknown keys")):
        answer = source("POST", "/v1/backups", json=body)
        assert answer.status_code == 400, answer.text
        assert words in answer.json()["error"]["message"]
    assert not backups.exists() or not list(backups.iterdir())
    assert source("GET", "/v1/backups").json() == []

    made = source("POST", "/v1/backups", json={"passphrase": PASSPHRASE})
    assert made.status_code == 201, made.text
    shown = made.json()
    assert shown["encrypted"] is True and shown["plans"] == ["oc"] and "path" not in shown
    assert made.headers["Location"] == f"/v1/backups/{shown['id']}"
    listed = source("GET", "/v1/backups").json()
    assert listed == [{k: shown[k] for k in ("id", "created", "size", "encrypted")}]

    # The download is the sealed archive, as kept (0600): not a readable tarball.
    kept = backups / f"{shown['id']}.tfbackup"
    assert kept.stat().st_mode & 0o777 == 0o600
    got = source("GET", f"/v1/backups/{shown['id']}")
    assert got.status_code == 200
    assert got.headers["Content-Type"] == "application/octet-stream"
    assert "attachment" in got.headers["Content-Disposition"]
    assert got.content == kept.read_bytes() and len(got.content) == shown["size"]
    assert sealing.is_sealed(got.content)
    with pytest.raises(tarfile.TarError):
        tarfile.open(fileobj=io.BytesIO(got.content))

    # A later backup leaves the earlier ones out, without naming them as left out.
    later = source("POST", "/v1/backups", json={"passphrase": PASSPHRASE}).json()
    assert later["kept"] == ["executions.sqlite", "plans"] and later["left_out"] == []
    assert source("DELETE", f"/v1/backups/{later['id']}").status_code == 204

    # Restored over the API onto a fresh data directory: the plan and its history.
    with served(tmp_path / "b") as fresh:
        upload_id = upload(fresh, got.content)
        restored = fresh("POST", "/v1/backups/restore",
                         json={"upload": upload_id, "passphrase": PASSPHRASE})
        assert restored.status_code == 200, restored.text
        assert restored.json()["plans"] == ["oc"]
        # The server's own executions database (no execution in it) needed no force.
        [aside] = tmp_path.glob("b.before-restore-*")
        assert restored.json()["previous"].endswith(aside.name)
        assert sorted(p.name for p in aside.iterdir()) == ["executions.sqlite"]
        assert fresh("GET", f"/v1/uploads/{upload_id}").status_code == 404  # consumed
        assert fresh("GET", "/v1/plans/oc/parameters").json()["ComputeCount"] == 3
        assert len(fresh("GET", "/v1/plans/oc/history").json()) == \
            len(source("GET", "/v1/plans/oc/history").json())
        assert [p["name"] for p in fresh("GET", "/v1/plans").json()] == ["oc"]
        # The server reads the restored executions database, not the one it replaced.
        assert sorted(e["id"] for e in fresh("GET", "/v1/executions").json()) == \
            sorted(e["id"] for e in source("GET", "/v1/executions").json())
        assert len(fresh("GET", "/v1/executions").json()) == shown["executions"] > 0

    # Restored with the CLI from the downloaded file: the same archive.
    exe = shutil.which("tripleo-flow", path=os.path.dirname(sys.executable))
    assert exe, "tripleo-flow is not installed in this virtualenv (pip install -e .)"
    (tmp_path / "download.tfbackup").write_bytes(got.content)
    secret = tmp_path / "passphrase"
    secret.write_text(PASSPHRASE + "\n")
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "c"), HOME=str(tmp_path / "c"))
    env.pop("TRIPLEO_FLOW_CONFIG_FILE", None)
    proc = subprocess.run([exe, "backup", "restore", str(tmp_path / "download.tfbackup"),
                           "--passphrase-file", str(secret), "-f", "json"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["plans"] == ["oc"]
    shown_cli = subprocess.run([exe, "parameters", "show", "--plan", "oc", "-f", "json"],
                               env=env, capture_output=True, text=True, timeout=120)
    assert shown_cli.returncode == 0, shown_cli.stderr
    assert {"name": "ComputeCount", "value": 3} in json.loads(shown_cli.stdout)

    # Deleted: gone from the list and the disk.
    assert source("DELETE", f"/v1/backups/{shown['id']}").status_code == 204
    assert source("GET", f"/v1/backups/{shown['id']}").status_code == 404
    assert source("GET", "/v1/backups").json() == [] and not kept.exists()

    # The passphrase is in no answer above, no log line, no file of the servers.
    assert PASSPHRASE not in caplog.text
    for root in (source.client.data_dir, tmp_path / "b"):
        for path in root.rglob("*"):
            if path.is_file():
                assert PASSPHRASE.encode() not in path.read_bytes(), path


def test_refusals_change_nothing(source: Api, tmp_path: Path) -> None:
    made = source("POST", "/v1/backups", json={"passphrase": PASSPHRASE}).json()
    sealed = source("GET", f"/v1/backups/{made['id']}").content
    data_dir = source.client.data_dir
    before = state(data_dir)
    assert "executions.sqlite" in before and "plans/oc/objects/plan-environment.yaml" in before

    # Ids that are not a backup's, paths among them: 404, nothing served or deleted.
    for bad in ("..%2Fx", "..%2F..%2Fexecutions.sqlite", "0" * 31, "A" * 32, "x" * 300,
                made["id"] + ".tfbackup", "%2E%2E"):
        for method in ("GET", "DELETE"):
            answer = source(method, f"/v1/backups/{bad}")
            assert answer.status_code in (404, 405), (bad, answer.text)
    assert [b["id"] for b in source("GET", "/v1/backups").json()] == [made["id"]]

    # One backup more than [api] max_stored_backups: 409, nothing written.
    source.client.conf.set_override("max_stored_backups", 1, group="api")
    try:
        over = source("POST", "/v1/backups", json={"passphrase": PASSPHRASE})
    finally:
        source.client.conf.clear_override("max_stored_backups", group="api")
    assert over.status_code == 409 and "max_stored_backups" in over.text, over.text
    assert sorted(os.listdir(source.client._session.backups_dir)) == [f"{made['id']}.tfbackup"]

    # Restores that must be refused; the data directory is left as it was.
    upload_id = upload(source, sealed)
    message = refused(source, {"upload": upload_id, "passphrase": PASSPHRASE}, 409,
                      '"force": true')
    assert "--force" not in message
    # ... and says so as data, for a client (the GUI) that words it in its own terms.
    error = source("POST", "/v1/backups/restore",
                   json={"upload": upload(source, sealed), "passphrase": PASSPHRASE}).json()
    assert error["error"]["reason"] == "restore-would-replace"
    assert "plans" in error["error"]["details"]["holding"]
    refused(source, {"upload": upload_id, "passphrase": "not the passphrase",
                     "force": True}, 400, "passphrase is wrong")
    refused(source, {"upload": upload_id, "force": True}, 400, "passphrase")
    refused(source, {"upload": "../x", "passphrase": PASSPHRASE, "force": True}, 404,
            "does not exist")
    refused(source, {"upload": upload_id, "passphrase": PASSPHRASE, "force": "yes"}, 400,
            "force")
    truncated = upload(source, sealed[: len(sealed) // 2])
    refused(source, {"upload": truncated, "passphrase": PASSPHRASE, "force": True}, 400,
            f"upload {truncated}")
    plain_archive = tmp_path / "plain.tar.gz"
    source.client.backups.create(plain_archive)
    plain = upload(source, plain_archive.read_bytes())
    refused(source, {"upload": plain, "passphrase": PASSPHRASE, "force": True}, 400,
            "not encrypted")
    assert state(data_dir) == before
    assert not list(data_dir.parent.glob(f"{data_dir.name}.before-restore-*"))

    # An unencrypted archive put among the backups by hand: listed as such, never served.
    by_hand = "f" * 32
    shutil.copy(plain_archive, data_dir / "backups" / f"{by_hand}.tfbackup")
    listed = {b["id"]: b["encrypted"] for b in source("GET", "/v1/backups").json()}
    assert listed == {made["id"]: True, by_hand: False}
    answer = source("GET", f"/v1/backups/{by_hand}")
    assert answer.status_code == 409 and "not encrypted" in answer.json()["error"]["message"]
    assert plain_archive.read_bytes()[:64] not in answer.content

    # With force and the passphrase: restored, the replaced state kept aside, the
    # backups and the uploads still there.
    done = source("POST", "/v1/backups/restore",
                  json={"upload": upload_id, "passphrase": PASSPHRASE, "force": True})
    assert done.status_code == 200, done.text
    assert done.json()["previous"] is not None
    assert source("GET", f"/v1/uploads/{upload_id}").status_code == 404
    assert source("GET", f"/v1/uploads/{truncated}").status_code == 200
    assert {b["id"] for b in source("GET", "/v1/backups").json()} == {made["id"], by_hand}
    assert source("GET", "/v1/plans/oc/parameters").json()["ComputeCount"] == 3


def test_refused_while_an_execution_runs(source: Api, tmp_path: Path) -> None:
    made = source("POST", "/v1/backups", json={"passphrase": PASSPHRASE}).json()
    sealed = source("GET", f"/v1/backups/{made['id']}").content
    workbook = tmp_path / "approvals.yaml"
    workbook.write_text(WORKBOOK)
    source.client.workbooks.create(workbook)
    execution_id = _start(source)
    _waiting(source, execution_id)  # RUNNING until its task is completed
    before = state(source.client.data_dir)
    answer = source("POST", "/v1/backups", json={"passphrase": PASSPHRASE})
    assert answer.status_code == 409 and execution_id in answer.json()["error"]["message"]
    upload_id = upload(source, sealed)
    refused(source, {"upload": upload_id, "passphrase": PASSPHRASE, "force": True}, 409,
            "executions run")
    assert [b["id"] for b in source("GET", "/v1/backups").json()] == [made["id"]]
    assert len(list((source.client.data_dir / "backups").iterdir())) == 1
    assert source("GET", f"/v1/executions/{execution_id}").json()["state"] == "RUNNING"
    assert _complete(source, execution_id, "approve",
                     json={"state": "SUCCESS", "output": {"ok": True}}).status_code == 200
    assert finished(source, execution_id)["state"] == "SUCCESS"
    assert state(source.client.data_dir) != before  # the execution's end was recorded
    assert source("POST", "/v1/backups", json={"passphrase": PASSPHRASE}).status_code == 201
