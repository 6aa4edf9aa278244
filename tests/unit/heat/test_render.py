"""Pure rendering of the files an ephemeral Heat runs with."""

from __future__ import annotations

import configparser
import datetime
import json

import pytest
import yaml

from tripleo_flow.heat import render

SETTINGS = render.HeatSettings(port=8123, database_url="sqlite:////dev/shm/x.sqlite",
                               log_file="/w/log/heat.log", token_file="/w/token_file.json",
                               paste_file="/w/api-paste.ini")


@pytest.mark.parametrize(("section", "key", "value"), [
    ("DEFAULT", "transport_url", "fake://"),
    ("DEFAULT", "executor_thread_pool_size", "1024"),
    ("DEFAULT", "num_engine_workers", "1"),
    ("DEFAULT", "log_file", "/w/log/heat.log"),
    ("heat_api", "workers", "1"),
    ("heat_api", "bind_host", "127.0.0.1"),
    ("heat_api", "bind_port", "8123"),
    ("database", "connection", "sqlite:////dev/shm/x.sqlite"),
    ("paste_deploy", "flavor", "noauth"),
    ("paste_deploy", "api_paste_config", "/w/api-paste.ini"),
    ("noauth", "token_response", "/w/token_file.json"),
    ("oslo_policy", "enforce_new_defaults", "false"),
    ("oslo_policy", "enforce_scope", "false"),
    ("heat_all", "enabled_services", "api,engine"),
])
def test_heat_conf_values(section: str, key: str, value: str) -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(render.heat_conf(SETTINGS))
    assert parser[section][key] == value


def test_paste_pipeline_is_noauth() -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(render.api_paste_ini())
    assert parser["pipeline:heat-api-noauth"]["pipeline"].split() == [
        "faultwrap", "noauth", "context", "versionnegotiation", "apiv1app"]


def test_token_points_orchestration_at_this_heat() -> None:
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    token = json.loads(render.token_file("127.0.0.1", 8123, now))["token"]
    urls = {e["url"] for c in token["catalog"] if c["type"] == "orchestration"
            for e in c["endpoints"]}
    assert urls == {"http://127.0.0.1:8123/v1/admin"}
    assert token["project"]["id"] == "admin"
    assert token["expires_at"] > token["issued_at"]


@pytest.mark.parametrize(("existing", "other_clouds"), [
    ("", []),
    ("clouds: {}\n", []),
    ("clouds:\n  overcloud: {auth_type: password}\n", ["overcloud"]),
    ("clouds:\n  heat: {auth_type: password}\n  uc: {}\n", ["uc"]),
    ("not-a-mapping\n", []),
])
def test_merge_clouds_yaml(existing: str, other_clouds: list[str]) -> None:
    entry = render.clouds_entry("http://127.0.0.1:8006/v1/admin")
    merged = yaml.safe_load(render.merge_clouds_yaml(existing, "heat", entry))
    assert merged["clouds"]["heat"] == {"auth_type": "none",
                                        "endpoint": "http://127.0.0.1:8006/v1/admin"}
    assert sorted(set(merged["clouds"]) - {"heat"}) == other_clouds


def test_heatrc_sets_no_auth_endpoint() -> None:
    text = render.heatrc("http://127.0.0.1:8006/v1/admin")
    assert "export OS_AUTH_TYPE=none" in text
    assert "export OS_ENDPOINT=http://127.0.0.1:8006/v1/admin" in text
