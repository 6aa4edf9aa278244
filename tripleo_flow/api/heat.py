"""Python API for the ephemeral Heat (mixed into :class:`tripleo_flow.api.Client`).

Uses only ``self.context`` (an :class:`~tripleo_flow.actions.base.ActionContext`),
``self.conf`` and ``self.data_dir``.  Each operation calls one Heat action's
``execute`` and returns its result.  Nothing is reverted: each Heat action's
``revert`` undoes a completed run, and here nothing runs after the action that
could fail.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tripleo_flow.heat import install as heat_install
from tripleo_flow.heat import venv_path

if TYPE_CHECKING:
    from types import ModuleType

    from oslo_config import cfg

    from tripleo_flow.actions.base import Action, ActionContext


def _actions() -> ModuleType:
    """The Heat actions (imported when a Heat operation runs)."""
    from tripleo_flow.actions import heat

    return heat


class HeatMixin:
    """Launch, inspect, dump, restore and kill ephemeral Heats; install Heat."""

    context: ActionContext
    conf: cfg.ConfigOpts
    data_dir: Path

    def _run_heat_action(self, action_cls: type[Action], **inputs: Any) -> Any:
        """The result of ``action_cls``'s ``execute`` with ``inputs``."""
        return action_cls(self.context).execute(**inputs)

    def launch_heat(self, heat_dir: str, heat_type: str | None = None,
                    restore_db: bool = False) -> dict[str, Any]:
        """Launch Heat for ``heat_dir`` and return its endpoint once it is ready."""
        result: dict[str, Any] = self._run_heat_action(
            _actions().LaunchHeat, heat_dir=heat_dir, heat_type=heat_type,
            restore_db=restore_db)
        return result

    def kill_heat(self, heat_dir: str, heat_type: str | None = None) -> dict[str, Any]:
        """Dump, wipe and stop the Heat of ``heat_dir`` (nothing to do is not an error)."""
        result: dict[str, Any] = self._run_heat_action(
            _actions().KillHeat, heat_dir=heat_dir, heat_type=heat_type)
        return result

    def dump_heat_db(self, heat_dir: str, heat_type: str | None = None) -> str:
        """Dump the running Heat's database; return the dump's path."""
        return str(self._run_heat_action(_actions().DumpHeatDatabase, heat_dir=heat_dir,
                                         heat_type=heat_type))

    def restore_heat_db(self, heat_dir: str, heat_type: str | None = None) -> dict[str, Any]:
        """Restart Heat on a fresh database loaded from the heat-dir's dump."""
        result: dict[str, Any] = self._run_heat_action(
            _actions().RestoreHeatDatabase, heat_dir=heat_dir, heat_type=heat_type)
        return result

    def heat_status(self, heat_dir: str, heat_type: str | None = None) -> dict[str, Any]:
        """Whether the Heat of ``heat_dir`` runs and answers."""
        result: dict[str, Any] = self._run_heat_action(
            _actions().GetHeatStatus, heat_dir=heat_dir, heat_type=heat_type)
        return result

    def install_heat(self, force: bool = False) -> dict[str, object]:
        """Create Heat's virtualenv (``[heat] venv``, default ``data_dir/heat-venv``)."""
        venv = venv_path(self.conf)
        log = self.data_dir / "heat-install.log"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        return heat_install.install(venv, python=self.conf.heat.python, force=force,
                                    log=log).as_dict()

    def build_heat_image(self, force: bool = False) -> dict[str, object]:
        """Build the local base and Heat images (``[heat] base_image`` and ``image``)."""
        from tripleo_flow.heat import image, podman_api

        client = podman_api.connect(self.conf.heat.podman_url, self.data_dir / "podman")
        with client:
            return image.build(client, self.conf.heat.base_image, self.conf.heat.image,
                               self.conf.heat.services_image, force=force).as_dict()
