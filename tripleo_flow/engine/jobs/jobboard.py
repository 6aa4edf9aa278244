"""Workflow runs as jobs on a TaskFlow jobboard (``[jobboard] backend_url``).

A run is recorded as usual (a PENDING flow detail in the executions database,
:mod:`.executions`), then posted as a TaskFlow job naming that flow detail;
a conductor (:mod:`.conductor`) claims the job and runs the flow detail with
the same engine.  Jobs live in the board, so a process that posts one may
stop at once.

Boards are TaskFlow's own: Redis (:class:`ExpiringRedisJobBoard`, whose claims
expire unless renewed, so a conductor killed with ``kill -9`` does not keep
its jobs forever) and ZooKeeper (claims are ephemeral nodes: the session of a
dead conductor expires and frees them).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tripleo_flow import exceptions

# TaskFlow is imported where a board is used: the Python API reads the settings
# (plan locks default to the board's service) for every command, reads included.

#: Details of a posted job.
EXECUTION_KEY = "flow_uuid"
SCHEMES = ("redis", "zookeeper")

#: Renews a claim only while ``who`` still owns it (atomic on the server).
_RENEW_SCRIPT = """
if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("pexpire", KEYS[1], tonumber(ARGV[2]))
end
return 0
"""


@dataclass(frozen=True)
class BoardSettings:
    """What ``[jobboard]`` says, checked."""

    url: str
    namespace: str = "tripleo-flow"
    claim_expiry: float = 30.0
    heartbeat_interval: float = 10.0
    poll_interval: float = 0.5

    @property
    def scheme(self) -> str:
        return urllib.parse.urlsplit(self.url).scheme

    def check(self) -> BoardSettings:
        """Raise InvalidInput when the settings cannot work; else return them."""
        if self.scheme not in SCHEMES:
            raise exceptions.InvalidInput(
                f"[jobboard] backend_url must start with redis:// or zookeeper://, not "
                f"{self.scheme + '://' if self.scheme else repr(_safe(self.url))}. Fix it in "
                "the configuration file, or unset it to run workflows in-process.")
        if not self.namespace or "/" in self.namespace:
            raise exceptions.InvalidInput(
                f"[jobboard] namespace {self.namespace!r} must be a non-empty name without "
                "'/'.")
        if self.claim_expiry <= 2 * self.heartbeat_interval:
            raise exceptions.InvalidInput(
                f"[jobboard] claim_expiry ({self.claim_expiry:g} s) must exceed twice "
                f"heartbeat_interval ({self.heartbeat_interval:g} s): a heartbeat that comes "
                "late would otherwise let a claim expire while its conductor still runs the "
                "job, and a second conductor would run it too. Raise claim_expiry or lower "
                "heartbeat_interval.")
        return self

    @classmethod
    def from_conf(cls, conf: Any) -> BoardSettings | None:
        """The checked settings, or None when ``[jobboard] backend_url`` is unset."""
        group = getattr(conf, "jobboard", None)
        url = getattr(group, "backend_url", None) if group is not None else None
        if not url or group is None:
            return None
        return cls(url, group.namespace, group.claim_expiry, group.heartbeat_interval,
                   group.poll_interval).check()


def board_conf(settings: BoardSettings) -> dict[str, Any]:
    """TaskFlow's board configuration for ``settings``."""
    parts = urllib.parse.urlsplit(settings.url)
    if parts.scheme == "zookeeper":
        return {"board": "zookeeper", "hosts": parts.netloc.split("@")[-1],
                "path": f"/{settings.namespace}/jobs"}
    conf: dict[str, Any] = {"board": "redis", "namespace": settings.namespace,
                            "host": parts.hostname or "127.0.0.1", "port": parts.port or 6379}
    if parts.password:
        conf["password"] = urllib.parse.unquote(parts.password)
    if parts.username:
        conf["username"] = urllib.parse.unquote(parts.username)
    db = parts.path.strip("/")
    if db:
        if not db.isdigit():
            raise exceptions.InvalidInput(
                f"[jobboard] backend_url: the Redis database must be a number, not {db!r}.")
        conf["db"] = int(db)
    return conf


def _redis_board_class() -> type:
    from taskflow import exceptions as tf_exc
    from taskflow.jobs.backends import impl_redis

    class ExpiringRedisJobBoard(impl_redis.RedisJobBoard):  # type: ignore[misc]
        """TaskFlow's Redis board whose claims expire unless their owner renews them."""

        claim_expiry = 30.0

        def claim(self, job: Any, who: str, expiry: float | None = None) -> None:
            super().claim(job, who, expiry=self.claim_expiry if expiry is None else expiry)

        def iterjobs(self, only_unclaimed: bool = False,
                     ensure_fresh: bool = False) -> Iterator[Any]:
            """The jobs nobody holds, in TaskFlow's order (what a conductor may claim).

            TaskFlow's iterator asks for each job's state in a transaction of its
            own (several round trips per job, at every look at the board, by every
            conductor): one MGET of the owner keys replaces them all.
            """
            jobs = self._fetch_jobs()
            if not jobs:
                return iter(())
            try:
                owners = self._client.mget([job.owner_key for job in jobs])
            except Exception as exc:
                raise tf_exc.JobFailure(f"Listing the jobs' owners failed: {exc}") from exc
            return iter([job for job, owner in zip(jobs, owners, strict=True)
                         if owner is None])

        def renew(self, job: Any, who: str, expiry: float) -> bool:
            """Extend ``who``'s claim on ``job`` by ``expiry`` s; False when ``who`` no
            longer owns it (it expired, and maybe another conductor claimed it)."""
            try:
                result = self._client.eval(_RENEW_SCRIPT, 1, job.owner_key,
                                           self._encode_owner(who), int(expiry * 1000))
            except Exception as exc:
                raise tf_exc.JobFailure(f"Renewing the claim on job {job.uuid} failed: "
                                        f"{exc}") from exc
            return bool(result)

    return ExpiringRedisJobBoard


def make_board(settings: BoardSettings, persistence: Any = None,
               name: str = "tripleo-flow") -> Any:
    """A connected TaskFlow jobboard for ``settings``.

    :raises BackendUnavailable: the board's service does not answer
    """
    conf = board_conf(settings)
    if conf["board"] == "redis":
        board = _redis_board_class()(name, conf, persistence=persistence)
        board.claim_expiry = settings.claim_expiry
    else:
        from taskflow.jobs.backends import impl_zookeeper

        board = impl_zookeeper.ZookeeperJobBoard(name, conf, persistence=persistence)
    try:
        board.connect()
    except Exception as exc:  # redis/kazoo errors, TaskFlow's JobFailure
        raise exceptions.BackendUnavailable(
            f"Cannot reach the jobboard {_safe(settings.url)}: {exc}. Check [jobboard] "
            "backend_url and that the service runs.") from exc
    return board


def post(board: Any, book_uuid: str, fd: Any, inputs_shown: Any) -> Any:
    """Post the job that runs flow detail ``fd`` (of logbook ``book_uuid``).

    :param inputs_shown: the inputs as they may be stored (masked): for people
        looking at the board; the conductor reads the flow detail
    """
    from taskflow import exceptions as tf_exc
    from taskflow.persistence import models

    details = {EXECUTION_KEY: fd.uuid, "workflow": (fd.meta or {}).get("workflow", fd.name),
               "inputs": inputs_shown}
    try:
        return board.post(f"execution-{fd.uuid}", book=models.LogBook("tripleo-flow",
                                                                     uuid=book_uuid),
                          details=details)
    except tf_exc.JobFailure as exc:
        raise exceptions.BackendUnavailable(
            f"Posting execution {fd.uuid} to the jobboard failed: {exc}") from exc


def execution_of(job: Any) -> str:
    """The execution id a job runs."""
    execution_id = (job.details or {}).get(EXECUTION_KEY)
    if not execution_id:
        from taskflow import exceptions as tf_exc

        raise tf_exc.NotFound(f"Job {job.uuid} names no execution")
    return str(execution_id)


def lock_url(settings: BoardSettings) -> str:
    """The tooz URL of the board's service (plan locks default to it)."""
    return settings.url


def _safe(url: str) -> str:
    """``url`` without its password."""
    parts = urllib.parse.urlsplit(url)
    if parts.password:
        host = parts.netloc.rsplit("@", 1)[-1]
        parts = parts._replace(netloc=f"{parts.username or ''}:***@{host}")
    return urllib.parse.urlunsplit(parts)


__all__ = ["BoardSettings", "board_conf", "execution_of", "lock_url", "make_board", "post"]
