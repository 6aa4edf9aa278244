"""Environment variables that users (and the README and tests) set reach the options."""

from __future__ import annotations

from pathlib import Path

import pytest

from tripleo_flow import config
from tripleo_flow.cli.main import main


@pytest.mark.parametrize("variable,group,name", [
    ("TRIPLEO_FLOW_HEAT_VENV", "heat", "venv"),
    ("TRIPLEO_FLOW_HEAT_IMAGE", "heat", "image"),
])
def test_environment_gives_the_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                       variable: str, group: str, name: str) -> None:
    monkeypatch.setenv(variable, "/from/env")
    assert getattr(getattr(config.load([]), group), name) == "/from/env"
    conf_file = tmp_path / "t.conf"
    conf_file.write_text(f"[{group}]\n{name} = /from/file\n")
    assert getattr(getattr(config.load([str(conf_file)]), group), name) == "/from/file"


def test_empty_variable_keeps_the_built_in_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIPLEO_FLOW_HEAT_IMAGE", "")
    assert config.load([]).heat.image == "localhost/tripleo-flow/heat:24.1.2"


@pytest.mark.parametrize("in_file,in_env,expected", [
    (None, "env-venv", "env-venv"),
    ("file-venv", None, "file-venv"),
    ("file-venv", "env-venv", "file-venv"),
])
def test_cli_finds_the_heat_venv(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                 caplog: pytest.LogCaptureFixture, in_file: str | None,
                                 in_env: str | None, expected: str) -> None:
    conf_file = tmp_path / "t.conf"
    text = f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n"
    if in_file:
        text += f"[heat]\nvenv = {tmp_path / in_file}\n"
    conf_file.write_text(text)
    monkeypatch.setenv("TRIPLEO_FLOW_CONFIG_FILE", str(conf_file))
    if in_env:
        monkeypatch.setenv("TRIPLEO_FLOW_HEAT_VENV", str(tmp_path / in_env))
    else:
        monkeypatch.delenv("TRIPLEO_FLOW_HEAT_VENV", raising=False)
    code = main(["launch", "heat", "--heat-type", "native", "--heat-dir", str(tmp_path / "w")])
    assert code != 0
    assert f"The Heat virtualenv {tmp_path / expected} (heat-all) is missing" in caplog.text
