"""The stack request of a plan and the pre-deployment checks: table-driven."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tripleo_flow import exceptions
from tripleo_flow.core.plan import heatfiles
from tripleo_flow.core.plan import stack_request as sr

TEMPLATE = b"""heat_template_version: wallaby
parameters:
  Needed: {type: string}
  Optional: {type: string, default: x}
resources: {}
"""
ENV = b"resource_registry:\n  OS::X: ../nested/x.yaml\nparameter_defaults:\n  Needed: from-env\n"


def files() -> dict[str, bytes]:
    return {"overcloud.yaml": TEMPLATE, "environments/e.yaml": ENV,
            "nested/x.yaml": b"heat_template_version: wallaby\n",
            ".tripleo-flow/manifest.json": b"{}"}


def plan_env(**extra: Any) -> dict[str, Any]:
    return {"template": "overcloud.yaml", "environments": [{"path": "environments/e.yaml"}],
            **extra}


URL = "file:///plan/"


def test_registry_paths_become_urls_of_the_plan_root() -> None:
    req = sr.stack_request("oc", files(), plan_env())
    env = yaml.safe_load(req["files"][URL + "environments/e.yaml"])
    assert env["resource_registry"]["OS::X"] == URL + "nested/x.yaml"
    assert URL + "nested/x.yaml" in req["files"]
    assert not any(".tripleo-flow/manifest.json" in name for name in req["files"])
    assert req["environment_files"] == [URL + "environments/e.yaml",
                                        URL + heatfiles.USER_ENVIRONMENT]


def test_references_relative_to_the_referencing_template() -> None:
    """THT's ``type: ../database/mysql-client.yaml`` and ``get_file`` of a script."""
    plan = {
        "overcloud.yaml": b"resources: {R: {type: puppet/role.yaml}}\n",
        "puppet/role.yaml": b"resources:\n  C: {type: ../database/mysql-client.yaml}\n"
                            b"  S: {type: OS::Heat::Value, properties: "
                            b"{value: {get_file: ../scripts/run.sh}}}\n",
        "database/mysql-client.yaml": b"parameters: {P: {type: string}}\n",
        "scripts/run.sh": b"#!/bin/sh\necho hi\n",
    }
    req = sr.stack_request("oc", plan, {"template": "overcloud.yaml"})
    role = yaml.safe_load(req["files"][URL + "puppet/role.yaml"])
    assert role["resources"]["C"]["type"] == URL + "database/mysql-client.yaml"
    assert role["resources"]["S"]["properties"]["value"]["get_file"] == URL + "scripts/run.sh"
    assert req["files"][URL + "scripts/run.sh"] == "#!/bin/sh\necho hi\n"
    assert req["template"]["resources"]["R"]["type"] == URL + "puppet/role.yaml"


@pytest.mark.parametrize("env,expected", [
    (plan_env(), []),
    ({"template": "overcloud.yaml"}, ["Needed of overcloud.yaml"]),
    ({"template": "overcloud.yaml", "parameter_defaults": {"Needed": 1}}, []),
    ({"template": "overcloud.yaml", "passwords": {"Needed": "p"}}, []),
])
def test_missing_parameters(env: dict[str, Any], expected: list[str]) -> None:
    checked = sr.deploy_request("oc", files(), env, 1)
    assert [str(m) for m in checked.missing] == expected


@pytest.mark.parametrize("declared,action,expected", [
    ({"StackAction", "DeployIdentifier", "UpdateIdentifier", "RootStackName", "Other"},
     "CREATE", {"StackAction": "CREATE", "DeployIdentifier": 7, "UpdateIdentifier": "",
                "RootStackName": "oc"}),
    ({"DeployIdentifier", "RootStackName"}, "UPDATE",
     {"DeployIdentifier": 7, "RootStackName": "oc"}),
    (set(), "CREATE", {}),
])
def test_client_parameters_only_for_declared_ones(declared: set[str], action: str,
                                                  expected: dict[str, Any]) -> None:
    assert sr.client_parameters(declared, "oc", action, 7) == expected


IMAGE_TEMPLATE = b"""parameters:
  Needed: {type: string, default: x}
  StackAction: {type: string}
  DeployIdentifier: {type: string, default: ''}
resources:
  Svc: {type: svc.yaml}
"""
SVC = b"parameters:\n  ContainerKeystoneImage: {type: string}\n  StackAction: {type: string}\n"


@pytest.mark.parametrize("user,image", [
    ({}, "quay.io/tripleomastercentos9/openstack-keystone:current-tripleo"),
    ({"ContainerKeystoneImage": "mine"}, "mine"),
    ({"ContainerImagePrepare": [{"set": {"namespace": "reg:5000/t", "tag": "t1"}}]},
     "reg:5000/t/openstack-keystone:t1"),
])
def test_deploy_request_computes_images_that_user_values_override(
        user: dict[str, Any], image: str) -> None:
    plan = {"overcloud.yaml": IMAGE_TEMPLATE, "svc.yaml": SVC}
    checked = sr.deploy_request("oc", plan, {"parameter_defaults": user}, 42)
    assert checked.missing == []
    req = checked.request
    assert req["environment_files"][0] == URL + sr.COMPUTED_ENVIRONMENT
    assert req["environment_files"][-1] == URL + sr.CLIENT_ENVIRONMENT
    values = sr.effective_parameters(req)
    assert values["ContainerKeystoneImage"] == image
    assert values["StackAction"] == "CREATE" and values["DeployIdentifier"] == 42
    assert sr.effective_parameters(sr.set_stack_action(req, "UPDATE"))["StackAction"] == "UPDATE"


def test_set_stack_action_leaves_a_tree_without_it_alone() -> None:
    checked = sr.deploy_request("oc", files(), plan_env(), 1)
    assert "StackAction" not in sr.effective_parameters(
        sr.set_stack_action(checked.request, "UPDATE"))


@pytest.mark.parametrize("env,value", [
    (plan_env(), "from-env"),
    (plan_env(parameter_defaults={"Needed": "user"}), "user"),
    (plan_env(passwords={"Needed": "pw"}), "pw"),
    (plan_env(passwords={"Needed": "pw"}, parameter_defaults={"Needed": "user"}), "user"),
    (plan_env(environments=[{"path": "environments/e.yaml"},
                            {"data": {"parameter_defaults": {"Needed": "inline"}}}]), "inline"),
])
def test_effective_parameters_order(env: dict[str, Any], value: str) -> None:
    assert sr.effective_parameters(sr.stack_request("oc", files(), env))["Needed"] == value


@pytest.mark.parametrize("last,warnings", [
    (None, []),
    ({"parameters": {}, "environment_files": [URL + "environments/e.yaml"]}, []),
    ({"parameters": {"CephClusterFSID": "a"}, "environment_files": []}, []),
    ({"parameters": {}, "environment_files": ["environments/gone.yaml"]},
     ["Environment environments/gone.yaml was used by the last deployment and is not used now."]),
])
def test_check_against_last(last: dict[str, Any] | None, warnings: list[str]) -> None:
    req = sr.stack_request("oc", files(), plan_env(parameter_defaults={"CephClusterFSID": "a"}))
    assert sr.check_against_last(req, last) == warnings


@pytest.mark.parametrize("now", [{"CephClusterFSID": "fsid-b"}, {}])
def test_changed_fsid_refused(now: dict[str, Any]) -> None:
    req = sr.stack_request("oc", files(), plan_env(parameter_defaults=now))
    with pytest.raises(exceptions.InvalidInput) as err:
        sr.check_against_last(req, {"parameters": {"CephClusterFSID": "fsid-a"}})
    assert "CephClusterFSID" in str(err.value) and "parameter set" in str(err.value)
    assert "fsid-" not in str(err.value)  # a secret: its values are not quoted


@pytest.mark.parametrize("env,needle", [
    ({"template": "missing.yaml"}, "missing.yaml"),
    ({"template": "overcloud.yaml", "environments": [{"path": "nope.yaml"}]}, "nope.yaml"),
])
def test_missing_files(env: dict[str, Any], needle: str) -> None:
    with pytest.raises(exceptions.InvalidTemplate) as err:
        sr.stack_request("oc", files(), env)
    assert needle in str(err.value)
