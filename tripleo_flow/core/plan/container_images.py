"""Container image prepare without a registry: the ``Container*Image`` parameters (pure).

TripleO's client fills every container image parameter of a plan from the
``ContainerImagePrepare`` parameter: a list of entries, each with ``set:``
(``namespace``, ``name_prefix``, ``name_suffix``, ``tag``, the ``ceph_*``
names...), optional ``includes`` / ``excludes`` (regular expressions searched
in the full image name; with ``includes``, ``excludes`` is ignored), applied
in order (a later entry wins).  Without one, TripleO's default entry is used
(:data:`DEFAULT_PREPARE`).  Which image a parameter names is a fact of
TripleO's image list (:data:`IMAGES`, read from tripleo-common); a parameter
missing from it is named after itself (``ContainerFooBarConfigImage`` ->
``foo-bar``), so that every image parameter of the plan gets a value.

No registry is contacted, so what needs one is not done and said so:
``tag_from_label`` (the tag stays the entry's or the default ``tag``),
``push_destination: true`` (the undercloud registry's address is unknown;
a ``host:port`` string replaces the registry part of the names), image
modification (``modify_role``).  ``neutron_driver`` and ``ceph_images``
filter nothing: images of both drivers and Ceph's get their values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tripleo_flow import exceptions

PARAMETER = "ContainerImagePrepare"
#: tripleo-common's default ``set`` (container_image_prepare_defaults.yaml, master).
DEFAULT_SET: dict[str, Any] = {
    "namespace": "quay.io/tripleomastercentos9", "name_prefix": "openstack-",
    "name_suffix": "", "tag": "current-tripleo", "rhel_containers": False,
    "neutron_driver": "ovn",
    "ceph_namespace": "quay.rdoproject.org/tripleomastercentos9", "ceph_image": "daemon",
    "ceph_tag": "current-ceph",
    "ceph_prometheus_namespace": "quay.io/prometheus", "ceph_prometheus_image": "prometheus",
    "ceph_prometheus_tag": "v2.33.4",
    "ceph_alertmanager_namespace": "quay.io/prometheus",
    "ceph_alertmanager_image": "alertmanager", "ceph_alertmanager_tag": "v0.23.0",
    "ceph_node_exporter_namespace": "quay.io/prometheus",
    "ceph_node_exporter_image": "node-exporter", "ceph_node_exporter_tag": "v1.3.1",
    "ceph_grafana_namespace": "quay.io/ceph", "ceph_grafana_image": "ceph-grafana",
    "ceph_grafana_tag": "6.7.4",
    "ceph_haproxy_namespace": "quay.io/ceph", "ceph_haproxy_image": "haproxy",
    "ceph_haproxy_tag": "2.3",
    "ceph_keepalived_namespace": "quay.io/ceph", "ceph_keepalived_image": "keepalived",
    "ceph_keepalived_tag": "2.1.5",
    "pushgateway_namespace": "quay.io/prometheus", "pushgateway_image": "pushgateway",
    "pushgateway_tag": "v1.4.2",
}
#: TripleO's default ``ContainerImagePrepare`` (its tag_from_label is unused: ``tag`` is set).
DEFAULT_PREPARE: list[dict[str, Any]] = [{"tag_from_label": "rdo_version", "set": DEFAULT_SET}]
_OPENSTACK = "{namespace}/{name_prefix}IMAGE{name_suffix}:{tag}"
#: OpenStack images (named ``namespace/name_prefix + image + name_suffix:tag``) and the
#: parameters ``Container<X>Image`` each one fills, by ``<X>``.
_OPENSTACK_IMAGES = """
aodh-api: AodhApi AodhConfig
aodh-evaluator: AodhEvaluator
aodh-listener: AodhListener
aodh-notifier: AodhNotifier
barbican-api: BarbicanApi BarbicanConfig
barbican-keystone-listener: BarbicanKeystoneListenerConfig BarbicanKeystoneListener
barbican-worker: BarbicanWorkerConfig BarbicanWorker
ceilometer-central: CeilometerCentral CeilometerConfig
ceilometer-compute: CeilometerCompute
ceilometer-ipmi: CeilometerIpmi
ceilometer-notification: CeilometerNotification
cinder-api: CinderApi CinderConfig
cinder-backup: CinderBackup
cinder-scheduler: CinderScheduler
cinder-volume: CinderVolume
collectd: CollectdConfig Collectd
cron: CrondConfig Crond
designate-api: DesignateApiConfig DesignateApi
designate-backend-bind9: DesignateBackendBIND9
designate-base: DesignateConfig
designate-central: DesignateCentral
designate-mdns: DesignateMDNS
designate-producer: DesignateProducer
designate-sink: DesignateSink
designate-worker: DesignateWorker
ec2-api: Ec2ApiConfig Ec2Api
etcd: EtcdConfig Etcd
fluentd: FluentdClient FluentdConfig Fluentd
frr: Frr
glance-api: GlanceApiConfig GlanceApi GlanceApiInternalConfig
gnocchi-api: GnocchiApi GnocchiConfig
gnocchi-metricd: GnocchiMetricd
gnocchi-statsd: GnocchiStatsd
haproxy: HAProxyConfig HAProxy
heat-all: HeatAll
heat-api: HeatApiConfig HeatApi HeatConfig
heat-api-cfn: HeatApiCfnConfig HeatApiCfn
heat-engine: HeatEngine
horizon: HorizonConfig Horizon
ironic-api: IronicApiConfig IronicApi
ironic-conductor: IronicConductor
ironic-inspector: IronicInspectorConfig IronicInspector
ironic-neutron-agent: IronicNeutronAgent
ironic-pxe: IronicConfig IronicPxe
iscsid: IscsidConfig Iscsid
keepalived: KeepalivedConfig Keepalived
keystone: KeystoneConfig Keystone
manila-api: ManilaApi ManilaConfig
manila-scheduler: ManilaScheduler
manila-share: ManilaShare
mariadb: ClustercheckConfig Clustercheck MysqlClientConfig MysqlConfig Mysql
memcached: MemcachedConfig Memcached
mistral-api: MistralApi MistralConfig
mistral-engine: MistralEngine
mistral-event-engine: MistralEventEngine
mistral-executor: MistralExecutor
multipathd: MultipathdConfig Multipathd
neutron-dhcp-agent: NeutronDHCP
neutron-l3-agent: NeutronL3Agent
neutron-metadata-agent: NeutronMetadata
neutron-metadata-agent-ovn: OvnMetadata
neutron-mlnx-agent: NeutronMlnx
neutron-openvswitch-agent: Openvswitch
neutron-server: NeutronApi NeutronConfig
neutron-sriov-agent: NeutronSriov
nova-api: NovaApi NovaConfig NovaMetadataConfig NovaMetadata
nova-compute: NovaCompute NovaLibvirtConfig
nova-compute-ironic: NovaComputeIronic
nova-conductor: NovaConductor
nova-libvirt: NovaLibvirt
nova-novncproxy: NovaVncProxy
nova-scheduler: NovaScheduler
nova-serialproxy: NovaSerialproxyConfig NovaSerialproxy
novajoin-notifier: NovajoinNotifier
novajoin-server: NovajoinConfig NovajoinServer
octavia-api: OctaviaApi OctaviaConfig OctaviaDriverAgentConfig OctaviaDriverAgent
octavia-health-manager: OctaviaHealthManager
octavia-housekeeping: OctaviaHousekeeping
octavia-worker: OctaviaWorker
opendaylight: OpendaylightApi OpendaylightConfig
ovn-bgp-agent: OvnBgpAgent
ovn-controller: OvnControllerConfig OvnController
ovn-nb-db-server: OvnNbDb
ovn-northd: OvnDbsConfig OvnDbs OvnNorthd
ovn-sb-db-server: OvnSbDb
panko-api: PankoApi PankoConfig
placement-api: PlacementConfig Placement
qdrouterd: MetricsQdrConfig MetricsQdr QdrouterdConfig Qdrouterd
rabbitmq: RabbitmqConfig Rabbitmq
redis: RedisConfig Redis
rsyslog: OctaviaRsyslog RsyslogConfig Rsyslog RsyslogSidecarConfig RsyslogSidecar
sahara-api: SaharaApi SaharaConfig
sahara-engine: SaharaEngine
sensu-client: SensuClient SensuConfig
skydive-agent: SkydiveAgent
skydive-analyzer: SkydiveAnalyzer
swift-account: SwiftAccount
swift-container: SwiftContainer
swift-object: SwiftObject
swift-proxy-server: SwiftConfig SwiftProxy
tempest: Tempest
tripleoclient: TripleoClient Tripleoclient
unbound: UnboundConfig Unbound
zaqar-wsgi: ZaqarConfig Zaqar
"""
_OTHER_IMAGES = {
    "ContainerAEEImage": "{namespace}/tripleo-ansible-ee:{tag}",
    "ContainerCeilometerPushgatewayImage":
        "{pushgateway_namespace}/{pushgateway_image}:{pushgateway_tag}",
    "ContainerCephDaemonImage": "{ceph_namespace}/{ceph_image}:{ceph_tag}",
    "PrometheusContainerImage":
        "{ceph_prometheus_namespace}/{ceph_prometheus_image}:{ceph_prometheus_tag}",
    "AlertManagerContainerImage":
        "{ceph_alertmanager_namespace}/{ceph_alertmanager_image}:{ceph_alertmanager_tag}",
    "NodeExporterContainerImage":
        "{ceph_node_exporter_namespace}/{ceph_node_exporter_image}:{ceph_node_exporter_tag}",
    "GrafanaContainerImage": "{ceph_grafana_namespace}/{ceph_grafana_image}:{ceph_grafana_tag}",
    "HaproxyContainerImage": "{ceph_haproxy_namespace}/{ceph_haproxy_image}:{ceph_haproxy_tag}",
    "KeepalivedContainerImage":
        "{ceph_keepalived_namespace}/{ceph_keepalived_image}:{ceph_keepalived_tag}",
}


def _openstack(image: str) -> str:
    return _OPENSTACK.replace("IMAGE", image)


def _table() -> dict[str, str]:
    images = dict(_OTHER_IMAGES)
    for line in _OPENSTACK_IMAGES.strip().splitlines():
        image, _, names = line.partition(":")
        for name in names.split():
            images[f"Container{name}Image"] = _openstack(image)
    return images


#: Parameter name -> image name template (``str.format`` fields from an entry's ``set``).
IMAGES: dict[str, str] = _table()


@dataclass(frozen=True)
class Prepared:
    """The computed parameter values, and what could not be done without a registry."""

    parameters: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def is_image_parameter(name: str) -> bool:
    """Whether ``name`` is a container image parameter (``Container*Image`` or a known one)."""
    return (name.startswith("Container") and name.endswith("Image")) or name in IMAGES


def image_template(parameter: str) -> str:
    """The image name template of ``parameter``: TripleO's, or one named after it."""
    known = IMAGES.get(parameter)
    if known is not None:
        return known
    stem = parameter
    if stem.startswith("Container") and stem.endswith("Image"):
        stem = stem[len("Container"):-len("Image")]
    if stem.endswith("Config") and len(stem) > len("Config"):
        stem = stem[:-len("Config")]
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", stem)
    return _openstack("-".join(w.lower() for w in words))


def _invalid(index: int, what: str) -> exceptions.InvalidParameter:
    return exceptions.InvalidParameter(
        f"{PARAMETER} entry {index}: {what}. Each entry is a mapping with 'set' (namespace, "
        "name_prefix, name_suffix, tag...) and optional 'includes' / 'excludes' (lists of "
        "regular expressions); fix it in the environment or parameters that set it.")


def _patterns(entry: Mapping[str, Any], key: str, index: int) -> list[re.Pattern[str]]:
    raw = entry.get(key) or []
    if not isinstance(raw, list) or not all(isinstance(p, str) for p in raw):
        raise _invalid(index, f"'{key}' must be a list of regular expressions")
    try:
        return [re.compile(p) for p in raw]
    except re.error as exc:
        raise _invalid(index, f"'{key}' has an invalid regular expression ({exc})") from exc


def _mapping(entry: Mapping[str, Any], index: int) -> dict[str, Any]:
    given = entry.get("set") or {}
    if not isinstance(given, Mapping):
        raise _invalid(index, "'set' must be a mapping")
    mapping = {**DEFAULT_SET, **given}
    prefix, suffix = str(mapping["name_prefix"] or ""), str(mapping["name_suffix"] or "")
    mapping["name_prefix"] = prefix + "-" if prefix and not prefix.endswith("-") else prefix
    mapping["name_suffix"] = "-" + suffix if suffix and not suffix.startswith("-") else suffix
    return mapping


def _entry_warnings(entry: Mapping[str, Any], index: int, tag: Any) -> list[str]:
    warnings = []
    label = entry.get("tag_from_label")
    if label and not (entry.get("set") or {}).get("tag"):
        warnings.append(
            f"{PARAMETER} entry {index} asks for tag_from_label {label!r}, which needs the "
            f"image registry; tripleo-flow contacts none, so its images use tag {tag!r}. "
            "Set 'tag' in the entry's 'set' to choose another.")
    if entry.get("push_destination") is True:
        warnings.append(
            f"{PARAMETER} entry {index} has push_destination: true, which means the "
            "undercloud registry; tripleo-flow does not know its address, so the images "
            "keep their registry. Give push_destination as HOST:PORT instead.")
    if entry.get("modify_role"):
        warnings.append(
            f"{PARAMETER} entry {index} asks for modify_role {entry['modify_role']!r}: "
            "tripleo-flow does not modify images; the parameters name the unmodified ones.")
    return warnings


def prepare(parameters: Iterable[str],
            entries: Sequence[Mapping[str, Any]] | None = None) -> Prepared:
    """The value of each image parameter in ``parameters`` from ``entries``.

    :param parameters: the plan's image parameter names (others are ignored).
    :param entries: the ``ContainerImagePrepare`` value; None or empty: TripleO's default.
    :raises InvalidParameter: when an entry is malformed.
    """
    if not entries:
        entries = DEFAULT_PREPARE
    if not isinstance(entries, list):
        raise exceptions.InvalidParameter(
            f"{PARAMETER} must be a list of entries, not {type(entries).__name__}; "
            "see TripleO's container_image_prepare_defaults.yaml for its shape.")
    names = sorted({p for p in parameters if is_image_parameter(p)})
    result: dict[str, str] = {}
    warnings: list[str] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            raise _invalid(index, "an entry must be a mapping")
        mapping = _mapping(entry, index)
        includes = _patterns(entry, "includes", index)
        excludes = _patterns(entry, "excludes", index)
        warnings.extend(_entry_warnings(entry, index, mapping["tag"]))
        destination = entry.get("push_destination")
        for name in names:
            try:
                image = image_template(name).format(**mapping)
            except (KeyError, IndexError, ValueError) as exc:
                raise _invalid(index, f"its 'set' cannot name the image of {name} "
                                      f"(missing {exc})") from exc
            if includes:
                if not any(p.search(image) for p in includes):
                    continue
            elif any(p.search(image) for p in excludes):
                continue
            if isinstance(destination, str) and destination:
                image = f"{destination}/{image.partition('/')[2]}"
            result[name] = image
    return Prepared(result, warnings)
