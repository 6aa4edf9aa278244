"""Text of the files an ephemeral Heat runs with (pure: no I/O).

heat.conf follows the ephemeral set-up TripleO used: the in-process ``fake://``
transport (heat-all) or RabbitMQ (pod), a noauth paste pipeline answering with a
canned Keystone token, a fake Keystone client, one API worker, and oslo.policy's
new defaults and scope checks off (with noauth, stack create is refused
otherwise).  ``executor_thread_pool_size`` is raised because parents waiting on
nested stacks otherwise hold every RPC thread and big stacks hang.
"""

from __future__ import annotations

import datetime
import json
import shlex
from dataclasses import dataclass

import yaml

from tripleo_flow.common import safe_yaml

#: Section and option names are Heat's; values come from :class:`HeatSettings`.
_FAKE_KEYSTONE = "heat.engine.clients.os.keystone.fake_keystoneclient.FakeKeystoneClient"


@dataclass(frozen=True)
class HeatSettings:
    """What differs between two Heats: paths, port, database and transport."""

    port: int
    database_url: str
    log_file: str
    token_file: str
    paste_file: str
    transport_url: str = "fake://"
    host: str = "127.0.0.1"
    engine_workers: int = 1
    debug: bool = False


def endpoint_url(host: str, port: int) -> str:
    """The orchestration endpoint clients use (project ``admin``)."""
    return f"http://{host}:{port}/v1/admin"


def heat_conf(s: HeatSettings) -> str:
    """heat.conf for heat-all, heat-api or heat-engine with settings ``s``."""
    sections: dict[str, dict[str, object]] = {
        "DEFAULT": {
            "debug": s.debug,
            "log_file": s.log_file,
            "transport_url": s.transport_url,
            "num_engine_workers": s.engine_workers,
            "executor_thread_pool_size": 1024,
            "rpc_response_timeout": 600,
            "convergence_engine": True,
            "deferred_auth_method": "password",
            "keystone_backend": _FAKE_KEYSTONE,
            "heat_metadata_server_url": f"http://{s.host}:{s.port}/",
            "max_json_body_size": 8388608,
            "max_nested_stack_depth": 10,
            "max_resources_per_stack": -1,
        },
        "noauth": {"token_response": s.token_file},
        "heat_all": {"enabled_services": "api,engine"},
        "heat_api": {"workers": 1, "bind_host": s.host, "bind_port": s.port},
        "database": {"connection": s.database_url, "max_retries": -1},
        "paste_deploy": {"flavor": "noauth", "api_paste_config": s.paste_file},
        "oslo_policy": {"enforce_new_defaults": False, "enforce_scope": False},
        "oslo_messaging_rabbit": {"heartbeat_timeout_threshold": 0},
        "yaql": {"memory_quota": 900000, "limit_iterators": 9000},
    }
    lines = ["# Written by tripleo-flow for an ephemeral Heat; rewritten at each launch."]
    for name, options in sections.items():
        lines.append(f"\n[{name}]")
        for key, value in options.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            lines.append(f"{key} = {text}")
    return "\n".join(lines) + "\n"


def api_paste_ini() -> str:
    """The paste pipeline of the API with no Keystone (flavor ``noauth``)."""
    return (
        "[pipeline:heat-api-noauth]\n"
        "pipeline = faultwrap noauth context versionnegotiation apiv1app\n\n"
        "[app:apiv1app]\n"
        "paste.app_factory = heat.common.wsgi:app_factory\n"
        "heat.app_factory = heat.api.openstack.v1:API\n\n"
        "[filter:faultwrap]\n"  # Heat's errors as JSON with their message, not a bare 500
        "paste.filter_factory = heat.common.wsgi:filter_factory\n"
        "heat.filter_factory = heat.api.openstack:faultwrap_filter\n\n"
        "[filter:noauth]\n"
        "paste.filter_factory = heat.common.noauth:filter_factory\n\n"
        "[filter:context]\n"
        "paste.filter_factory = heat.common.context:ContextMiddleware_filter_factory\n\n"
        "[filter:versionnegotiation]\n"
        "paste.filter_factory = heat.common.wsgi:filter_factory\n"
        "heat.filter_factory = heat.api.openstack:version_negotiation_filter\n"
    )


def token_file(host: str, port: int, now: datetime.datetime) -> str:
    """The Keystone v3 token the noauth filter hands to every request.

    The catalog points ``orchestration`` back at this Heat so that nested
    stacks and clients inside Heat find it.
    """
    url = endpoint_url(host, port)
    domain = {"id": "default", "name": "Default"}
    endpoints = [{"url": url, "interface": i, "region": "regionOne", "region_id": "regionOne",
                  "id": f"heat-{i}"} for i in ("public", "internal", "admin")]
    token = {
        "token": {
            "methods": ["password"],
            "is_domain": False,
            "issued_at": now.isoformat(),
            "expires_at": (now + datetime.timedelta(days=30)).isoformat(),
            "roles": [{"id": "admin", "name": "admin"}],
            "project": {"id": "admin", "name": "admin", "domain": domain},
            "user": {"id": "admin", "name": "admin", "domain": domain},
            "catalog": [{"id": "heat", "name": "heat", "type": "orchestration",
                         "endpoints": endpoints}],
        }
    }
    return json.dumps(token, indent=2) + "\n"


def clouds_entry(endpoint: str) -> dict[str, object]:
    """The ``heat`` cloud of clouds.yaml: no auth, straight to ``endpoint``."""
    return {"auth_type": "none", "endpoint": endpoint}


def merge_clouds_yaml(existing: str, name: str, entry: dict[str, object]) -> str:
    """``existing`` clouds.yaml text with cloud ``name`` set to ``entry``."""
    data = safe_yaml.load_yaml(existing, "clouds.yaml") if existing.strip() else {}
    if not isinstance(data, dict):
        data = {}
    clouds = data.get("clouds")
    if not isinstance(clouds, dict):
        clouds = {}
    clouds[name] = entry
    data["clouds"] = clouds
    return str(yaml.safe_dump(data, default_flow_style=False, sort_keys=True))


def heatrc(endpoint: str) -> str:
    """A shell file that points the openstack client at this Heat."""
    return (
        "# Source this file to use the ephemeral Heat with the openstack client.\n"
        "unset OS_CLOUD OS_PROJECT_NAME OS_PROJECT_DOMAIN_NAME OS_USER_DOMAIN_NAME\n"
        "unset OS_USERNAME OS_PASSWORD OS_AUTH_URL OS_TOKEN\n"
        "export OS_AUTH_TYPE=none\n"
        f"export OS_ENDPOINT={shlex.quote(endpoint)}\n"
    )
