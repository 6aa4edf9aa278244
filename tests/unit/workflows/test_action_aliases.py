"""TripleO's Mistral-era action names as aliases of ours (flows/action_aliases.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine_helpers import NeedsPlan
from tripleo_flow.actions.base import ActionContext
from tripleo_flow.actions.registry import ActionRegistry
from tripleo_flow.flows import action_aliases, adhoc_actions, workbook_loader

WORKBOOK = """
version: '2.0'
name: mistral_era
workflows:
  w:
    tasks:
      update:
        action: tripleo.parameters.update
        input:
          container: overcloud
          parameters: {ControllerCount: 3}
        on-success: passwords
      passwords:
        action: tripleo.parameters.generate_passwords
        on-success: old_name
      old_name:
        action: tripleo.list_plans
        on-success: unknown
      unknown:
        action: tripleo.plan.create_container
        input: {container: overcloud}
"""


def test_aliases_point_at_registered_actions() -> None:
    classes = ActionRegistry.load().classes()
    for alias, ours in action_aliases.ALIASES.items():
        assert ours in classes, alias
    aliases = action_aliases.alias_classes(classes)
    assert set(aliases) == set(action_aliases.ALIASES)
    inputs = {name: (required, default) for name, _t, required, default
              in aliases["tripleo.parameters.update"].inputs()}
    assert inputs["container"] == (False, "overcloud") and inputs["parameters"][0]
    assert "plan" not in inputs
    assert aliases["tripleo.parameters.get_passwords"].secret_result


def test_a_workbook_of_tripleo_names_validates_and_unknown_ones_are_named(
        tmp_path: Path) -> None:
    path = tmp_path / "mistral_era.yaml"
    path.write_text(WORKBOOK)
    registry = ActionRegistry.load()
    catalog = workbook_loader.load_catalog([], registry.classes(), registry.broken(),
                                           extra_files=[path])
    problems = [str(p) for e in catalog.entries.values() for p in e.problems]
    assert problems == [f"{path}, workflow 'w', task 'unknown': unknown action "
                        "'tripleo.plan.create_container' (list actions with: "
                        "tripleo-flow action list)"]


@pytest.mark.parametrize("given, plan", [({}, "overcloud"), ({"container": "other"}, "other")])
def test_an_alias_passes_the_container_as_the_plan(given: dict[str, str], plan: str) -> None:
    spec = action_aliases.alias_spec("tripleo.test", NeedsPlan)
    cls = adhoc_actions.build(spec, NeedsPlan)
    action = cls(ActionContext(store=None, locks=None, conf=None))  # type: ignore[arg-type]
    assert action.execute(**given) == plan
