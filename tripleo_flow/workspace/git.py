"""The config-download directory as a git repository: one commit per deployment.

Runs the ``git`` binary with argument lists; its errors become
:class:`~tripleo_flow.exceptions.TripleoFlowError` naming the command.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from tripleo_flow import exceptions
from tripleo_flow.workspace.files import DIR_MODE, make_dirs, write_private

IDENTITY = ["-c", "user.name=tripleo-flow", "-c", "user.email=tripleo-flow@localhost",
            "-c", "commit.gpgsign=false", "-c", "core.fileMode=true"]


class GitDir:
    """A directory under git; nothing happens until a method is called."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _git(self, *args: str, check: bool = True) -> str:
        if shutil.which("git") is None:
            raise exceptions.TripleoFlowError(
                "git is not installed; config-download needs it: apt-get install git")
        env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}
        proc = subprocess.run(["git", *IDENTITY, "-C", str(self.path), *args], env=env,
                              capture_output=True, text=True, check=False)
        if check and proc.returncode != 0:
            raise exceptions.TripleoFlowError(
                f"git {' '.join(args)} failed in {self.path}: {proc.stderr.strip()}")
        return proc.stdout.strip()

    def head(self) -> str | None:
        """The current commit, or None when there is no repository or commit yet."""
        if not (self.path / ".git").exists():
            return None
        out = self._git("rev-parse", "--verify", "-q", "HEAD", check=False)
        return out or None

    def replace_files(self, files: Mapping[str, bytes]) -> None:
        """Make the work tree hold exactly ``files`` (0600 files, 0700 directories)."""
        make_dirs(self.path)
        if not (self.path / ".git").exists():
            self._git("init", "-q")
        for entry in self.path.iterdir():
            if entry.name == ".git":
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        for name, data in files.items():
            write_private(self.path / name, data)

    def commit(self, message: str) -> str:
        """Commit everything (even when nothing changed); return the commit id."""
        self._git("add", "-A")
        self._git("commit", "-q", "--allow-empty", "-m", message)
        return self._git("rev-parse", "HEAD")

    def reset(self, commit: str) -> None:
        """Back to ``commit``: the work tree and branch as they were, extra files removed."""
        self._git("reset", "-q", "--hard", commit)
        self._git("clean", "-q", "-f", "-d", "-x")
        for root, dirs, names in os.walk(self.path):
            if ".git" in dirs:
                dirs.remove(".git")
            for directory in dirs:
                os.chmod(os.path.join(root, directory), DIR_MODE)
            for name in names:
                with contextlib.suppress(FileNotFoundError):
                    os.chmod(os.path.join(root, name), 0o600)
