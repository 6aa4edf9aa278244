"""THT's yaql ``"{0}".format(...)`` reaches CREATE_COMPLETE on Heat's yaql 3.

The sample plan plus a nested template (its own directory, as THT's
``puppet/role.role.j2.yaml``) whose yaql expressions have the shapes THT 18.0.0
uses, fed by a value Heat only knows at run time (an ``OS::Heat::Value``, as
THT's ``get_attr`` on the server's addresses): deployed on the real native
heat-all, a resource property made with them (as THT's ``NetIpMap``)
holds the formatted strings and the plan's file still
holds ``format`` as uploaded.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.functional.heat.conftest import make_conf
from tripleo_flow import exceptions
from tripleo_flow.client import Client
from tripleo_flow.client.plans import sample_plan_dir
from tripleo_flow.plans.local import LocalStore

pytestmark = pytest.mark.functional

NESTED = """heat_template_version: wallaby
resources:
  Address:
    type: OS::Heat::Value
    properties:
      value: {cidr: 192.168.24.0/24}
  Formatted:
    type: OS::Heat::Value
    properties:
      value:
        cidr:
          yaql:
            expression: str("{0}".format($.data).split("/")[-1])
            data: {get_attr: [Address, value, cidr]}
        keyrings:
          yaql:
            expression: >-
              let(u => "openstack") -> $.data.values().select(
              "{0}.client.{1}.keyring".format($.Cluster, $.get("User", $u)))
            data: {a: {Cluster: ceph2}, b: {Cluster: c3, User: u}}
outputs:
  formatted:
    value: {get_attr: [Formatted, value]}
"""
RESOURCE = "\nresources:\n  YaqlFormat: {type: yaql/format.yaml}\n"
OUTPUT = "\noutputs:\n  YaqlFormat:\n    value: {get_attr: [YaqlFormat]}\n"


def _templates(tmp_path: Path, nested: str) -> Path:
    tree = shutil.copytree(sample_plan_dir(), tmp_path / "templates")
    root = tree / "overcloud.j2.yaml"
    text = root.read_text()
    root.write_text(text.replace("\nresources:\n", RESOURCE, 1).replace("\noutputs:\n", OUTPUT, 1))
    (tree / "yaql").mkdir()
    (tree / "yaql" / "format.yaml").write_text(nested)
    return tree


def test_tht_format_expressions_deploy_on_yaql_3(tmp_path: Path, heat_venv: Path) -> None:
    client = Client(make_conf(tmp_path, heat_venv), store=LocalStore(tmp_path / "plans"))
    client.plans.create("oc", _templates(tmp_path, NESTED))
    work = tmp_path / "work"

    client.deployments.create("oc", heat_type="native", work_dir=work)

    saved = yaml.safe_load((work / "outputs.yaml").read_text())
    outputs = saved["outputs"]["YaqlFormat"]["formatted"]
    assert outputs["cidr"] == "24"
    assert sorted(outputs["keyrings"]) == ["c3.client.u.keyring", "ceph2.client.openstack.keyring"]
    assert b'"{0}".format($.data)' in LocalStore(tmp_path / "plans").get_object(
        "oc", "yaql/format.yaml")


def test_a_hostile_format_is_refused_before_heat_starts(tmp_path: Path, heat_venv: Path) -> None:
    hostile = NESTED.replace('"{0}".format', '"{0.__class__.__mro__}".format')
    client = Client(make_conf(tmp_path, heat_venv), store=LocalStore(tmp_path / "plans"))
    client.plans.create("oc", _templates(tmp_path, hostile))
    work = tmp_path / "work"

    with pytest.raises(exceptions.InvalidTemplate) as refused:
        client.deployments.create("oc", heat_type="native", work_dir=work)
    assert "yaql/format.yaml" in str(refused.value) and "__class__" in str(refused.value)
    assert not (work / "outputs.yaml").exists()


EMPTY_FIRST = """heat_template_version: wallaby
resources:
  Cidrs:
    type: OS::Heat::Value
    properties:
      value: []
  Cidr:
    type: OS::Heat::Value
    properties:
      value:
        yaql:
          expression: coalesce($.data, []).where(not isEmpty($)).first().split('/')[-1]
          data: {get_attr: [Cidrs, value]}
"""


def test_first_on_empty_data_is_named_before_heat_fails_it(
        tmp_path: Path, heat_venv: Path, caplog: pytest.LogCaptureFixture) -> None:
    client = Client(make_conf(tmp_path, heat_venv), store=LocalStore(tmp_path / "plans"))
    client.plans.create("oc", _templates(tmp_path, EMPTY_FIRST))

    with caplog.at_level("WARNING"), pytest.raises(exceptions.StackFailed) as failed:
        client.deployments.create("oc", heat_type="native", work_dir=tmp_path / "work")
    # yaql's StopIteration: an error without a message, on the property.
    assert "resources.Cidr.properties.value: ." in str(failed.value)
    # The request check (before Heat is launched) named the file and the expression.
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any(m.startswith("yaql/format.yaml: ") and "first()" in m and "StopIteration" in m
               for m in warned)
