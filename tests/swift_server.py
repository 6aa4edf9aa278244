"""A real one-machine Swift for tests, benchmarks and trying tripleo-flow out.

:class:`SwiftServer` builds rings with one replica and one device, writes
config files for the account, container, object and proxy servers, starts
them directly (``workers = 0``, bound to 127.0.0.1 on free ports) and waits
until the proxy authenticates a request.  Everything lives in one state
directory; :meth:`SwiftServer.stop` ends the four processes it started, and
on Linux they also get SIGTERM when the thread that started them dies (a
killed test run leaves no Swift behind).

The proxy runs tempauth (user ``test:tester``, key ``testing``) or, given a
:class:`KeystoneAuth`, keystonemiddleware's ``authtoken`` and Swift's
``keystoneauth`` against that Keystone (keystonemiddleware must then be
installed in Swift's venv), object versioning, bulk (extract-archive and
bulk-delete) and an in-process cache (:mod:`swift_proxy_cache`) so object
requests skip repeated account and container lookups.

The Swift binaries come from the directory named by ``TRIPLEO_FLOW_SWIFT_BIN``
(default: the directory of ``swift-proxy-server`` on ``PATH``)::

    python3 -m venv /opt/swift && /opt/swift/bin/pip install swift==2.38.3
    export TRIPLEO_FLOW_SWIFT_BIN=/opt/swift/bin

Standalone: ``python tests/swift_server.py --state-dir DIR`` prints the auth
URL and credentials and runs until interrupted.
"""

from __future__ import annotations

import argparse
import ctypes
import getpass
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

BIN_ENV = "TRIPLEO_FLOW_SWIFT_BIN"
USER = "test:tester"
KEY = "testing"
#: tempauth accounts besides ``test``, one per test that asks for an empty account
#: (:meth:`SwiftServer.new_account`): emptying a used one costs a DELETE per object
#: version, half a minute after a THT plan's tests.
SPARE_ACCOUNTS = 1500
INSTALL_HINT = (
    f"Install Swift in a venv and point {BIN_ENV} at its bin directory: "
    "python3 -m venv /opt/swift && /opt/swift/bin/pip install swift==2.38.3 && "
    f"export {BIN_ENV}=/opt/swift/bin"
)
_SERVERS = ("account", "container", "object")
_PROXY_PIPELINE = (
    "catch_errors gatekeeper healthcheck proxy-logging cache listing_formats bulk "
    "{auth} container-quotas copy slo dlo versioned_writes symlink proxy-logging proxy-server"
)
RESELLER_PREFIX = "AUTH_"


@dataclass(frozen=True)
class KeystoneAuth:
    """Keystone settings of a proxy that authenticates with Keystone.

    :param auth_url: Keystone's v3 URL.
    :param username: the proxy's service user (validates the clients' tokens).
    :param password: its password.
    :param project_name: its project.
    :param operator_roles: roles that make a user the owner of their project's account.
    """

    auth_url: str
    username: str
    password: str
    project_name: str
    operator_roles: tuple[str, ...] = ("admin", "member")

    def filters(self) -> dict[str, dict[str, str]]:
        return {
            "filter:authtoken": {
                "paste.filter_factory": "keystonemiddleware.auth_token:filter_factory",
                "www_authenticate_uri": self.auth_url, "auth_url": self.auth_url,
                "auth_type": "password", "username": self.username,
                "password": self.password, "project_name": self.project_name,
                "user_domain_id": "default", "project_domain_id": "default",
                "interface": "public", "delay_auth_decision": "true",
            },
            "filter:keystoneauth": {
                "use": "egg:swift#keystoneauth", "reseller_prefix": RESELLER_PREFIX,
                "operator_roles": ", ".join(self.operator_roles),
            },
        }


class SwiftNotInstalled(RuntimeError):
    """The Swift server binaries cannot be found."""


class SwiftStartError(RuntimeError):
    """A Swift process failed to start or the proxy never answered."""


def find_bin_dir() -> Path:
    """The directory holding ``swift-proxy-server`` and friends.

    :raises SwiftNotInstalled: with instructions when Swift is missing.
    """
    configured = os.environ.get(BIN_ENV)
    if configured:
        bin_dir = Path(configured)
    else:
        found = shutil.which("swift-proxy-server")
        if not found:
            raise SwiftNotInstalled(f"swift-proxy-server is not on PATH and {BIN_ENV} is "
                                    f"not set. {INSTALL_HINT}")
        bin_dir = Path(found).parent
    missing = [name for name in ("swift-ring-builder", "swift-proxy-server",
                                 "swift-account-server", "swift-container-server",
                                 "swift-object-server")
               if not os.access(bin_dir / name, os.X_OK)]
    if missing:
        raise SwiftNotInstalled(f"{', '.join(missing)} not found in {bin_dir}. {INSTALL_HINT}")
    return bin_dir


def _interpreter(script: Path) -> str:
    """The Python that runs ``script`` (from its ``#!`` line)."""
    with open(script, "rb") as handle:
        first = handle.readline().decode(errors="replace")
    if first.startswith("#!") and "python" in first:
        return first[2:].strip().split()[0]
    return sys.executable


def _die_with_parent() -> None:
    """In the child before exec: get SIGTERM when the parent thread dies (Linux)."""
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ini(sections: dict[str, dict[str, str]]) -> str:
    lines = []
    for section, options in sections.items():
        lines.append(f"[{section}]")
        lines.extend(f"{key} = {value}" for key, value in options.items())
        lines.append("")
    return "\n".join(lines)


class SwiftServer:
    """One-machine Swift in ``state_dir``; use as a context manager.

    :param state_dir: directory for rings, configs, data and logs (created;
        a fresh temporary directory when None, removed again on stop).
    :param bin_dir: directory of the Swift binaries (default: :func:`find_bin_dir`).
    :param log_level: Swift log level written to ``state_dir/log/*.log``.
    :param devices_dir: where the object, container and account data go
        (default ``state_dir/srv``); it must support user xattrs.
    :param keystone: authenticate with this Keystone instead of tempauth.
    """

    def __init__(self, state_dir: str | os.PathLike[str] | None = None,
                 bin_dir: str | os.PathLike[str] | None = None,
                 log_level: str = "WARNING",
                 devices_dir: str | os.PathLike[str] | None = None,
                 keystone: KeystoneAuth | None = None) -> None:
        self.keystone = keystone
        self._devices = Path(devices_dir) if devices_dir is not None else None
        self._own_dir = state_dir is None
        self.state_dir = Path(state_dir) if state_dir is not None else None
        self._bin_dir = Path(bin_dir) if bin_dir is not None else None
        self.log_level = log_level
        self.ports: dict[str, int] = {}
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._accounts_given = 0

    # -- public ------------------------------------------------------------

    @property
    def auth_url(self) -> str:
        """Where clients authenticate: tempauth in the proxy, or Keystone."""
        if self.keystone is not None:
            return self.keystone.auth_url
        return f"http://127.0.0.1:{self.ports['proxy']}/auth/v1.0"

    @property
    def endpoint_template(self) -> str:
        """The object-store URL for Keystone's catalog (``%(project_id)s`` filled in by
        Keystone)."""
        return f"http://127.0.0.1:{self.ports['proxy']}/v1/{RESELLER_PREFIX}%(project_id)s"

    @property
    def user(self) -> str:
        return USER

    @property
    def key(self) -> str:
        return KEY

    def new_account(self) -> str | None:
        """The user of a tempauth account no one used yet (key :attr:`key`), or None
        when they are all given out or the proxy authenticates with Keystone."""
        if self.keystone is not None or self._accounts_given >= SPARE_ACCOUNTS:
            return None
        self._accounts_given += 1
        return f"t{self._accounts_given - 1}:tester"

    @property
    def bin_dir(self) -> Path:
        if self._bin_dir is None:
            self._bin_dir = find_bin_dir()
        return self._bin_dir

    @property
    def pids(self) -> list[int]:
        """Process ids of the running Swift servers."""
        return list(self.server_pids.values())

    @property
    def server_pids(self) -> dict[str, int]:
        """Process id of each running Swift server by name (``proxy``, ``object``,
        ``container``, ``account``)."""
        return {name: proc.pid for name, proc in self._procs.items() if proc.poll() is None}

    @property
    def devices(self) -> Path:
        """The Swift ``devices`` directory (holds device ``d1``)."""
        if self._devices is not None:
            return self._devices
        assert self.state_dir is not None
        return self.state_dir / "srv"

    def env_for_cli(self) -> dict[str, str]:
        """Environment variables for the ``swift`` CLI (ST_AUTH, ST_USER, ST_KEY)."""
        return {"ST_AUTH": self.auth_url, "ST_USER": USER, "ST_KEY": KEY}

    def start(self, timeout: float = 30.0) -> None:
        """Build rings and configs, start the servers and wait for the proxy.

        :raises SwiftNotInstalled: when the binaries are missing.
        :raises SwiftStartError: when a server dies or the proxy never answers.
        """
        bin_dir = self.bin_dir
        if self.keystone is not None:
            self._check_keystonemiddleware(bin_dir)
        if self.state_dir is None:
            self.state_dir = Path(tempfile.mkdtemp(prefix="tripleo-flow-swift-"))
        self.state_dir.mkdir(parents=True, exist_ok=True)
        for sub in ("etc", "log", "run"):
            (self.state_dir / sub).mkdir(parents=True, exist_ok=True)
        (self.devices / "d1").mkdir(parents=True, exist_ok=True)
        self.ports = {name: _free_port() for name in (*_SERVERS, "proxy")}
        try:
            self._write_configs()
            self._build_rings(bin_dir)
            for name in (*_SERVERS, "proxy"):
                self._spawn(bin_dir, name)
            self._wait_ready(timeout)
        except BaseException:
            self.stop()
            raise

    def stop(self, timeout: float = 10.0) -> None:
        """Stop every process this server started (SIGTERM, then SIGKILL)."""
        for proc in self._procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for proc in self._procs.values():
            try:
                proc.wait(max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._procs.clear()
        if self._own_dir and self.state_dir is not None:
            shutil.rmtree(self.state_dir, ignore_errors=True)
            self.state_dir = None

    def __enter__(self) -> SwiftServer:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # -- setup -------------------------------------------------------------

    def _etc(self) -> Path:
        assert self.state_dir is not None
        return self.state_dir / "etc"

    def _write_configs(self) -> None:
        assert self.state_dir is not None
        etc = self._etc()
        (etc / "swift.conf").write_text(_ini({
            "swift-hash": {"swift_hash_path_prefix": "tripleo-flow",
                           "swift_hash_path_suffix": "tripleo-flow"},
            "storage-policy:0": {"name": "default", "default": "yes"},
        }))
        common = {
            "bind_ip": "127.0.0.1",
            "workers": "0",
            "swift_dir": str(etc),
            "user": getpass.getuser(),
            "log_level": self.log_level,
            "log_facility": "LOG_LOCAL0",
            "log_address": str(self.state_dir / "run" / "no-syslog"),
        }
        for name in _SERVERS:
            default = dict(common, bind_port=str(self.ports[name]),
                           devices=str(self.devices), mount_check="false")
            if name == "object":
                default["disable_fallocate"] = "true"
            (etc / f"{name}-server.conf").write_text(_ini({
                "DEFAULT": default,
                "pipeline:main": {"pipeline": f"{name}-server"},
                f"app:{name}-server": {"use": f"egg:swift#{name}"},
            }))
        filters = {name: {"use": f"egg:swift#{name.replace('-', '_')}"} for name in (
            "catch_errors", "gatekeeper", "healthcheck", "proxy-logging", "listing_formats",
            "bulk", "copy", "slo", "dlo", "symlink")}
        if self.keystone is not None:
            auth = "authtoken keystoneauth"
            auth_filters = self.keystone.filters()
        else:
            auth = "tempauth"
            users = {"user_test_tester": f"{KEY} .admin"}
            users.update({f"user_t{n}_tester": f"{KEY} .admin" for n in range(SPARE_ACCOUNTS)})
            auth_filters = {"filter:tempauth": {"use": "egg:swift#tempauth", **users}}
        proxy_conf = etc / "proxy-server.conf"
        proxy_conf.touch(mode=0o600)  # the Keystone filter holds a password
        proxy_conf.write_text(_ini({
            "DEFAULT": dict(common, bind_port=str(self.ports["proxy"])),
            "pipeline:main": {"pipeline": _PROXY_PIPELINE.format(auth=auth)},
            "app:proxy-server": {"use": "egg:swift#proxy", "account_autocreate": "true"},
            **auth_filters,
            "filter:versioned_writes": {"use": "egg:swift#versioned_writes",
                                        "allow_object_versioning": "true"},
            "filter:cache": {"paste.filter_factory": "swift_proxy_cache:filter_factory"},
            "filter:container-quotas": {"use": "egg:swift#container_quotas"},
            **{f"filter:{name}": opts for name, opts in filters.items()},
        }))

    def _build_rings(self, bin_dir: Path) -> None:
        # One interpreter run builds the three rings with swift's own RingBuilder
        # (what swift-ring-builder create/add/rebalance do; 9 CLI runs take ~6 s).
        script = (
            "import sys\n"
            "from swift.common.ring import RingBuilder\n"
            "for path, port in zip(sys.argv[1::2], sys.argv[2::2]):\n"
            "    b = RingBuilder(4, 1, 1)\n"
            "    b.add_dev({'region': 1, 'zone': 1, 'ip': '127.0.0.1', 'port': int(port),\n"
            "               'device': 'd1', 'weight': 1.0, 'meta': ''})\n"
            "    b.rebalance()\n"
            "    b.save(path + '.builder')\n"
            "    b.get_ring().save(path + '.ring.gz')\n"
        )
        argv = [_interpreter(bin_dir / "swift-ring-builder"), "-c", script]
        for name in _SERVERS:
            argv += [str(self._etc() / name), str(self.ports[name])]
        result = subprocess.run(argv, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise SwiftStartError(f"Building the Swift rings failed: {result.stderr[-2000:]}")

    def _spawn(self, bin_dir: Path, name: str) -> None:
        assert self.state_dir is not None
        env = dict(os.environ)
        if name == "proxy":
            here = str(Path(__file__).resolve().parent)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
        log = open(self.state_dir / "log" / f"{name}.log", "ab")  # noqa: SIM115
        try:
            self._procs[name] = subprocess.Popen(
                [str(bin_dir / f"swift-{name}-server"), str(self._etc() / f"{name}-server.conf"),
                 "--verbose"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                cwd=self.state_dir, preexec_fn=_die_with_parent)
        finally:
            log.close()

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last_error = "no answer yet"
        while time.monotonic() < deadline:
            for name, proc in self._procs.items():
                if proc.poll() is not None:
                    raise SwiftStartError(
                        f"swift-{name}-server exited with {proc.returncode}: "
                        f"{self._log_tail(name)}")
            try:
                if self._probe():
                    return
            except (OSError, urllib.error.URLError, ValueError) as exc:
                last_error = str(exc)
            time.sleep(0.1)
        raise SwiftStartError(f"Swift proxy at {self.auth_url} did not answer within "
                              f"{timeout:g} s ({last_error}); logs in {self.state_dir}/log")

    def _check_keystonemiddleware(self, bin_dir: Path) -> None:
        python = _interpreter(bin_dir / "swift-proxy-server")
        found = subprocess.run([python, "-c", "import keystonemiddleware.auth_token"],
                               capture_output=True, check=False)
        if found.returncode != 0:
            raise SwiftNotInstalled(
                f"keystonemiddleware is not installed in Swift's venv ({python}), so the "
                f"proxy cannot authenticate with Keystone: {python} -m pip install "
                "keystonemiddleware (tools/bootstrap.sh --tests does).")

    def _probe(self) -> bool:
        for name in _SERVERS:
            with socket.create_connection(("127.0.0.1", self.ports[name]), timeout=1):
                pass
        if self.keystone is not None:
            # No token here: the proxy answers its healthcheck, and every server listens.
            url = f"http://127.0.0.1:{self.ports['proxy']}/healthcheck"
            with urllib.request.urlopen(url, timeout=5) as response:
                return bool(response.status == 200)
        request = urllib.request.Request(self.auth_url,
                                         headers={"X-Auth-User": USER, "X-Auth-Key": KEY})
        with urllib.request.urlopen(request, timeout=5) as response:
            storage_url = response.headers["X-Storage-Url"]
            token = response.headers["X-Auth-Token"]
        # A container round trip proves the account and container servers answer.
        probe = f"{storage_url}/.tripleo-flow-probe"
        for method in ("PUT", "DELETE"):
            req = urllib.request.Request(probe, method=method, headers={"X-Auth-Token": token})
            with urllib.request.urlopen(req, timeout=5):
                pass
        return True

    def _log_tail(self, name: str, size: int = 2000) -> str:
        assert self.state_dir is not None
        try:
            return (self.state_dir / "log" / f"{name}.log").read_text(errors="replace")[-size:]
        except OSError:
            return "(no log)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run a one-machine Swift in the foreground.")
    parser.add_argument("--state-dir", required=True, help="rings, configs, data and logs")
    parser.add_argument("--log-level", default="WARNING")
    parser.add_argument("--devices-dir", help="data directory (default STATE_DIR/srv); "
                        "must support user xattrs")
    args = parser.parse_args(argv)
    server = SwiftServer(args.state_dir, log_level=args.log_level,
                         devices_dir=args.devices_dir)
    stop = False

    def _stop(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    try:
        server.start()
    except (SwiftNotInstalled, SwiftStartError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    try:
        print(json.dumps({"auth_url": server.auth_url, "user": USER, "key": KEY,
                          "state_dir": str(server.state_dir)}), flush=True)
        print(f"export ST_AUTH={server.auth_url} ST_USER={USER} ST_KEY={KEY}", flush=True)
        while not stop:
            time.sleep(0.5)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
