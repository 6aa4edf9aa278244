"""The CLI run in-process leaves the root logger as it found it (cliff's App sets it to
DEBUG and adds a handler on the stderr of the call)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tripleo_flow.cli.main import main


def test_main_gives_the_root_logger_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    conf = tmp_path / "tripleo-flow.conf"
    conf.write_text(f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n")
    monkeypatch.setenv("TRIPLEO_FLOW_CONFIG_FILE", str(conf))
    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    assert main(["plan", "list", "-f", "json"]) == 0
    assert capsys.readouterr().out.strip() == "[]"
    assert main(["plan", "show", "missing"]) != 0  # an error run too
    assert (list(root.handlers), root.level) == before
