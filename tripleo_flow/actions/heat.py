"""Actions on the ephemeral Heat of a heat-dir: launch, kill, dump, restore, status.

Each builds its launcher from the context's configuration
(:func:`tripleo_flow.heat.make_launcher`) and does one thing with it.  A launch or
restore an HTTP API user started leaves a Heat running after its execution: it
takes one of ``[api] launched_heats_max`` places (:mod:`tripleo_flow.heat.launched`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from typing import Any

from tripleo_flow.actions.base import Action, Rerun
from tripleo_flow.engine.lang.action import WorkDir
from tripleo_flow.heat import launched, make_launcher
from tripleo_flow.heat.launcher import HeatLauncher
from tripleo_flow.heat.workdir import HeatDir


def _launcher(action: Action, heat_type: str | None, heat_dir: str) -> HeatLauncher:
    conf = action.context.conf
    return make_launcher(conf, heat_type, heat_dir)


def _api_limit(action: Action, heat_dir: str) -> contextlib.AbstractContextManager[None]:
    """For an execution an HTTP API user started: hold one of the ``[api]
    launched_heats_max`` places for the Heat launched in the ``with`` body, which runs
    on after the execution (:mod:`tripleo_flow.heat.launched`); else nothing."""
    if not action.context.api_user:
        return contextlib.nullcontext()
    conf = action.context.conf
    return launched.for_conf(conf).claim(heat_dir, launched.limit(conf))


class LaunchHeat(Action):
    """Launch an ephemeral Heat for a heat-dir and wait until it is ready.

    Run again (a resumed job), it fails with HeatRunning and changes nothing: the
    Heat the first run launched runs on (it is not tied to the launching process).
    """

    rerun = Rerun.REFUSES

    def execute(self, heat_dir: WorkDir, heat_type: str | None = None,
                restore_db: bool = False) -> dict[str, Any]:
        with _api_limit(self, heat_dir):
            return _launcher(self, heat_type, heat_dir).launch(restore_db=restore_db).as_dict()

    def revert(self, heat_dir: str, heat_type: str | None = None, restore_db: bool = False,
               result: Any = None, **kwargs: Any) -> None:
        """Stop the Heat this launch started and drop its database (no dump is made,
        so the dump of the previous run stays as it was)."""
        if isinstance(result, dict):
            _launcher(self, heat_type, heat_dir).kill(dump=False)


class KillHeat(Action):
    """Dump a heat-dir's Heat database, wipe it and stop Heat (safe to repeat)."""

    rerun = Rerun.CONVERGES

    def execute(self, heat_dir: WorkDir, heat_type: str | None = None,
                adopt: bool = False) -> dict[str, Any]:
        """:param adopt: dump the database even when the process that launched Heat is
            gone (a resumed deploy, after its stack finished)"""
        return _launcher(self, heat_type, heat_dir).kill(dump=True, adopt=adopt).as_dict()

    def revert(self, heat_dir: str, heat_type: str | None = None, result: Any = None,
               **kwargs: Any) -> None:
        """Relaunch Heat from the dump this kill made (when it stopped a running Heat)."""
        if isinstance(result, dict) and result.get("dump"):
            _launcher(self, heat_type, heat_dir).launch(restore_db=True)


class DumpHeatDatabase(Action):
    """Dump a running Heat's database to heat-db-dump.sql (checked restorable)."""

    rerun = Rerun.CONVERGES

    def execute(self, heat_dir: WorkDir, heat_type: str | None = None) -> str:
        work = HeatDir(heat_dir)
        previous = work.dump_file.with_name(work.dump_file.name + ".prev")

        def set_aside() -> bool:
            if work.dump_file.exists():
                shutil.copy2(work.dump_file, previous)
                return True
            previous.unlink(missing_ok=True)  # a stale copy would be put back by a revert
            return False

        # Once: a re-run (a resumed job) keeps the copy of the dump before its first
        # run, instead of copying the dump that run made.
        self.context.undo_record(set_aside)
        return str(_launcher(self, heat_type, heat_dir).dump_db())

    def revert(self, heat_dir: str, heat_type: str | None = None, result: Any = None,
               **kwargs: Any) -> None:
        """Put back the dump that was there before (or remove the new one)."""
        if not isinstance(result, str):
            return
        work = HeatDir(heat_dir)
        previous = work.dump_file.with_name(work.dump_file.name + ".prev")
        if previous.exists():
            os.replace(previous, work.dump_file)
        else:
            with contextlib.suppress(FileNotFoundError):
                work.dump_file.unlink()


class RestoreHeatDatabase(Action):
    """Restart a heat-dir's Heat on a fresh database loaded from heat-db-dump.sql."""

    rerun = Rerun.CONVERGES

    def execute(self, heat_dir: WorkDir, heat_type: str | None = None) -> dict[str, Any]:
        with _api_limit(self, heat_dir):
            return _launcher(self, heat_type, heat_dir).restore_db().as_dict()

    def revert(self, heat_dir: str, heat_type: str | None = None, result: Any = None,
               **kwargs: Any) -> None:
        """Stop the Heat the restore started and drop its database (the dump stays)."""
        if isinstance(result, dict):
            _launcher(self, heat_type, heat_dir).kill(dump=False)


class GetHeatStatus(Action):
    """Report whether a heat-dir's Heat runs and answers."""

    rerun = Rerun.READS

    def execute(self, heat_dir: WorkDir, heat_type: str | None = None) -> dict[str, Any]:
        return _launcher(self, heat_type, heat_dir).status().as_dict()
