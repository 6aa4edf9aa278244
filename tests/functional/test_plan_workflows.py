"""The shipped plan workbooks run end to end with the real actions, on every plan store."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.fixtures_plans import snapshot
from tests.plan_trees import basic_tree, write_tree
from tripleo_flow import exceptions
from tripleo_flow.client import Client
from tripleo_flow.plans.plan import PLAN_ENV


def test_plan_workbooks_end_to_end(client: Client, templates: Path, tmp_path: Path) -> None:
    done = client.executions.create("create_deployment_plan",
                                    {"plan": "overcloud", "templates": str(templates)})
    assert done.state == "SUCCESS", done.error
    assert "puppet/controller-role.yaml" in client._session.store.list_objects("overcloud")

    done = client.executions.create("update_parameters",
                                    {"plan": "overcloud", "parameters": {"ComputeCount": 4}})
    assert done.state == "SUCCESS", done.error
    assert client.parameters.get("overcloud") == {"ComputeCount": 4}

    before = client.passwords.get("overcloud")
    done = client.executions.create("rotate_passwords",
                                    {"plan": "overcloud", "rotate": ["AdminPassword"]})
    assert done.state == "SUCCESS", done.error
    assert client.passwords.get("overcloud")["AdminPassword"] != before["AdminPassword"]

    archive = tmp_path / "overcloud.tar.gz"
    done = client.executions.create("export_deployment_plan",
                                    {"plan": "overcloud", "output": str(archive)})
    assert done.state == "SUCCESS", done.error
    assert archive.stat().st_size > 0

    done = client.executions.create("delete_deployment_plan", {"plan": "overcloud"})
    assert done.state == "SUCCESS", done.error
    assert not client._session.store.container_exists("overcloud")
    tasks = client.tasks.list(done.id)
    assert [t.state for t in tasks] and all(t.state == "SUCCESS" for t in tasks)


def test_failed_create_workflow_leaves_no_plan(client: Client, tmp_path: Path) -> None:
    bad = write_tree(tmp_path / "bad", basic_tree() | {"broken.j2.yaml": "{% for %}\n"})
    with pytest.raises(exceptions.WorkflowFailed, match="broken.j2.yaml.*reverted") as failed:
        client.executions.create("create_deployment_plan",
                                 {"plan": "overcloud", "templates": str(bad)})
    assert failed.value.task == "process_templates" and failed.value.reverted
    [execution] = client.executions.list()
    assert execution.state == "ERROR" and execution.failed_task == "process_templates"
    assert not client._session.store.container_exists("overcloud")
    assert client.plans.list() == []


def test_failed_update_workflow_restores_the_plan(client: Client, templates: Path,
                                                  tmp_path: Path) -> None:
    client.plans.create("overcloud", templates)
    client.parameters.set("overcloud", {"Keep": "me"})
    before = snapshot(client._session.store, "overcloud")
    bad = write_tree(tmp_path / "bad", basic_tree() | {"broken.j2.yaml": "{% if %}\n",
                                                       "new.yaml": "a: 1\n"})
    with pytest.raises(exceptions.WorkflowFailed, match="reverted"):
        client.executions.create("update_deployment_plan",
                                 {"plan": "overcloud", "templates": str(bad)})
    after = snapshot(client._session.store, "overcloud")
    assert set(after) == set(before)
    assert yaml.safe_load(after[PLAN_ENV]) == yaml.safe_load(before[PLAN_ENV])
    assert after == before


def test_executions_database_is_private(client: Client, templates: Path) -> None:
    client.executions.create("create_deployment_plan",
                             {"plan": "overcloud", "templates": str(templates)})
    client.executions.create("rotate_passwords", {"plan": "overcloud", "rotate": ["AdminPassword"]})
    db = client.data_dir / "executions.sqlite"
    assert db.stat().st_mode & 0o777 == 0o600


MISTRAL_ERA = """
version: '2.0'
name: mistral_era
workflows:
  set_counts:
    input:
      - counts
      - container: overcloud
    output:
      plans: <% $.plans %>
    tasks:
      update:
        action: tripleo.parameters.update
        input:
          container: <% $.container %>
          parameters: <% $.counts %>
        on-success: list_plans
      list_plans:
        action: tripleo.list_plans
        publish:
          plans: <% task(list_plans).result %>
"""


def test_tripleo_mistral_action_names_run_as_aliases(client: Client, templates: Path,
                                                     tmp_path: Path) -> None:
    """A workbook written with TripleO's Mistral-era names drives our actions."""
    done = client.executions.create("create_deployment_plan",
                                    {"plan": "overcloud", "templates": str(templates)})
    assert done.state == "SUCCESS", done.error
    path = tmp_path / "mistral_era.yaml"
    path.write_text(MISTRAL_ERA)
    client.workbooks.create(path)
    done = client.executions.create("mistral_era.set_counts", {"counts": {"ComputeCount": 2}})
    assert done.state == "SUCCESS", done.error
    assert done.output == {"plans": ["overcloud"]}
    assert client.parameters.get("overcloud") == {"ComputeCount": 2}


def test_a_failed_task_is_recorded_with_its_error(client: Client, tmp_path: Path) -> None:
    """The YAML error of a bad template carries the parser's ``Mark`` objects in its
    arguments: its record must still be written (it was lost, with the other tasks'
    pending saves, when it could not be encoded)."""
    tree = basic_tree()
    tree["environments/base.yaml"] = "a: [\n"
    with pytest.raises(exceptions.TripleoFlowError, match="base.yaml"):
        client.plans.create("bad", write_tree(tmp_path / "bad", tree))
    [execution] = [e for e in client.executions.list()
                   if e.workflow.endswith("create_deployment_plan")]
    assert execution.state == "ERROR" and execution.failed_task == "create_plan"
    tasks = {t.name: t for t in client.tasks.list(execution.id)}
    assert (tasks["create_plan"].state, tasks["create_plan"].reverted) == ("ERROR", True)
    assert "YAML error at line 2" in (tasks["create_plan"].error or "")
    # the workflow runs as Mistral's state machine: a task no transition reached has no
    # record (Mistral lists none either)
    assert "publish_plan" not in tasks
