"""Every broken workbook in tests/workbooks/broken gives a clear error, never a traceback."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests import cli_inprocess
from tests.engine_helpers import ACTIONS, WORKBOOKS, Host
from tripleo_flow import exceptions
from tripleo_flow.engine.lang import workbook_loader

BROKEN = sorted((WORKBOOKS / "broken").glob("*.yaml"))


def _expectations(path: Path) -> dict[str, str]:
    head = path.read_bytes().split(b"\n")
    found = {}
    for line in head[:3]:
        match = re.match(rb"# (expect|workflow|task): (.*)", line)
        if match:
            found[match.group(1).decode()] = match.group(2).decode()
    return found


def test_corpus_is_large() -> None:
    assert len(BROKEN) >= 30


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.stem)
def test_broken_workbook_is_reported(path: Path) -> None:
    expected = _expectations(path)
    catalog = workbook_loader.load_catalog([], ACTIONS, {}, extra_files=[path])
    problems = [p for e in catalog.entries.values() for p in e.problems]
    text = "\n".join(str(p) for p in problems)
    assert expected["expect"] in text
    assert str(path) in text
    matching = [p for p in problems if expected["expect"] in str(p)]
    if "workflow" in expected:
        assert any(p.workflow == expected["workflow"] for p in matching), text
        assert f"workflow {expected['workflow']!r}" in text
    if "task" in expected:
        assert any(p.task == expected["task"] for p in matching), text
        assert f"task {expected['task']!r}" in text


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.stem)
def test_validate_api_raises_invalid_workbook(path: Path, tmp_path: Path) -> None:
    host = Host(tmp_path)
    with pytest.raises(exceptions.InvalidWorkbook) as info:
        host.workbooks.check([path])
    assert _expectations(path)["expect"] in str(info.value)
    assert exceptions.exit_code(info.value) == 2


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    conf = tmp_path / "tf.conf"
    conf.write_text(f"[DEFAULT]\ndata_dir = {tmp_path}\n")
    return cli_inprocess.run("--config-file", str(conf), *args)


def test_cli_validate_prints_errors_without_traceback(tmp_path: Path) -> None:
    paths = [str(WORKBOOKS / "broken" / n) for n in ("cycle.yaml", "not_yaml.yaml")]
    done = _cli(tmp_path, "workbook", "validate", *paths)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    assert "cycle a -> b -> a" in done.stderr
    assert "not valid YAML" in done.stderr


def test_cli_validate_accepts_good_workbook(tmp_path: Path) -> None:
    done = _cli(tmp_path, "workbook", "validate", str(WORKBOOKS / "good" / "std_only.yaml"))
    assert done.returncode == 0, done.stderr
    assert "std_only.yaml: valid" in done.stdout
