"""A real private Keystone for tests: SQLite, fernet tokens, waitress on 127.0.0.1.

:class:`KeystoneServer` writes a ``keystone.conf`` into its state directory,
runs ``keystone-manage`` (``db_sync``, ``fernet_setup``, ``credential_setup``,
``bootstrap``), serves ``keystone.server.wsgi``'s public application with
waitress on a free port and waits until ``GET /v3`` answers.  Then
:meth:`KeystoneServer.add_user` creates projects and users with a role, over
Keystone's own API, as the bootstrap admin.

Keystone lives in a virtualenv of its own (``tools/setup-keystone.sh``),
found through ``TRIPLEO_FLOW_KEYSTONE_VENV`` (default
``~/.local/share/tripleo-flow/keystone-venv``).  The admin password is random
and reaches ``keystone-manage bootstrap`` through its environment, never its
command line.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import secrets
import signal
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from tests.swift_server import _die_with_parent, _free_port, _ini

VENV_ENV = "TRIPLEO_FLOW_KEYSTONE_VENV"
DEFAULT_VENV = Path.home() / ".local" / "share" / "tripleo-flow" / "keystone-venv"
INSTALL_HINT = (f"Build it with tools/setup-keystone.sh (or point {VENV_ENV} at a virtualenv "
                "with keystone 27 and waitress).")
REGION = "RegionOne"
ADMIN = "admin"

# Serves the public WSGI app.  keystone parses sys.argv as its own options, so the
# runner keeps only argv[0]; the configuration comes from OS_KEYSTONE_CONFIG_FILES.
_RUNNER = (
    "import sys, waitress\n"
    "port = int(sys.argv[1])\n"
    "sys.argv = sys.argv[:1]\n"
    "from keystone.server.wsgi import initialize_public_application\n"
    "waitress.serve(initialize_public_application(), host='127.0.0.1', port=port,\n"
    "               threads=4, ident='keystone')\n"
)


class KeystoneNotInstalled(RuntimeError):
    """The Keystone virtualenv is missing or incomplete."""


class KeystoneStartError(RuntimeError):
    """keystone-manage failed or the server never answered."""


@dataclass(frozen=True)
class User:
    """A Keystone user with a role on one project (domain Default)."""

    name: str
    password: str
    project: str
    role: str

    def auth_body(self) -> dict[str, Any]:
        """The body of ``POST /v3/auth/tokens`` for a project-scoped password token."""
        domain = {"id": "default"}
        return {"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": self.name, "domain": domain, "password": self.password}}},
            "scope": {"project": {"name": self.project, "domain": domain}}}}


def find_venv() -> Path:
    """The Keystone virtualenv.

    :raises KeystoneNotInstalled: naming tools/setup-keystone.sh when it is missing.
    """
    venv = Path(os.environ.get(VENV_ENV) or DEFAULT_VENV)
    missing = [name for name in ("python", "keystone-manage")
               if not os.access(venv / "bin" / name, os.X_OK)]
    if missing:
        raise KeystoneNotInstalled(f"No Keystone virtualenv at {venv} ({', '.join(missing)} "
                                   f"missing). {INSTALL_HINT}")
    return venv


class KeystoneServer:
    """A Keystone in ``state_dir``; :meth:`start`, then :meth:`stop`.

    :param state_dir: configuration, SQLite database, key repositories and logs.
    :param venv: Keystone's virtualenv (default: :func:`find_venv`).
    """

    def __init__(self, state_dir: Path, venv: Path | None = None) -> None:
        self.state_dir = state_dir
        self._venv = venv
        self.port = 0
        self.admin = User(ADMIN, secrets.token_urlsafe(16), ADMIN, ADMIN)
        self._proc: subprocess.Popen[bytes] | None = None
        self._admin_token: str | None = None

    @property
    def url(self) -> str:
        """The identity v3 endpoint (``auth_url`` for clients)."""
        return f"http://127.0.0.1:{self.port}/v3"

    @property
    def venv(self) -> Path:
        if self._venv is None:
            self._venv = find_venv()
        return self._venv

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc and self._proc.poll() is None else None

    def start(self, timeout: float = 60.0) -> None:
        """Configure, bootstrap and serve Keystone; wait until ``GET /v3`` answers.

        :raises KeystoneNotInstalled: when the virtualenv is missing.
        :raises KeystoneStartError: when keystone-manage fails or the server never answers.
        """
        venv = self.venv
        (self.state_dir / "log").mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self._write_config()
        try:
            # The key repositories do not touch the database: set them up alongside db_sync.
            self._manage(venv, ["db_sync"], ["fernet_setup", *self._owner()],
                         ["credential_setup", *self._owner()])
            self._use_wal()
            # keystonemiddleware looks for the internal endpoint unless told otherwise.
            self._manage(venv, ["bootstrap", "--bootstrap-region-id", REGION,
                                "--bootstrap-public-url", self.url,
                                "--bootstrap-internal-url", self.url])
            self._spawn(venv)
            self._wait_ready(timeout)
        except BaseException:
            self.stop()
            raise

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server (SIGTERM, then SIGKILL)."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    # -- identities ---------------------------------------------------------

    def token(self, user: User) -> str:
        """A new project-scoped token of ``user``."""
        response = requests.post(f"{self.url}/auth/tokens", json=user.auth_body(), timeout=30)
        if response.status_code != 201:
            raise KeystoneStartError(f"Keystone refused a token to {user.name}: "
                                     f"{response.status_code} {response.text[:500]}")
        return response.headers["X-Subject-Token"]

    def add_user(self, name: str, project: str, role: str) -> User:
        """Create ``project`` (if new) and user ``name`` with ``role`` on it."""
        project_id = self._ensure("projects", "project", project)
        user = User(name, secrets.token_urlsafe(16), project, role)
        created = self._admin("POST", "/users", json={"user": {
            "name": name, "password": user.password, "domain_id": "default"}})
        user_id = created["user"]["id"]
        roles = self._admin("GET", "/roles", params={"name": role})["roles"]
        if not roles:
            raise KeystoneStartError(f"Keystone has no role {role!r}")
        self._admin("PUT", f"/projects/{project_id}/users/{user_id}/roles/{roles[0]['id']}")
        return user

    def project_id(self, name: str) -> str:
        """The id of project ``name``."""
        return str(self._admin("GET", "/projects", params={"name": name})["projects"][0]["id"])

    def add_endpoint(self, service_type: str, name: str, url: str) -> None:
        """Register a service with a public endpoint in ``RegionOne`` (``url`` may hold
        ``%(project_id)s``)."""
        service = self._admin("POST", "/services",
                              json={"service": {"type": service_type, "name": name}})
        self._admin("POST", "/endpoints", json={"endpoint": {
            "service_id": service["service"]["id"], "interface": "public",
            "region_id": REGION, "url": url}})

    def _ensure(self, collection: str, kind: str, name: str) -> str:
        found = self._admin("GET", f"/{collection}", params={"name": name})[collection]
        if found:
            return str(found[0]["id"])
        created = self._admin("POST", f"/{collection}",
                              json={kind: {"name": name, "domain_id": "default"}})
        return str(created[kind]["id"])

    def _admin(self, method: str, path: str, **kwargs: Any) -> Any:
        if self._admin_token is None:
            self._admin_token = self.token(self.admin)
        response = requests.request(method, self.url + path, timeout=30,
                                    headers={"X-Auth-Token": self._admin_token}, **kwargs)
        if response.status_code >= 300:
            raise KeystoneStartError(f"Keystone {method} {path}: {response.status_code} "
                                     f"{response.text[:500]}")
        return response.json() if response.content else None

    # -- setup ----------------------------------------------------------------

    def _config_file(self) -> Path:
        return self.state_dir / "keystone.conf"

    def _write_config(self) -> None:
        state = self.state_dir
        fernet = str(state / "fernet-keys")
        self._config_file().write_text(_ini({
            "DEFAULT": {"log_file": str(state / "log" / "keystone.log")},
            "database": {"connection": f"sqlite:///{state / 'keystone.db'}"},
            "token": {"provider": "fernet"},
            "fernet_tokens": {"key_repository": fernet},
            "fernet_receipts": {"key_repository": fernet},
            "credential": {"key_repository": str(state / "credential-keys")},
            # bcrypt's fewest rounds: every password check is a test's wait, not a defence.
            "identity": {"password_hash_rounds": "4"},
        }))

    def _use_wal(self) -> None:
        """Switch the database to write-ahead logging (a setting kept in the file).

        In SQLite's default rollback-journal mode a commit waits until no connection
        holds a read lock.  Seen here: the file was unlocked between requests, yet the
        second ``POST /v3/users`` failed with "database is locked" after 5 s, even with
        one server thread (a connection of keystone's own pool still reading).  With
        WAL, readers never block the writer.
        """
        with contextlib.closing(sqlite3.connect(self.state_dir / "keystone.db")) as db:
            mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode != "wal":
            raise KeystoneStartError(f"SQLite refused WAL mode for {self.state_dir} ({mode})")

    @staticmethod
    def _owner() -> list[str]:
        """The key repositories' owner (required when running as root)."""
        return ["--keystone-user", pwd.getpwuid(os.getuid()).pw_name,
                "--keystone-group", grp.getgrgid(os.getgid()).gr_name]

    def _env(self) -> dict[str, str]:
        return {**os.environ, "PYTHONWARNINGS": "ignore",
                "OS_KEYSTONE_CONFIG_FILES": str(self._config_file())}

    def _manage(self, venv: Path, *commands: list[str]) -> None:
        """Run keystone-manage ``commands`` concurrently; raise when one fails."""
        env = dict(self._env(), OS_BOOTSTRAP_PASSWORD=self.admin.password)
        procs = [(argv, subprocess.Popen(
            [str(venv / "bin" / "keystone-manage"), "--config-file", str(self._config_file()),
             *argv], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, env=env)) for argv in commands]
        failures = []
        for argv, proc in procs:
            output, _ = proc.communicate()
            if proc.returncode != 0:
                failures.append(f"keystone-manage {argv[0]} exited {proc.returncode}: "
                                f"{output.decode(errors='replace')[-1500:]}")
        if failures:
            raise KeystoneStartError("\n".join(failures))

    def _spawn(self, venv: Path) -> None:
        log = open(self.state_dir / "log" / "server.log", "ab")  # noqa: SIM115
        try:
            self._proc = subprocess.Popen(
                [str(venv / "bin" / "python"), "-c", _RUNNER, str(self.port)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=self._env(), cwd=self.state_dir, preexec_fn=_die_with_parent)
        finally:
            log.close()

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last_error = "no answer yet"
        while time.monotonic() < deadline:
            assert self._proc is not None
            if self._proc.poll() is not None:
                raise KeystoneStartError(
                    f"Keystone exited with {self._proc.returncode}: {self._log_tail()}")
            try:
                if requests.get(self.url, timeout=5).status_code == 200:
                    return
            except requests.RequestException as exc:
                last_error = str(exc)
            time.sleep(0.1)
        raise KeystoneStartError(f"Keystone at {self.url} did not answer within {timeout:g} s "
                                 f"({last_error}); logs in {self.state_dir}/log")

    def _log_tail(self, size: int = 2000) -> str:
        text = ""
        for name in ("server.log", "keystone.log"):
            try:
                text += (self.state_dir / "log" / name).read_text(errors="replace")[-size:]
            except OSError:
                pass
        return text or "(no log)"

