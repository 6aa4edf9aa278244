"""Python API of tripleo-flow.

MINIMAL STAND-IN written on the ``heat`` branch so the heat commands and tests
run before the lead's Client lands; the lead's ``Client`` replaces this file and
keeps ``HeatMixin`` among its bases.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from oslo_config import cfg

from tripleo_flow import config
from tripleo_flow.actions.base import ActionContext
from tripleo_flow.api.heat import HeatMixin
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.lock import PlanLocks


class Client(HeatMixin):
    """One API session: configuration, data dir and the action context."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf
        self.data_dir: Path = config.data_dir(conf)
        store = LocalStore(self.data_dir / "plans")
        locks = PlanLocks(f"file://{self.data_dir / 'locks'}")
        self.context = ActionContext(store=store, locks=locks, conf=conf)

    @classmethod
    def from_config_files(cls, files: Sequence[str] = ()) -> Client:
        return cls(config.load(files))

    def close(self) -> None:
        """Nothing to release in this stand-in."""
