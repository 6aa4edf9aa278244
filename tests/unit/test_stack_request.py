"""The stack request of a plan and the pre-deployment checks: table-driven."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tripleo_flow import exceptions
from tripleo_flow.core import stack_request as sr

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


def test_registry_paths_become_plan_relative() -> None:
    req = sr.stack_request("oc", files(), plan_env())
    env = yaml.safe_load(req["files"]["environments/e.yaml"])
    assert env["resource_registry"]["OS::X"] == "nested/x.yaml"
    assert ".tripleo-flow/manifest.json" not in req["files"]
    assert req["environment_files"] == ["environments/e.yaml", sr.USER_ENVIRONMENT]


@pytest.mark.parametrize("env,expected", [
    (plan_env(), []),
    ({"template": "overcloud.yaml"}, ["Needed"]),
    ({"template": "overcloud.yaml", "parameter_defaults": {"Needed": 1}}, []),
    ({"template": "overcloud.yaml", "passwords": {"Needed": "p"}}, []),
])
def test_missing_parameters(env: dict[str, Any], expected: list[str]) -> None:
    assert sr.missing_parameters(sr.stack_request("oc", files(), env)) == expected


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
    ({"parameters": {"CephClusterFSID": "a"}, "environment_files": []}, []),
    ({"parameters": {}, "environment_files": ["environments/gone.yaml"]},
     ["Environment environments/gone.yaml was used by the last deployment and is not used now."]),
])
def test_check_against_last(last: dict[str, Any] | None, warnings: list[str]) -> None:
    req = sr.stack_request("oc", files(), plan_env(parameter_defaults={"CephClusterFSID": "a"}))
    assert sr.check_against_last(req, last) == warnings


@pytest.mark.parametrize("now", [{"CephClusterFSID": "b"}, {}])
def test_changed_fsid_refused(now: dict[str, Any]) -> None:
    req = sr.stack_request("oc", files(), plan_env(parameter_defaults=now))
    with pytest.raises(exceptions.InvalidInput) as err:
        sr.check_against_last(req, {"parameters": {"CephClusterFSID": "a"}})
    assert "CephClusterFSID" in str(err.value) and "parameters set" in str(err.value)


@pytest.mark.parametrize("env,needle", [
    ({"template": "missing.yaml"}, "missing.yaml"),
    ({"template": "overcloud.yaml", "environments": [{"path": "nope.yaml"}]}, "nope.yaml"),
])
def test_missing_files(env: dict[str, Any], needle: str) -> None:
    with pytest.raises(exceptions.InvalidTemplate) as err:
        sr.stack_request("oc", files(), env)
    assert needle in str(err.value)
