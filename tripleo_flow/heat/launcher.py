"""The heat launcher port and what every launcher type shares.

A launcher runs one Heat for one heat-dir.  :class:`HeatLauncher` is the port;
:mod:`.native`, :mod:`.processes`, :mod:`.installed`, :mod:`.container` and
:mod:`.pod` are its adapters, built by :func:`tripleo_flow.heat.make_launcher`.

"Ready" means the API answers *and* the engine listens: heat-engine writes its
row in the ``service`` table only after its RPC servers started, so launchers
wait for a row that was not there before the launch and send no API request
that needs the engine before that (such a request would hang for the RPC
timeout).
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from tripleo_flow import exceptions
from tripleo_flow.heat import ports, render
from tripleo_flow.heat.render import endpoint_url
from tripleo_flow.heat.workdir import HeatDir


@dataclass(frozen=True)
class HeatEndpoint:
    """A ready Heat: where its API is and where its artifacts are."""

    heat_type: str
    endpoint: str
    heat_dir: str
    clouds_yaml: str
    heatrc: str
    #: What the launch cleaned up first (the leftovers of a killed owner), for the user.
    cleaned: tuple[str, ...] = ()
    #: Whether it started on the database a killed owner left (``launch(adopt=True)``).
    adopted: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class HeatStatus:
    """What a heat-dir's Heat is doing."""

    heat_type: str
    heat_dir: str
    running: bool
    endpoint: str | None
    api_answers: bool
    database: str | None
    dump: str | None
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class KillResult:
    """What a kill did: the dump it wrote (if any) and what it stopped."""

    heat_dir: str
    dump: str | None
    stopped: list[str]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class HeatLauncher(Protocol):
    """Runs, inspects and stops the Heat of one heat-dir."""

    heat_type: str

    def launch(self, restore_db: bool = False, owned_by: str | None = None,
               adopt: bool = False) -> HeatEndpoint:
        """Start Heat and return once it is ready; undo everything on failure.

        :param owned_by: what owns this Heat (``"deploy"``): it then stops when this
            process exits, however it exits (native: its process group; container and pod:
            a watcher removes them), and
            the next launch or kill cleans up after an owner that is gone.
        :param adopt: when the Heat left here was launched by an owner that is gone
            (a killed deploy being resumed) and its database outlived it, start on that
            database (dumped to heat-db-dump.sql and restored) instead of removing it
        """

    def kill(self, dump: bool = True, adopt: bool = False) -> KillResult:
        """Dump the database, wipe it and stop everything; safe to repeat.

        :param adopt: dump also the database of a Heat whose owner is gone (by default
            a killed owner's database is a half-done run, and the last good dump stays)
        """

    def status(self) -> HeatStatus:
        """Report whether Heat runs and answers."""

    def dump_db(self) -> Path:
        """Dump the running Heat's database to heat-db-dump.sql (checked)."""

    def restore_db(self) -> HeatEndpoint:
        """(Re)start Heat on a fresh database loaded from heat-db-dump.sql."""


# -- helpers shared by the adapters ----------------------------------------------

#: What heat-api (or heat-all) says when it gave up binding its port after 30 s.
BIND_FAILED = "Could not bind to"


def api_answers(host: str, port: int, timeout: float = 2.0) -> bool:
    """Whether Heat's version document answers at ``http://host:port/``."""
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/", timeout=timeout) as resp:
            return int(resp.status) < 500
    except urllib.error.HTTPError as exc:
        return exc.code in (300, 200)
    except (urllib.error.URLError, OSError):
        return False


def api_engines(host: str, port: int, timeout: float = 5.0) -> set[str] | None:
    """The engine ids the Heat API at ``host:port`` lists (``GET /services``), None
    when it cannot tell now (no answer, a server error).

    :raises PortTaken: what answers is not a Heat (a client error, not Heat's JSON)
    """
    url = endpoint_url(host, port) + "/services"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            body = json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        if exc.code >= 500:
            return None
        raise ports.PortTaken(host, port, f"GET /services answered {exc.code}") from exc
    except (urllib.error.URLError, OSError):
        return None
    except ValueError as exc:
        raise ports.PortTaken(host, port, "GET /services answered no JSON") from exc
    services = body.get("services") if isinstance(body, dict) else None
    if not isinstance(services, list):
        raise ports.PortTaken(host, port, "GET /services answered no service list")
    return {str(s.get("id")) for s in services if isinstance(s, dict)}


def wait_ready(host: str, port: int, engines_before: set[str], engines: Callable[[], set[str]],
               alive: Callable[[], str | None], timeout: float, want_engines: int = 1,
               log_file: Path | None = None) -> None:
    """Wait until the API answers, ``want_engines`` new engines registered and the API
    lists them (it is this launch's Heat, not another program on its port).

    :param alive: returns None while the Heat processes run, else why they stopped.
    :raises PortTaken: another program listens on ``port`` (:mod:`.ports`).
    :raises HeatError: when Heat stopped or did not get ready within ``timeout``.
    """
    deadline = time.monotonic() + timeout
    delay = 0.05
    api_ok = False
    new: set[str] = set()
    while True:
        gone = alive()
        if gone:
            if BIND_FAILED in gone:  # heat-api gave up binding its port: another has it
                raise ports.PortTaken(host, port, "Heat's API could not bind it")
            raise exceptions.HeatError(f"Heat stopped while starting: {gone}.{_see(log_file)}")
        api_ok = api_ok or api_answers(host, port, timeout=1.0)
        if api_ok:
            new = engines() - engines_before
            if len(new) >= want_engines:
                listed = api_engines(host, port)
                if listed is not None and listed & new:
                    return
                if listed is not None:
                    raise ports.PortTaken(host, port, "a Heat listing other engines")
        if time.monotonic() > deadline:
            waiting = ("the API to answer" if not api_ok else
                       f"the engine to listen ({len(new)} of {want_engines} engines)")
            raise exceptions.HeatError(
                f"Heat was not ready after {timeout:g} s (waiting for {waiting}).{_see(log_file)} "
                "Raise [heat] api_timeout if the machine is just slow."
            )
        time.sleep(delay)
        delay = min(delay * 1.5, 0.1)  # a look costs a few ms: readiness seen soon


def _see(log_file: Path | None) -> str:
    return f" See {log_file}." if log_file else ""


def write_client_files(work: HeatDir, endpoint: str, clouds_yaml: Path) -> None:
    """Write heatrc, the heat-dir's clouds.yaml and the ``heat`` entry of ``clouds_yaml``."""
    entry = render.clouds_entry(endpoint)
    work.write_private(work.heatrc, render.heatrc(endpoint))
    work.write_private(work.clouds_yaml, render.merge_clouds_yaml("", "heat", entry))
    if clouds_yaml != work.clouds_yaml:
        clouds_yaml.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        existing = clouds_yaml.read_text() if clouds_yaml.exists() else ""
        text = render.merge_clouds_yaml(existing, "heat", entry)
        tmp = clouds_yaml.with_name(f".{clouds_yaml.name}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(tmp, clouds_yaml)


def write_heat_files(work: HeatDir, settings: render.HeatSettings) -> None:
    """Write heat.conf, api-paste.ini and token_file.json (0600) for ``settings``."""
    work.ensure()
    now = datetime.datetime.now(datetime.UTC)
    work.write_private(work.paste_file, render.api_paste_ini())
    work.write_private(work.token_file, render.token_file(settings.host, settings.port, now))
    work.write_private(work.conf_file, render.heat_conf(settings))


def log_tail(path: Path, lines: int = 5) -> str:
    """The last ``lines`` lines of ``path`` (for error messages)."""
    with contextlib.suppress(OSError):
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    return ""
