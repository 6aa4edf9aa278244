"""Node workflows against a real Ironic (fake-hardware; redfish nodes registered only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tripleo_flow import exceptions
from tripleo_flow.cli.main import main
from tripleo_flow.client import Client
from tripleo_flow.ironic.client import IronicClient

from .conftest import fake_nodes

BMC_PASSWORD = "Bmc-Pa55word-never-stored"


def _write(tmp_path: Path, document: Any, name: str = "instackenv.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def _names(client: Client) -> set[str]:
    return {n["name"] for n in client.nodes.list()}


def _states(client: Client) -> dict[str, str]:
    return {n["name"]: n["provision_state"] for n in client.nodes.list()}


def test_import_registers_nodes_and_is_idempotent(node_client: Client, tmp_path: Path) -> None:
    path = _write(tmp_path, fake_nodes(3))
    first = node_client.nodes.register(path)
    assert [(n["name"], n["created"], n["provision_state"]) for n in first] == [
        ("node-0", True, "manageable"), ("node-1", True, "manageable"),
        ("node-2", True, "manageable")]
    again = node_client.nodes.register(path)
    assert [(n["created"], n["provision_state"]) for n in again] == [(False, "manageable")] * 3
    assert [n["uuid"] for n in again] == [n["uuid"] for n in first]
    assert _names(node_client) == {"node-0", "node-1", "node-2"}
    shown = node_client.nodes.get("node-1")
    assert shown["properties"]["memory_mb"] == 8192
    assert shown["capabilities"] == {"profile": "compute", "boot_option": "local"}
    assert shown["ports"] == [fake_nodes(3)["nodes"][1]["mac"][0]]


def test_import_matches_an_existing_node_by_mac(node_client: Client, tmp_path: Path) -> None:
    document = fake_nodes(1)
    node_client.nodes.register(_write(tmp_path, document))
    unnamed = {k: v for k, v in document["nodes"][0].items() if k != "name"}
    unnamed["memory"] = 16384
    done = node_client.nodes.register(_write(tmp_path, [unnamed], "nodes.yaml"))
    assert done[0]["created"] is False
    assert node_client.nodes.get("node-0")["properties"]["memory_mb"] == 16384
    assert _names(node_client) == {"node-0"}


def test_a_bad_entry_is_named_and_nothing_is_registered(node_client: Client,
                                                        tmp_path: Path) -> None:
    document = fake_nodes(3)
    document["nodes"][2]["mac"] = ["not-a-mac"]
    with pytest.raises(exceptions.InvalidNodes, match=r"node 3 \('node-2'\).*MAC"):
        node_client.nodes.register(_write(tmp_path, document))
    assert _names(node_client) == set()


def test_a_failure_mid_way_removes_only_the_nodes_this_run_created(
        node_client: Client, tmp_path: Path) -> None:
    node_client.nodes.register(_write(tmp_path, fake_nodes(1, prefix="kept")))
    before = node_client.nodes.get("kept-0")
    document = fake_nodes(1, prefix="kept")
    document["nodes"][0]["memory"] = 1  # an update, to be put back
    document["nodes"] += fake_nodes(2, prefix="new")["nodes"]
    # Valid for the file, refused by this Ironic (hardware type not enabled).
    document["nodes"].append({"name": "bad-0", "pm_type": "manual-management",
                              "mac": ["52:54:00:ff:ff:01"]})
    with pytest.raises(exceptions.WorkflowFailed, match=r"node 4 \('bad-0'\)"):
        node_client.nodes.register(_write(tmp_path, document))
    assert _names(node_client) == {"kept-0"}
    assert node_client.nodes.get("kept-0")["properties"] == before["properties"]


def test_introspect_and_provide_report_each_node(node_client: Client, tmp_path: Path) -> None:
    node_client.nodes.register(_write(tmp_path, fake_nodes(3)))
    events: list[Any] = []
    done = node_client.nodes.introspect(["node-0", "node-1", "node-2"], provide=True,
                                        listeners=[events.append])
    assert sorted((n["name"], n["provision_state"]) for n in done) == [
        ("node-0", "available"), ("node-1", "available"), ("node-2", "available")]
    assert all(n["inspection_finished_at"] for n in done)
    assert all(n["properties"]["cpu_arch"] == "x86_64" for n in done)
    statuses = {e.progress["status"] for e in events if e.event == "progress"}
    for name in ("node-0", "node-1", "node-2"):
        assert f"{name}: inspect requested" in statuses
        assert f"{name}: available" in statuses
    listed = {n["name"]: n for n in node_client.nodes.list()}
    assert listed["node-1"]["provision_state"] == "available"
    assert listed["node-1"]["properties"]["local_gb"] == 40


def test_import_leaves_new_nodes_in_the_initial_state_asked(node_client: Client,
                                                            tmp_path: Path) -> None:
    path = _write(tmp_path, fake_nodes(2))
    done = node_client.nodes.register(path, initial_state="enroll")
    assert [n["provision_state"] for n in done] == ["enroll", "enroll"]
    assert _states(node_client) == {"node-0": "enroll", "node-1": "enroll"}
    # Found in enroll: moved on, as new ones are.
    done = node_client.nodes.register(path, initial_state="available")
    assert [(n["created"], n["provision_state"]) for n in done] == [(False, "available")] * 2
    assert _states(node_client) == {"node-0": "available", "node-1": "available"}
    # Nodes past enroll are left where they are (TripleO moves only those in enroll).
    document = fake_nodes(3)
    done = node_client.nodes.register(document)
    assert [(n["name"], n["created"], n["provision_state"]) for n in done] == [
        ("node-0", False, "available"), ("node-1", False, "available"),
        ("node-2", True, "manageable")]


def test_import_introspects_and_provides_every_node_when_asked(node_client: Client,
                                                               tmp_path: Path) -> None:
    node_client.nodes.register(fake_nodes(1), initial_state="available")  # node-0, available
    done = node_client.nodes.register(fake_nodes(2), introspect=True)
    # Every node of the file introspected: the available one moved to manageable for it.
    assert [(n["name"], n["provision_state"]) for n in done] == [
        ("node-0", "manageable"), ("node-1", "manageable")]
    assert all(n["inspection_finished_at"] for n in node_client.nodes.list())
    done = node_client.nodes.register(fake_nodes(3), introspect=True, provide=True)
    assert [n["provision_state"] for n in done] == ["available"] * 3
    listed = {n["name"]: n for n in node_client.nodes.list()}
    assert listed["node-2"]["inspection_finished_at"]
    assert listed["node-2"]["properties"]["cpu_arch"] == "x86_64"
    done = node_client.nodes.register(fake_nodes(4), provide=True)
    assert [n["provision_state"] for n in done] == ["available"] * 4
    assert not {n["name"]: n for n in node_client.nodes.list()}["node-3"][
        "inspection_finished_at"]


@pytest.mark.parametrize("options, message", [
    ({"initial_state": "enroll", "introspect": True}, "cannot be introspected nor provided"),
    ({"initial_state": "enroll", "provide": True}, "cannot be introspected nor provided"),
    ({"initial_state": "active"}, "one of enroll, manageable, available"),
])
def test_import_options_are_checked_before_anything_is_registered(
        node_client: Client, tmp_path: Path, options: dict[str, Any], message: str) -> None:
    with pytest.raises(exceptions.InvalidInput, match=message):
        node_client.nodes.register(_write(tmp_path, fake_nodes(1)), **options)
    assert _names(node_client) == set()
    assert node_client.executions.list() == []


def test_a_node_that_cannot_be_managed_fails_the_import_and_nothing_stays(
        node_client: Client, tmp_path: Path,
        redfish_servers: tuple[str, list[Any]]) -> None:
    url, _machines = redfish_servers
    document = fake_nodes(2)
    document["nodes"].append({"name": "lost-0", "pm_type": "redfish", "pm_addr": url,
                              "pm_user": "admin", "pm_password": "password",
                              "pm_system_id": "/redfish/v1/Systems/no-such-system",
                              "mac": ["52:54:00:ee:00:09"]})
    with pytest.raises(exceptions.WorkflowFailed, match=r"at task 'manage_nodes'.* Node "
                       r"'lost-0' ended in 'enroll' instead of 'manageable'.*reverted"):
        node_client.nodes.register(_write(tmp_path, document))
    assert _names(node_client) == set()  # the nodes this run created were deleted
    # The same file left in enroll registers them all: the BMC is checked when managed.
    done = node_client.nodes.register(_write(tmp_path, document), initial_state="enroll")
    assert [n["provision_state"] for n in done] == ["enroll"] * 3


def test_introspect_all_manageable_then_provide_after_a_default_import(
        node_client: Client, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        ironic_endpoint: str) -> None:
    """The TripleO habit: import, then introspect --all-manageable --provide."""
    conf = tmp_path / "tripleo-flow.conf"
    conf.write_text(f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n"
                    f"[ironic]\nendpoint = {ironic_endpoint}\n")
    cli = ["--config-file", str(conf), "node"]
    path = _write(tmp_path, fake_nodes(2))
    assert main([*cli, "import", str(path), "-f", "json"]) == 0
    imported = json.loads(capsys.readouterr().out)
    assert [(n["name"], n["provision_state"]) for n in imported] == [
        ("node-0", "manageable"), ("node-1", "manageable")]
    assert main([*cli, "introspect", "--all-manageable", "--provide", "-f", "json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert sorted((n["name"], n["provision_state"]) for n in done) == [
        ("node-0", "available"), ("node-1", "available")]
    assert _states(node_client) == {"node-0": "available", "node-1": "available"}
    # Nothing manageable any more: said, with the states found, not a silent success.
    assert main([*cli, "provide", "--all-manageable"]) == 6
    err = capsys.readouterr().err
    assert "No node is manageable and out of maintenance, so nothing was done " \
           "(Ironic's 2 nodes: 2 available)" in err
    assert "tripleo-flow node list" in err


@pytest.mark.parametrize("workflow", ["introspect", "provide", "clean"])
def test_an_empty_selection_fails_naming_the_states_and_what_to_run(
        node_client: Client, tmp_path: Path, workflow: str) -> None:
    run = getattr(node_client.nodes, workflow)
    with pytest.raises(exceptions.WorkflowFailed, match=r"select_nodes.*No node is "
                       r"manageable.*\(Ironic has no node\).*tripleo-flow node import FILE"):
        run(all_manageable=True)
    node_client.nodes.register(_write(tmp_path, fake_nodes(2)), initial_state="enroll")
    with pytest.raises(exceptions.WorkflowFailed) as failed:
        run(all_manageable=True)
    assert "(Ironic's 2 nodes: 2 enroll). Move those in enroll to manageable with: " \
           "tripleo-flow node manage NODE...; see them with: tripleo-flow node list." \
           in str(failed.value)
    assert _states(node_client) == {"node-0": "enroll", "node-1": "enroll"}


def test_all_manageable_leaves_out_nodes_in_maintenance(node_client: Client,
                                                        tmp_path: Path,
                                                        ironic_endpoint: str) -> None:
    node_client.nodes.register(_write(tmp_path, fake_nodes(2)))
    IronicClient(ironic_endpoint).patch_node(
        "node-1", [{"op": "replace", "path": "/maintenance", "value": True}])
    assert [n["name"] for n in node_client.nodes.provide(all_manageable=True)] == ["node-0"]
    with pytest.raises(exceptions.WorkflowFailed, match=r"1 available, 1 manageable in "
                                                        r"maintenance"):
        node_client.nodes.introspect(all_manageable=True)


def test_all_manageable_selects_only_manageable_nodes(node_client: Client,
                                                      tmp_path: Path) -> None:
    node_client.nodes.register(_write(tmp_path, fake_nodes(3)), initial_state="enroll")
    node_client.nodes.manage(["node-0", "node-2"])
    done = node_client.nodes.introspect(all_manageable=True)
    assert sorted(n["name"] for n in done) == ["node-0", "node-2"]
    assert node_client.nodes.get("node-1")["provision_state"] == "enroll"
    provided = node_client.nodes.provide(all_manageable=True)
    assert sorted(n["name"] for n in provided) == ["node-0", "node-2"]


def test_clean_runs_steps_and_a_failed_clean_is_put_back(node_client: Client,
                                                         tmp_path: Path) -> None:
    node_client.nodes.register(_write(tmp_path, fake_nodes(2)))
    node_client.nodes.manage(["node-0", "node-1"])
    done = node_client.nodes.clean(["node-0"],
                                   steps=[{"interface": "power", "step": "power_off"}])
    assert done[0]["provision_state"] == "manageable"
    # fake-hardware has no erase_devices_metadata step (the default): Ironic fails it.
    with pytest.raises(exceptions.WorkflowFailed, match="node-1.*clean failed"):
        node_client.nodes.clean(["node-1"])
    assert node_client.nodes.get("node-1")["provision_state"] == "manageable"


def test_delete_refuses_a_missing_node_and_deletes_nothing(node_client: Client,
                                                           tmp_path: Path) -> None:
    node_client.nodes.register(_write(tmp_path, fake_nodes(2)))
    with pytest.raises(exceptions.WorkflowFailed, match="'missing-9' does not exist"):
        node_client.nodes.delete(["node-0", "missing-9"])
    assert _names(node_client) == {"node-0", "node-1"}
    done = node_client.nodes.delete(["node-0", "node-1"])
    assert [n["deleted"] for n in done] == [True, True]
    assert _names(node_client) == set()


def test_bmc_passwords_are_never_printed_nor_recorded(node_client: Client, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str],
                                                      ironic_endpoint: str) -> None:
    document = {"nodes": [{"name": "bmc-0", "pm_type": "redfish", "pm_addr": "127.0.0.1:8000",
                           "pm_user": "admin", "pm_password": BMC_PASSWORD,
                           "pm_system_id": "/redfish/v1/Systems/1",
                           "mac": ["52:54:00:ee:00:01"]}]}
    path = _write(tmp_path, document)
    data = tmp_path / "data"
    conf = tmp_path / "tripleo-flow.conf"
    conf.write_text(f"[DEFAULT]\ndata_dir = {data}\n[ironic]\nendpoint = {ironic_endpoint}\n")
    # enroll: nothing answers at that BMC address (manageable would check it).
    assert main(["--config-file", str(conf), "node", "import", "--initial-state", "enroll",
                 str(path)]) == 0
    assert main(["--config-file", str(conf), "node", "show", "bmc-0", "-f", "json"]) == 0
    assert main(["--config-file", str(conf), "execution", "list", "-f", "json"]) == 0
    out, err = capsys.readouterr()
    assert "redfish_password" in out and "******" in out
    assert BMC_PASSWORD not in out + err
    stored = [p for p in data.rglob("*") if p.is_file() and BMC_PASSWORD.encode() in p.read_bytes()]
    assert stored == []
    execution = node_client.executions.list("tripleo.nodes.register")
    assert BMC_PASSWORD not in repr(execution)
