"""The Python API: one :class:`Client` that every interface calls.

(Minimal version from the workflow engine branch; the plans API adds its mixin.)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tripleo_flow import config
from tripleo_flow.actions.base import ActionContext
from tripleo_flow.api.workflows import WorkflowsMixin
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.lock import PlanLocks

__all__ = ["Client"]


class Client(WorkflowsMixin):
    """A session over one configuration: plan store, locks, workflows."""

    def __init__(self, conf: Any, context: ActionContext, data_dir: Path) -> None:
        self.conf = conf
        self.context = context
        self.data_dir = data_dir

    @classmethod
    def from_config_files(cls, files: Sequence[str] = ()) -> Client:
        conf = config.load(files)
        data_dir = config.data_dir(conf)
        root = conf.plan_store.local_root or str(data_dir / "plans")
        lock_url = conf.plan_store.lock_url or f"file://{data_dir / 'locks'}"
        context = ActionContext(store=LocalStore(root),
                                locks=PlanLocks(lock_url, conf.plan_store.lock_timeout),
                                conf=conf)
        return cls(conf, context, data_dir)

    def close(self) -> None:
        self.close_workflows()
        self.context.locks.close()
