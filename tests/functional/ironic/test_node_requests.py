"""How many requests the node workflows make of a real Ironic.

A local Ironic is one process: every request waits for the ones before it, so a
workflow that asks per node what one listing tells slows itself down.  The
requests are observed by wrapping :meth:`IronicClient._call` (the real calls are
made); the workflow results are checked against Ironic itself.
"""

from __future__ import annotations

import re
import threading
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from tripleo_flow import exceptions
from tripleo_flow.actions.nodes import LISTING_FROM, RESULT_FIELDS, named_nodes
from tripleo_flow.client import Client
from tripleo_flow.ironic import watch
from tripleo_flow.ironic.client import IronicClient

from .conftest import fake_nodes

COUNT = LISTING_FROM + 2


@pytest.fixture
def requests(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    """Every (method, decoded path) the process sends to Ironic meanwhile."""
    seen: list[tuple[str, str]] = []
    guard = threading.Lock()
    real = IronicClient._call

    def spy(self: IronicClient, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        with guard:
            seen.append((method, urllib.parse.unquote(path)))
        return real(self, method, path, *args, **kwargs)

    monkeypatch.setattr(IronicClient, "_call", spy)
    yield seen


def _node_gets(seen: list[tuple[str, str]], fields: tuple[str, ...]) -> list[str]:
    """The GETs of a single node asking for exactly ``fields``."""
    wanted = re.compile(r"^/nodes/[^/?]+\?fields=" + re.escape(",".join(fields)) + "$")
    return [path for method, path in seen if method == "GET" and wanted.match(path)]


def test_introspect_of_named_nodes_lists_them_once(node_client: Client,
                                                   requests: list[tuple[str, str]]) -> None:
    names = [f"node-{i}" for i in range(COUNT)]
    node_client.nodes.register(fake_nodes(COUNT))
    requests.clear()
    done = node_client.nodes.introspect(names)
    # The selection: one listing, not a GET per name.
    assert _node_gets(requests, ("uuid", "name", "provision_state")) == []
    # The nodes already manageable: read through the shared poller, not one by one.
    assert _node_gets(requests, RESULT_FIELDS) == []
    ironic = IronicClient(node_client.conf.ironic.endpoint)
    assert sorted(n["name"] for n in done) == names
    for node in done:
        now = ironic.get_node(node["name"], RESULT_FIELDS)
        assert {k: node[k] for k in RESULT_FIELDS} == {k: now.get(k) for k in RESULT_FIELDS}
        assert now["provision_state"] == "manageable" and now["inspection_finished_at"]



def test_introspect_asks_nothing_more_of_nodes_already_manageable(
        node_client: Client, requests: list[tuple[str, str]]) -> None:
    names = [f"node-{i}" for i in range(COUNT)]
    node_client.nodes.register(fake_nodes(COUNT))  # leaves them manageable
    requests.clear()
    node_client.nodes.introspect(names)
    # Before the first inspect request: the selection's one listing, nothing per node
    # (by hand one would just inspect them).
    first_put = next(i for i, (method, _) in enumerate(requests) if method == "PUT")
    assert [(method, path.split("?")[0]) for method, path in requests[:first_put]] == [
        ("GET", "/nodes")]
    assert sorted(path for method, path in requests if method == "PUT") == sorted(
        f"/nodes/{name}/states/provision" for name in names)

def test_import_reads_the_final_states_in_one_listing(node_client: Client,
                                                      requests: list[tuple[str, str]]) -> None:
    done = node_client.nodes.register(fake_nodes(COUNT))
    assert _node_gets(requests, ("uuid", "name", "provision_state")) == []
    assert [(n["name"], n["created"], n["provision_state"]) for n in done] == [
        (f"node-{i}", True, "manageable") for i in range(COUNT)]


def test_a_missing_name_among_many_is_named_and_nothing_moves(node_client: Client) -> None:
    node_client.nodes.register(fake_nodes(COUNT))
    names = [f"node-{i}" for i in range(COUNT)] + ["no-such-node"]
    with pytest.raises(exceptions.WorkflowFailed, match="no-such-node"):
        node_client.nodes.introspect(names)
    listed = node_client.nodes.list()
    assert {(n["name"], n["provision_state"]) for n in listed} == {
        (f"node-{i}", "manageable") for i in range(COUNT)}
    assert not any(n.get("inspection_finished_at") for n in listed)


def test_nodes_named_by_uuid_and_name_are_what_ironic_answers_for_each(
        node_client: Client, requests: list[tuple[str, str]]) -> None:
    imported = node_client.nodes.register(fake_nodes(COUNT))
    ironic = IronicClient(node_client.conf.ironic.endpoint)
    # UUIDs and names mixed, one twice, in no particular order.
    names = [imported[2]["uuid"], "node-0", imported[1]["uuid"], "node-3", "node-0"]
    names += [n["name"] for n in imported[4:]]
    fields = ("uuid", "name", "provision_state")
    one_by_one = [ironic.get_node(n, fields) for n in names]
    requests.clear()
    assert named_nodes(ironic, names, fields) == one_by_one
    assert [method for method, _ in requests] == ["GET"]
    with pytest.raises(exceptions.NodeNotFound, match="no-such-node"):
        named_nodes(ironic, [*names, "no-such-node"], fields)



def test_no_poll_goes_out_while_a_state_change_is_on_its_way(
        node_client: Client, requests: list[tuple[str, str]]) -> None:
    """A waiter's poll waits for this process' state change requests (a with-items task
    sends its batch first, then one poll sees them all): checked on a read that would
    poll at once, while the test holds a request open (far below max_interval)."""
    node_client.nodes.register(fake_nodes(1))
    watcher = watch.NodeWatcher(IronicClient(node_client.conf.ironic.endpoint),
                                max_interval=60.0)
    read: list[dict[str, Any]] = []
    requests.clear()
    with watcher.requesting():
        reader = threading.Thread(target=lambda: read.append(watcher.read("node-0", 60.0)))
        reader.start()
        reader.join(timeout=1.0)
        assert reader.is_alive() and requests == []
    reader.join(timeout=60.0)
    assert [(method, path.split("?")[0]) for method, path in requests] == [
        ("GET", "/nodes/node-0")]
    assert read[0]["name"] == "node-0" and read[0]["provision_state"] == "manageable"


def test_an_import_polls_at_most_twice_per_batch_of_state_changes(
        node_client: Client, requests: list[tuple[str, str]]) -> None:
    """With polls held while a batch's state changes are on their way, a poll finds the
    batch moved (fake-hardware verifies at once); besides the import's first and last
    listings, at most two polls per batch (50 nodes at concurrency 8 made 19-21
    listings and 11-15 single GETs before)."""
    concurrency = node_client.conf.ironic.concurrency
    count = 4 * concurrency
    done = node_client.nodes.register(fake_nodes(count))
    assert {n["provision_state"] for n in done} == {"manageable"} and len(done) == count
    reads = [path.split("?")[0] for method, path in requests if method == "GET"]
    assert reads.count("/ports") == 1
    polls = len(reads) - reads.count("/ports") - 2
    assert polls <= 2 * -(-count // concurrency), reads
