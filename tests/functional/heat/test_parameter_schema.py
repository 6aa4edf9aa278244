"""parameters.get with a real heat-all: the sample plan's schema, its cache, validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.functional.heat.conftest import heat_processes
from tripleo_flow import exceptions
from tripleo_flow.actions.schema import CACHE_OBJECT
from tripleo_flow.client import Client
from tripleo_flow.plans.plan import PLAN_ENV, PlanRepository

pytestmark = pytest.mark.functional


def _heat_parent(client: Client) -> Path:
    return client.data_dir / "parameters-heat"


def _assert_no_heat_left(client: Client) -> None:
    parent = _heat_parent(client)
    assert heat_processes(parent) == []
    assert list(parent.iterdir()) == []


def _break_heat_venv(client: Client, tmp_path: Path) -> None:
    """From now on a Heat launch fails: a call that succeeds did not launch one."""
    client.conf.set_override("venv", str(tmp_path / "no-heat-venv"), group="heat")


def test_schema_of_sample_plan_is_cached_until_the_plan_changes(
        client: Client, tmp_path: Path, heat_venv: Path) -> None:
    client.plans.create("p", sample=True)
    first = client.parameters.schema("p")
    assert first["cached"] is False
    params = first["parameters"]
    assert params["ControllerCount"]["type"] == "number"
    assert params["ControllerCount"]["value"] == 1 and params["ControllerCount"]["paths"] == [""]
    assert params["ControllerServices"]["type"] == "comma_delimited_list"
    assert params["AdminPassword"]["hidden"] is True
    # Nested stacks: the role templates and the deployed servers inside their groups.
    assert params["ControllerExtraConfig"]["type"] == "json"
    assert params["ControllerExtraConfig"]["paths"] == ["Controller"]
    assert "Controller/Servers/0/Server" in params["user_data_format"]["paths"]
    assert params["user_data_format"]["default"] == "SOFTWARE_CONFIG"
    _assert_no_heat_left(client)

    _break_heat_venv(client, tmp_path)
    second = client.parameters.schema("p")
    assert second["cached"] is True and second["parameters"] == params
    assert list(_heat_parent(client).iterdir()) == []

    client.parameters.set("p", {"ComputeCount": 3})
    with pytest.raises(exceptions.HeatNotInstalled):  # a miss: it tried to launch Heat
        client.parameters.schema("p")
    _assert_no_heat_left(client)

    client.conf.set_override("venv", str(heat_venv), group="heat")
    third = client.parameters.schema("p")
    assert third["cached"] is False and third["key"] != first["key"]
    assert third["parameters"]["ComputeCount"]["value"] == 3
    assert client.parameters.schema("p")["cached"] is True
    _assert_no_heat_left(client)


def test_set_parameters_validate_refuses_unknown_names_and_wrong_types(
        client: Client, tmp_path: Path) -> None:
    client.plans.create("p", sample=True)
    client.parameters.schema("p")
    _break_heat_venv(client, tmp_path)  # validation uses the cached schema
    repo = PlanRepository(client._session.store)
    before = client._session.store.get_object("p", PLAN_ENV)

    with pytest.raises(exceptions.InvalidParameter) as unknown:
        client.parameters.set("p", {"ComputeCount": 2, "NoSuchParameter": 1}, validate=True)
    assert "'NoSuchParameter'" in str(unknown.value) and "--schema" in str(unknown.value)
    with pytest.raises(exceptions.InvalidParameter) as wrong:
        client.parameters.set("p", {"ControllerCount": "many"}, validate=True)
    assert "'ControllerCount'" in str(wrong.value) and "number" in str(wrong.value)
    with pytest.raises(exceptions.InvalidParameter) as wrong_json:
        client.parameters.set("p", {"ControllerExtraConfig": "{not json"}, validate=True)
    assert "'ControllerExtraConfig'" in str(wrong_json.value)
    assert client._session.store.get_object("p", PLAN_ENV) == before

    assert client.parameters.set("p", {"ComputeCount": 2,
                                       "ControllerExtraConfig": {"a": 1}},
                                 validate=True) == ["ComputeCount", "ControllerExtraConfig"]
    values = repo.environment("p")["parameter_defaults"]
    assert values["ComputeCount"] == 2 and values["ControllerExtraConfig"] == {"a": 1}
    assert client.parameters.set("p", {"ControllerCount": 2, "NotAParameter": 1}) == [
        "ControllerCount", "NotAParameter"]  # without validate: written as before


def test_broken_template_raises_invalid_template_and_changes_nothing(
        client: Client) -> None:
    client.plans.create("p", sample=True)
    template = client._session.store.get_object("p", "overcloud.yaml")
    broken = template.replace(b"type: OS::TripleO::Controller\n", b"type: OS::No::SuchType\n")
    assert broken != template
    client._session.store.put_object("p", "overcloud.yaml", broken)
    store = client._session.store
    before = {n: store.get_object("p", n) for n in store.list_objects("p")}

    with pytest.raises(exceptions.InvalidTemplate) as bad:
        client.parameters.schema("p")
    assert "OS::No::SuchType" in str(bad.value)
    after = {n: store.get_object("p", n) for n in store.list_objects("p")}
    assert after == before and CACHE_OBJECT not in after
    _assert_no_heat_left(client)
