"""A podman API client over a socket, starting ``podman system service`` when needed.

crun does not work on these hosts and runc needs ulimits at or below the
host's, and podman 4.3 has no per-call ulimit flag for pods: so the service
tripleo-flow starts reads a containers.conf of the project's own (runtime runc,
default ulimits) through ``CONTAINERS_CONF`` (/etc is never edited).  The
service exits by itself after ``IDLE_SECONDS`` without requests.

Run as ``python -m tripleo_flow.heat.podman_api --state-dir DIR --label
KEY=VALUE [--url URL]``, it removes the pods and containers that carry the
label: the cleanup that the watcher of an owned launch runs once its owner is
gone (see :mod:`.container`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions

IDLE_SECONDS = 300
#: The label key that marks the pods and containers of one owned launch.
LAUNCH_LABEL = "tripleo-flow.launch"
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


# -- removal ---------------------------------------------------------------------
# heat-all ignores SIGTERM and a forced removal stops with SIGTERM and a grace
# period: so everything is SIGKILLed first, then removed.


def kill_and_remove_container(container: Any) -> None:
    """SIGKILL ``container`` when it runs, then remove it and its anonymous volumes."""
    if container.status == "running":
        container.kill(signal="SIGKILL")
    container.remove(force=True, v=True)


def kill_and_remove_pod(pod: Any) -> None:
    """SIGKILL the containers of ``pod`` (some may have stopped), then remove it."""
    from podman import errors

    with contextlib.suppress(errors.APIError):
        pod.kill(signal="SIGKILL")
    pod.remove(force=True)


def remove_labelled(client: Any, label: str) -> list[str]:
    """Remove the pods, then the containers, labelled ``label`` (``KEY=VALUE``).

    :returns: what was removed, as "pod NAME" and "container NAME".
    """
    from podman import errors

    removed = []
    for pod in client.pods.list(filters={"label": label}):
        with contextlib.suppress(errors.NotFound):
            kill_and_remove_pod(pod)
            removed.append(f"pod {pod.name}")
    for container in client.containers.list(all=True, filters={"label": label}):
        with contextlib.suppress(errors.NotFound):
            container.reload()  # a list entry has no full inspect data (its state)
            kill_and_remove_container(container)
            removed.append(f"container {container.name}")
    return removed


def remove_launch(url: str | None, state_dir: Path, label: str, settle: float = 1.0,
                  passes: int = 10) -> list[str]:
    """Remove what carries ``label``, until a pass ``settle`` seconds after the last finds nothing.

    The owner may have died with a request in flight that the service still
    completes (a container created after the first pass looked), hence the
    later passes.
    """
    removed: list[str] = []
    with connect(url, state_dir) as client:
        for number in range(passes):
            found = remove_labelled(client, label)
            removed.extend(found)
            if not found and number:
                break
            time.sleep(settle)
    return removed


def main(argv: list[str]) -> int:
    """The watcher's cleanup (see the module docstring); prints what it removed."""
    parser = argparse.ArgumentParser(prog="python -m tripleo_flow.heat.podman_api",
                                     description="Remove the pods and containers of a label.")
    parser.add_argument("--url", default="", help="podman API URL (default: our own service)")
    parser.add_argument("--state-dir", required=True, type=Path,
                        help="directory of tripleo-flow's own podman service")
    parser.add_argument("--label", required=True, help="KEY=VALUE")
    args = parser.parse_args(argv)
    try:
        removed = remove_launch(args.url or None, args.state_dir, args.label)
    except Exception as exc:  # noqa: BLE001 - the log of a detached process is all there is
        sys.stderr.write(f"Removing what carries {args.label} failed: {exc}\n")
        return 1
    for item in removed:
        sys.stdout.write(f"removed {item} ({args.label})\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
