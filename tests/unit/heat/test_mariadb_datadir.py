"""A MariaDB data directory installed once and copied after (heat/mariadb_datadir.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tripleo_flow.heat import mariadb_datadir

NAME = "mariadb-datadir-0123456789abcdef"


class Installs:
    """An install that writes a small data directory and counts its calls."""

    def __init__(self) -> None:
        self.calls: list[Path] = []

    def __call__(self, datadir: Path) -> None:
        self.calls.append(datadir)
        (datadir / "mysql").mkdir(parents=True)
        (datadir / "mysql" / "user.MAI").write_bytes(b"system tables")
        (datadir / "ibdata1").write_bytes(b"\0" * 64)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_installed_once_then_copied(tmp_path: Path) -> None:
    install, keep = Installs(), tmp_path / "keep"
    assert mariadb_datadir.make(tmp_path / "a", install, keep, NAME) is False
    assert mariadb_datadir.make(tmp_path / "b", install, keep, NAME) is True
    assert install.calls == [tmp_path / "a"]
    assert _files(tmp_path / "b") == _files(tmp_path / "a") != {}
    assert [p.name for p in keep.iterdir()] == [NAME]  # no temporary copy left
    assert (keep / NAME).stat().st_mode & 0o777 == 0o700


def test_another_name_installs_again(tmp_path: Path) -> None:
    install, keep = Installs(), tmp_path / "keep"
    mariadb_datadir.make(tmp_path / "a", install, keep, NAME)
    assert mariadb_datadir.make(tmp_path / "b", install, keep, NAME + "x") is False
    assert len(install.calls) == 2


def test_nothing_kept_without_a_place(tmp_path: Path) -> None:
    install = Installs()
    for name in ("a", "b"):
        assert mariadb_datadir.make(tmp_path / name, install, None, NAME) is False
    assert len(install.calls) == 2


def test_a_place_that_cannot_be_written_still_installs(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    install = Installs()
    assert mariadb_datadir.make(tmp_path / "a", install, blocked / "keep", NAME) is False
    assert (tmp_path / "a" / "mysql").is_dir()


def test_a_kept_directory_without_system_tables_is_not_copied(tmp_path: Path) -> None:
    install, keep = Installs(), tmp_path / "keep"
    (keep / NAME).mkdir(parents=True)  # not what a keeper renames into place
    assert mariadb_datadir.make(tmp_path / "a", install, keep, NAME) is False
    assert install.calls == [tmp_path / "a"]


def test_a_killed_keepers_copy_is_removed(tmp_path: Path) -> None:
    keep = tmp_path / "keep"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    abandoned = keep / f"{NAME}.tmp-{gone}"
    (abandoned / "mysql").mkdir(parents=True)
    running = keep / f"{NAME}.tmp-{os.getppid()}"  # a keeper still at work: left alone
    running.mkdir()
    mariadb_datadir.make(tmp_path / "a", Installs(), keep, NAME)
    assert sorted(p.name for p in keep.iterdir()) == sorted([NAME, running.name])


def test_the_name_follows_the_server_and_the_options(tmp_path: Path) -> None:
    server = tmp_path / "mariadbd"
    server.write_bytes(b"one")
    first = mariadb_datadir.template_name(str(server), ("--a",))
    assert first.startswith(mariadb_datadir.PREFIX)
    assert mariadb_datadir.template_name(str(server), ("--a",)) == first
    assert mariadb_datadir.template_name(str(server), ("--b",)) != first
    server.write_bytes(b"upgraded")
    assert mariadb_datadir.template_name(str(server), ("--a",)) != first
