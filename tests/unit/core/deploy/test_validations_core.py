"""Validation playbook metadata, selection, host checks and result records (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from tripleo_flow.core.deploy import validations as core

PLAYBOOK = b"""
- hosts: undercloud
  vars:
    metadata:
      name: Check something
      description: >
        Checks
        something.
      groups: [prep, pre-deployment]
      categories: [os]
      products: [common]
    limit: 8
  roles: [x]
"""


def test_parse_playbook_reads_metadata_and_parameters() -> None:
    found = core.parse_playbook("check-x", PLAYBOOK)
    assert found.as_dict() == {
        "id": "check-x", "name": "Check something", "description": "Checks something.",
        "groups": ["prep", "pre-deployment"], "categories": ["os"], "products": ["common"],
        "hosts": "undercloud", "parameters": {"limit": 8}}


@pytest.mark.parametrize("text, reason", [
    (b"- hosts: all\n  roles: [x]\n", "no vars.metadata"),
    (b"hosts: all\n", "not a playbook"),
    (b"[", "not YAML"),
    (b"- hosts: all\n  vars:\n    metadata: [a]\n", "no vars.metadata"),
])
def test_parse_playbook_refuses(text: bytes, reason: str) -> None:
    with pytest.raises(core.MetadataError, match=reason):
        core.parse_playbook("v", text)


@pytest.mark.parametrize("name, ok", [
    ("no-op", True), ("check_cpu.v2", True), ("../etc", False), ("a/b", False), ("", False),
    ("-x", False), ("x" * 129, False), ("a b", False),
])
def test_check_id(name: str, ok: bool) -> None:
    if ok:
        assert core.check_id(name) == name
    else:
        with pytest.raises(ValueError):
            core.check_id(name)


def _v(vid: str, groups: tuple[str, ...], categories: tuple[str, ...]) -> core.Validation:
    return core.Validation(vid, vid, "", groups, categories, ("common",), "all")


VALIDATIONS = [_v("b", ("prep",), ("os",)), _v("a", ("prep", "pre-deployment"), ("dns",)),
               _v("c", ("post",), ("os",))]


@pytest.mark.parametrize("group, category, expected", [
    (None, None, ["a", "b", "c"]), ("prep", None, ["a", "b"]), (None, "os", ["b", "c"]),
    ("prep", "os", ["b"]), ("none", None, []),
])
def test_select(group: str | None, category: str | None, expected: list[str]) -> None:
    assert [v.id for v in core.select(VALIDATIONS, group, category)] == expected


INVENTORY = {"Controller": {"hosts": {"c-0": {}}, "children": {"mysql": {"hosts": {}}}},
             "all": {"hosts": {}}}


@pytest.mark.parametrize("pattern, missing", [
    ("localhost", []), ("all", []), ("Controller", []), ("mysql", []), ("c-0", []),
    ("undercloud", ["undercloud"]), ("undercloud, allovercloud", ["undercloud", "allovercloud"]),
    ("undercloud:Controller", []), ("{{ controller_rolename | default('Controller') }}", []),
    ("{{ x | default('Compute') }}", ["Compute"]), ("{{ x }}", []), ("web*", []),
])
def test_missing_hosts(pattern: str, missing: list[str]) -> None:
    assert core.missing_hosts(pattern, INVENTORY) == missing


def _log(stats: dict[str, Any], failures: list[tuple[str, str, str]]) -> dict[str, Any]:
    return {"stats": stats, "validation_output": [
        {"task": {"name": task, "hosts": {host: {"msg": msg}}}} for host, task, msg in failures]}


OK = {"ok": 1, "failures": 0, "unreachable": 0}


@pytest.mark.parametrize("log, rc, output, hosts, status, per_host, reasons", [
    (_log({"h": OK}, []), 0, "", ["h"], "PASSED", {"h": "PASSED"}, []),
    (_log({"h": {**OK, "failures": 1}}, [("h", "Verify", "too few\n cores")]), 2, "", ["h"],
     "FAILED", {"h": "FAILED"}, [{"host": "h", "reason": "Verify: too few cores"}]),
    (_log({"h": {**OK, "unreachable": 1}}, []), 4, "", ["h", "g"], "FAILED",
     {"h": "UNREACHABLE", "g": "SKIPPED"}, []),
    (None, 2, "ERROR! No module named 'novaclient'\n", [], "FAILED", {},
     [{"host": "", "reason": "needs the Python module novaclient"}]),
    (None, 0, "skipping: no hosts matched\n", ["h"], "SKIPPED", {"h": "SKIPPED"},
     [{"host": "", "reason": "skipped: no host of the inventory matched"}]),
    (_log({"h": OK}, []), -15, "", ["h"], "STOPPED", {"h": "PASSED"},
     [{"host": "", "reason": "stopped (signal 15)"}]),
])
def test_result_from_log(log: dict[str, Any] | None, rc: int, output: str, hosts: list[str],
                         status: str, per_host: dict[str, str],
                         reasons: list[dict[str, str]]) -> None:
    result = core.result_from_log(log, rc, output, hosts)
    assert result == {"status": status, "hosts": per_host, "reasons": reasons}


def test_skipped_result_names_what_is_needed() -> None:
    assert core.skipped_result("v", ["undercloud"])["reasons"] == [
        {"host": "", "reason": "skipped: needs undercloud in the inventory"}]


@pytest.mark.parametrize("text, limit, expected", [
    ("short", 10, "short"), ("line1\nline2\nline3", 8, "line3"), ("x" * 20, 5, "xxxxx"),
])
def test_log_tail(text: str, limit: int, expected: str) -> None:
    assert core.log_tail(text, limit) == expected


def test_localhost_inventory_and_summary() -> None:
    inventory = core.localhost_inventory("/v/bin/python")
    assert inventory["all"]["hosts"]["localhost"]["ansible_connection"] == "local"
    assert core.summary({"id": "x", "log": "long", "extra_vars": {"a": 1}}) == {"id": "x"}


@pytest.mark.parametrize("extra_vars, error", [
    ({"minimal_cpu_count": 4, "server_to_lookup": "x"}, None),
    ({"ansible_connection": "ssh"}, "Ansible connection or behaviour variable"),
    ({"ANSIBLE_python_interpreter": "/bin/sh"}, "Ansible connection"),
    ({"a-b": 1}, "not a variable name"),
    ({"": 1}, "not a variable name"),
])
def test_check_extra_vars(extra_vars: dict[str, Any], error: str | None) -> None:
    if error is None:
        core.check_extra_vars(extra_vars)
    else:
        with pytest.raises(ValueError, match=error):
            core.check_extra_vars(extra_vars)


def test_extra_vars_file_marks_every_string_unsafe() -> None:
    text = core.extra_vars_file({"a": "{{ lookup('pipe', 'id') }}", "n": 3,
                                 "l": ["x", {"k": "y"}]}).decode()
    assert "a: !unsafe '{{ lookup(''pipe'', ''id'') }}'" in text
    assert "n: 3" in text and "- !unsafe 'x'" in text and "k: !unsafe 'y'" in text
