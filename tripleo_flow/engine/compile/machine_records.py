"""The records of a state machine's execution (:mod:`.state_machine`): one TaskFlow
atom detail per task execution in the execution's flow detail, written through
the executions database, and the storage surface the runner, the execution scope
and conductors read of an engine (``get_flow_state``, ``fetch``, ``get`` ...).

The executions database's connection adds a new atom without comparing the
flow's other atoms (:meth:`~.batching_connection.BatchingConnection.add_atom_detail`);
another connection (a fenced conductor's memory) saves the whole flow detail.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oslo_utils import uuidutils
from taskflow import states
from taskflow.persistence import models
from taskflow.types import notifier

from tripleo_flow.engine.compile import atoms


class Records:
    """The flow detail of one execution and its task executions' atom details."""

    def __init__(self, fd: Any, backend: Any, flow_notifier: notifier.Notifier) -> None:
        self.fd = fd
        self.backend = backend
        self.notifier = flow_notifier
        self.details: dict[str, Any] = {ad.name: ad for ad in fd}
        #: The workflow's output once it succeeded.
        self.output: Any = None

    # -- writes -------------------------------------------------------------------

    def detail(self, name: str) -> Any:
        """The atom detail ``name``, added (PENDING, not yet written) when new."""
        detail = self.details.get(name)
        if detail is None:
            detail = self.details[name] = models.TaskDetail(name, uuidutils.generate_uuid())
            self.fd.add(detail)
            conn = self.backend.get_connection()
            add = getattr(conn, "add_atom_detail", None)
            if add is not None:
                add(self.fd.uuid, detail)
            else:
                conn.update_flow_details(self.fd)
        return detail

    def save(self, detail: Any) -> None:
        conn = self.backend.get_connection()
        if getattr(conn, "add_atom_detail", None) is not None:
            conn.update_atom_details(detail)
        else:
            conn.update_flow_details(self.fd)

    def set_flow_state(self, state: str) -> None:
        old = self.fd.state
        self.fd.state = state
        self.backend.get_connection().update_flow_details(self.fd)
        self.notifier.notify(state, {"flow_name": self.fd.name, "flow_uuid": self.fd.uuid,
                                     "old_state": old})

    # -- what readers of an engine's storage use ------------------------------------

    def get_flow_state(self) -> str:
        return str(self.fd.state)

    def fetch(self, name: str) -> Any:
        if name == atoms.OUTPUT_SYMBOL:
            return {"result": self.output}
        raise KeyError(name)

    def get_atom_state(self, name: str) -> Any:
        detail = self.details.get(name)
        return None if detail is None else detail.state

    def get_atom_uuid(self, name: str) -> Any:
        detail = self.details.get(name)
        return None if detail is None else detail.uuid

    def get(self, name: str) -> Any:
        detail = self.details.get(name)
        if detail is None:
            raise KeyError(name)
        return detail.failure if detail.state == states.FAILURE else detail.results

    def update_atom_metadata(self, name: str, meta: Mapping[str, Any]) -> None:
        detail = self.details.get(name)
        if detail is not None:
            detail.meta = {**(detail.meta or {}), **meta}
            self.save(detail)
