"""Container image prepare without a registry: table-driven."""

from __future__ import annotations

from typing import Any

import pytest

from tripleo_flow import exceptions
from tripleo_flow.core.plan import container_images as ci

NS = "quay.io/tripleomastercentos9"


@pytest.mark.parametrize("parameter,image", [
    ("ContainerKeystoneImage", f"{NS}/openstack-keystone:current-tripleo"),
    ("ContainerKeystoneConfigImage", f"{NS}/openstack-keystone:current-tripleo"),
    ("ContainerAodhConfigImage", f"{NS}/openstack-aodh-api:current-tripleo"),
    ("ContainerMysqlClientConfigImage", f"{NS}/openstack-mariadb:current-tripleo"),
    ("ContainerNeutronApiImage", f"{NS}/openstack-neutron-server:current-tripleo"),
    ("ContainerOvnMetadataImage", f"{NS}/openstack-neutron-metadata-agent-ovn:current-tripleo"),
    ("ContainerNovaVncProxyImage", f"{NS}/openstack-nova-novncproxy:current-tripleo"),
    ("ContainerCrondImage", f"{NS}/openstack-cron:current-tripleo"),
    ("ContainerAEEImage", f"{NS}/tripleo-ansible-ee:current-tripleo"),
    ("ContainerCephDaemonImage", "quay.rdoproject.org/tripleomastercentos9/daemon:current-ceph"),
    ("GrafanaContainerImage", "quay.io/ceph/ceph-grafana:6.7.4"),
    # not in TripleO's list: named after the parameter
    ("ContainerNovaImage", f"{NS}/openstack-nova:current-tripleo"),
    ("ContainerOpenvswitchNetcontroldImage",
     f"{NS}/openstack-openvswitch-netcontrold:current-tripleo"),
    ("ContainerLiquidioConfigImage", f"{NS}/openstack-liquidio:current-tripleo"),
])
def test_default_prepare(parameter: str, image: str) -> None:
    prepared = ci.prepare([parameter, "NotAnImage"])
    assert prepared.parameters == {parameter: image}
    assert prepared.warnings == []


KEYSTONE, NOVA = "ContainerKeystoneImage", "ContainerNovaApiImage"


@pytest.mark.parametrize("entries,expected", [
    ([{"set": {"namespace": "r:8787/ns", "name_prefix": "centos-binary", "tag": "t"}}],
     {KEYSTONE: "r:8787/ns/centos-binary-keystone:t", NOVA: "r:8787/ns/centos-binary-nova-api:t"}),
    ([{"set": {"name_prefix": "", "name_suffix": "x"}}],
     {KEYSTONE: f"{NS}/keystone-x:current-tripleo", NOVA: f"{NS}/nova-api-x:current-tripleo"}),
    # includes: only the matching images; a later entry wins
    ([{"set": {"tag": "a"}}, {"set": {"tag": "b"}, "includes": ["nova"]}],
     {KEYSTONE: f"{NS}/openstack-keystone:a", NOVA: f"{NS}/openstack-nova-api:b"}),
    # excludes: those are left to another entry (here: none, so unset)
    ([{"set": {"tag": "a"}, "excludes": ["keystone"]}], {NOVA: f"{NS}/openstack-nova-api:a"}),
    # includes win over excludes
    ([{"includes": ["keystone"], "excludes": ["keystone"]}],
     {KEYSTONE: f"{NS}/openstack-keystone:current-tripleo"}),
    ([{"push_destination": "192.168.24.1:8787"}],
     {KEYSTONE: "192.168.24.1:8787/tripleomastercentos9/openstack-keystone:current-tripleo",
      NOVA: "192.168.24.1:8787/tripleomastercentos9/openstack-nova-api:current-tripleo"}),
])
def test_operator_prepare(entries: list[dict[str, Any]], expected: dict[str, str]) -> None:
    assert ci.prepare([KEYSTONE, NOVA], entries).parameters == expected


@pytest.mark.parametrize("entry,needle", [
    ({"tag_from_label": "rdo_version", "set": {"namespace": "x"}}, "tag_from_label 'rdo_version'"),
    ({"push_destination": True}, "push_destination: true"),
    ({"modify_role": "tripleo-modify-image"}, "modify_role"),
])
def test_what_needs_a_registry_is_said(entry: dict[str, Any], needle: str) -> None:
    prepared = ci.prepare([KEYSTONE], [entry])
    assert len(prepared.warnings) == 1 and needle in prepared.warnings[0]
    assert prepared.parameters[KEYSTONE].endswith(":current-tripleo")


def test_tag_from_label_with_a_tag_is_silent() -> None:
    assert ci.prepare([KEYSTONE], [{"tag_from_label": "l", "set": {"tag": "t"}}]).warnings == []


@pytest.mark.parametrize("entries,needle", [
    ({"set": {}}, "must be a list"),
    (["x"], "entry 0: an entry must be a mapping"),
    ([{"set": ["a"]}], "'set' must be a mapping"),
    ([{"includes": "nova"}], "'includes' must be a list"),
    ([{"excludes": ["("]}], "invalid regular expression"),
])
def test_malformed_prepare_is_refused(entries: Any, needle: str) -> None:
    with pytest.raises(exceptions.InvalidParameter) as err:
        ci.prepare([KEYSTONE], entries)
    assert needle in str(err.value) and "ContainerImagePrepare" in str(err.value)
