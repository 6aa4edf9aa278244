"""[jobboard] settings: checks, TaskFlow board configuration, the plan lock default."""

from __future__ import annotations

from typing import Any

import pytest

from tripleo_flow import config, exceptions
from tripleo_flow.client import Client
from tripleo_flow.engine.jobs import jobboard
from tripleo_flow.engine.jobs.jobboard import BoardSettings

GOOD = [
    ("redis://127.0.0.1:6379", {"board": "redis", "namespace": "tripleo-flow",
                                "host": "127.0.0.1", "port": 6379}),
    ("redis://:pa%40ss@redis.example:7000/2",
     {"board": "redis", "namespace": "tripleo-flow", "host": "redis.example", "port": 7000,
      "password": "pa@ss", "db": 2}),
    ("redis://user:pw@10.0.0.1", {"board": "redis", "namespace": "tripleo-flow",
                                  "host": "10.0.0.1", "port": 6379, "username": "user",
                                  "password": "pw"}),
    ("zookeeper://127.0.0.1:2181", {"board": "zookeeper", "hosts": "127.0.0.1:2181",
                                    "path": "/tripleo-flow/jobs"}),
    ("zookeeper://zk1:2181,zk2:2181", {"board": "zookeeper", "hosts": "zk1:2181,zk2:2181",
                                       "path": "/tripleo-flow/jobs"}),
]


@pytest.mark.parametrize(("url", "expected"), GOOD)
def test_board_configuration_from_the_url(url: str, expected: dict[str, Any]) -> None:
    assert jobboard.board_conf(BoardSettings(url).check()) == expected


BAD = [
    (BoardSettings("http://127.0.0.1:6379"), "must start with redis:// or zookeeper://"),
    (BoardSettings("127.0.0.1:6379"), "must start with redis:// or zookeeper://"),
    (BoardSettings("redis://h", namespace=""), "non-empty name"),
    (BoardSettings("redis://h", namespace="a/b"), "without '/'"),
    (BoardSettings("redis://h", claim_expiry=20, heartbeat_interval=10),
     "must exceed twice heartbeat_interval"),
    (BoardSettings("redis://h", claim_expiry=5, heartbeat_interval=3),
     "Raise claim_expiry or lower heartbeat_interval"),
]


@pytest.mark.parametrize(("settings", "message"), BAD)
def test_settings_that_cannot_work_are_refused(settings: BoardSettings, message: str) -> None:
    with pytest.raises(exceptions.InvalidInput, match=message):
        settings.check()


def test_a_redis_database_must_be_a_number() -> None:
    with pytest.raises(exceptions.InvalidInput, match="must be a number"):
        jobboard.board_conf(BoardSettings("redis://h:1/zero").check())


def test_the_password_never_shows_in_a_message() -> None:
    with pytest.raises(exceptions.InvalidInput) as caught:
        BoardSettings("rediss://:hunter2@h:1").check()
    assert "hunter2" not in str(caught.value)


def _conf(**jobboard_opts: Any) -> Any:
    conf = config.new_conf()
    conf([], default_config_files=[], default_config_dirs=[])
    for name, value in jobboard_opts.items():
        conf.set_override(name, value, group="jobboard")
    return conf


def test_no_backend_url_means_in_process(tmp_path: Any) -> None:
    conf = _conf()
    conf.set_override("data_dir", str(tmp_path))
    assert BoardSettings.from_conf(conf) is None
    assert Client(conf)._session.locks.url == f"file://{tmp_path / 'locks'}"


def test_plan_locks_default_to_the_board_service(tmp_path: Any) -> None:
    conf = _conf(backend_url="redis://127.0.0.1:6399")
    conf.set_override("data_dir", str(tmp_path))
    assert Client(conf)._session.locks.url == "redis://127.0.0.1:6399"
    conf.set_override("lock_url", "file:///elsewhere", group="plan_store")
    assert Client(conf)._session.locks.url == "file:///elsewhere"


def test_a_client_with_a_bad_jobboard_setting_is_refused(tmp_path: Any) -> None:
    conf = _conf(backend_url="redis://127.0.0.1:6399", claim_expiry=4.0,
                 heartbeat_interval=2.0)
    conf.set_override("data_dir", str(tmp_path))
    with pytest.raises(exceptions.InvalidInput, match="claim_expiry"):
        Client(conf)
