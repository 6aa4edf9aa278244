"""The connection of the executions database (:mod:`.execution_backend`) that writes each
atom once per durable state change: RUNNING and progress updates wait for the next
durable write, a flow's first save inserts all its atoms with one statement, and a
new execution is added to the logbook without reading the others."""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from taskflow import exceptions as tf_exc
from taskflow import states
from taskflow.persistence import models

from tripleo_flow.engine.store.atom_updates import AtomUpdates
from tripleo_flow.engine.store.redaction import Redactor
from tripleo_flow.engine.store.taskflow_persistence import impl_sqlalchemy

#: Atom states whose save may wait for the next durable write.
_DEFERRABLE_STATES = {states.RUNNING}


def _data(ad: Any) -> tuple[Any, ...]:
    """What an atom detail holds besides its meta (compared by identity: a save
    replaces what it changes)."""
    return (ad.state, ad.results, ad.failure, ad.intention, ad.revert_results,
            ad.revert_failure, ad.version)


@functools.cache
def _taskflow_tables() -> tuple[sa.MetaData, Any]:
    """TaskFlow's tables (and their metadata): a schema, bound to no database, so one
    serves every connection of the process."""
    from taskflow.persistence.backends.sqlalchemy import tables

    metadata = sa.MetaData()
    return metadata, tables.fetch(metadata)


class BatchingConnection(impl_sqlalchemy.Connection):  # type: ignore[misc]
    """A TaskFlow connection that writes each atom once per durable state change.

    It remembers what it wrote for each atom, so it needs no SELECT before an
    UPDATE, and defers saves that only mark an atom RUNNING or change its
    metadata (progress).  Reads flush first, so they always see every save.
    Only one process runs a given execution, so the remembered rows are exact.
    """

    def __init__(self, backend: Any, upgrade_lock: Any) -> None:
        # TaskFlow's Connection.__init__, with its table objects made once per process
        # (it builds them for every connection object: about half the cost of opening
        # an executions database).
        self._backend = backend
        self._upgrade_lock = upgrade_lock
        self._engine = backend.engine
        self._metadata, self._tables = _taskflow_tables()
        self._converter = impl_sqlalchemy._Alchemist(self._tables)
        self._known: dict[str, Any] = {}
        self._known_flows: dict[str, Any] = {}
        self._pending: dict[str, Any] = {}
        #: Deferred atoms whose data (not only their meta) changed since last written.
        self._pending_data: set[str] = set()
        #: Atoms added (:meth:`add_atom_detail`) whose row is not written yet.
        self._inserts: dict[str, tuple[str, Any]] = {}
        #: The atoms remembered of each flow, forgotten with it (:meth:`forget`).
        self._flow_atoms: dict[str, set[str]] = {}
        self._write_lock = threading.RLock()
        self._redactor: Redactor = backend.redactor
        table = self._tables.atomdetails
        self._insert_stmt = sa.insert(table)
        self._updates = AtomUpdates(self._engine.dialect, table)
        #: On a SQLite file, the connection the writes go through, kept between them.
        self._held: Any = None
        self._hold = (self._engine.dialect.name == "sqlite"
                      and not isinstance(self._engine.pool, sa.pool.StaticPool))

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[Any]:
        """A transaction for this connection's own writes (the caller holds the write
        lock).  On a SQLite file they go through one connection kept for them: a pool
        checkout and its reset on return cost about as much as the write itself; with
        WAL an idle connection holds no lock.  Other databases check out as before
        (a server may drop a connection left idle)."""
        if not self._hold:
            with self._engine.begin() as conn:
                yield conn
            return
        if self._held is None:
            self._held = self._engine.connect()
        try:
            with self._held.begin():
                yield self._held
        except sa.exc.DBAPIError as exc:
            if exc.connection_invalidated:
                self.release()
            raise

    def _commit_updates(self, rows: list[dict[str, Any]]) -> None:
        """On a SQLite file, run the UPDATEs of ``rows`` and commit them straight on the
        kept connection's DBAPI connection (the sqlite3 module opens the transaction
        itself; SQLAlchemy's transaction around one write cost as much as the write)."""
        if self._held is None:
            self._held = self._engine.connect()
        raw = self._held.connection.dbapi_connection
        try:
            self._updates.execute(None, rows, raw=raw)
            raw.commit()
        except self._engine.dialect.loaded_dbapi.Error as exc:
            with contextlib.suppress(Exception):
                raw.rollback()
            self.release()  # a later write starts on another connection
            raise tf_exc.StorageFailure(f"Failed saving atom details: {exc}") from exc

    def release(self) -> None:
        """Close the connection kept for writes (a later write opens another)."""
        with self._write_lock:
            held, self._held = self._held, None
            if held is not None:
                held.close()

    def _row(self, ad: Any) -> dict[str, Any]:
        values = self._redactor.atom_row(ad.to_dict())
        values.pop("uuid", None)
        return {"b_uuid": ad.uuid, **values}

    # TaskFlow's own writes (first save of an atom, a whole flow detail) go
    # through these: every row is redacted (:mod:`tripleo_flow.engine.store.redaction`).

    def _insert_flow_details(self, conn: Any, fd: Any, parent_uuid: str) -> None:
        value = self._redactor.flow_row(fd.to_dict())
        value["parent_uuid"] = parent_uuid
        conn.execute(sa.insert(self._tables.flowdetails).values(**value))
        self._insert_many(conn, [self._insert_row(ad, fd.uuid) for ad in fd])

    def _insert_atom_details(self, conn: Any, ad: Any, parent_uuid: str) -> None:
        self._insert_many(conn, [self._insert_row(ad, parent_uuid)])

    def _insert_row(self, ad: Any, parent_uuid: str) -> dict[str, Any]:
        value = self._redactor.atom_row(ad.to_dict())
        value["parent_uuid"] = parent_uuid
        value["atom_type"] = models.atom_detail_type(ad)
        return value

    def _insert_many(self, conn: Any, rows: list[dict[str, Any]]) -> None:
        """Insert atom rows in one statement per set of columns (an engine's first save
        of a flow holds every atom: one INSERT each cost O(atoms) statement builds)."""
        by_columns: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for row in rows:
            by_columns.setdefault(tuple(sorted(row)), []).append(row)
        for group in by_columns.values():
            conn.execute(self._insert_stmt, group)

    def _update_atom_details(self, conn: Any, ad: Any, e_ad: Any) -> None:
        e_ad.merge(ad)
        self._updates.execute(conn, [self._row(e_ad)])

    def _update_flow_details(self, conn: Any, fd: Any, e_fd: Any) -> None:
        e_fd.merge(fd)
        table = self._tables.flowdetails
        conn.execute(sa.update(table).where(table.c.uuid == e_fd.uuid)
                     .values(self._redactor.flow_row(e_fd.to_dict())))
        inserts, updates = [], []
        for ad in fd:
            e_ad = e_fd.find(ad.uuid)
            if e_ad is None:
                e_fd.add(ad)
                inserts.append(self._insert_row(ad, fd.uuid))
            else:
                e_ad.merge(ad)
                updates.append(self._row(e_ad))
        self._insert_many(conn, inserts)
        if updates:
            self._updates.execute(conn, updates)

    def _write(self, details: list[Any]) -> None:
        """Write ``details`` in one transaction: the whole row of each, but only the
        meta (progress) of a deferred atom whose data was written as it is now."""
        rows, metas = [], []
        inserts = [self._insert_row(ad, flow) for flow, ad in self._inserts.values()]
        for ad in details:
            if ad.uuid in self._inserts:
                continue
            if ad.uuid in self._pending_data or ad.uuid not in self._pending:
                rows.append(self._row(ad))
            else:
                metas.append({"b_uuid": ad.uuid,
                              "meta": self._redactor.atom_row({"meta": ad.meta})["meta"]})
        try:
            if self._hold and not inserts:
                self._commit_updates(rows + metas)
            else:
                with self._transaction() as conn:
                    if inserts:
                        self._insert_many(conn, inserts)
                    self._updates.execute(conn, rows + metas)
        except sa.exc.SQLAlchemyError as exc:
            raise tf_exc.StorageFailure(f"Failed saving atom details: {exc}") from exc
        self._inserts.clear()
        for ad in details:
            self._pending.pop(ad.uuid, None)
            self._pending_data.discard(ad.uuid)

    def flush(self) -> None:
        """Write every deferred save now."""
        with self._write_lock:
            if self._pending:
                self._write(list(self._pending.values()))

    def update_atom_details(self, atom_detail: Any) -> Any:
        with self._write_lock:
            return self._save_known(atom_detail).copy()

    def save_atom(self, source: Any, changed: Any) -> None:
        """Save ``changed`` (a copy of atom detail ``source`` with changes) as
        :meth:`update_atom_details` saves it, then update ``source`` to what was saved,
        sharing its values with what this connection remembers (TaskFlow's storage
        copies a detail before it changes it; no copy is made for the answer)."""
        with self._write_lock:
            source.update(self._save_known(changed))

    def _save_known(self, atom_detail: Any) -> Any:
        """Merge ``atom_detail`` into the remembered row and write it now, or later
        (RUNNING marks, meta-only changes): the remembered atom detail."""
        known = self._known.get(atom_detail.uuid)
        if known is None:
            self.flush()
            known = self._known[atom_detail.uuid] = super().update_atom_details(atom_detail)
            return known
        before = _data(known)
        known.merge(atom_detail)
        if not all(a is b for a, b in zip(before, _data(known), strict=True)):
            self._pending_data.add(known.uuid)
        self._pending[known.uuid] = known
        # Its data not written yet (changed now, or a failed write tried again): now.
        if known.state not in _DEFERRABLE_STATES and known.uuid in self._pending_data:
            self._write(list(self._pending.values()))
        return known

    def forget(self, flow_uuid: str) -> None:
        """Write what is deferred, then forget flow ``flow_uuid`` and its atoms: its run
        has ended, and a server runs executions for months (their results and failures,
        tracebacks and all, stayed in memory). A later save of them (a resume) reads
        them back first, as for a flow this connection never saw."""
        with self._write_lock:
            self.flush()
            self._known_flows.pop(flow_uuid, None)
            for uuid in self._flow_atoms.pop(flow_uuid, set()):
                self._known.pop(uuid, None)

    def add_atom_detail(self, flow_uuid: str, atom_detail: Any) -> None:
        """Add one new atom to flow ``flow_uuid`` (a task execution the state machine
        created) without comparing the flow's other atoms.  Its row is inserted with
        the next durable write (its RUNNING mark may wait, like any atom's)."""
        with self._write_lock:
            known = atom_detail.copy()
            self._known[atom_detail.uuid] = known
            self._flow_atoms.setdefault(flow_uuid, set()).add(atom_detail.uuid)
            self._inserts[atom_detail.uuid] = (flow_uuid, known)
            self._pending[atom_detail.uuid] = known

    def update_flow_details(self, flow_detail: Any) -> Any:
        """Save a flow detail, writing only the atoms that changed since last written.

        TaskFlow saves the whole flow detail, every atom included, at each
        flow state change; rewriting unchanged atoms would cost O(tasks).
        """
        with self._write_lock:
            self.flush()
            known_flow = self._known_flows.get(flow_detail.uuid)
            if known_flow is None or any(ad.uuid not in self._known for ad in flow_detail):
                merged = super().update_flow_details(flow_detail)
                self._known_flows[merged.uuid] = merged.copy(retain_contents=False)
                for ad in merged:
                    self._known[ad.uuid] = ad.copy()
                self._flow_atoms.setdefault(merged.uuid, set()).update(
                    ad.uuid for ad in merged)
                return merged
            known_flow.merge(flow_detail)
            changed = []
            for ad in flow_detail:
                known = self._known[ad.uuid]
                if known.to_dict() != ad.to_dict():
                    known.merge(ad)
                    changed.append(known)
            flows = self._tables.flowdetails
            values = self._redactor.flow_row(known_flow.to_dict())
            values.pop("uuid", None)
            try:
                with self._transaction() as conn:
                    conn.execute(sa.update(flows).where(flows.c.uuid == known_flow.uuid)
                                 .values(values))
                    if changed:
                        self._updates.execute(conn, [self._row(ad) for ad in changed])
            except sa.exc.SQLAlchemyError as exc:
                raise tf_exc.StorageFailure(f"Failed saving flow details: {exc}") from exc
            return flow_detail

    def save_logbook(self, book: Any) -> Any:
        """Save ``book``; new flow details added to a logbook saved before are inserted
        without reading the rest of it.

        TaskFlow's own save reads every flow detail of the logbook, with all their atoms,
        before it merges: each execution started read the whole executions database
        (after one 10,000-task run, ~0.5 s more for every later start).  Anything else (a
        new logbook, a flow detail saved before) is saved as TaskFlow saves it.
        """
        with self._write_lock:
            self.flush()
            saved = self._add_flows(book)
            return saved if saved is not None else super().save_logbook(book)

    def _add_flows(self, book: Any) -> Any:
        """The logbook saved with ``book``'s flow details added, or None (nothing
        written) when the logbook is new or one of those flow details exists."""
        logbooks, flows = self._tables.logbooks, self._tables.flowdetails
        uuids = [fd.uuid for fd in book]
        try:
            with self._transaction() as conn:
                row = conn.execute(sa.select(logbooks).where(logbooks.c.uuid == book.uuid)
                                   ).first()
                if row is None or (uuids and conn.execute(
                        sa.select(flows.c.uuid).where(flows.c.uuid.in_(uuids))).first()):
                    return None
                saved = self._converter.convert_book(row._mapping)
                saved.merge(book)
                conn.execute(sa.update(logbooks).where(logbooks.c.uuid == saved.uuid)
                             .values(saved.to_dict()))
                for fd in book:
                    saved.add(fd)
                    self._insert_flow_details(conn, fd, saved.uuid)
                return saved
        except sa.exc.SQLAlchemyError as exc:
            raise tf_exc.StorageFailure(f"Failed saving logbook '{book.uuid}': {exc}") from exc

    def get_logbook(self, book_uuid: str, lazy: bool = False) -> Any:
        self.flush()
        return super().get_logbook(book_uuid, lazy=lazy)

    def get_flows_for_book(self, book_uuid: str, lazy: bool = False) -> Any:
        self.flush()
        return super().get_flows_for_book(book_uuid, lazy=lazy)

    def get_flow_details(self, fd_uuid: str, lazy: bool = False) -> Any:
        self.flush()
        return super().get_flow_details(fd_uuid, lazy=lazy)

    def get_atom_details(self, ad_uuid: str) -> Any:
        self.flush()
        return super().get_atom_details(ad_uuid)

    def get_atoms_for_flow(self, fd_uuid: str) -> Any:
        self.flush()
        return super().get_atoms_for_flow(fd_uuid)

    def close(self) -> None:
        """Nothing: TaskFlow closes after every call, but this connection is reused."""


__all__ = ["BatchingConnection"]
