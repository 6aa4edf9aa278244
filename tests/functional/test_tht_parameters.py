"""The pre-deploy check over the whole stack tree of the real THT 18.0.0 and 12.1.0.

With a deployed-servers environment and the computed container images nothing
is missing; a value taken away is named with the nested template that needs it
(found here in seconds, where Heat would fail minutes into the stack create).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures_plans import make_client
from tests.tht import DEPLOYED_SERVERS_12, DEPLOYED_SERVERS_18, plan_with_environment
from tripleo_flow.client import Client
from tripleo_flow.core.plan import container_images, parameter_tree
from tripleo_flow.core.plan import stack_request as requests
from tripleo_flow.plans.local import LocalStore

pytestmark = pytest.mark.functional

KEYSTONE = "deployment/keystone/keystone-container-puppet.yaml"
TREES = [("18.0.0", DEPLOYED_SERVERS_18, 57), ("12.1.0", DEPLOYED_SERVERS_12, 56)]


@pytest.fixture
def local_client(tmp_path: Path) -> Iterator[Client]:
    """A client on the local plan store (the store plays no part in the check)."""
    client = make_client(tmp_path, LocalStore(tmp_path / "plans"))
    yield client
    client.close()


def _missing(checked: requests.DeployRequest) -> list[tuple[str, str]]:
    return [(m.parameter, m.template) for m in checked.missing]


@pytest.mark.parametrize("version,environment,images", TREES, ids=[t[0] for t in TREES])
def test_whole_tree_checked_before_heat(local_client: Client, version: str,
                                        environment: dict[str, Any], images: int) -> None:
    files, env = plan_with_environment(local_client, version, environment)
    checked = requests.deploy_request("overcloud", files, env, 1)
    assert checked.missing == [] and checked.images.warnings == []
    # Every image parameter of the tree got a value.
    tree = parameter_tree.walk(checked.request)
    declared = {n for n in tree.declared if container_images.is_image_parameter(n)}
    assert len(declared) == images and set(checked.images.parameters) == declared

    # A nested parameter no parent passes, given by the generated passwords: taken away,
    # it is named with its template.
    env["passwords"] = {k: v for k, v in env["passwords"].items() if k != "KeystoneCredential0"}
    assert _missing(requests.deploy_request("overcloud", files, env, 1)) == [
        ("KeystoneCredential0", KEYSTONE)]

    # The operator's ContainerImagePrepare leaving an image out: that image is missing.
    env["parameter_defaults"] = {"ContainerImagePrepare": [{"excludes": ["-keystone:"]}]}
    env["passwords"]["KeystoneCredential0"] = "x"
    missing = _missing(requests.deploy_request("overcloud", files, env, 1))
    assert ("ContainerKeystoneImage", KEYSTONE) in missing
    assert ("ContainerKeystoneConfigImage", KEYSTONE) in missing
    assert {name for name, _ in missing} == {"ContainerKeystoneImage",
                                             "ContainerKeystoneConfigImage"}


def test_deployed_networks_need_their_environment(local_client: Client) -> None:
    values = {k: v for k, v in DEPLOYED_SERVERS_18["parameter_defaults"].items()
              if k != "DeployedNetworkEnvironment"}
    files, env = plan_with_environment(local_client, "18.0.0", {**DEPLOYED_SERVERS_18,
                                                          "parameter_defaults": values})
    checked = requests.deploy_request("overcloud", files, env, 1)
    assert [str(m) for m in checked.missing] == [
        "DeployedNetworkEnvironment of network/deployed_networks.yaml (reached through "
        "Networks)"]
