"""Which listening addresses count as loopback for ``api serve``."""

from __future__ import annotations

import pytest

from tripleo_flow.http.auth import is_loopback


@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1", True), ("127.1.2.3", True), ("::1", True), ("[::1]", True),
    ("localhost", True), ("LOCALHOST", True), ("0.0.0.0", False), ("::", False),
    ("192.168.1.10", False), ("api.example.com", False), ("", False),
])
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
