"""``backup create`` / ``backup restore`` on real data directories: a local plan store,
a real SQLite executions database (WAL), real workflow executions.

A round trip through the installed CLI onto a fresh data directory; archives that are
corrupt, truncated, changed or hostile refused with the current state byte-identical;
a backup during a RUNNING execution, or one an execution races, refused and nothing
written; configurations whose state is not in the data directory refused by name."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest

from tripleo_flow import config, exceptions
from tripleo_flow.client import Client

SLEEPER = ("version: '2.0'\nname: naps\nworkflows:\n  long:\n    tasks:\n"
           "      nap:\n        action: std.sleep seconds=4\n")
#: A workflow that runs until the test completes its task (no race with a clock).
WAITER = ("version: '2.0'\nname: waits\nworkflows:\n  long:\n    tasks:\n"
          "      nap:\n        action: std.async_noop\n")


def make_client(data_dir: Path, **overrides: Any) -> Client:
    conf = config.new_conf()
    conf([], project="tripleo-flow", default_config_files=[], default_config_dirs=[])
    conf.set_override("data_dir", str(data_dir))
    for key, value in overrides.items():
        group, _, name = key.rpartition("__")
        conf.set_override(name, value, group=group or None)
    return Client(conf)


def tree_state(root: Path) -> dict[str, tuple[int, str]]:
    """Every file and directory under ``root`` with its mode and content hash."""
    state: dict[str, tuple[int, str]] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        state[path.relative_to(root).as_posix()] = (st.st_mode, digest)
    return state


@pytest.fixture
def deployed(tmp_path: Path) -> tuple[Path, Path]:
    """A data directory with a sample plan, its history, executions, a deployment's
    work dir and a validation result; and its backup archive."""
    data = tmp_path / "a"
    with make_client(data) as client:
        client.plans.create("oc", sample=True)
        client.parameters.set("oc", {"ComputeCount": 3})
        dump = data / "deployments/oc/heat-launcher/heat-db-dump.sql"
        dump.parent.mkdir(parents=True, mode=0o700)
        dump.write_text("-- a Heat dump\n")
        dump.chmod(0o600)
        result = data / "validations/results/run-1.json"
        result.parent.mkdir(parents=True)
        result.write_text('{"status": "PASSED"}')
        (data / "heat-venv").mkdir()
        (data / "heat-venv/marker").write_text("venv")
        archive = tmp_path / "backup.tar.gz"
        client.backups.create(archive)
    return data, archive


def _rewrite(archive: Path, target: Path, change: Any) -> Path:
    """Copy the archive's members to ``target``, each passed through ``change``
    (returns a list of (TarInfo, bytes) to write instead)."""
    with tarfile.open(archive) as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]  # type: ignore[union-attr]
    with tarfile.open(target, "w:gz") as out:
        for member, data in members:
            for info, body in change(member, data):
                info.size = len(body) if info.isfile() else 0
                out.addfile(info, io.BytesIO(body) if info.isfile() else None)
    return target


def _extra(kind: str) -> Any:
    def change(member: tarfile.TarInfo, data: bytes) -> list[tuple[tarfile.TarInfo, bytes]]:
        if member.name != "manifest.json":
            return [(member, data)]
        extra = tarfile.TarInfo({"absolute": "/tmp/evil", "dotdot": "data/plans/../../evil",
                                 "symlink": "data/plans/link", "device": "data/plans/dev",
                                 "unlisted": "data/plans/extra"}[kind])
        extra.type = {"symlink": tarfile.SYMTYPE, "device": tarfile.CHRTYPE}.get(
            kind, tarfile.REGTYPE)
        extra.linkname = "/etc/passwd" if kind == "symlink" else ""
        return [(member, data), (extra, b"x")]
    return change


def _tamper(member: tarfile.TarInfo, data: bytes) -> list[tuple[tarfile.TarInfo, bytes]]:
    if member.name.endswith("heat-db-dump.sql"):
        return [(member, b"DROP DATABASE heat\n"[:len(data)].ljust(len(data)))]  # same size
    return [(member, data)]


def _drop_dump(member: tarfile.TarInfo, data: bytes) -> list[tuple[tarfile.TarInfo, bytes]]:
    return [] if member.name.endswith("heat-db-dump.sql") else [(member, data)]


def _bad_archives(archive: Path, tmp: Path) -> dict[str, Path]:
    raw = archive.read_bytes()
    bad = {"truncated": raw[: len(raw) // 2], "corrupt": raw[:100] + bytes(
        b ^ 0xFF for b in raw[100:140]) + raw[140:], "not a tar": b"hello", "empty": b"",
        "bomb": gzip.compress(_bomb())}
    paths = {}
    for name, body in bad.items():
        paths[name] = tmp / f"{name.replace(' ', '-')}.tar.gz"
        paths[name].write_bytes(body)
    paths["tampered"] = _rewrite(archive, tmp / "tampered.tar.gz", _tamper)
    paths["missing file"] = _rewrite(archive, tmp / "missing.tar.gz", _drop_dump)
    for kind in ("absolute", "dotdot", "symlink", "device", "unlisted"):
        paths[kind] = _rewrite(archive, tmp / f"{kind}.tar.gz", _extra(kind))
    return paths


def _bomb() -> bytes:
    """A tar whose one member expands past [limits] archive_max_size (set to 1 MiB)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        info = tarfile.TarInfo("data/plans/zeros")
        info.size = 2 << 20
        tar.addfile(info, io.BytesIO(bytes(info.size)))
    return out.getvalue()


def test_bad_archives_are_refused_and_nothing_changes(deployed: tuple[Path, Path],
                                                      tmp_path: Path) -> None:
    data, archive = deployed
    for name, path in _bad_archives(archive, tmp_path).items():
        before = tree_state(tmp_path)
        with make_client(data, limits__archive_max_size=1 << 20) as client:
            with pytest.raises(exceptions.InvalidArchive) as error:
                client.backups.restore(path, force=True)
        assert "Refusing archive" in str(error.value), name
        assert tree_state(tmp_path) == before, f"{name}: the state changed"
    # the genuine archive, under the same limit, is restored
    with make_client(tmp_path / "fresh", limits__archive_max_size=1 << 20) as client:
        assert client.backups.restore(archive)["plans"] == ["oc"]


def test_restore_into_a_used_data_dir_needs_force_and_keeps_the_old_aside(
        deployed: tuple[Path, Path], tmp_path: Path) -> None:
    data, archive = deployed
    with make_client(data) as client:
        client.parameters.set("oc", {"ComputeCount": 7})
        before = tree_state(tmp_path)
        with pytest.raises(exceptions.Conflict, match="--force"):
            client.backups.restore(archive)
        assert tree_state(tmp_path) == before
    with make_client(data) as client:
        done = client.backups.restore(archive, force=True)
    with make_client(data) as client:
        assert client.parameters.get("oc")["ComputeCount"] == 3
    previous = Path(done["previous"])
    assert (previous / "plans/oc").is_dir() and previous.parent == data.parent
    # what a backup does not hold (a virtualenv) stays in the data directory
    assert (data / "heat-venv/marker").read_text() == "venv"
    assert (data / "deployments/oc/heat-launcher/heat-db-dump.sql").stat().st_mode & 0o777 \
        == 0o600
    assert not [p for p in data.parent.iterdir() if ".restore-" in p.name]


def test_backup_during_a_running_execution_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "a"
    workbook = tmp_path / "waits.yaml"
    workbook.write_text(WAITER)
    archive = tmp_path / "backup.tar.gz"
    with make_client(data) as client:
        client.plans.create("oc", sample=True)
        client.workbooks.create(workbook)
        running = client.executions.create("waits.long", wait=False)
        deadline = time.monotonic() + 60
        while not [t for t in client.tasks.list(running.id) if t.waiting]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        with make_client(data) as other:
            with pytest.raises(exceptions.Conflict, match=f"executions run: {running.id}"):
                other.backups.create(archive)
        assert not archive.exists() and not list(tmp_path.glob(".backup*"))
        client.tasks.complete(running.id, "nap")
        while client.executions.get(running.id).state == "RUNNING":
            assert time.monotonic() < deadline
            time.sleep(0.1)
        # The writer keeps its connection: the last commits are still in the WAL file,
        # and the online backup copies them.
        assert (data / "executions.sqlite-wal").stat().st_size > 0
        assert client.backups.create(archive)["executions"] == 2
    with make_client(tmp_path / "fresh") as client:
        client.backups.restore(archive)
        restored = {e.id: e.state for e in client.executions.list()}
    assert restored[running.id] == "SUCCESS" and len(restored) == 2


def raced_client(data: Path) -> Client:
    """A client that starts an execution while its backup is being taken (after the
    check for running executions: when it lists the plans)."""
    made = make_client(data)
    listed = made.plans.list

    def racing_list() -> list[dict[str, Any]]:
        made.executions.create("naps.quick")
        return listed()

    made.plans.list = racing_list  # type: ignore[method-assign]
    return made


def test_an_execution_started_during_the_backup_discards_it(tmp_path: Path) -> None:
    data = tmp_path / "a"
    workbook = tmp_path / "naps.yaml"
    workbook.write_text(SLEEPER + "  quick:\n    tasks:\n      hi:\n        action: std.noop\n")
    with make_client(data) as client:
        client.workbooks.create(workbook)
    raced = raced_client(data)
    archive = tmp_path / "backup.tar.gz"
    with raced, pytest.raises(exceptions.Conflict, match="started or changed while"):
        raced.backups.create(archive)
    assert not archive.exists() and not list(tmp_path.glob(".backup*"))


@pytest.mark.parametrize(("overrides", "named"), [
    ({"plan_store__backend": "swift", "swift__auth_url": "http://127.0.0.1:1/auth/v1.0",
      "swift__user": "a:u", "swift__key": "secret"}, "kept in Swift"),
    ({"workflows__connection": "mysql+pymysql://u:secret@127.0.0.1/tf"},
     "executions database (mysql+pymysql"),
    ({"ironic__endpoint": "http://127.0.0.1:6385"}, "external Ironic"),
    ({"plan_store__local_root": "/srv/plans"}, "/srv/plans"),
])
def test_state_outside_the_data_dir_is_refused_by_name(tmp_path: Path, overrides: dict[str, str],
                                                       named: str) -> None:
    (tmp_path / "a").mkdir()
    with make_client(tmp_path / "a", **overrides) as client:
        for call in (lambda: client.backups.create(tmp_path / "b.tar.gz"),
                     lambda: client.backups.restore(tmp_path / "b.tar.gz")):
            with pytest.raises(exceptions.InvalidInput) as error:
                call()
            assert named in str(error.value) and "secret" not in str(error.value)
    assert not (tmp_path / "b.tar.gz").exists()


def test_a_launched_heat_refuses_the_backup(deployed: tuple[Path, Path], tmp_path: Path) -> None:
    data, _ = deployed
    (data / "deployments/oc/heat-launcher/run.json").write_text("{}")
    with make_client(data) as client, pytest.raises(exceptions.Conflict,
                                                    match="launch heat --heat-dir"):
        client.backups.create(tmp_path / "second.tar.gz")


def test_round_trip_through_the_cli(tmp_path: Path) -> None:
    exe = shutil.which("tripleo-flow", path=os.path.dirname(sys.executable))
    assert exe, "tripleo-flow is not installed in this virtualenv (pip install -e .)"

    def cli(home: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / home / "xdg"),
                   HOME=str(tmp_path / home))
        proc = subprocess.run([exe, *args], env=env, capture_output=True, text=True,
                              timeout=120)
        if check and proc.returncode != 0:
            raise AssertionError(f"{args} exited {proc.returncode}: {proc.stderr}")
        return proc

    def views(home: str, every: bool = True) -> list[Any]:
        shown = [("plan", "history", "oc"), ("execution", "list")]
        if every:
            shown += [("plan", "list"), ("deployment", "status", "--plan", "oc"),
                      ("parameters", "show", "--plan", "oc")]
        return [json.loads(cli(home, *args, "-f", "json").stdout) for args in shown]

    cli("old", "plan", "create", "oc", "--sample")
    cli("old", "parameters", "set", "--plan", "oc", "ComputeCount=2")
    archive = tmp_path / "undercloud-backup.tar.gz"
    written = json.loads(cli("old", "backup", "create", str(archive), "-f", "json").stdout)
    assert written["path"] == str(archive) and written["plans"] == ["oc"]
    assert written["kept"] == ["executions.sqlite", "plans"]
    assert archive.stat().st_mode & 0o777 == 0o600
    again = cli("old", "backup", "create", str(archive), check=False)
    assert again.returncode == 2 and "already exists" in again.stderr
    restored = json.loads(cli("new", "backup", "restore", str(archive), "-f", "json").stdout)
    assert restored["plans"] == ["oc"] and restored["previous"] is None
    assert views("new") == views("old")
    assert "--force" in cli("new", "backup", "restore", "--help").stdout
    secret = tmp_path / "passphrase"
    secret.write_text("a long passphrase\n")
    sealed = tmp_path / "sealed.tar.gz"
    assert json.loads(cli("old", "backup", "create", str(sealed), "--passphrase-file",
                          str(secret), "-f", "json").stdout)["encrypted"] is True
    refused = cli("third", "backup", "restore", str(sealed), check=False)
    assert refused.returncode == 2 and "--passphrase-file" in refused.stderr
    cli("third", "backup", "restore", str(sealed), "--passphrase-file", str(secret))
    assert views("third", every=False) == views("old", every=False)


def test_an_encrypted_backup_opens_only_with_its_passphrase(deployed: tuple[Path, Path],
                                                            tmp_path: Path) -> None:
    data, plain = deployed
    sealed = tmp_path / "sealed.tar.gz"
    with make_client(data) as client:
        assert client.backups.create(sealed, passphrase="correct horse")["encrypted"] is True
    raw = sealed.read_bytes()
    assert sealed.stat().st_mode & 0o777 == 0o600
    assert not raw.startswith(b"\x1f\x8b") and b"manifest" not in raw
    flipped = tmp_path / "flipped.tar.gz"
    flipped.write_bytes(raw[:-40] + bytes([raw[-40] ^ 1]) + raw[-39:])
    short = tmp_path / "short.tar.gz"
    short.write_bytes(raw[: len(raw) // 2])
    fresh = tmp_path / "fresh"
    refusals = [(sealed, None, exceptions.InvalidInput, "is encrypted"),
                (sealed, "wrong", exceptions.InvalidArchive, "passphrase is wrong"),
                (flipped, "correct horse", exceptions.InvalidArchive, "was changed"),
                (short, "correct horse", exceptions.InvalidArchive, "truncated"),
                (plain, "correct horse", exceptions.InvalidInput, "not encrypted")]
    for archive, passphrase, kind, said in refusals:
        with make_client(fresh) as client:
            with pytest.raises(kind, match=said):
                client.backups.restore(archive, passphrase=passphrase)
        assert not fresh.exists() or not any(fresh.iterdir()), archive
    with make_client(fresh) as client:
        assert client.backups.restore(sealed, passphrase="correct horse")["plans"] == ["oc"]
        assert client.parameters.get("oc")["ComputeCount"] == 3
