"""``tripleo-flow api serve`` as a user runs it: a subprocess serving on 127.0.0.1."""

from __future__ import annotations

import contextlib
import secrets
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def api_serve(conf: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """``tripleo-flow --config-file conf api serve`` on a free port of 127.0.0.1, once
    its banner says it listens (the process and its port); interrupted at the end."""
    port = free_port()
    exe = Path(sys.executable).parent / "tripleo-flow"
    proc = subprocess.Popen([str(exe), "--config-file", str(conf), "api", "serve",
                             "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}/v1/" in banner, \
            proc.stderr.read() if proc.stderr and not banner else banner
        yield proc, port
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)


def command(tmp_path: Path, token: str | None, host: str = "127.0.0.1") -> list[str]:
    conf = tmp_path / "tripleo-flow.conf"
    text = f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n"
    if token:
        text += f"[api]\nauth_token = {token}\n"
    conf.write_text(text)
    conf.chmod(0o600)
    exe = Path(sys.executable).parent / "tripleo-flow"
    return [str(exe), "--config-file", str(conf), "api", "serve", "--host", host]


def test_serve_answers_with_the_token_and_stops_on_interrupt(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(command(tmp_path, "s3cret") + ["--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}/v1/" in banner, proc.stderr.read() if proc.stderr \
            else banner
        url = f"http://127.0.0.1:{port}/v1/plans"
        assert requests.get(url, headers={"X-Auth-Token": "s3cret"}, timeout=30).json() == []
        assert requests.get(url, timeout=30).status_code == 401
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(30)
    assert code == 0


def test_serve_refuses_to_start_without_a_token(tmp_path: Path) -> None:
    done = subprocess.run(command(tmp_path, None), capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 2
    assert "No [api] auth_token is set" in done.stderr


def test_serve_beyond_loopback_refuses_a_short_token(tmp_path: Path) -> None:
    done = subprocess.run(command(tmp_path, "x" * 31, host="0.0.0.0"), capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert "auth_token has 31 characters" in done.stderr
    assert "at least 32" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("token", "said"), [
    ("a" * 32, "holds only 1 different character"),
    ("abcdefg" * 6, "holds only 7 different characters"),
    ("0123456789abcdef" * 3, "repeats the same 16 characters"),
])
def test_serve_beyond_loopback_refuses_a_guessable_token(tmp_path: Path, token: str,
                                                         said: str) -> None:
    done = subprocess.run(command(tmp_path, token, host="0.0.0.0"), capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and "secrets.token_hex(32)" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("host", "port", "said"), [
    ("127.0.0.1 ", "0", "Cannot listen on '127.0.0.1 ' port 0: not an address"),
    ("127.0.0.1", "70000", "Port 70000 is not a port"),  # was taken modulo 65536
    ("127.0.0.1", "-1", "Port -1 is not a port"),
])
def test_serve_refuses_a_bad_address_or_port_clearly(tmp_path: Path, host: str, port: str,
                                                     said: str) -> None:
    done = subprocess.run(command(tmp_path, secrets.token_hex(32), host=host) + ["--port", port],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert said in done.stderr and "--port" in done.stderr
    assert "Traceback" not in done.stderr and "Invalid host/port" not in done.stderr


def test_serve_beyond_loopback_warns_of_plain_http(tmp_path: Path) -> None:
    port = free_port()
    token = secrets.token_hex(32)
    proc = subprocess.Popen(command(tmp_path, token, host="0.0.0.0") + ["--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        assert f":{port}/v1/" in banner
        url = f"http://127.0.0.1:{port}/v1/plans"
        assert requests.get(url, headers={"X-Auth-Token": token}, timeout=30).json() == []
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(30)
    assert code == 0
    assert proc.stderr is not None
    assert "serves plain HTTP" in proc.stderr.read()


def test_serve_on_loopback_keeps_short_tokens_without_warning(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(command(tmp_path, "short", host="localhost") + ["--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert f":{port}/v1/" in proc.stdout.readline()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
    assert proc.stderr is not None
    assert "plain HTTP" not in proc.stderr.read()
