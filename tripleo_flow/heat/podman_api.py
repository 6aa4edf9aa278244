"""A podman API client over a socket, starting ``podman system service`` when needed.

crun does not work on these hosts and runc needs ulimits at or below the
host's, and podman 4.3 has no per-call ulimit flag for pods: so the service
tripleo-flow starts reads a containers.conf of the project's own (runtime runc,
default ulimits) through ``CONTAINERS_CONF`` (/etc is never edited).  The
service exits by itself after ``IDLE_SECONDS`` without requests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions

IDLE_SECONDS = 300
CONTAINERS_CONF = """\
# Written by tripleo-flow for its own podman service; /etc is left alone.
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]

[engine]
runtime = "runc"
"""


def _client(url: str) -> Any:
    from podman import PodmanClient

    return PodmanClient(base_url=url, timeout=600)


def _answers(url: str) -> bool:
    try:
        with _client(url) as client:
            return bool(client.ping())
    except Exception:  # noqa: BLE001 - any failure means "not answering"
        return False


def connect(url: str | None, state_dir: Path, timeout: float = 30.0) -> Any:
    """A ``PodmanClient`` on ``url``, or on tripleo-flow's own service in ``state_dir``."""
    try:
        import podman  # noqa: F401
    except ImportError as exc:
        raise exceptions.HeatNotInstalled("The podman Python bindings",
                                          "pip install podman") from exc
    if url:
        if not _answers(url):
            raise exceptions.BackendUnavailable(
                f"The podman API at {url} does not answer. Start it with: podman system "
                f"service --time=0 {url}, or unset [heat] podman_url."
            )
        return _client(url)
    state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    sock = state_dir / "podman.sock"
    own = f"unix://{sock}"
    if _answers(own):
        return _client(own)
    binary = shutil.which("podman")
    if not binary:
        raise exceptions.HeatNotInstalled("podman", "apt-get install podman runc")
    conf = state_dir / "containers.conf"
    conf.write_text(CONTAINERS_CONF)
    if sock.exists():
        sock.unlink()
    log = os.open(state_dir / "podman-service.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                  0o600)
    try:
        subprocess.Popen([binary, "system", "service", f"--time={IDLE_SECONDS}", own],
                         env={**os.environ, "CONTAINERS_CONF": str(conf)},
                         stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                         start_new_session=True)
    finally:
        os.close(log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _answers(own):
            return _client(own)
        time.sleep(0.1)
    raise exceptions.BackendUnavailable(
        f"podman system service did not answer on {sock}; see "
        f"{state_dir / 'podman-service.log'}."
    )
