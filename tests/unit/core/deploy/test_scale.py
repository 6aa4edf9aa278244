"""Which group members a scale-down removes, and the parameters sent (core/deploy/scale.py).

The parameter values are tripleo-common's ``ScaleDownAction`` (12.1.0,
``_get_removal_params_from_heat``): per role, ``{Role}Count`` = the members the stack
has less those leaving, ``{Role}RemovalPolicies`` = ``[{resource_list: [member
names]}]`` and ``{Role}RemovalPoliciesMode`` = ``append``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tripleo_flow import exceptions
from tripleo_flow.core.deploy import scale
from tripleo_flow.core.deploy.scale import Member

STACK = "overcloud18"
#: The stack outputs of the redeploy (THT 18.0.0): one controller, two computes.
OUTPUTS = {"AnsibleHostVarsMap": {
    "Controller": {"controller-0": {}, "controller-1": {}},
    "Compute": {"compute-0": {}, "compute-1": {}}, "CephStorage": {}},
    "RoleTags": {"Controller": ["primary", "controller"], "Compute": ["compute"]}}
#: Its parameters (the baremetal deployment's host name map, THT's formats).
PARAMETERS: dict[str, Any] = {
    "ControllerHostnameFormat": "%stackname%-controller-%index%",
    "ComputeHostnameFormat": "%stackname%-novacompute-%index%",
    "HostnameMap": {"overcloud18-controller-0": "controller-0",
                    "overcloud18-controller-1": "controller-1",
                    "overcloud18-novacompute-0": "compute-0",
                    "overcloud18-novacompute-1": "compute-1"}}


@pytest.mark.parametrize("hostname, role, parameters, expected", [
    # Mapped: the generated name the map gives it.
    ("compute-1", "Compute", PARAMETERS, "1"),
    ("controller-0", "Controller", PARAMETERS, "0"),
    # Not mapped: the host name is the generated name.
    ("overcloud18-novacompute-12", "Compute",
     {"ComputeHostnameFormat": "%stackname%-novacompute-%index%"}, "12"),
    # A format without the stack name, and one whose index is not last.
    ("cmp-3.example", "Compute", {"ComputeHostnameFormat": "cmp-%index%.example"}, "3"),
    # The map wins over a host name that looks generated.
    ("overcloud18-novacompute-0", "Compute",
     {**PARAMETERS, "HostnameMap": {"overcloud18-novacompute-4": "overcloud18-novacompute-0"}},
     "4"),
    # Another role's format does not match; nor does another stack's name.
    ("compute-1", "Controller", PARAMETERS, None),
    ("other-novacompute-1", "Compute", {"ComputeHostnameFormat": "%stackname%-novacompute-%index%"},
     None),
    # A leading zero is not an index Heat gives; no format at all.
    ("overcloud18-novacompute-01", "Compute",
     {"ComputeHostnameFormat": "%stackname%-novacompute-%index%"}, None),
    ("compute-1", "Compute", {}, None),
])
def test_member_name(hostname: str, role: str, parameters: dict[str, Any],
                     expected: str | None) -> None:
    assert scale.member_name(hostname, role, parameters, STACK) == expected


def test_a_format_without_one_index_is_refused() -> None:
    with pytest.raises(exceptions.InvalidInput, match="does not hold one %index%"):
        scale.member_name("c", "Compute", {"ComputeHostnameFormat": "compute"}, STACK)


@pytest.mark.parametrize("hosts, expected", [
    (["compute-0"], [Member("compute-0", "Compute", "0")]),
    (["compute-1", "compute-0", "compute-1"],
     [Member("compute-1", "Compute", "1"), Member("compute-0", "Compute", "0")]),
    (["controller-0", "compute-1"],
     [Member("controller-0", "Controller", "0"), Member("compute-1", "Compute", "1")]),
])
def test_select(hosts: list[str], expected: list[Member]) -> None:
    assert scale.select(hosts, OUTPUTS, PARAMETERS, STACK) == expected


@pytest.mark.parametrize("hosts, missing", [
    (["compute-2"], ["compute-2"]),
    (["compute-0", "ghost", "compute-9"], ["ghost", "compute-9"]),
    # The generated name of a mapped server is not its host name.
    (["overcloud18-novacompute-0"], ["overcloud18-novacompute-0"]),
])
def test_a_host_the_stack_has_not_is_refused_naming_it_and_the_servers(
        hosts: list[str], missing: list[str]) -> None:
    with pytest.raises(exceptions.ServersNotInStack) as raised:
        scale.select(hosts, OUTPUTS, PARAMETERS, STACK)
    assert raised.value.missing == missing
    assert raised.value.servers == ["compute-0", "compute-1", "controller-0", "controller-1"]
    assert "nothing was changed" in str(raised.value)


@pytest.mark.parametrize("hosts", [["controller-0", "controller-1"],
                                   ["compute-0", "controller-1", "controller-0"]])
def test_the_primary_role_keeps_one_server(hosts: list[str]) -> None:
    with pytest.raises(exceptions.InvalidInput, match="would leave role Controller") as raised:
        scale.select(hosts, OUTPUTS, PARAMETERS, STACK)
    assert "controller-0, controller-1" in str(raised.value)


def test_every_server_of_another_role_may_leave() -> None:
    members = scale.select(["compute-0", "compute-1"], OUTPUTS, PARAMETERS, STACK)
    assert scale.removal_parameters(members, OUTPUTS, PARAMETERS)["ComputeCount"] == 0


def test_no_host_is_refused() -> None:
    with pytest.raises(exceptions.InvalidInput, match="Name the servers"):
        scale.select([], OUTPUTS, PARAMETERS, STACK)


def test_a_server_whose_member_is_unknown_is_refused() -> None:
    parameters = {**PARAMETERS, "HostnameMap": {}}  # compute-0 no longer maps to an index
    with pytest.raises(exceptions.InvalidInput, match="its group member is unknown"):
        scale.select(["compute-0"], OUTPUTS, parameters, STACK)


@pytest.mark.parametrize("members, parameters, expected", [
    # One compute of two: the count the stack has less one, its member, append.
    ([Member("compute-0", "Compute", "0")], PARAMETERS,
     {"ComputeCount": 1, "ComputeRemovalPolicies": [{"resource_list": ["0"]}],
      "ComputeRemovalPoliciesMode": "append"}),
    # Two roles at once: each its own three parameters.
    ([Member("compute-1", "Compute", "1"), Member("controller-0", "Controller", "0")],
     PARAMETERS,
     {"ComputeCount": 1, "ComputeRemovalPolicies": [{"resource_list": ["1"]}],
      "ComputeRemovalPoliciesMode": "append",
      "ControllerCount": 1, "ControllerRemovalPolicies": [{"resource_list": ["0"]}],
      "ControllerRemovalPoliciesMode": "append"}),
    # A repeated delete: the earlier removals are kept (merged, numerically ordered,
    # once each), whatever mode they were set with; the mode is append again.
    ([Member("compute-1", "Compute", "1")],
     {**PARAMETERS, "ComputeRemovalPolicies": [{"resource_list": ["10", "2"]},
                                               {"resource_list": [2, "1"]}],
      "ComputeRemovalPoliciesMode": "update"},
     {"ComputeCount": 1, "ComputeRemovalPolicies": [{"resource_list": ["1", "2", "10"]}],
      "ComputeRemovalPoliciesMode": "append"}),
    # Another role's earlier removals are not touched (nor sent).
    ([Member("compute-0", "Compute", "0")],
     {**PARAMETERS, "ControllerRemovalPolicies": [{"resource_list": ["1"]}]},
     {"ComputeCount": 1, "ComputeRemovalPolicies": [{"resource_list": ["0"]}],
      "ComputeRemovalPoliciesMode": "append"}),
])
def test_removal_parameters(members: list[Member], parameters: dict[str, Any],
                            expected: dict[str, Any]) -> None:
    assert scale.removal_parameters(members, OUTPUTS, parameters) == expected


def test_repeated_deletes_never_give_back_a_removed_member() -> None:
    """Two scale-downs one after the other: the second's policies hold both."""
    first = scale.removal_parameters([Member("compute-0", "Compute", "0")], OUTPUTS, PARAMETERS)
    outputs = {"AnsibleHostVarsMap": {"Compute": {"compute-1": {}, "compute-2": {}}}}
    second = scale.removal_parameters([Member("compute-2", "Compute", "2")], outputs,
                                      {**PARAMETERS, **first})
    assert second["ComputeRemovalPolicies"] == [{"resource_list": ["0", "2"]}]
    assert second["ComputeCount"] == 1


@pytest.mark.parametrize("policies, expected", [
    (None, []), ([], []), ([{"resource_list": ["3", 4]}], ["3", "4"]),
    ([{"resource_list": None}, "junk", {"other": 1}], []),
])
def test_removal_list(policies: Any, expected: list[str]) -> None:
    assert scale.removal_list(policies) == expected


def test_the_playbook_limit_names_the_leaving_servers_only() -> None:
    members = [Member("compute-0", "Compute", "0"), Member("compute-3", "Compute", "3")]
    assert scale.ansible_limit(members) == "compute-0:compute-3"


@pytest.mark.parametrize("roles, expected", [
    ([{"name": "Compute", "count": 1, "instances": [
        {"hostname": "compute-0", "provisioned": False, "managed": False},
        {"hostname": "compute-1", "managed": False},
        {"hostname": "compute-2", "provisioned": True}]},
      {"name": "Controller", "instances": [{"name": "node-3", "provisioned": False}]}],
     ["compute-0", "node-3"]),
    ([{"name": "Compute", "count": 2}], []),
    ([{"name": "Compute", "instances": [{"hostname": "c", "provisioned": "no"}]}], []),
])
def test_unprovisioned_hosts(roles: Any, expected: list[str]) -> None:
    assert scale.unprovisioned_hosts(roles) == expected


@pytest.mark.parametrize("roles, match", [
    ({"name": "Compute"}, "list of roles"),
    ([{"name": "Compute", "instances": [{"provisioned": False}]}], "has no hostname"),
])
def test_a_bad_baremetal_deployment_is_refused(roles: Any, match: str) -> None:
    with pytest.raises(exceptions.InvalidInput, match=match):
        scale.unprovisioned_hosts(roles)


def test_the_servers_of_a_kept_deployment_by_role(tmp_path: Path) -> None:
    """What GET /v1/plans/{name}/deployment/servers answers: the kept outputs' servers
    (a role without any left out); a work dir with no deployment is refused."""
    from tripleo_flow.actions.deploy import OUTPUTS_FILE
    from tripleo_flow.actions.scale import kept_servers

    (tmp_path / OUTPUTS_FILE).write_text(yaml.safe_dump({"outputs": OUTPUTS}))
    assert kept_servers(tmp_path, STACK) == {"Controller": ["controller-0", "controller-1"],
                                             "Compute": ["compute-0", "compute-1"]}
    with pytest.raises(exceptions.NoKeptStack, match="deploy it first"):
        kept_servers(tmp_path / "nothing", STACK)
