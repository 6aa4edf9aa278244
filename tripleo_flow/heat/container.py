"""``container``: heat-all in a podman container on the host network.

Same files, database and readiness as :mod:`.native`; only where heat-all runs
differs.  The heat-launcher directory and the SQLite directory are mounted at
their host paths, so heat.conf is the same file.  The container is named after
the heat-dir, so a crashed run's container is found and removed.  tini is PID 1;
stops are SIGKILL (heat-all ignores SIGTERM) followed by removal.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.heat import image as heat_image
from tripleo_flow.heat import podman_api
from tripleo_flow.heat.native import NativeLauncher

ULIMITS = [{"Name": "nofile", "Soft": 1024, "Hard": 1024},
           {"Name": "nproc", "Soft": 4096, "Hard": 4096}]


class ContainerLauncher(NativeLauncher):
    """heat-all in a container (see the module docstring)."""

    heat_type = "container"

    def __init__(self, heat_dir: str | os.PathLike[str], image: str, podman_url: str | None,
                 podman_dir: Path, **kwargs: Any) -> None:
        super().__init__(heat_dir, venv=Path("/nonexistent"), **kwargs)
        self.image = image
        self.podman_url = podman_url
        self.podman_dir = podman_dir
        self._client: Any = None

    @property
    def name(self) -> str:
        return f"tripleo-flow-heat-{self.work.token}"

    def _podman(self) -> Any:
        if self._client is None:
            self._client = podman_api.connect(self.podman_url, self.podman_dir)
        return self._client

    def _mounts(self) -> list[dict[str, Any]]:
        dirs = {str(self.work.root)}
        record = self.work.read_run()
        db = self._database(record["database"] if record else None)
        path = getattr(db, "path", None)
        if path is not None:
            dirs.add(str(Path(path).parent))
        return [{"type": "bind", "source": d, "target": d, "read_only": False}
                for d in sorted(dirs)]

    def _run(self, command: list[str], name: str, detach: bool, image: str | None = None,
             **extra: Any) -> Any:
        from podman import errors

        extra.setdefault("mounts", self._mounts())
        try:
            return self._podman().containers.run(
                image or self.image, command, name=name, detach=detach, remove=not detach,
                network_mode="host", ulimits=ULIMITS, stdout=True, stderr=True, **extra)
        except errors.ContainerError as exc:
            raise exceptions.HeatError(
                f"{' '.join(command[:2])} failed in container {name}: {exc}"
            ) from exc
        except errors.APIError as exc:
            raise exceptions.HeatError(f"podman could not run {name}: {exc}") from exc

    def _container(self) -> Any:
        from podman import errors

        try:
            return self._podman().containers.get(self.name)
        except errors.NotFound:
            return None

    # -- hooks ------------------------------------------------------------------

    def _check_installed(self) -> None:
        heat_image.require(self._podman(), self.image)

    def _db_sync(self) -> None:
        self._run(["heat-manage", "--config-file", str(self.work.conf_file), "db_sync"],
                  name=f"{self.name}-db-sync", detach=False)

    def _start_heat(self, record: dict[str, Any]) -> Callable[[], str | None]:
        container = self._run(["heat-all", "--config-file", str(self.work.conf_file)],
                              name=self.name, detach=True)
        record["container"] = self.name

        def alive() -> str | None:
            container.reload()
            if container.status in ("running", "created", "configured"):
                return None
            logs = b"".join(container.logs(tail=5)).decode(errors="replace")
            return f"container {self.name} is {container.status}:\n{logs}"

        return alive

    def _running(self, record: dict[str, Any]) -> bool:
        container = self._container()
        return container is not None and container.status == "running"

    def _describe(self, record: dict[str, Any]) -> str:
        return f"container {self.name}"

    def _stop(self, record: dict[str, Any]) -> list[str]:
        from podman import errors

        stopped = []
        for name in (self.name, f"{self.name}-db-sync"):
            try:
                container = self._podman().containers.get(name)
            except errors.NotFound:
                continue
            if container.status == "running":
                container.kill(signal="SIGKILL")
            container.remove(force=True, v=True)
            stopped.append(f"container {name}")
        return stopped
