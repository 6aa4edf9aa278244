"""The request of a real THT 18.0.0 deploy, as Heat's validate sees it (no stack create).

THT 18.0.0 with a deployed-servers environment (the shape of what the
provision steps generate for pre-provisioned servers, ctlplane only) and the
computed container images: the one request builder must give Heat every nested
template and file under the names the templates use
(``type: ../database/mysql-client.yaml``).  The builder of before sent
plan-relative names and Heat answered: Could not fetch remote template
"../containers-common.yaml": Invalid URL scheme.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.functional.heat.conftest import heat_processes
from tests.tht import DEPLOYED_SERVERS_18, plan_with_environment
from tripleo_flow.actions.schema import validate_with_heat
from tripleo_flow.client import Client
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.plan import stack_request as requests

pytestmark = pytest.mark.functional


def _parameter_names(answer: dict[str, Any]) -> set[str]:
    """Every parameter of Heat's validate answer, nested stacks included."""
    names = set(answer.get("Parameters") or {})
    for child in (answer.get("NestedParameters") or {}).values():
        names |= _parameter_names(child)
    return names


def test_heat_validates_the_deploy_request_of_tht18(client: Client, heat_venv: Path) -> None:
    files, env = plan_with_environment(client, "18.0.0", DEPLOYED_SERVERS_18)
    checked = requests.deploy_request("overcloud", files, env, 1)
    assert checked.missing == [] and checked.images.warnings == []
    request = checked.request
    body = {key: request[key] for key in ("template", "files", "environment_files",
                                          "environment")}
    answer = validate_with_heat(client._session.context, body, "overcloud.yaml")

    # Heat walked the nested stacks down to the services (reached through relative
    # type references) and knows every image parameter we computed.
    assert "ControllerServiceChain" in answer["NestedParameters"]
    images = set(checked.images.parameters)
    assert len(images) == 57 and images <= _parameter_names(answer)
    values = safe_yaml.load_yaml(request["files"][request["environment_files"][0]], "computed")
    assert values["parameter_defaults"]["ContainerKeystoneImage"] == (
        "quay.io/tripleomastercentos9/openstack-keystone:current-tripleo")
    assert heat_processes(client.data_dir / "parameters-heat") == []
