"""How ``[api] connections_per_client`` tells clients apart: an IPv6 network of
``[api] client_ipv6_prefix`` bits is one client (its holder may use any address in
it), an IPv4-mapped IPv6 address is the IPv4 one (issue 29)."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from waitress.adjustments import Adjustments

from tripleo_flow.http.server import TokenChecks, _channel_class, client_key


@pytest.mark.parametrize("host, prefix, key", [
    ("192.0.2.7", 64, "192.0.2.7"),
    ("::ffff:192.0.2.7", 64, "192.0.2.7"),              # IPv4-mapped: the IPv4 client
    ("127.0.0.2", 64, "127.0.0.2"),                     # another loopback address: another
    ("2001:db8:1:2::1", 64, "2001:db8:1:2::/64"),
    ("2001:db8:1:2:ffff:ffff:ffff:ffff", 64, "2001:db8:1:2::/64"),
    ("2001:db8:1:3::1", 64, "2001:db8:1:3::/64"),
    ("2001:db8:1:2::1", 48, "2001:db8:1::/48"),
    ("2001:db8:1:2::1", 128, "2001:db8:1:2::1/128"),
    ("fe80::1%eth0", 64, "fe80::/64"),                  # a link-local address's zone
    ("not-an-address", 64, "not-an-address"),
])
def test_client_key(host: str, prefix: int, key: str) -> None:
    assert client_key((host, 4242), prefix) == key


def test_a_unix_socket_is_no_client() -> None:
    assert client_key("/run/tripleo-flow.sock") is None


@pytest.fixture
def sockets() -> Iterator[list[socket.socket]]:
    opened: list[socket.socket] = []
    yield opened
    for sock in opened:
        sock.close()


def _connect(channel: Any, server: Any, host: str, opened: list[socket.socket]) -> bool:
    """A connection from ``host`` accepted by the real channel class; whether it was
    refused (answered 503 and closing)."""
    ours, theirs = socket.socketpair()
    opened += [ours, theirs]
    made = channel(server, ours, (host, 40000 + len(opened)), Adjustments(), map={})
    server.active_channels[ours.fileno()] = made
    return bool(made.refused)


def test_one_ipv6_network_cannot_take_more_than_its_share(sockets: list[socket.socket]) -> None:
    channel = _channel_class(1 << 20, 0.0, None, (), per_client=2, ipv6_prefix=64)
    server = SimpleNamespace(active_channels={})
    # Two connections from one /64, from different addresses: the third is refused.
    assert not _connect(channel, server, "2001:db8:1:2::1", sockets)
    assert not _connect(channel, server, "2001:db8:1:2::2", sockets)
    assert _connect(channel, server, "2001:db8:1:2:a:b:c:d", sockets)
    # Another /64 is another client.
    assert not _connect(channel, server, "2001:db8:1:3::1", sockets)
    # An IPv4 client counts the same whether it comes as IPv4 or IPv4-mapped IPv6.
    assert not _connect(channel, server, "192.0.2.7", sockets)
    assert not _connect(channel, server, "::ffff:192.0.2.7", sockets)
    assert _connect(channel, server, "::ffff:192.0.2.7", sockets)
    assert not _connect(channel, server, "192.0.2.8", sockets)


def test_a_wider_prefix_groups_more(sockets: list[socket.socket]) -> None:
    channel = _channel_class(1 << 20, 0.0, None, (), per_client=1, ipv6_prefix=48)
    server = SimpleNamespace(active_channels={})
    assert not _connect(channel, server, "2001:db8:1:2::1", sockets)
    assert _connect(channel, server, "2001:db8:1:3::1", sockets)  # the same /48


def test_a_token_check_that_never_returns_does_not_hold_the_exit(tmp_path: Path) -> None:
    """Keystone hung: a check blocked for good must not keep the server's process from
    exiting once it is told to stop (a ThreadPoolExecutor's worker would be joined at
    exit, for ever)."""
    script = tmp_path / "hung.py"
    script.write_text(
        "import threading\n"
        "from tripleo_flow.http.server import TokenChecks\n"
        "never = threading.Event()\n"
        "checks = TokenChecks(lambda token: never.wait())\n"
        "futures = [checks.submit(f'token-{n}') for n in range(6)]\n"
        "print('submitted', sum(not f.done() for f in futures), flush=True)\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "submitted 6", done.stderr


def test_token_checks_answer_with_the_checks_result_or_its_error() -> None:
    def check(token: str) -> bool | None:
        if token == "boom":
            raise RuntimeError("keystone said no route")
        return {"good": True, "bad": False}.get(token)

    checks = TokenChecks(check, workers=2)
    futures = {t: checks.submit(t) for t in ("good", "bad", "unknown", "boom")}
    assert futures["good"].result(timeout=60) is True
    assert futures["bad"].result(timeout=60) is False
    assert futures["unknown"].result(timeout=60) is None
    with pytest.raises(RuntimeError, match="no route"):
        futures["boom"].result(timeout=60)
