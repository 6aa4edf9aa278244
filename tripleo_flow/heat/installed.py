"""``installed``: an existing Heat endpoint; nothing is started or stopped.

Launch only checks that the API answers and writes the client files; kill
stops nothing and dumps nothing (that Heat's database is not ours).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from tripleo_flow import exceptions
from tripleo_flow.heat import launcher as common
from tripleo_flow.heat.launcher import HeatEndpoint, HeatStatus, KillResult
from tripleo_flow.heat.workdir import HeatDir


class InstalledLauncher:
    """A Heat someone else runs (see the module docstring)."""

    heat_type = "installed"

    def __init__(self, heat_dir: str | os.PathLike[str], endpoint: str | None,
                 clouds_yaml: Path | None = None) -> None:
        self.work = HeatDir(heat_dir)
        self.endpoint = endpoint
        self.clouds_yaml = clouds_yaml or self.work.clouds_yaml

    def _address(self) -> tuple[str, int]:
        if not self.endpoint:
            raise exceptions.InvalidInput(
                "--heat-type installed needs the Heat endpoint: set [heat] endpoint "
                "(e.g. http://127.0.0.1:8004/v1/admin)."
            )
        parts = urlsplit(self.endpoint)
        if not parts.hostname:
            raise exceptions.InvalidInput(f"[heat] endpoint {self.endpoint!r} is not a URL.")
        return parts.hostname, parts.port or 80

    def launch(self, restore_db: bool = False, owned_by: str | None = None,
               adopt: bool = False) -> HeatEndpoint:
        """Check the installed Heat answers (``owned_by`` and ``adopt`` do not apply: it
        is not ours)."""
        if restore_db:
            raise exceptions.InvalidInput(
                "--restore-db does not apply to an installed Heat: its database is not "
                "managed by tripleo-flow. Use --heat-type native, processes, container or pod."
            )
        host, port = self._address()
        if not common.api_answers(host, port):
            raise exceptions.HeatError(
                f"The installed Heat at {self.endpoint} does not answer. Start it, or use an "
                "ephemeral one with --heat-type native."
            )
        assert self.endpoint is not None
        self.work.ensure()
        common.write_client_files(self.work, self.endpoint, self.clouds_yaml)
        return HeatEndpoint(heat_type=self.heat_type, endpoint=self.endpoint,
                            heat_dir=str(self.work.root), clouds_yaml=str(self.clouds_yaml),
                            heatrc=str(self.work.heatrc))

    def kill(self, dump: bool = True, adopt: bool = False) -> KillResult:
        return KillResult(heat_dir=str(self.work.root), dump=None, stopped=[])

    def status(self) -> HeatStatus:
        host, port = self._address()
        answers = common.api_answers(host, port)
        return HeatStatus(self.heat_type, str(self.work.root), answers, self.endpoint, answers,
                          None, None, "installed Heat (not managed by tripleo-flow)")

    def dump_db(self) -> Path:
        raise exceptions.InvalidInput(
            "An installed Heat's database is not managed by tripleo-flow: dump it with that "
            "Heat's own tools."
        )

    def restore_db(self) -> HeatEndpoint:
        raise exceptions.InvalidInput(
            "An installed Heat's database is not managed by tripleo-flow: restore it with "
            "that Heat's own tools."
        )
