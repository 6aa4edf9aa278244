"""Validation result records: with the plan in the plan store, or in the data directory.

A run for a plan keeps each record as ``validations/<record id>.json`` in the plan's
``<plan>-messages`` container (beside its deployment status), so records live and
go with the plan, on Swift as on the local store.  A run without a plan keeps them
in ``<data_dir>/validations/results/`` (0600).  Records survive restarts: nothing
is held in memory.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.core.deploy import validations as core
from tripleo_flow.plans.plan import MESSAGES_SUFFIX, check_plan_name
from tripleo_flow.plans.store import PlanStore
from tripleo_flow.workspace import files as private_files

PREFIX = "validations/"
_SUFFIX = ".json"


def _object(record_id: str) -> str:
    return f"{PREFIX}{record_id}{_SUFFIX}"


def check_record_id(record_id: str) -> str:
    """:raises ValidationResultNotFound: ``record_id`` cannot name a record."""
    run_id, _, validation = str(record_id).partition("-")
    try:
        if len(run_id) != 32 or not all(c in "0123456789abcdef" for c in run_id):
            raise ValueError(record_id)
        core.check_id(validation)
    except ValueError:
        raise exceptions.ValidationResultNotFound(str(record_id)[:80]) from None
    return record_id


class ResultStore:
    """Save, list, read and delete result records."""

    def __init__(self, store: PlanStore, local_dir: Path) -> None:
        self.store = store
        self.local_dir = local_dir

    def save(self, record: Mapping[str, Any]) -> None:
        data = json.dumps(dict(record), sort_keys=True).encode()
        record_id = check_record_id(record["id"])
        plan = record.get("plan")
        if not plan:
            private_files.write_private(self.local_dir / f"{record_id}{_SUFFIX}", data)
            return
        container = check_plan_name(plan) + MESSAGES_SUFFIX
        if not self.store.container_exists(container):
            try:
                self.store.create_container(container)
            except exceptions.ContainerExists:
                pass
        self.store.put_object(container, _object(record_id), data)

    def delete(self, record_id: str, plan: str | None = None) -> None:
        """Remove a record (nothing when it is not there)."""
        check_record_id(record_id)
        if not plan:
            (self.local_dir / f"{record_id}{_SUFFIX}").unlink(missing_ok=True)
            return
        try:
            self.store.delete_object(plan + MESSAGES_SUFFIX, _object(record_id))
        except (exceptions.ContainerNotFound, exceptions.ObjectNotFound):
            pass

    def _plan_records(self, plan: str) -> list[dict[str, Any]]:
        container = plan + MESSAGES_SUFFIX
        try:
            names = self.store.list_objects(container, prefix=PREFIX)
        except exceptions.ContainerNotFound:
            return []
        records = []
        for name in names:
            try:
                records.append(json.loads(self.store.get_object(container, name)))
            except (exceptions.ObjectNotFound, ValueError):
                continue
        return records

    def _local_records(self) -> list[dict[str, Any]]:
        records = []
        if self.local_dir.is_dir():
            for path in self.local_dir.glob(f"*{_SUFFIX}"):
                try:
                    records.append(json.loads(path.read_text()))
                except (OSError, ValueError):
                    continue
        return records

    def list(self, plan: str | None = None,
             validation: str | None = None) -> list[dict[str, Any]]:
        """Records of ``plan`` (None: those without a plan), of ``validation`` when given,
        newest first, without their logs."""
        records = self._plan_records(check_plan_name(plan)) if plan else self._local_records()
        chosen = [core.summary(r) for r in records if isinstance(r, dict)
                  and (validation is None or r.get("validation") == validation)]
        return sorted(chosen, key=lambda r: (str(r.get("started_at")), str(r.get("id"))),
                      reverse=True)

    def get(self, record_id: str, plan: str | None = None) -> dict[str, Any]:
        """The record ``record_id`` of ``plan`` (None: those without a plan).

        :raises ValidationResultNotFound: no such record.
        """
        check_record_id(record_id)
        try:
            if plan:
                data = self.store.get_object(check_plan_name(plan) + MESSAGES_SUFFIX,
                                             _object(record_id))
            else:
                data = (self.local_dir / f"{record_id}{_SUFFIX}").read_bytes()
            record = json.loads(data)
        except (exceptions.ContainerNotFound, exceptions.ObjectNotFound, OSError, ValueError):
            raise exceptions.ValidationResultNotFound(record_id) from None
        if not isinstance(record, dict):
            raise exceptions.ValidationResultNotFound(record_id)
        return record


__all__ = ["PREFIX", "ResultStore", "check_record_id"]
