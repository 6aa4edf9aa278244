"""The ``TripleODeployment`` stubs that save_outputs reads from Heat's database are
the ones Heat's API lists, in the same order: here on THT 12.1.0's stack in native
heat-all's SQLite database; on the real THT 18.0.0 stack (MariaDB), created and updated
by the redeploy (which adds a post-deploy software deployment on each compute), by
``test_tht18.py``'s tests that restore those dumps (:func:`listings`, on the Heat they
restore).  The order of a long listing is checked on another ``OS::Heat::Value`` of
THT, ``RoleParametersValue``, which most of the services' nested stacks have."""

from __future__ import annotations

from typing import Any

import pytest

from tests.functional.overcloud.conftest import Deployment
from tripleo_flow import config
from tripleo_flow.core.deploy import deployments as core_deployments
from tripleo_flow.heat import db_listing, make_launcher
from tripleo_flow.heat.client import HeatClient

pytestmark = pytest.mark.functional

#: A Value resource of most service templates: dozens, deep in the tree.
MANY = "RoleParametersValue"
#: What :func:`~tripleo_flow.core.deploy.deployments.found_in` reads of a listed stub.
FIELDS = ("resource_name", "creation_time", "physical_resource_id", "parent_resource")


def _seen(stub: dict[str, Any]) -> dict[str, Any]:
    return {**{k: stub.get(k) for k in FIELDS},
            "value": (stub.get("attributes") or {}).get("value")}


Listings = dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]] | None]]


def listings(deployment: Deployment, endpoint: dict[str, Any]) -> Listings:
    """Heat's API listing and the database reading of the deployment's stack, by
    resource name, on its running Heat (``endpoint``, restored from the kept dump)."""
    heat = HeatClient(endpoint["endpoint"])
    stack = heat.existing_stack(deployment.plan)
    conf = config.load([str(deployment.conf_file)])
    db = make_launcher(conf, None, str(deployment.work_dir)).running_database()  # type: ignore[attr-defined]
    assert db is not None
    found: Listings = {}
    for name in (core_deployments.RESOURCE_NAME, MANY):
        found[name] = (
            heat.resources(deployment.plan, stack["id"], core_deployments.NESTED_DEPTH,
                           with_detail=True, resource_name=name),
            db_listing.resources_named(db, stack["id"], name, core_deployments.NESTED_DEPTH))
    return found


def _both_listings(deployment: Deployment) -> Listings:
    """:func:`listings` on a Heat restored from the deployment's kept dump."""
    client = deployment.client()
    heat_dir = str(deployment.work_dir)
    try:
        return listings(deployment, client.heat.launch(heat_dir, restore_db=True))
    finally:
        client.heat.kill(heat_dir)
        client.close()


def check_same(found: Listings, stubs: int, many: int = 50) -> None:
    for name, (api, read) in found.items():
        assert read is not None, f"the database reading of {name} left this stack to Heat"
        assert [_seen(s) for s in read] == [_seen(s) for s in api], name
    api, read = found[core_deployments.RESOURCE_NAME]
    assert len(api) == stubs
    assert len(found[MANY][0]) > many  # 75 on THT 18.0.0
    servers = {str(s["attributes"]["value"]["server"]): f"server-{n}"
               for n, s in enumerate(api)}
    assert core_deployments.found_in(read or [], servers) == \
        core_deployments.found_in(api, servers)


def test_native_heats_sqlite_stubs_read_from_the_database_are_heats_listing(
        tht12_deployment: Deployment) -> None:
    """THT 12.1.0 on native heat-all: its SQLite database."""
    check_same(_both_listings(tht12_deployment), stubs=0, many=20)
