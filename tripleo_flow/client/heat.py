"""The ephemeral Heats of the Python API (``client.heat``).

Each change of a Heat (launch, kill, dump, restore) runs its action as an execution,
under the name of its shipped one-action workflow (``tripleo.heat.*``:
:data:`~tripleo_flow.client.workbooks.ACTION_WORKFLOWS`), with
:meth:`~tripleo_flow.client.session.Session.run_operation`: a named,
recorded execution, as every other operation; a refusal is recorded ERROR and
raised with its kind (the CLI's exit code).  A launched Heat is not tied to the
execution: it runs on after it ends, until a kill.  Reading a Heat's status runs its
action directly (a getter records nothing).  Installing Heat and building its images
prepare this machine, not a Heat: no workflow either.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tripleo_flow.client import workbooks
from tripleo_flow.client.base import Manager
from tripleo_flow.heat import install as heat_install
from tripleo_flow.heat import venv_path

if TYPE_CHECKING:
    from types import ModuleType

    from oslo_config import cfg



#: The actions whose Heat runs on after their execution ends (run by the shipped
#: workflows tripleo.heat.launch and restore_db, or as action executions).
LEAVES_HEAT_RUNNING = frozenset(workbooks.ALIAS_ACTIONS[workbooks.heat_workflow(n)]
                                for n in ("launch", "restore_db"))


def check_heat_launch_place(conf: cfg.ConfigOpts, action: str | None,
                            inputs: Mapping[str, Any]) -> None:
    """Refuse starting an action execution (or a shipped workflow) of an action that
    leaves a Heat running after it (:data:`LEAVES_HEAT_RUNNING`) for an HTTP API user
    when ``[api] launched_heats_max`` such Heats run already: a 409 before anything
    starts.  (The action checks again under a lock, for any workflow that reaches it.)

    :param action: the action the execution runs (None: a workbook's workflow)
    :raises TooManyLaunchedHeats: no place left
    """
    if action not in LEAVES_HEAT_RUNNING:
        return
    from tripleo_flow.heat import launched

    heat_dir = inputs.get("heat_dir")
    launched.for_conf(conf).check(launched.limit(conf),
                                  heat_dir if isinstance(heat_dir, str) else None)


def _actions() -> ModuleType:
    """The Heat actions (imported when a Heat operation runs)."""
    from tripleo_flow.actions import heat

    return heat


class HeatManager(Manager):
    """Launch, inspect, dump, restore and kill ephemeral Heats; install Heat (``client.heat``)."""

    def _run_heat_workflow(self, workflow: str, output: str, **inputs: Any) -> Any:
        """Output ``output`` of Heat workflow ``workflow`` run with ``inputs``."""
        execution = self._session.run_operation(workbooks.heat_workflow(workflow), inputs)
        return (execution.output or {})[output]

    def launch(self, heat_dir: str, heat_type: str | None = None,
               restore_db: bool = False) -> dict[str, Any]:
        """Launch Heat for ``heat_dir`` and return its endpoint once it is ready (the
        workflow ``tripleo.heat.launch``; the Heat runs on after it)."""
        return dict(self._run_heat_workflow("launch", "endpoint", heat_dir=heat_dir,
                                            heat_type=heat_type, restore_db=restore_db))

    def kill(self, heat_dir: str, heat_type: str | None = None) -> dict[str, Any]:
        """Dump, wipe and stop the Heat of ``heat_dir`` (nothing to do is not an error;
        the workflow ``tripleo.heat.kill``)."""
        return dict(self._run_heat_workflow("kill", "killed", heat_dir=heat_dir,
                                            heat_type=heat_type))

    def dump_db(self, heat_dir: str, heat_type: str | None = None) -> str:
        """Dump the running Heat's database; return the dump's path (the workflow
        ``tripleo.heat.dump_db``)."""
        return str(self._run_heat_workflow("dump_db", "dump", heat_dir=heat_dir,
                                           heat_type=heat_type))

    def restore_db(self, heat_dir: str, heat_type: str | None = None) -> dict[str, Any]:
        """Restart Heat on a fresh database loaded from the heat-dir's dump (the
        workflow ``tripleo.heat.restore_db``)."""
        return dict(self._run_heat_workflow("restore_db", "endpoint", heat_dir=heat_dir,
                                            heat_type=heat_type))

    def status(self, heat_dir: str, heat_type: str | None = None) -> dict[str, Any]:
        """Whether the Heat of ``heat_dir`` runs and answers (read: no workflow)."""
        result: dict[str, Any] = _actions().GetHeatStatus(self._session.context).execute(
            heat_dir=heat_dir, heat_type=heat_type)
        return result

    def install(self, force: bool = False) -> dict[str, object]:
        """Create Heat's virtualenv (``[heat] venv``, default ``data_dir/heat-venv``)."""
        venv = venv_path(self._session.conf)
        log = self._session.data_dir / "heat-install.log"
        self._session.data_dir.mkdir(parents=True, exist_ok=True)
        return heat_install.install(venv, python=self._session.conf.heat.python, force=force,
                                    log=log).as_dict()

    def build_image(self, force: bool = False) -> dict[str, object]:
        """Build the local base and Heat images (``[heat] base_image`` and ``image``)."""
        from tripleo_flow.heat import image, podman_api

        heat = self._session.conf.heat
        client = podman_api.connect(heat.podman_url, self._session.data_dir / "podman")
        with client:
            return image.build(client, heat.base_image, heat.image,
                               self._session.conf.heat.services_image, force=force).as_dict()
