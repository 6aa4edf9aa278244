"""Idempotency-Key records of workflow starts, kept in the executions database.

A start that carries an ``Idempotency-Key`` header first *claims* the key: it
inserts a row whose primary key is the key's SHA-256, so exactly one insert wins,
across threads and across API processes that share the database (SQLite file or
MariaDB).  The winner starts the execution and writes its id into the row.  A
request that loses the insert reads the row instead:

- another request fingerprint (workflow, input, target): :class:`Conflict`, 409.
  The IETF draft "The Idempotency-Key HTTP Header Field" suggests 422 for a
  reused key with another payload; tripleo-flow maps every conflict to 409;
- an execution id: that execution is the answer;
- a claim without an id yet: it waits, polling, for the winner to record its id.

A start that fails before an execution exists (invalid input, unknown workflow)
deletes its claim, so a retry of the same request runs, and fails, the same way
again.  A claim left without an id for :attr:`IdempotencyKeys.claim_timeout`
seconds (its process died between the claim and the record) is taken over; if
that process had already started its execution, that one run is not found again.
Rows older than the ttl (``[api] idempotency_key_ttl``) are ignored and deleted
as keys are claimed.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from tripleo_flow import exceptions

LOG = logging.getLogger(__name__)

HEADER = "Idempotency-Key"
MAX_KEY_LENGTH = 255
#: Seconds a key is remembered without a configuration (``[api] idempotency_key_ttl``).
DEFAULT_TTL = 86400

METADATA = sa.MetaData()
KEYS = sa.Table(
    "tripleo_flow_idempotency_keys", METADATA,
    sa.Column("key_hash", sa.String(64), primary_key=True),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("claim", sa.String(32), nullable=False),
    sa.Column("execution_id", sa.String(36), nullable=True),
    sa.Column("created_at", sa.BigInteger, nullable=False, index=True),
)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_key(key: str) -> None:
    """Refuse an empty or overlong key (InvalidInput)."""
    if not key.strip() or len(key) > MAX_KEY_LENGTH:
        raise exceptions.InvalidInput(
            f"The {HEADER} header must hold 1 to {MAX_KEY_LENGTH} characters; send a "
            "unique value (a UUID) for each new start.")


class IdempotencyKeys:
    """Which execution a start with a given Idempotency-Key made.

    :param engine: gives the SQLAlchemy engine of the executions database (called
        on first use, so building this does no I/O)
    :param ttl: seconds a key is remembered
    :param claim_timeout: seconds after which a claim still without an execution
        is taken to be abandoned
    :param poll: seconds between reads while another request holds the claim
    """

    def __init__(self, engine: Callable[[], Any], ttl: int, claim_timeout: float = 30.0,
                 poll: float = 0.05) -> None:
        self._engine_source = engine
        self.ttl = ttl
        self.claim_timeout = claim_timeout
        self.poll = poll
        self._engine: Any = None
        self._lock = threading.Lock()
        self._next_purge = 0.0

    def engine(self) -> Any:
        """The engine, with the table created the first time."""
        with self._lock:
            if self._engine is None:
                engine = self._engine_source()
                try:
                    METADATA.create_all(engine, checkfirst=True)
                except sa.exc.SQLAlchemyError as exc:
                    # Another process may have created it between the check and ours.
                    if not sa.inspect(engine).has_table(KEYS.name):
                        raise exceptions.BackendUnavailable(
                            f"Cannot create the Idempotency-Key table in the executions "
                            f"database: {exc}. Check [workflows] connection.") from exc
                self._engine = engine
            return self._engine

    def start(self, key: str, fingerprint: str, start: Callable[[], str],
              owner: str = "") -> str:
        """The execution id for ``key``: the one an earlier start with the same
        ``fingerprint`` made, or the one ``start()`` makes now.

        :param owner: whose key it is (a Keystone user id): the same key sent by
            another owner is another key

        :raises Conflict: ``key`` was used for a request with another fingerprint, or
            another request is still starting it after ``3 * claim_timeout`` seconds
        """
        engine = self.engine()
        scoped = f"{owner}\0{key}" if owner else key
        try:
            return self._start(engine, key, fingerprint, start, _sha256(scoped))
        except sa.exc.OperationalError as exc:
            raise exceptions.BackendUnavailable(
                f"The executions database failed while recording {HEADER} {key!r}: {exc}. "
                "Check [workflows] connection, then retry.") from exc

    def _start(self, engine: Any, key: str, fingerprint: str, start: Callable[[], str],
               key_hash: str) -> str:
        print_hash = _sha256(fingerprint)
        deadline = time.monotonic() + 3 * self.claim_timeout
        while True:
            now = int(time.time())
            self._purge(engine, now)
            claim = uuid.uuid4().hex
            if self._claim(engine, key_hash, print_hash, claim, now):
                return self._run(engine, key_hash, claim, start)
            row = self._read(engine, key_hash)
            if row is None:
                continue  # released or purged since our insert failed
            if row.created_at < now - self.ttl:
                self._drop(engine, key_hash, row.claim)
                continue
            if row.fingerprint != print_hash:
                raise exceptions.Conflict(
                    f"{HEADER} {key!r} was used for a different workflow start; send a "
                    "new key for a new start.")
            if row.execution_id is not None:
                return str(row.execution_id)
            if row.created_at < now - self.claim_timeout:
                self._drop(engine, key_hash, row.claim)
                continue
            if time.monotonic() > deadline:
                raise exceptions.Conflict(
                    f"A start with {HEADER} {key!r} is still being made by another "
                    "request; retry in a moment.")
            time.sleep(self.poll)

    def _purge(self, engine: Any, now: int) -> None:
        """Delete expired rows, at most once a minute (or once a ttl, when shorter)."""
        if time.monotonic() < self._next_purge:
            return
        self._next_purge = time.monotonic() + min(60, self.ttl)
        with engine.begin() as conn:
            conn.execute(sa.delete(KEYS).where(KEYS.c.created_at < now - self.ttl))

    @staticmethod
    def _claim(engine: Any, key_hash: str, print_hash: str, claim: str, now: int) -> bool:
        try:
            with engine.begin() as conn:
                conn.execute(sa.insert(KEYS).values(key_hash=key_hash, fingerprint=print_hash,
                                                    claim=claim, created_at=now))
        except sa.exc.IntegrityError:
            return False
        return True

    @staticmethod
    def _read(engine: Any, key_hash: str) -> Any:
        with engine.connect() as conn:
            return conn.execute(sa.select(KEYS).where(KEYS.c.key_hash == key_hash)).first()

    @staticmethod
    def _drop(engine: Any, key_hash: str, claim: str) -> None:
        """Delete the row of ``key_hash`` if it still holds ``claim``."""
        with engine.begin() as conn:
            conn.execute(sa.delete(KEYS).where(KEYS.c.key_hash == key_hash,
                                               KEYS.c.claim == claim))

    def _run(self, engine: Any, key_hash: str, claim: str, start: Callable[[], str]) -> str:
        try:
            execution_id = start()
        except BaseException:
            try:
                self._drop(engine, key_hash, claim)
            except sa.exc.SQLAlchemyError:
                LOG.exception("Could not release an Idempotency-Key claim; it is taken "
                              "over after %g s", self.claim_timeout)
            raise
        with engine.begin() as conn:
            done = conn.execute(sa.update(KEYS)
                                .where(KEYS.c.key_hash == key_hash, KEYS.c.claim == claim)
                                .values(execution_id=execution_id))
        if done.rowcount != 1:
            LOG.warning("Execution %s was started after its Idempotency-Key claim had been "
                        "taken over (the start took over %g s)", execution_id,
                        self.claim_timeout)
        return execution_id
