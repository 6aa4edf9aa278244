"""The Python API: the one surface the CLI, the HTTP backend and Python callers use.

    >>> from tripleo_flow.client import Client
    >>> client = Client.from_config_files([])      # local store under ~/.local/share
    >>> client.plans.create("overcloud", "/path/to/templates")
    >>> client.plans.list()
    >>> execution = client.executions.create("tripleo.plan.export", {...})
    >>> client.executions.resume(execution.id)

As python-mistralclient's ``Client``, it is composed of one manager per area
(``plans``, ``executions``, ``nodes`` ...), each in its own module; every operation
is one manager method, and no interface adds logic of its own.  The managers share
one private :class:`~tripleo_flow.client.session.Session` (configuration, plan store,
locks, the workflow engine); none of that is on the client's public surface.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from oslo_config import cfg

from tripleo_flow import config
from tripleo_flow.client.action_executions import ActionExecutionManager
from tripleo_flow.client.backup import BackupManager
from tripleo_flow.client.catalog import ActionManager, WorkbookManager
from tripleo_flow.client.deploy import DeploymentManager
from tripleo_flow.client.environments import EnvironmentManager
from tripleo_flow.client.executions import ExecutionManager
from tripleo_flow.client.heat import HeatManager
from tripleo_flow.client.jobs import ConductorManager
from tripleo_flow.client.nodes import IronicManager, NodeManager
from tripleo_flow.client.plan_data import (
    CapabilityManager,
    NetworkManager,
    ParameterManager,
    PasswordManager,
    RoleManager,
)
from tripleo_flow.client.plans import PlanManager
from tripleo_flow.client.session import Session, make_store
from tripleo_flow.client.tasks import TaskManager
from tripleo_flow.client.update import LifecycleManager
from tripleo_flow.client.validations import ValidationManager
from tripleo_flow.client.workflows import WorkflowManager
from tripleo_flow.plans.lock import PlanLocks
from tripleo_flow.plans.store import PlanStore

__all__ = ["Client", "make_store"]

#: The client's public members that are not managers.
TOP_LEVEL = ("conf", "data_dir", "from_config_files", "close")


class Client:
    """A session of the Python API over one configuration, as one manager per area."""

    def __init__(self, conf: cfg.ConfigOpts, store: PlanStore | None = None,
                 locks: PlanLocks | None = None) -> None:
        session = self._session = Session(conf, store, locks)
        # plans and what they hold
        self.environments = EnvironmentManager(session)
        self.plans = PlanManager(session, self.environments)
        self.capabilities = CapabilityManager(session)
        self.roles = RoleManager(session)
        self.networks = NetworkManager(session)
        self.passwords = PasswordManager(session)
        self.parameters = ParameterManager(session)
        # the workflow engine (python-mistralclient's managers)
        self.workbooks = WorkbookManager(session)
        self.actions = ActionManager(session)
        self.workflows = WorkflowManager(session)
        self.executions = ExecutionManager(session)
        self.tasks = TaskManager(session, self.executions)
        self.action_executions = ActionExecutionManager(session, self.executions)
        self.conductors = ConductorManager(session)
        # services, nodes, deployments
        self.heat = HeatManager(session)
        self.ironic = IronicManager(session)
        self.nodes = NodeManager(session, self.executions)
        self.validations = ValidationManager(session, self.executions, self.tasks)
        self.deployments = DeploymentManager(session, self.environments)
        self.updates = LifecycleManager(session, "update", self.deployments)
        self.upgrades = LifecycleManager(session, "upgrade", self.deployments)
        self.backups = BackupManager(session, self.executions, self.plans, self.deployments)

    @property
    def conf(self) -> cfg.ConfigOpts:
        """The configuration (read its options; set overrides before the first use)."""
        return self._session.conf

    @property
    def data_dir(self) -> Path:
        """The state directory (``data_dir``, else ``$XDG_DATA_HOME/tripleo-flow``)."""
        return self._session.data_dir

    @classmethod
    def from_config_files(cls, files: Sequence[str] = (), **overrides: Any) -> Client:
        """Build a client from config files; ``overrides`` set ``group_option`` values."""
        conf = config.load(files)
        for key, value in overrides.items():
            group, _, name = key.rpartition("__")
            conf.set_override(name, value, group=group or None)
        return cls(conf)

    def close(self) -> None:
        """Wait for background executions, release the executions database and locks."""
        self._session.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
