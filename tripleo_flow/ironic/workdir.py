"""The ironic-launcher directory: the heat-launcher layout, for Ironic.

Layout of ``<ironic-dir>/ironic-launcher`` (directories 0700, files 0600)::

    ironic.conf              the configuration the running Ironic reads
    ironic.sqlite            the node database, saved here when Ironic stops
    run.json                 pid, port, database, owner of the running Ironic
    .lock                    held while a launch or kill is in progress
    log/                     ironic.log, the process' output, ironic-dbsync.log
"""

from __future__ import annotations

from pathlib import Path

from tripleo_flow import exceptions
from tripleo_flow.heat.workdir import HeatDir


class IronicDir(HeatDir):
    """Paths of one ironic-launcher directory (see the module docstring)."""

    dir_name = "ironic-launcher"

    def busy(self, detail: str) -> Exception:
        return exceptions.IronicRunning(str(self.given), detail)

    @property
    def conf_file(self) -> Path:
        return self.root / "ironic.conf"

    @property
    def saved_db(self) -> Path:
        return self.root / "ironic.sqlite"

    @property
    def lock_path(self) -> Path:
        return self.root / "locks"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "ironic.log"
