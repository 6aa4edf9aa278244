"""Test ports for Heat come from outside the kernel's ephemeral range.

``test_crashed_run_is_cleaned_by_next_launch`` failed once with "Address
already in use" on relaunch.  Not a child of the killed heat-all keeping the
socket (heat-all with ``[heat_api] workers = 1`` is one process; after SIGKILL
``ss`` shows no listener and the port binds again): the port came from
``bind(0)``, an ephemeral port the kernel may give to any other socket once
Heat stops listening on it.
"""

from __future__ import annotations

import socket

from tests.functional.mariadb import ephemeral_range, free_port


def test_free_ports_are_outside_the_ephemeral_range() -> None:
    low, high = ephemeral_range()
    ports = {free_port() for _ in range(20)}
    assert all(not low <= port <= high for port in ports), (ports, low, high)
    for port in ports:  # and free indeed
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))
