"""The Python API: the one surface the CLI, the HTTP backend and Python callers use.

    >>> from tripleo_flow.client import Client
    >>> client = Client.from_config_files([])      # local store under ~/.local/share
    >>> client.create_plan("overcloud", "/path/to/templates")
    >>> client.list_plans()

Each area (plans, workflows, heat ...) is a mixin in its own module; every
operation is one method, and no interface adds logic of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from oslo_config import cfg

from tripleo_flow import config
from tripleo_flow.actions.context import ActionContext
from tripleo_flow.client.backup import BackupMixin
from tripleo_flow.client.completions import CompletionsMixin
from tripleo_flow.client.deploy import DeployMixin
from tripleo_flow.client.execution_updates import ExecutionUpdatesMixin
from tripleo_flow.client.heat import HeatMixin
from tripleo_flow.client.nodes import NodesMixin
from tripleo_flow.client.plans import PlansMixin
from tripleo_flow.client.scale import ScaleMixin
from tripleo_flow.client.stored_backups import StoredBackupsMixin
from tripleo_flow.client.task_reruns import TaskRerunsMixin
from tripleo_flow.client.update import UpdateMixin
from tripleo_flow.client.validations import ValidationsMixin
from tripleo_flow.client.workflows import WorkflowsMixin
from tripleo_flow.engine.jobs import jobboard
from tripleo_flow.plans.lock import PlanLocks
from tripleo_flow.plans.store import PlanStore

__all__ = ["Client", "make_store"]


def make_store(conf: cfg.ConfigOpts, data_dir: Path) -> PlanStore:
    """The plan store the configuration names (the local store by default)."""
    if conf.plan_store.backend == "swift":
        from tripleo_flow.plans.swift import SwiftStore

        return SwiftStore.from_conf(conf)
    from tripleo_flow.plans.local import LocalStore

    return LocalStore(conf.plan_store.local_root or data_dir / "plans",
                      history_max=conf.limits.plan_history_max)


class Client(PlansMixin, WorkflowsMixin, CompletionsMixin, ExecutionUpdatesMixin, HeatMixin,
             DeployMixin, NodesMixin, ValidationsMixin, ScaleMixin, UpdateMixin, BackupMixin,
             StoredBackupsMixin, TaskRerunsMixin):
    """A session of the Python API over one configuration."""

    def __init__(self, conf: cfg.ConfigOpts, store: PlanStore | None = None,
                 locks: PlanLocks | None = None) -> None:
        self.conf = conf
        self.data_dir = config.data_dir(conf)
        self.store = store if store is not None else make_store(conf, self.data_dir)
        board = jobboard.BoardSettings.from_conf(conf)
        lock_url = conf.plan_store.lock_url or (
            jobboard.lock_url(board) if board is not None else f"file://{self.data_dir / 'locks'}")
        self.locks = locks if locks is not None else PlanLocks(lock_url,
                                                                conf.plan_store.lock_timeout)
        self.context = ActionContext(store=self.store, locks=self.locks, conf=conf)

    @classmethod
    def from_config_files(cls, files: Sequence[str] = (), **overrides: Any) -> Client:
        """Build a client from config files; ``overrides`` set ``group_option`` values."""
        conf = config.load(files)
        for key, value in overrides.items():
            group, _, name = key.rpartition("__")
            conf.set_override(name, value, group=group or None)
        return cls(conf)

    def close(self) -> None:
        self.close_workflows()
        self.locks.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
