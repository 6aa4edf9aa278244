"""TripleO's Mistral-era action names as aliases of ours (engine/lang/action_aliases.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import NeedsPlan
from tests.fixtures_plans import make_client
from tests.plan_trees import basic_tree, write_tree
from tripleo_flow import exceptions
from tripleo_flow.actions.base import ActionContext
from tripleo_flow.actions.registry import ActionRegistry
from tripleo_flow.client import Client
from tripleo_flow.core.plan import passwords
from tripleo_flow.engine.lang import action_aliases, adhoc_actions, workbook_loader
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.plan import PlanRepository

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


# -- TripleO's inputs the aliases honour, run on a real plan (local store) -----

TRIPLEO_INPUTS = """
version: '2.0'
name: train_inputs
workflows:
  rotate:
    input: [names, {then_fail: false}]
    tasks:
      rotate:
        action: tripleo.parameters.generate_passwords
        input: {container: overcloud, rotate_passwords: true, rotate_pw_list: <% $.names %>}
        on-success: [boom: <% $.then_fail %>]
      boom:
        action: std.fail
  generate:
    input: [{names: []}]
    tasks:
      generate:
        action: tripleo.parameters.generate_passwords
        input: {rotate_pw_list: <% $.names %>}
  purge:
    tasks:
      purge:
        action: tripleo.heat_capabilities.update
        input:
          environments: {environments/other.yaml: true}
          purge_missing: true
  sections:
    input: [key]
    tasks:
      update:
        action: tripleo.parameters.update
        input: {key: parameters, parameters: {Kept: 1, Dropped: 2}}
        on-success: reset
      reset:
        action: tripleo.parameters.reset
        input: {key: <% $.key %>, names: [Dropped]}
"""


@pytest.fixture
def train_client(tmp_path: Path) -> Iterator[Client]:
    client = make_client(tmp_path, LocalStore(tmp_path / "plans"))
    client.plans.create("overcloud", write_tree(tmp_path / "templates", basic_tree()))
    workbook = tmp_path / "train_inputs.yaml"
    workbook.write_text(TRIPLEO_INPUTS)
    client.workbooks.create(workbook)
    yield client
    client.close()


def _env(client: Client) -> dict[str, Any]:
    return PlanRepository(client._session.store).environment("overcloud")


def _changed(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    return {k for k in before if before[k] != after.get(k)}


def test_generate_passwords_rotates_only_the_listed_passwords(train_client: Client) -> None:
    before = _env(train_client)["passwords"]
    done = train_client.executions.create("train_inputs.rotate", {"names": ["AdminPassword"]})
    assert done.state == "SUCCESS", done.error
    after = _env(train_client)["passwords"]
    assert _changed(before, after) == {"AdminPassword"} and set(after) == set(before)


def test_generate_passwords_rotates_every_rotatable_password(train_client: Client) -> None:
    before = _env(train_client)["passwords"]
    done = train_client.executions.create("train_inputs.rotate", {"names": []})
    assert done.state == "SUCCESS", done.error
    changed = _changed(before, _env(train_client)["passwords"])
    assert changed == set(before) - set(passwords.DO_NOT_ROTATE)
    assert "AdminPassword" in changed and "KeystoneCredential0" not in changed


def test_a_failed_workflow_puts_the_rotated_passwords_back(train_client: Client) -> None:
    before = _env(train_client)["passwords"]
    with pytest.raises(exceptions.WorkflowFailed, match="at task 'boom'"):
        train_client.executions.create("train_inputs.rotate",
                                       {"names": ["AdminPassword"], "then_fail": True})
    assert _env(train_client)["passwords"] == before


@pytest.mark.parametrize("workflow, names, expected", [
    # ours refuses to rotate a password whose rotation loses data, even by name
    ("rotate", ["KeystoneCredential0"], "Refusing to rotate KeystoneCredential0"),
    ("rotate", ["NoSuchPassword"], "NoSuchPassword"),
    ("generate", ["AdminPassword"], "only with rotate_passwords: true"),
])
def test_generate_passwords_refusals_change_nothing(train_client: Client, workflow: str,
                                                    names: list[str], expected: str) -> None:
    before = _env(train_client)
    with pytest.raises(exceptions.WorkflowFailed, match=expected):
        train_client.executions.create(f"train_inputs.{workflow}", {"names": names})
    assert _env(train_client) == before


def test_generate_passwords_without_rotation_keeps_every_password(
        train_client: Client) -> None:
    env = PlanRepository(train_client._session.store)
    current = _env(train_client)
    current["passwords"] = {k: v for k, v in current["passwords"].items()
                            if k != "AdminPassword"}
    env.save_environment("overcloud", current)
    done = train_client.executions.create("train_inputs.generate", {})
    assert done.state == "SUCCESS", done.error
    after = _env(train_client)["passwords"]
    assert {k: after[k] for k in current["passwords"]} == current["passwords"]
    assert after["AdminPassword"]


def test_update_capabilities_purge_missing_keeps_only_the_given_environments(
        train_client: Client) -> None:
    train_client.capabilities.update("overcloud", {"environments/storage.yaml": True})
    assert {"path": "environments/storage.yaml"} in _env(train_client)["environments"]
    done = train_client.executions.create("train_inputs.purge", {})
    assert done.state == "SUCCESS", done.error
    paths = [e.get("path") for e in _env(train_client)["environments"]]
    assert "environments/other.yaml" in paths
    assert "environments/storage.yaml" not in paths and "environments/base.yaml" not in paths


def test_reset_parameters_key_names_the_section(train_client: Client) -> None:
    train_client.parameters.set("overcloud", {"Dropped": "default section"})
    done = train_client.executions.create("train_inputs.sections", {"key": "parameters"})
    assert done.state == "SUCCESS", done.error
    env = _env(train_client)
    assert env["parameters"] == {"Kept": 1}
    assert env["parameter_defaults"]["Dropped"] == "default section"


def test_reset_parameters_refuses_a_section_ours_does_not_keep(train_client: Client) -> None:
    before = _env(train_client)
    with pytest.raises(exceptions.WorkflowFailed,
                       match="Unknown parameter section 'derived_parameters'"):
        train_client.executions.create("train_inputs.sections", {"key": "derived_parameters"})
    after = _env(train_client)  # the update before it is undone (its section left empty)
    assert after.pop("parameters") == {} and "parameters" not in before
    assert after == before
