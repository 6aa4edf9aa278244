"""tripleoclient's default environment directory: ``~/.tripleo/environments`` is read
first (and ``$TRIPLEO_ENVIRONMENT_DIRECTORY`` after the directories given), before the
``-e`` files, by deploy and by the lifecycle prepare/converge (one reader of the deploy
options), on the CLI user's machine only."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures_plans import make_client
from tripleo_flow import exceptions
from tripleo_flow.plans.local import LocalStore

pytestmark = pytest.mark.functional


def _write(directory: Path, *names: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        (directory / name).write_text(f"parameter_defaults: {{Tag: {name}}}\n")
    return directory


def test_the_default_directory_comes_first_and_the_variable_last(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    _write(home / ".tripleo/environments", "b.yaml", "a.yaml")
    given = _write(tmp_path / "given", "m.yaml")
    variable = _write(tmp_path / "variable", "z.yaml")
    extra = _write(tmp_path / "extra", "e.yaml") / "e.yaml"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TRIPLEO_ENVIRONMENT_DIRECTORY", str(variable))
    client = make_client(tmp_path, LocalStore(tmp_path / "plans"))
    try:
        def names(**options: object) -> list[str]:
            found = client.deployments.options(**options)["user_environments"]
            return [env["name"] for env in found]

        assert names(environments=[extra], environment_directories=[given]) == [
            "a.yaml", "b.yaml", "m.yaml", "z.yaml", "e.yaml"]
        assert names(environments=[extra], environment_directories=[given],
                     default_environment_directory=False) == ["m.yaml", "e.yaml"]
        # Missing default directories are skipped, as tripleoclient does; a directory
        # given that does not exist is refused.
        monkeypatch.setenv("HOME", str(tmp_path / "nobody"))
        monkeypatch.setenv("TRIPLEO_ENVIRONMENT_DIRECTORY", str(tmp_path / "gone"))
        assert names(environments=[extra]) == ["e.yaml"]
        with pytest.raises(exceptions.InvalidInput, match="is not a directory"):
            client.deployments.options(environment_directories=[tmp_path / "gone"])
    finally:
        client.close()


def test_the_cli_reads_the_users_default_directory(tmp_path: Path) -> None:
    """A broken file in ``~/.tripleo/environments`` stops ``deploy`` (and ``update
    prepare``) before anything changes: the CLI read it without being told."""
    home = tmp_path / "home"
    broken = home / ".tripleo/environments/broken.yaml"
    broken.parent.mkdir(parents=True)
    broken.write_text("parameter_defaults: {A: [\n")
    conf = tmp_path / "tripleo-flow.conf"
    conf.write_text(f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n")
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin",
           **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tripleo_flow.cli.main",
                               "--config-file", str(conf), *args],
                              capture_output=True, text=True, timeout=120, env=env)

    assert run("plan", "create", "overcloud", "--sample").returncode == 0
    for command in (["deploy", "--plan", "overcloud"],
                    ["overcloud", "update", "prepare", "--plan", "overcloud", "-y"]):
        proc = run(*command)
        assert proc.returncode == 2, (command, proc.stderr)
        assert "YAML error at line 2" in proc.stderr and "Traceback" not in proc.stderr
    assert "~/.tripleo/environments" in run("deploy", "--help").stdout
    listed = run("plan", "environment", "list", "overcloud", "-f", "value").stdout
    assert "broken" not in listed
