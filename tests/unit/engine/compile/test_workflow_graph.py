"""A workflow's task graph as data (``GET /v1/workflows/{name}``, the GUI's graph):
the same tasks and edges as the DOT drawing, for direct and reverse workflows."""

from __future__ import annotations

import textwrap

import yaml

from tests.unit.engine.test_shipped_workbooks import REGISTRY, _catalog
from tripleo_flow.engine.compile import compiler
from tripleo_flow.engine.lang.workbook_model import parse_workbook

WORKBOOK = textwrap.dedent("""\
    version: '2.0'
    name: shapes
    workflows:
      direct:
        tasks:
          first:
            action: std.noop
            on-success:
              - second: <% $.go %>
              - third
            on-error: [cleanup]
          second:
            action: std.noop
            on-complete: [third]
          third:
            action: std.noop
          cleanup:
            action: std.noop
      backwards:
        type: reverse
        tasks:
          build:
            action: std.noop
          test:
            action: std.noop
            requires: [build]
          ship:
            workflow: direct
            requires: [build, test]
    """)


def _workflows() -> dict[str, object]:
    workbook, problems = parse_workbook(yaml.safe_load(WORKBOOK), "shapes.yaml")
    assert workbook is not None and problems == [], problems
    return dict(workbook.workflows)


def test_direct_edges_carry_their_kind_and_condition() -> None:
    graph = compiler.to_graph(_workflows()["direct"])  # type: ignore[arg-type]
    assert graph["type"] == "direct"
    assert [t["name"] for t in graph["tasks"]] == ["first", "second", "third", "cleanup"]
    assert graph["tasks"][0] == {"name": "first", "action": "std.noop", "workflow": None,
                                 "with_items": False}
    assert graph["edges"] == [
        {"from": "first", "to": "second", "label": "on-success: <% $.go %>"},
        {"from": "first", "to": "third", "label": "on-success"},
        {"from": "first", "to": "cleanup", "label": "on-error"},
        {"from": "second", "to": "third", "label": "on-complete"},
    ]


def test_reverse_edges_run_from_the_requirement() -> None:
    graph = compiler.to_graph(_workflows()["backwards"])  # type: ignore[arg-type]
    assert graph["type"] == "reverse"
    assert graph["tasks"][2]["workflow"] == "direct" and graph["tasks"][2]["action"] is None
    assert [(e["from"], e["to"], e["label"]) for e in graph["edges"]] == [
        ("build", "test", "requires"), ("build", "ship", "requires"),
        ("test", "ship", "requires")]


def test_the_dot_drawing_has_the_same_edges() -> None:
    for workflow in [*_workflows().values(), _catalog(REGISTRY.classes()).get("deploy")]:
        graph = compiler.to_graph(workflow)  # type: ignore[arg-type]
        dot = compiler.to_dot(workflow)  # type: ignore[arg-type]
        assert dot.count(" -> ") == len(graph["edges"]) > 0
        names = {t["name"] for t in graph["tasks"]}
        assert all(e["from"] in names and e["to"] in names for e in graph["edges"])
        for edge in graph["edges"]:
            assert f'"{edge["from"]}" -> "{edge["to"]}"' in dot
        assert dot.count("style=dashed") == sum(
            e["label"].startswith("on-error") for e in graph["edges"])
