"""The validation playbooks on this machine, with their metadata.

Playbooks are read from ``[validations] validations_dirs`` first, then from the
virtualenv's ``share/ansible/validation-playbooks``; a name found twice is taken
from the first directory.  Playbooks without the framework's metadata are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tripleo_flow import exceptions
from tripleo_flow.core.deploy import validations as core
from tripleo_flow.validations import SHARE

#: Largest playbook read (a validation playbook is a few hundred bytes).
MAX_PLAYBOOK_BYTES = 256 * 1024


@dataclass(frozen=True)
class Found:
    """A validation and the playbook file it comes from."""

    validation: core.Validation
    path: Path


class Catalog:
    """The validations of a virtualenv and extra directories (read on each call)."""

    def __init__(self, venv: Path, extra_dirs: Sequence[str | Path] = ()) -> None:
        self.venv = venv
        self.dirs = [Path(d).expanduser() for d in extra_dirs]

    @property
    def share(self) -> Path:
        return self.venv / SHARE

    def check_installed(self) -> None:
        """:raises ValidationsNotInstalled: the virtualenv lacks ansible-playbook or playbooks."""
        if not ((self.venv / "bin" / "ansible-playbook").is_file()
                and (self.share / core.PLAYBOOKS_DIR).is_dir()):
            raise exceptions.ValidationsNotInstalled(str(self.venv))

    def _files(self) -> dict[str, Path]:
        found: dict[str, Path] = {}
        for directory in [*self.dirs, self.share / core.PLAYBOOKS_DIR]:
            if not directory.is_dir():
                continue
            for path in sorted(directory.glob("*.yaml")):
                try:
                    name = core.check_id(path.stem)
                except ValueError:
                    continue
                found.setdefault(name, path)
        return found

    def all(self) -> list[Found]:
        """Every validation, sorted by id."""
        self.check_installed()
        result = []
        for name, path in sorted(self._files().items()):
            try:
                if path.stat().st_size > MAX_PLAYBOOK_BYTES:
                    continue
                result.append(Found(core.parse_playbook(name, path.read_bytes()), path))
            except (OSError, core.MetadataError):
                continue
        return result

    def get(self, name: str) -> Found:
        """:raises ValidationNotFound: no playbook of that name, or it has no metadata."""
        try:
            core.check_id(name)
        except ValueError as exc:
            raise exceptions.ValidationNotFound(str(name)[:80]) from exc
        self.check_installed()
        path = self._files().get(name)
        if path is None:
            raise exceptions.ValidationNotFound(name)
        try:
            return Found(core.parse_playbook(name, path.read_bytes()), path)
        except (OSError, core.MetadataError) as exc:
            raise exceptions.ValidationNotFound(name) from exc

    def select(self, names: Sequence[str] | None = None, group: str | None = None,
               category: str | None = None) -> list[Found]:
        """The named validations (in order), else those of ``group`` / ``category``."""
        if names:
            return [self.get(name) for name in names]
        by_id = {f.validation.id: f for f in self.all()}
        chosen = core.select([f.validation for f in by_id.values()], group, category)
        return [by_id[v.id] for v in chosen]
