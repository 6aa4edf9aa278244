"""``pod``: a podman pod with heat-api, heat-engine (N workers), MariaDB and RabbitMQ.

The pod has no infra container and its containers use the host network, bound
to 127.0.0.1 only (the API on a free port of its own, or the fixed ``[heat]
api_port``; MariaDB, RabbitMQ, epmd and Erlang distribution on free ports).
MariaDB and RabbitMQ keep their data on tmpfs mounts, so removing the pod leaves
no volume behind.  Existing servers
can be given instead (``[heat] mariadb_url``, ``[heat] rabbitmq_url``).

SQLite cannot serve several engine workers ("database is locked"), so the pod
always uses MariaDB.  Ready means: the API answers, every engine worker wrote
its ``service`` row, and RabbitMQ shows a consumer on the ``engine`` queue (a
request published before that would wait for the RPC timeout).
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tripleo_flow import exceptions
from tripleo_flow.heat import image as heat_image
from tripleo_flow.heat import podman_api, render
from tripleo_flow.heat.container import ContainerLauncher
from tripleo_flow.heat.database import HeatDatabase
from tripleo_flow.heat.db_mariadb import MariaDBDatabase
from tripleo_flow.heat.launcher import KillResult
from tripleo_flow.heat.services import port_open

HOST = "127.0.0.1"

MARIADB_SCRIPT = """\
set -e
mkdir -p /var/lib/mysql /run/mysqld
mariadb-install-db --no-defaults --user=root --datadir=/var/lib/mysql \\
  --auth-root-authentication-method=socket --skip-test-db > /dev/null
exec mariadbd --no-defaults --user=root --datadir=/var/lib/mysql \\
  --socket=/run/mysqld/mysqld.sock --port={port} --bind-address=127.0.0.1 \\
  --skip-name-resolve --init-file={init} --innodb-flush-log-at-trx-commit=2 \\
  --max-connections=2000
"""

RABBITMQ_SCRIPT = """\
set -e
export HOME=/var/lib/rabbitmq RABBITMQ_MNESIA_BASE=/var/lib/rabbitmq/mnesia
export RABBITMQ_LOG_BASE=/var/lib/rabbitmq/log RABBITMQ_NODENAME=rabbit@localhost
export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT={port}
export RABBITMQ_DIST_PORT={dist} ERL_EPMD_ADDRESS=127.0.0.1 ERL_EPMD_PORT={epmd}
export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS='-kernel inet_dist_use_interface {{127,0,0,1}}'
mkdir -p "$RABBITMQ_MNESIA_BASE" "$RABBITMQ_LOG_BASE"
exec /usr/lib/rabbitmq/bin/rabbitmq-server
"""


class PodLauncher(ContainerLauncher):
    """heat-api + heat-engine (N workers) with their own MariaDB and RabbitMQ."""

    heat_type = "pod"

    def __init__(self, heat_dir: Any, image: str, services_image: str,
                 podman_url: str | None, podman_dir: Path, engine_workers: int = 4,
                 rabbitmq_url: str | None = None, **kwargs: Any) -> None:
        kwargs["database"] = "mariadb"
        super().__init__(heat_dir, image=image, podman_url=podman_url, podman_dir=podman_dir,
                         **kwargs)
        self.services_image = services_image
        self.want_engines = engine_workers
        self.rabbitmq_url = rabbitmq_url
        self._ports: dict[str, int] = {}
        self._admin_password: str | None = None

    @property
    def name(self) -> str:
        return f"tripleo-flow-heat-pod-{self.work.token}"

    # -- pieces --------------------------------------------------------------------

    def _load(self) -> None:
        """Ports and admin password of this heat-dir's pod, from run.json or new (new
        ports are held until the launch in progress ends, as its API's: :mod:`.ports`)."""
        if self._ports:
            return
        record = self.work.read_run() or {}
        pod = record.get("pod") or {}
        self._ports = pod.get("ports") or {k: self._holds.take()
                                           for k in ("db", "amqp", "dist", "epmd")}
        self._admin_password = pod.get("admin_password") or secrets.token_hex(16)

    def _admin_url(self) -> str:
        if self.mariadb_url:
            return self.mariadb_url
        self._load()
        return f"mysql+pymysql://tfadmin:{self._admin_password}@{HOST}:{self._ports['db']}"

    def _transport_url(self) -> str:
        if self.rabbitmq_url:
            return self.rabbitmq_url
        self._load()
        return f"rabbit://guest:guest@{HOST}:{self._ports['amqp']}/"

    def _database(self, record: dict[str, Any] | None = None) -> HeatDatabase:
        return MariaDBDatabase(self._admin_url(), f"heat_{self.work.token}",
                               password=record.get("password") if record else None,
                               scratch_dir=self.work.root)

    def _settings(self, db: HeatDatabase) -> render.HeatSettings:
        return render.HeatSettings(
            port=self.api_port({}), database_url=db.url, log_file=str(self.work.log_file),
            token_file=str(self.work.token_file), paste_file=str(self.work.paste_file),
            host=HOST, transport_url=self._transport_url(), engine_workers=self.want_engines)

    def _mounts(self) -> list[dict[str, Any]]:
        return [{"type": "bind", "source": str(self.work.root), "target": str(self.work.root),
                 "read_only": False}]

    def _check_installed(self) -> None:
        heat_image.require(self._podman(), self.image)
        if not (self.mariadb_url and self.rabbitmq_url):
            heat_image.require(self._podman(), self.services_image)

    # -- hooks ---------------------------------------------------------------------

    def _prepare(self, record: dict[str, Any]) -> None:
        super()._prepare(record)  # the watcher of an owned launch, before anything exists
        self._load()
        record["pod"] = {"name": self.name, "ports": self._ports,
                         "admin_password": self._admin_password}
        self.work.write_run(record)
        self._podman().pods.create(self.name, no_infra=True, labels=self._labels)
        tmpfs = {"type": "tmpfs", "target": "/var/lib/mysql"}
        if not self.mariadb_url:
            init = self.work.root / "mariadb-init.sql"
            self.work.write_private(init, (
                f"CREATE USER IF NOT EXISTS 'tfadmin'@'{HOST}' IDENTIFIED BY "
                f"'{self._admin_password}';\n"
                f"GRANT ALL PRIVILEGES ON *.* TO 'tfadmin'@'{HOST}' WITH GRANT OPTION;\n"))
            script = self.work.root / "start-mariadb.sh"
            self.work.write_private(script, MARIADB_SCRIPT.format(port=self._ports["db"],
                                                                  init=init))
            self._run(["/bin/sh", str(script)], name=f"{self.name}-mariadb", detach=True,
                      image=self.services_image, pod=self.name,
                      mounts=[*self._mounts(), tmpfs])
        if not self.rabbitmq_url:
            script = self.work.root / "start-rabbitmq.sh"
            self.work.write_private(script, RABBITMQ_SCRIPT.format(
                port=self._ports["amqp"], dist=self._ports["dist"], epmd=self._ports["epmd"]))
            self._run(["/bin/sh", str(script)], name=f"{self.name}-rabbitmq", detach=True,
                      image=self.services_image, pod=self.name,
                      mounts=[*self._mounts(), {**tmpfs, "target": "/var/lib/rabbitmq"}])
        if not self.mariadb_url:
            # exists() answers (True or False) once the server takes connections.
            self._wait(lambda: self._database().exists() in (True, False), "MariaDB",
                       f"{self.name}-mariadb")

    def _wait(self, probe: Callable[[], bool], what: str, container: str,
              timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(exceptions.HeatError):
                if probe():
                    return
            if container:
                state = self._podman().containers.get(container)
                if state.status not in ("running", "created", "configured"):
                    logs = b"".join(state.logs(tail=5)).decode(errors="replace")
                    raise exceptions.HeatError(f"{what} stopped while starting:\n{logs}")
            time.sleep(0.2)
        raise exceptions.HeatError(f"{what} did not start within {timeout:g} s.")

    def _db_sync(self) -> None:
        self._run(["heat-manage", "--config-file", str(self.work.conf_file), "db_sync"],
                  name=f"{self.name}-db-sync", detach=False, pod=self.name)

    def _start_heat(self, record: dict[str, Any]) -> Callable[[], str | None]:
        if not self.rabbitmq_url:
            self._wait(lambda: port_open(self._ports["amqp"]), "RabbitMQ",
                       f"{self.name}-rabbitmq")
        conf = str(self.work.conf_file)
        started = [self._run([binary, "--config-file", conf], name=f"{self.name}-{part}",
                             detach=True, pod=self.name)
                   for binary, part in (("heat-engine", "engine"), ("heat-api", "api"))]

        self._write_pod_yaml()

        def alive() -> str | None:
            for container in started:
                container.reload()
                if container.status not in ("running", "created", "configured"):
                    logs = b"".join(container.logs(tail=5)).decode(errors="replace")
                    return f"container {container.name} is {container.status}:\n{logs}"
            return None

        return alive

    def _write_pod_yaml(self) -> None:
        """heat-pod.yaml: the pod as Kubernetes-style YAML, for debugging.

        (``podman generate kube`` cannot describe tmpfs mounts, so it is built
        from the containers' own inspect data.)
        """
        containers = []
        for container in self._podman().containers.list(all=True,
                                                        filters={"pod": self.name}):
            container.reload()  # the list entry has no full inspect data
            attrs = container.attrs
            config = attrs.get("Config", {})
            containers.append({
                "name": container.name,
                "image": config.get("Image"),
                "command": config.get("Cmd"),
                "volumeMounts": [{"mountPath": m.get("Destination"), "type": m.get("Type"),
                                  "source": m.get("Source")}
                                 for m in attrs.get("Mounts", [])],
            })
        containers.sort(key=lambda c: str(c["name"]))
        doc = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": self.name, "labels": {"app": "tripleo-flow-heat"}},
               "spec": {"hostNetwork": True, "containers": containers}}
        self.work.write_private(self.work.root / "heat-pod.yaml",
                                yaml.safe_dump(doc, default_flow_style=False))

    def _engines(self, db: HeatDatabase) -> Callable[[], set[str]]:
        def probe() -> set[str]:
            ids = db.engine_ids()
            if len(ids) < self.want_engines or self.rabbitmq_url:
                return ids
            return ids if self._engine_queue_consumed() else set()

        return probe

    def _engine_queue_consumed(self) -> bool:
        rabbit = self._podman().containers.get(f"{self.name}-rabbitmq")
        code, out = rabbit.exec_run(
            ["/usr/lib/rabbitmq/bin/rabbitmqctl", "-n", "rabbit@localhost", "-q",
             "list_queues", "name", "consumers"],
            environment={"HOME": "/var/lib/rabbitmq", "ERL_EPMD_PORT": str(self._ports["epmd"]),
                         "ERL_EPMD_ADDRESS": HOST})
        if code != 0:
            return False
        text = out.decode(errors="replace") if isinstance(out, bytes) else str(out)
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "engine" and parts[1].isdigit():
                return int(parts[1]) > 0
        return False

    def _running(self, record: dict[str, Any]) -> bool:
        container = self._container_named(f"{self.name}-api")
        return container is not None and container.status == "running"

    def _container_named(self, name: str) -> Any:
        from podman import errors

        try:
            return self._podman().containers.get(name)
        except errors.NotFound:
            return None

    def _describe(self, record: dict[str, Any]) -> str:
        return f"pod {self.name}"

    def _stop(self, record: dict[str, Any]) -> list[str]:
        from podman import errors

        self._unwatch(record)
        try:
            pod = self._podman().pods.get(self.name)
        except errors.NotFound:
            return []
        podman_api.kill_and_remove_pod(pod)
        return [f"pod {self.name}"]

    def _teardown(self, record: dict[str, Any], dump: bool) -> KillResult:
        """Stop heat first, dump from the still running MariaDB, then remove the pod."""
        self._load()
        stopped = []
        for part in ("api", "engine"):
            container = self._container_named(f"{self.name}-{part}")
            if container is not None and container.status == "running":
                container.kill(signal="SIGKILL")
        dumped = None
        db = self._database(record["database"])
        try:
            exists = db.exists()
        except exceptions.HeatError:
            exists = False  # the pod's MariaDB is gone (a crash): nothing to dump
        if record.get("ready") and dump and exists:
            db.dump(self.work.dump_file)
            self.work.note_dump_type(self.heat_type)
            dumped = str(self.work.dump_file)
        if self.mariadb_url and exists:
            db.wipe()
            stopped.append("mariadb database")
        stopped.extend(self._stop(record))
        self.work.clear_run()
        self._ports = {}
        return KillResult(heat_dir=str(self.work.root), dump=dumped, stopped=stopped)
