"""yaql ``format`` calls rewritten for yaql 3, and the forms refused: table-driven."""

from __future__ import annotations

import json

import pytest

from tripleo_flow import exceptions
from tripleo_flow.common import yaql_compat
from tripleo_flow.core.plan import stack_request as sr

# The shapes THT 12.1.0/18.0.0 use (puppet/role.role.j2.yaml, nova-libvirt-common.yaml).
CIDR = 'str("{0}".format($.data).split("/")[-1])'
KEYRING = ('$.data.values().select("{0}.client.{1}.keyring".format($.Cluster, '
           '$.get("User", "openstack")))')


@pytest.mark.parametrize(("expression", "expected"), [
    (CIDR, 'str(concat(str($.data)).split("/")[-1])'),
    (KEYRING, '$.data.values().select(concat(str($.Cluster), ".client.", '
              'str($.get("User", "openstack")), ".keyring"))'),
    ("'{}-{}'.format($.a, $.b)", "concat(str($.a), '-', str($.b))"),
    ('"{{x}}{0}".format(1)', 'concat("{x}", str(1))'),
    ('"{0}".format("{0}".format($.b))', "concat(str(concat(str($.b))))"),
    ('"none".format()', 'concat("none")'),
    # Left alone: no format call, format inside a literal, yaql 3's datetime format.
    ("$.data.first()", "$.data.first()"),
    ('"a.format(b)" + $x', '"a.format(b)" + $x'),
    ('now().format("%Y")', 'now().format("%Y")'),
])
def test_recognised_format_calls_are_rewritten(expression: str, expected: str) -> None:
    assert yaql_compat.rewrite(expression) == expected


@pytest.mark.parametrize(("expression", "why"), [
    ('"{0.__class__}".format($.a)', "not a plain"),      # attribute access (the CVE)
    ('"{0.__class__.__init__.__globals__}".format(1)', "not a plain"),
    ('"{0[0]}".format($.a)', "not a plain"),             # index access
    ('"{0:99999999}".format(1)', "not a plain"),         # huge width
    ('"{0!r}".format(1)', "not a plain"),                # conversion
    ('"{name}".format(name => 1)', "keyword"),
    ('"{1}".format(1)', "has no argument"),
    ('"{} {0}".format(1, 2)', "mixes"),
    ('"{".format(1)', "not a plain"),
    ('"{0}".format(1, , 2)', "empty"),
    ('"{0}".format((1)', "not closed"),
])
def test_other_format_calls_are_refused(expression: str, why: str) -> None:
    with pytest.raises(yaql_compat.UnsupportedFormat, match=why):
        yaql_compat.rewrite(expression)


ROOT = b"""heat_template_version: wallaby
resources:
  Cidr: {type: puppet/cidr.yaml}
"""


def _nested(expression: str) -> bytes:
    return json.dumps({"heat_template_version": "wallaby", "outputs": {"cidr": {"value": {
        "yaql": {"expression": expression, "data": "192.168.24.0/24"}}}}}).encode()


def test_the_request_carries_the_rewrite_and_the_plan_file_is_untouched() -> None:
    files = {"overcloud.yaml": ROOT, "puppet/cidr.yaml": _nested(CIDR),
             "scripts/x.py": b'print("{0}".format(1))'}
    request = sr.stack_request("oc", files, {"template": "overcloud.yaml"})
    nested = json.loads(request["files"]["file:///plan/puppet/cidr.yaml"])
    assert nested["outputs"]["cidr"]["value"]["yaql"]["expression"] == (
        'str(concat(str($.data)).split("/")[-1])')
    assert b".format(" in files["puppet/cidr.yaml"]


def test_a_hostile_format_names_file_and_expression() -> None:
    hostile = '"{0.__class__.__mro__}".format($.data)'
    files = {"overcloud.yaml": ROOT, "puppet/cidr.yaml": _nested(hostile)}
    with pytest.raises(exceptions.InvalidTemplate) as refused:
        sr.stack_request("oc", files, {"template": "overcloud.yaml"})
    assert refused.value.path == "puppet/cidr.yaml"
    assert hostile in str(refused.value) and "concat()" in str(refused.value)


# THT 12.1.0 overcloud.j2.yaml's network CIDRs: empty with some networks, then PEP 479.
CIDRS = "coalesce($.data, []).where(not isEmpty($)).first().split('/')[-1]"


@pytest.mark.parametrize(("expression", "flagged"), [
    (CIDRS, True),
    ("coalesce($.data, []).first()", True),
    ("coalesce($.data, []).first(null)", False),          # a default: never raises
    ("$.data.passwords.where($ != '').first()", False),   # not expected to be empty
    ("$.data.first()", False),
])
def test_first_without_default_on_maybe_empty_data_is_named(expression: str,
                                                            flagged: bool) -> None:
    files = {"overcloud.yaml": ROOT, "puppet/cidr.yaml": _nested(expression)}
    found = sr.deploy_request("oc", files, {"template": "overcloud.yaml"}, 1).risky
    if flagged:
        assert len(found) == 1 and found[0].startswith("puppet/cidr.yaml: ")
        assert expression in found[0] and "StopIteration" in found[0]
    else:
        assert found == []


def test_the_root_template_is_named_by_its_file() -> None:
    root = ROOT.replace(b"resources:", b"outputs:\n  x:\n    value: {yaql: {expression: "
                        b"'\"{0:>9}\".format(1)'}}\nresources:")
    with pytest.raises(exceptions.InvalidTemplate) as refused:
        sr.stack_request("oc", {"overcloud.yaml": root, "puppet/cidr.yaml": _nested(CIDR)},
                         {"template": "overcloud.yaml"})
    assert refused.value.path == "overcloud.yaml"
