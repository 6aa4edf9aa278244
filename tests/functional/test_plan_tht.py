"""Plans made from the real tripleo-heat-templates trees, on every plan store."""

from __future__ import annotations

import pytest
import yaml

from tests.tht import fetch_tree_dir
from tripleo_flow import exceptions
from tripleo_flow.client import Client
from tripleo_flow.plans.plan import PLAN_ENV

pytestmark = pytest.mark.functional


def test_plan_from_tht_12_then_an_update_to_18_keeps_user_values(client: Client) -> None:
    """A plan of THT 12.1.0 (its roles rendered, its own plan-environment kept, its
    capabilities), then updated to 18.0.0: the user's values and passwords stay.  One
    test, so the 12.1.0 plan (a minute of CPU on Swift) is made once per store."""
    tree = fetch_tree_dir("12.1.0")
    summary = client.plans.create("overcloud", tree)
    assert summary["files"] > 1000
    names = set(client._session.store.list_objects("overcloud"))
    roles = yaml.safe_load((tree / "roles_data.yaml").read_text())
    for role in roles:
        # deployment/*.role.j2.yaml and friends render once per role.
        assert any(n.endswith(f"{role['name'].lower()}-role.yaml") for n in names), role["name"]
    assert "overcloud.yaml" in names
    env = yaml.safe_load(client._session.store.get_object("overcloud", PLAN_ENV))
    # The tree's own plan-environment.yaml is kept, renamed to the plan.
    assert env["name"] == "overcloud"
    assert env["environments"] == yaml.safe_load(
        (tree / "plan-environment.yaml").read_text())["environments"]
    assert "AdminPassword" in env["passwords"]
    caps = client.capabilities.get("overcloud")
    assert len(caps) > 3 and "Other" in caps
    # The map names files the tree does not ship: they are not offered.
    offered = {env["file"] for topic in caps.values() for group in topic["environment_groups"]
               for env in group["environments"]}
    assert "environments/containers-default-parameters.yaml" not in offered
    assert "environments/network-isolation.yaml" in offered
    # A file the map lists but the tree does not ship is refused, nothing changes.
    with pytest.raises(exceptions.UnknownEnvironment):
        client.capabilities.update(
            "overcloud", {"environments/containers-default-parameters.yaml": True})
    assert yaml.safe_load(client._session.store.get_object("overcloud", PLAN_ENV)) == env

    client.parameters.set("overcloud", {"NtpServer": ["pool.ntp.org"]})
    before = client.passwords.get("overcloud")
    client.plans.update("overcloud", fetch_tree_dir("18.0.0"))
    assert client.parameters.get("overcloud") == {"NtpServer": ["pool.ntp.org"]}
    after = client.passwords.get("overcloud")
    assert {k: after[k] for k in before} == before
    # 18.0.0 ships no capabilities-map.yaml: the 12.x one is gone with the old templates.
    assert "capabilities-map.yaml" not in client._session.store.list_objects("overcloud")
