"""Properties of the pure core for arbitrary input (hypothesis): each function either
succeeds or raises a :class:`~tripleo_flow.exceptions.TripleoFlowError`, never another
exception, and never changes the input it was given.

Bounded and reproducible: ``FUZZ_EXAMPLES`` x 25 examples per property (default
150), derandomized, no example database; the count is printed in the terminal
summary (:mod:`tests.fuzz_report`).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests import hostile
from tests.fuzz_report import count
from tripleo_flow import exceptions
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.plan import capabilities, parameter_schema, planenv, roles

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "6")) * 25
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                    phases=[Phase.explicit, Phase.generate, Phase.shrink],
                    suppress_health_check=list(HealthCheck))
#: YAML documents: plausible ones, hostile ones and arbitrary text.  No alias bomb
#: that expands past memory: branch sandbox adds that limit (see test_yaml_limits).
yaml_texts = st.one_of(
    st.sampled_from(["a: 1\n", "- [1, 2]\n", "a: &x [1]\nb: *x\n", hostile.RECURSIVE_ANCHOR,
                     "a: !!python/object/apply:os.system [id]\n", "a: [\n", "{a: b}: c\n",
                     "\t- x\n", "a: 1\na: 2\n", "--- 1\n--- 2\n", "a: \ud800\n"]),
    st.text(max_size=60), hostile.strings)
json_values = hostile.json_values


def refused_or_ok(call: Callable[..., Any], *args: Any) -> Any:
    """``call(*args)``, or None when it raises a TripleoFlowError; any other exception
    fails the test.  The arguments must be left as they were."""
    before = copy.deepcopy(args)
    count("hypothesis-core")
    try:
        result = call(*args)
    except exceptions.TripleoFlowError as exc:
        assert str(exc), f"{type(exc).__name__} without a message"
        result = None
    assert repr(args) == repr(before), f"{call.__name__} changed its input"
    return result


@SETTINGS
@given(text=yaml_texts, as_bytes=st.booleans())
def test_load_yaml_refuses_clearly(text: str, as_bytes: bool) -> None:
    data: str | bytes = text.encode("utf-8", "surrogatepass") if as_bytes else text
    refused_or_ok(safe_yaml.load_yaml, data, "x.yaml")


@SETTINGS
@given(text=yaml_texts)
def test_parse_plan_environment_refuses_clearly(text: str) -> None:
    refused_or_ok(planenv.parse_plan_environment, text)


plan_environments = st.fixed_dictionaries(
    {"version": st.just(1.0), "name": st.from_regex(r"\A[a-z][a-z0-9-]{0,10}\Z"),
     "template": st.just("overcloud.yaml")},
    optional={"description": st.text(max_size=30),
              "environments": st.lists(st.one_of(
                  st.fixed_dictionaries({"path": st.from_regex(r"\A[a-z/]{1,12}\.yaml\Z")}),
                  st.fixed_dictionaries({"data": st.dictionaries(st.text(max_size=8),
                                                                 json_values, max_size=3)})),
                  max_size=3),
              "parameter_defaults": st.dictionaries(hostile.names, json_values, max_size=4),
              "passwords": st.dictionaries(hostile.names, st.text(max_size=20), max_size=3)})


@SETTINGS
@given(env=plan_environments)
def test_plan_environment_round_trips(env: dict[str, Any]) -> None:
    """What is dumped parses back to the same plan environment, or is refused clearly."""
    dumped = refused_or_ok(safe_yaml.dump_yaml, env)
    if dumped is not None:
        parsed = planenv.parse_plan_environment(dumped)
        for key, value in env.items():
            assert parsed[key] == value or value != value, key  # NaN != NaN


role = st.one_of(json_values, st.fixed_dictionaries(
    {"name": hostile.names},
    optional={"description": json_values, "tags": st.one_of(st.lists(st.sampled_from(
        ["primary", "controller", "x"])), json_values), "CountDefault": json_values,
        "networks": json_values, "ServicesDefault": json_values}))
network = st.one_of(json_values, st.fixed_dictionaries(
    {"name": hostile.names},
    optional={"name_lower": hostile.names, "ip_subnet": st.one_of(
        st.sampled_from(["192.168.24.0/24", "fd00::/64", "10.0.0.1/33"]), json_values),
        "allocation_pools": json_values, "gateway_ip": json_values, "vip": json_values,
        "enabled": json_values}))


@SETTINGS
@given(role_list=st.lists(role, max_size=4), primary=st.booleans())
def test_validate_roles_refuses_clearly(role_list: list[Any], primary: bool) -> None:
    refused_or_ok(lambda r: roles.validate_roles(r, require_primary_tag=primary), role_list)


@SETTINGS
@given(network_list=st.lists(network, max_size=4))
def test_validate_networks_refuses_clearly(network_list: list[Any]) -> None:
    refused_or_ok(roles.validate_networks, network_list)


capability_maps = st.one_of(json_values, st.fixed_dictionaries({"topics": st.lists(
    st.one_of(json_values, st.fixed_dictionaries({"environment_groups": st.lists(
        st.one_of(json_values, st.fixed_dictionaries({"environments": st.lists(
            st.one_of(json_values, st.fixed_dictionaries(
                {"file": st.sampled_from(["a.yaml", "b.yaml", "c.yaml"])},
                optional={"requires": st.lists(st.sampled_from(["a.yaml", "b.yaml",
                                                                "c.yaml", "z.yaml"]))})),
            max_size=3)})), max_size=2)})), max_size=2)}))
FILES = ["a.yaml", "b.yaml", "c.yaml", "overcloud.yaml", "x.j2.yaml"]


@SETTINGS
@given(cmap=capability_maps, selections=st.dictionaries(
    st.one_of(st.sampled_from(FILES + ["z.yaml"]), hostile.strings), st.booleans(),
    max_size=3), purge=st.booleans())
def test_capabilities_refuse_clearly(cmap: Any, selections: dict[str, bool],
                                     purge: bool) -> None:
    env = {"name": "overcloud", "environments": [{"path": "a.yaml"}, {"data": {"x": 1}}]}
    refused_or_ok(capabilities.get_capabilities, cmap, env, FILES)
    refused_or_ok(capabilities.update_environments, env, cmap, FILES, selections, purge)


@SETTINGS
@given(values=st.dictionaries(st.one_of(st.sampled_from(["Count", "Name", "Flag", "Map",
                                                         "List"]), hostile.names),
                              json_values, max_size=4))
def test_parameter_values_refused_clearly(values: dict[str, Any]) -> None:
    schema = {"Count": {"type": "number"}, "Name": {"type": "string"},
              "Flag": {"type": "boolean"}, "Map": {"type": "json"},
              "List": {"type": "comma_delimited_list"}}
    refused_or_ok(parameter_schema.check_values, "overcloud", schema, values)


def test_a_multi_line_string_holding_a_next_line_character_round_trips() -> None:
    """A NEL (U+0085) is a line break to YAML: a multi-line string holding one cannot be
    written as a literal block, and is written in double quotes instead."""
    value = {"config": "line one\x85still line one\nline two\n", "tail": "end\n\x85"}
    assert safe_yaml.load_yaml(safe_yaml.dump_yaml(value), "outputs.yaml") == value
