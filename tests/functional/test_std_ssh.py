"""std.ssh against a real OpenSSH server (Debian's openssh-server, started by the test
on loopback with its own host key and authorized key)."""

from __future__ import annotations

import getpass
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.engine_helpers import ACTIONS, Host
from tests.unit.engine.test_mistral_conformance import Run
from tripleo_flow import exceptions
from tripleo_flow.actions import std_remote
from tripleo_flow.actions.base import Rerun

SSHD = Path("/usr/sbin/sshd")


@dataclass
class Sshd:
    port: int
    key_file: Path
    user: str
    log: Path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def sshd(tmp_path: Path) -> Iterator[Sshd]:
    if not SSHD.exists():
        pytest.fail("sshd is not installed: run tools/run-tests.sh (apt-get install "
                    "openssh-server)")
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # its privilege separation dir
    home = tmp_path / "sshd"
    home.mkdir()
    for name in ("host_key", "user_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(home / name)],
                       check=True)
    (home / "authorized_keys").write_text((home / "user_key.pub").read_text())
    port = _free_port()
    config = home / "sshd_config"
    config.write_text("\n".join([
        f"Port {port}", "ListenAddress 127.0.0.1", f"HostKey {home / 'host_key'}",
        f"PidFile {home / 'sshd.pid'}", f"AuthorizedKeysFile {home / 'authorized_keys'}",
        "StrictModes no", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
        "PermitRootLogin prohibit-password", "UsePAM no",
        "LogLevel VERBOSE", ""]))  # the log names each login (std.ssh_proxied)
    proc = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(config)],
                            stdout=subprocess.DEVNULL, stderr=(home / "log").open("w"))
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"sshd did not start: {(home / 'log').read_text()}")
                time.sleep(0.05)
        yield Sshd(port, home / "user_key", getpass.getuser(), home / "log")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", {**ACTIONS, "std.ssh": std_remote.Ssh,
                                    "std.ssh_proxied": std_remote.SshProxied})
    yield host
    host._session.close_workflows()


SSH = """
    wf:
      input:
        - port
        - user
        - key_file: null
        - key: null
        - cmd: "echo hello; echo warning >&2"
        - hosts: 127.0.0.1
        - keep: false
      output:
        out: <% $.out %>
      tasks:
        run:
          action: std.ssh
          input:
            cmd: <% $.cmd %>
            host: <% $.hosts %>
            username: <% $.user %>
            port: <% $.port %>
            private_key_filename: <% $.key_file %>
            private_key: <% $.key %>
            return_result_on_error: <% $.keep %>
          publish:
            out: <% task().result %>
    """


def _inputs(sshd: Sshd, **more: object) -> dict[str, object]:
    return {"port": sshd.port, "user": sshd.user, "key_file": str(sshd.key_file), **more}


def test_a_command_runs_over_ssh(host: Host, tmp_path: Path, sshd: Sshd) -> None:
    run = Run(host, tmp_path, SSH, **_inputs(sshd))
    assert run.state == "SUCCESS", run.error
    assert run.output == {"out": "hello\n"}


def test_the_key_given_as_text_and_a_list_of_hosts(host: Host, tmp_path: Path,
                                                   sshd: Sshd) -> None:
    run = Run(host, tmp_path, SSH, **_inputs(sshd, key_file=None,
                                             key=sshd.key_file.read_text(),
                                             hosts=["127.0.0.1", "localhost"],
                                             cmd="hostname >/dev/null && echo ok"))
    assert run.state == "SUCCESS", run.error
    assert run.output == {"out": ["ok\n", "ok\n"]}
    assert run.published["run"]["out"] == ["ok\n", "ok\n"]


def test_a_failing_command_fails_the_task_or_is_returned(host: Host, tmp_path: Path,
                                                         sshd: Sshd) -> None:
    run = Run(host, tmp_path, SSH, **_inputs(sshd, cmd="echo out; echo bad >&2; exit 3"))
    assert run.state == "ERROR" and run.error is not None
    assert "std.ssh command 'echo out; echo bad >&2; exit 3' on 127.0.0.1: exited with 3: " \
           "bad" in str(run.error)
    kept = Run(host, tmp_path / "kept", SSH,
               **_inputs(sshd, cmd="echo out; echo bad >&2; exit 3", keep=True))
    assert kept.state == "SUCCESS"
    assert kept.output == {"out": {"stdout": "out\n", "stderr": "bad\n", "exit_code": 3}}


def test_a_wrong_key_cannot_log_in(host: Host, tmp_path: Path, sshd: Sshd) -> None:
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)],
                   check=True)
    run = Run(host, tmp_path, SSH, **_inputs(sshd, key_file=str(other)))
    assert run.state == "ERROR" and run.error is not None
    assert "on 127.0.0.1: could not connect or log in" in str(run.error)


def test_a_host_that_reads_as_an_option_is_refused(host: Host, tmp_path: Path,
                                                   sshd: Sshd) -> None:
    run = Run(host, tmp_path, SSH, **_inputs(sshd, hosts="-oProxyCommand=touch /tmp/x"))
    assert run.state == "ERROR" and run.error is not None
    assert "std.ssh 'host' must be a name without spaces, not starting with '-'" \
        in str(run.error)


def test_an_api_user_cannot_run_ssh_unless_the_server_allows_it(
        host: Host, tmp_path: Path, sshd: Sshd) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / "api.yaml"
    path.write_text("version: '2.0'\nname: api\nworkflows:\n" + "\n".join(
        "  " + line[4:] for line in SSH.strip("\n").splitlines()) + "\n")
    host.workbooks.create(path)
    inputs = _inputs(sshd, cmd=f"touch {marker}")
    with pytest.raises(exceptions.WorkflowFailed, match=r"\[api\] allow_outbound_actions"):
        host.executions.create("api.wf", inputs, api_user=True)
    assert not marker.exists()
    host._session.close_workflows()
    host.conf.set_override("allow_outbound_actions", True, group="api")
    assert host.executions.create("api.wf", inputs, api_user=True).state == "SUCCESS"
    assert marker.exists()


def test_a_second_run_runs_the_command_again(host: Host, tmp_path: Path, sshd: Sshd) -> None:
    """std.ssh is Rerun.CALLER: a resumed task runs its command once more (what that
    does is the command's own semantics; ``safe-rerun: false`` refuses it)."""
    assert std_remote.Ssh.rerun is Rerun.CALLER
    log = tmp_path / "log"
    for attempt in range(2):
        run = Run(host, tmp_path / str(attempt), SSH, **_inputs(sshd, cmd=f"echo x >> {log}"))
        assert run.state == "SUCCESS"
    assert log.read_text() == "x\nx\n"


# -- std.ssh_proxied: through a gateway (the same sshd serves as gateway and target) --

PROXIED = """
    wf:
      input:
        - port
        - user
        - key_file
        - gateway_port
        - gateway: 127.0.0.1
        - cmd: "echo through"
        - proxy_command: null
      output:
        out: <% $.out %>
      tasks:
        run:
          action: std.ssh_proxied
          input:
            cmd: <% $.cmd %>
            host: 127.0.0.1
            username: <% $.user %>
            port: <% $.port %>
            private_key_filename: <% $.key_file %>
            gateway_host: <% $.gateway %>
            gateway_port: <% $.gateway_port %>
            proxy_command: <% $.proxy_command %>
          publish:
            out: <% task().result %>
    """


def test_a_command_runs_through_a_gateway(host: Host, tmp_path: Path, sshd: Sshd) -> None:
    """Mistral's std.ssh_proxied: ssh to the gateway, a tunnel from there to the host."""
    run = Run(host, tmp_path, PROXIED, **_inputs(sshd, gateway_port=sshd.port))
    assert run.state == "SUCCESS", run.error
    assert run.output == {"out": "through\n"}
    # two logins: the gateway's, then the target's through the tunnel (std.ssh: one)
    assert sshd.log.read_text().count("Accepted publickey") == 2


def test_a_gateway_that_does_not_answer_fails_the_task(host: Host, tmp_path: Path,
                                                       sshd: Sshd) -> None:
    run = Run(host, tmp_path, PROXIED, **_inputs(sshd, gateway_port=_free_port()))
    assert run.state == "ERROR" and run.error is not None
    assert "could not connect or log in" in str(run.error)


@pytest.mark.parametrize(("name", "value"), [
    ("gateway", "gw;touch /tmp/x"), ("gateway", "-oProxyCommand=x"), ("gateway", "gw%h"),
    ("proxy_command", "nc %h %p")])
def test_a_gateway_a_shell_would_read_is_refused(host: Host, tmp_path: Path, sshd: Sshd,
                                                 name: str, value: str) -> None:
    """Ours is stricter: Mistral runs a given 'proxy_command' on its executor."""
    run = Run(host, tmp_path, PROXIED, **_inputs(sshd, gateway_port=sshd.port,
                                                 **{name: value}))
    assert run.state == "ERROR" and run.error is not None
    assert "std.ssh_proxied" in str(run.error) and "must be" in str(run.error) \
        or "not supported" in str(run.error)


def test_an_api_user_cannot_run_ssh_proxied_unless_the_server_allows_it(
        host: Host, tmp_path: Path, sshd: Sshd) -> None:
    path = tmp_path / "api.yaml"
    path.write_text("version: '2.0'\nname: api\nworkflows:\n" + "\n".join(
        "  " + line[4:] for line in PROXIED.strip("\n").splitlines()) + "\n")
    host.workbooks.create(path)
    inputs = _inputs(sshd, gateway_port=sshd.port)
    with pytest.raises(exceptions.WorkflowFailed, match=r"\[api\] allow_outbound_actions"):
        host.executions.create("api.wf", inputs, api_user=True)
    host._session.close_workflows()
    host.conf.set_override("allow_outbound_actions", True, group="api")
    assert host.executions.create("api.wf", inputs, api_user=True).state == "SUCCESS"


def test_a_second_run_through_a_gateway_runs_the_command_again(host: Host, tmp_path: Path,
                                                               sshd: Sshd) -> None:
    """std.ssh_proxied is Rerun.CALLER, as std.ssh."""
    assert std_remote.SshProxied.rerun is Rerun.CALLER
    log = tmp_path / "log"
    for attempt in range(2):
        run = Run(host, tmp_path / str(attempt), PROXIED,
                  **_inputs(sshd, gateway_port=sshd.port, cmd=f"echo x >> {log}"))
        assert run.state == "SUCCESS", run.error
    assert log.read_text() == "x\nx\n"
