"""The static-include walker of an Ansible project: table-driven fake projects, no mocks."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tripleo_flow.core.deploy import playbook_includes as pi


def project(**files: Any) -> dict[str, bytes]:
    """``name=content`` (``__`` for ``/``); content dumped as YAML unless bytes."""
    return {name.replace("__", "/").replace("_DOT_", "."):
            data if isinstance(data, bytes) else yaml.safe_dump(data).encode()
            for name, data in files.items()}


def play(*tasks: Any, **extra: Any) -> list[dict[str, Any]]:
    return [{"hosts": "all", "tasks": list(tasks), **extra}]


def problems(files: dict[str, bytes], roles: Any = None) -> list[str]:
    return [str(p) for p in pi.problems(files, roles)]


CASES = [
    # Every kind of include found, and no problem.
    ("all resolve", {
        "site.yaml": [{"import_playbook": "steps.yaml"}],
        "steps.yaml": play({"include_tasks": "deployments.yaml"},
                           {"ansible.builtin.import_tasks": {"file": "Controller/a.yaml"}},
                           {"block": [{"include": "b.yaml"}],
                            "rescue": [{"script": "run.sh --now"}]},
                           pre_tasks=[{"import_tasks": "pre.yaml"}],
                           handlers=[{"include_tasks": "handlers.yaml"}]),
        "deployments.yaml": [], "b.yaml": [], "pre.yaml": [], "handlers.yaml": [],
        "files/run.sh": b"#!/bin/sh\n",
        # relative to the including file's directory first, then the root
        "Controller/a.yaml": [{"import_tasks": "c.yaml"}, {"include_tasks": "b.yaml"}],
        "Controller/c.yaml": [],
    }, []),
    # A missing file: found in a nested task file and in a block.
    ("missing", {
        "deploy_steps_playbook.yaml": play({"include_tasks": "tasks.yaml"}),
        "tasks.yaml": [{"block": [{"always": [{"import_tasks": "gone.yaml"}]}]}],
    }, ["tasks.yaml: import_tasks 'gone.yaml': missing"]),
    # A script named with a .yaml suffix it does not have (issue 12's old bug).
    ("script name", {
        "p.yaml": play({"script": "all_nodes_validation_script.sh"}),
        "all_nodes_validation_script.sh.yaml": b"#!/bin/sh\n",
    }, ["p.yaml: script 'all_nodes_validation_script.sh': missing"]),
    # Templated and absolute names are decided at run time / outside: skipped.
    ("templated", {
        "p.yaml": play({"include_tasks": "{{ role }}/step{{ step }}.yaml"},
                       {"import_tasks": "/usr/share/x.yaml"},
                       {"include_tasks": "external_{% if a %}x{% endif %}.yaml"}),
    }, []),
    # import_playbook is relative to the importing playbook, and must be plays.
    ("playbook imports", {
        "p.yaml": [{"import_playbook": "sub/q.yaml"}, {"import_playbook": "tasks.yaml"}],
        "sub/q.yaml": [{"import_playbook": "r.yaml"}, {"import_playbook": "sub/r.yaml"}],
        "sub/r.yaml": play(),
        "tasks.yaml": [{"debug": {}}],
    }, ["p.yaml: import_playbook 'tasks.yaml': unreadable (not a list of plays)",
        "sub/q.yaml: import_playbook 'sub/r.yaml': missing"]),
    # A task file that is not a list of tasks.
    ("not tasks", {"p.yaml": play({"include_tasks": "vars.yaml"}),
                   "vars.yaml": {"a": 1}},
     ["p.yaml: include_tasks 'vars.yaml': unreadable (not a list of tasks)"]),
    # A file nobody includes is not looked at; a loop of includes ends.
    ("unreached and loops", {
        "p.yaml": play({"include_tasks": "a.yaml"}),
        "a.yaml": [{"include_tasks": "a.yaml"}],
        "orphan.yaml": [{"include_tasks": "nowhere.yaml"}],
    }, []),
]


@pytest.mark.parametrize("files,expected", [(f, e) for _, f, e in CASES],
                         ids=[name for name, _, _ in CASES])
def test_problems(files: dict[str, Any], expected: list[str]) -> None:
    assert problems(project(**{k.replace("/", "__").replace(".", "_DOT_"): v
                               for k, v in files.items()})) == expected


ROLE_PLAY = {"p.yaml": yaml.safe_dump(play(
    {"include_role": {"name": "tripleo_network_config", "tasks_from": "run"}},
    {"import_role": {"name": "tuned", "tasks_from": "gone.yml"}},
    {"import_role": {"name": "absent", "tasks_from": "main.yml"}},
    {"import_role": {"name": "{{ r }}", "tasks_from": "main.yml"}})).encode()}


@pytest.mark.parametrize("roles,expected", [
    (None, []),  # roles unknown: tasks_from not checked
    ({"tripleo_network_config": {"run.yml"}, "tuned": {"main.yml"}},
     ["p.yaml: tasks_from 'gone.yml' of role tuned: missing (no such file in the role's tasks/)",
      "p.yaml: tasks_from 'main.yml' of role absent: missing (no such role)"]),
])
def test_tasks_from(roles: Any, expected: list[str]) -> None:
    assert problems(ROLE_PLAY, roles) == expected


@pytest.mark.parametrize("data,playbook", [
    ([{"hosts": "all"}], True), ([{"import_playbook": "x.yaml"}], True),
    ([{"ansible.builtin.import_playbook": "x.yaml"}], True),
    ([{"name": "a task", "debug": {}}], False), ([], False), ({"hosts": "all"}, False),
])
def test_is_playbook(data: Any, playbook: bool) -> None:
    assert pi.is_playbook(data) is playbook


def test_only_root_yaml_playbooks_start_the_walk() -> None:
    files = project(**{"p_DOT_yaml": play(), "Controller__q_DOT_yaml": play(),
                       "r_DOT_j2": play(), "bad_DOT_yaml": b"- [unclosed\n"})
    assert pi.playbooks(files) == ["p.yaml"]
