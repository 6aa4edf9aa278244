"""The record of a passed catalog check (:mod:`tripleo_flow.client.catalog_checks`): its
key changes with anything the check depends on, and a record is trusted only when it
is this user's private file, names that key and carries the secret's HMAC."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tripleo_flow.client.catalog_checks import CHECKS, RECORD, SECRET, CheckRecord, catalog_key

ACTIONS = [("std.noop", "tripleo_flow.actions.std:Noop")]
LIMITS = (1 << 20, 1000)


@pytest.fixture
def workbook(tmp_path: Path) -> Path:
    path = tmp_path / "wb.yaml"
    path.write_text("version: '2.0'\nname: wb\n")
    return path


def test_the_key_changes_with_what_the_check_depends_on(workbook: Path) -> None:
    key = catalog_key([(workbook, False)], LIMITS, ACTIONS)
    assert key == catalog_key([(workbook, False)], LIMITS, ACTIONS)
    others = {
        catalog_key([(workbook, True)], LIMITS, ACTIONS),
        catalog_key([(workbook, False)], (1 << 20, 999), ACTIONS),
        catalog_key([(workbook, False)], LIMITS, [("std.noop", "tripleo_flow.actions.std:Echo")]),
        catalog_key([(workbook, False)], LIMITS, [*ACTIONS, ("std.echo", "tripleo_flow.a:B")]),
        catalog_key([], LIMITS, ACTIONS),
    }
    workbook.write_text(workbook.read_text() + "\n")
    others.add(catalog_key([(workbook, False)], LIMITS, ACTIONS))
    assert key not in others and len(others) == 6


def test_an_action_of_another_distribution_gives_no_key(workbook: Path) -> None:
    assert catalog_key([(workbook, False)], LIMITS, [*ACTIONS, ("x.y", "theirs.mod:Y")]) is None


def test_a_written_record_holds_its_key_alone(tmp_path: Path) -> None:
    record = CheckRecord(tmp_path)
    assert not record.holds("k1")
    record.write("k1")
    assert record.holds("k1") and not record.holds("k2")
    for name in (RECORD, SECRET):
        assert (tmp_path / CHECKS / name).stat().st_mode & 0o777 == 0o600
    assert (tmp_path / CHECKS).stat().st_mode & 0o777 == 0o700
    # Another data directory's secret does not authenticate this record.
    other = CheckRecord(tmp_path / "other")
    other.write("k1")
    (tmp_path / CHECKS / RECORD).write_bytes((tmp_path / "other" / CHECKS / RECORD).read_bytes())
    assert not record.holds("k1")


def test_a_record_others_may_write_or_a_link_is_not_trusted(tmp_path: Path) -> None:
    record = CheckRecord(tmp_path)
    record.write("k1")
    path = tmp_path / CHECKS / RECORD
    os.chmod(path, 0o620)
    assert not record.holds("k1")
    os.chmod(path, 0o600)
    assert record.holds("k1")
    moved = tmp_path / "elsewhere"
    path.rename(moved)
    path.symlink_to(moved)
    assert not record.holds("k1")


def test_a_data_directory_that_cannot_be_written_records_nothing(tmp_path: Path) -> None:
    (tmp_path / CHECKS).write_text("a file where the directory would be")
    record = CheckRecord(tmp_path)
    record.write("k1")
    assert not record.holds("k1")
