"""Every registered action is safe to re-run (issue 17).

A job resumed from its logbook runs the interrupted task again from its start,
with the same inputs.  Each action declares what a second run does
(:class:`~tripleo_flow.actions.base.Rerun`); this module checks the
declaration of every action registered with stevedore, and proves it for every
action that needs no outside service by running the action twice on each plan
store (the local one and a real Swift): the state after the second run is the state after the first
(each side effect once), a reading action changes nothing, and a refusal is a
clear error that changes nothing.  The actions that drive a service (Heat,
Ironic, ansible-playbook) are listed in :data:`SERVICE_ACTIONS` with the
functional test that runs each twice against the real service; their declaration
is checked here.  A CONVERGES action's revert after a second run still restores the
state before the first (the task's undo journal):
:func:`test_a_revert_after_a_second_run_restores_the_state_before_the_first`.
A newly registered action that is in no table fails
:func:`test_every_action_is_covered`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.engine_helpers import MemoryJournal
from tests.plan_state import state_diff, store_state
from tests.plan_trees import basic_tree, write_tree
from tripleo_flow import config, exceptions
from tripleo_flow.actions.base import Action, ActionContext, Rerun
from tripleo_flow.actions.registry import ActionRegistry
from tripleo_flow.client import workbooks
from tripleo_flow.engine.lang import action_workflows, workbook_loader, workbook_model
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.lock import PlanLocks
from tripleo_flow.plans.plan import OWN_CREATES
from tripleo_flow.plans.store import PlanStore

PLAN = "overcloud"
REGISTRY = ActionRegistry.load()

EXAMPLES = Path(__file__).resolve().parents[3] / "tripleo_flow" / "examples"
#: Metadata a create sets anew on each run: the id of that create.
CREATE_IDS = ("tripleo-flow-plan-id", "tripleo-flow-creating")
NODE = {"hostname": "overcloud-controller-0", "node": "n-uuid-1", "node_name": "node-1",
        "role": "Controller"}


@dataclass(frozen=True)
class Case:
    """How to run one action twice: its inputs (given the test's directory) and the
    steps that prepare the plan first."""

    inputs: Callable[[Path], dict[str, Any]] = lambda _tmp: {"plan": PLAN}
    prepare: tuple[tuple[str, Callable[[Path], dict[str, Any]]], ...] = ()
    #: no plan in the store before the first run (plan.create)
    empty_store: bool = False
    #: what a new process's run differs by: the create id it does not own
    new_process: bool = False
    #: files added to the plan's small template tree
    extra_files: tuple[tuple[str, str], ...] = ()


def _templates(tmp: Path, extra: dict[str, str] | None = None) -> str:
    return str(write_tree(tmp / "templates", {**basic_tree(), **(extra or {})}))


def _env_file(tmp: Path) -> list[dict[str, Any]]:
    return [{"name": "mine.yaml", "files": {"mine.yaml": "parameter_defaults: {Mine: 1}\n"}}]


def _baremetal(_tmp: Path) -> str:
    return (EXAMPLES / "baremetal-deployment.yaml").read_text()


def _roles() -> list[dict[str, Any]]:
    return [{"name": "Controller", "CountDefault": 1, "tags": ["primary", "controller"]}]


#: THT's update prepare environment, in a plan's templates.
UPDATE_PREPARE = ("environments/lifecycle/update-prepare.yaml",
                  "resource_registry: {OS::TripleO::Tasks::*PreConfig: OS::Heat::None}\n")


def _update_work(tmp: Path) -> dict[str, Any]:
    """A work dir whose config-download project has the update steps playbook."""
    project = tmp / "work" / "config-download"
    project.mkdir(parents=True, exist_ok=True)
    (project / "update_steps_playbook.yaml").write_text("- hosts: all\n  tasks: []\n")
    return {"plan": PLAN, "work_dir": str(tmp / "work"), "limit": "Compute"}


def _scale_work(tmp: Path) -> dict[str, Any]:
    """A work dir as a deploy of two computes leaves it (its outputs and parameters)."""
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    (work / "outputs.yaml").write_text(yaml.safe_dump({"outputs": {"AnsibleHostVarsMap": {
        "Compute": {"compute-0": {}, "compute-1": {}}}}}))
    (work / "environment.yaml").write_text(yaml.safe_dump({"parameters": {
        "ComputeHostnameFormat": "%stackname%-novacompute-%index%",
        "HostnameMap": {"overcloud-novacompute-0": "compute-0",
                        "overcloud-novacompute-1": "compute-1"}}}))
    return {"plan": PLAN, "work_dir": str(work), "hosts": ["compute-0"]}


#: The actions proved here, on the local plan store.
CASES: dict[str, Case] = {
    "plan.create": Case(lambda tmp: {"plan": PLAN, "templates": _templates(tmp)},
                        empty_store=True, new_process=True),
    "plan.publish": Case(),
    "plan.list": Case(lambda _tmp: {}),
    "plan.export": Case(lambda tmp: {"plan": PLAN, "output": str(tmp / "plan.tar.gz")}),
    "plan.delete": Case(),
    "plan.update": Case(lambda tmp: {"plan": PLAN, "templates": _templates(tmp / "new", {
        "environments/new.yaml": "parameter_defaults: {New: 1}\n",
        "environments/other.yaml": "parameter_defaults: {Other: 2}\n"})}),
    "plan.history": Case(),
    "plan.restore": Case(lambda _tmp: {"plan": PLAN, "version": "FIRST"},
                         prepare=(("parameters.update",
                                   lambda _tmp: {"plan": PLAN, "parameters": {"A": 1}}),)),
    "environments.list": Case(),
    "environments.add": Case(lambda tmp: {"plan": PLAN, "user_environments": _env_file(tmp)}),
    "environments.remove": Case(
        lambda _tmp: {"plan": PLAN, "paths": ["user-environments/1/mine.yaml"]},
        prepare=(("environments.add",
                  lambda tmp: {"plan": PLAN, "user_environments": _env_file(tmp)}),)),
    "deployed_servers.update": Case(
        lambda tmp: {"plan": PLAN, "baremetal_deployment": _baremetal(tmp)},
        extra_files=tuple((f, "heat_template_version: wallaby\n") for f in (
            "deployed-server/deployed-server.yaml", "deployed-server/deployed-neutron-port.yaml",
            "network/ports/noop.yaml"))),
    "templates.process": Case(),
    "capabilities.get": Case(),
    "capabilities.update": Case(
        lambda _tmp: {"plan": PLAN, "environments": {"environments/storage.yaml": True}}),
    "roles.list": Case(),
    "roles.counts": Case(),
    "roles.update": Case(lambda _tmp: {"plan": PLAN, "roles": _roles()}),
    "roles.validate": Case(lambda _tmp: {"roles": _roles()}),
    "networks.list": Case(),
    "networks.update": Case(lambda _tmp: {"plan": PLAN, "networks": [
        {"name": "Storage", "ip_subnet": "172.16.1.0/24"}]}),
    "networks.validate": Case(lambda _tmp: {"networks": [{"name": "Storage"}]}),
    "passwords.generate": Case(),
    "passwords.get": Case(prepare=(("passwords.generate", lambda _tmp: {"plan": PLAN}),)),
    "parameters.update": Case(lambda _tmp: {"plan": PLAN, "parameters": {"A": 1, "B": "x"}}),
    "parameters.reset": Case(lambda _tmp: {"plan": PLAN, "names": ["A"]},
                             prepare=(("parameters.update",
                                       lambda _tmp: {"plan": PLAN, "parameters": {"A": 1}}),)),
    "nodes.record": Case(lambda _tmp: {"plan": PLAN, "nodes": [NODE]}),
    "nodes.forget": Case(lambda _tmp: {"plan": PLAN, "nodes": [NODE]},
                         prepare=(("nodes.record", lambda _tmp: {"plan": PLAN,
                                                                 "nodes": [NODE]}),)),
    "deploy.check_inputs": Case(),
    "deploy.start": Case(lambda tmp: {"plan": PLAN, "work_dir": str(tmp / "work"),
                                      "heat_type": "native"}),
    "nodes.check": Case(lambda _tmp: {"nodes": [{"name": "node-1", "pm_type": "fake-hardware",
                                                  "ports": [{"address": "52:54:00:00:00:01"}]}]}),
    "validations.check": Case(lambda _tmp: {"results": []}),
    "scale.select": Case(_scale_work),
    "update.set_stage": Case(lambda _tmp: {"plan": PLAN, "stage": "prepare"},
                             extra_files=(UPDATE_PREPARE,)),
    "update.check_prepared": Case(_update_work, extra_files=(UPDATE_PREPARE,), prepare=(
        ("update.set_stage", lambda _tmp: {"plan": PLAN, "stage": "prepare"}),)),
    "std.noop": Case(lambda _tmp: {}),
    "std.async_noop": Case(lambda _tmp: {}),
    "std.echo": Case(lambda _tmp: {"output": {"a": [1]}}),
    "std.fail": Case(lambda _tmp: {"error_data": "stop"}),
    "std.sleep": Case(lambda _tmp: {"seconds": 0}),
    "std.test_dict": Case(lambda _tmp: {"size": 2, "key_prefix": "k", "val": 1}),
    "std.javascript": Case(lambda _tmp: {"script": "return $.a * 2", "context": {"a": 2}}),
    "std.js": Case(lambda _tmp: {"script": "return [1, 2]"}),
}

#: The actions that drive an outside service (Heat, Ironic, ansible-playbook, an HTTP
#: server), with the functional test that runs each twice against the real service (or
#: resumes an execution killed while it ran) and checks its declaration.
IRONIC = "tests/functional/ironic/test_rerun.py::"
HEAT = "tests/functional/heat/test_rerun.py::"
VALIDATIONS = "tests/functional/validations/test_rerun.py::"
SERVICE_ACTIONS: dict[str, str] = {
    "std.http": "tests/unit/actions/test_std_actions.py::"
                "test_a_second_run_sends_the_request_again",
    "std.email": "tests/unit/actions/test_std_remote_actions.py::"
                 "test_a_second_run_sends_the_email_again",
    "std.ssh": "tests/functional/test_std_ssh.py::test_a_second_run_runs_the_command_again",
    "std.ssh_proxied": "tests/functional/test_std_ssh.py::"
                       "test_a_second_run_through_a_gateway_runs_the_command_again",
    "std.mistral_http": "tests/unit/engine/test_mistral_expression_records.py::"
                        "test_a_second_run_of_mistral_http_sends_the_request_again",
    "heat.launch": HEAT + "test_each_heat_action_run_twice",
    "heat.kill": HEAT + "test_each_heat_action_run_twice",
    "heat.dump_db": HEAT + "test_each_heat_action_run_twice",
    "heat.restore_db": HEAT + "test_each_heat_action_run_twice",
    "heat.status": HEAT + "test_each_heat_action_run_twice",
    "parameters.get": HEAT + "test_parameters_get_twice_reads_the_same_schema",
    "ansible.check": HEAT + "test_ansible_check_twice_reads",
    # On the stack a deploy of the sample plan kept (the config-download-only steps).
    "deploy.kept_stack": HEAT + "test_deploy_steps_after_the_stack_twice",
    "deploy.check_kept_stack": HEAT + "test_deploy_steps_after_the_stack_twice",
    "deploy.save_outputs": HEAT + "test_deploy_steps_after_the_stack_twice",
    "deploy.config_download": HEAT + "test_deploy_steps_after_the_stack_twice",
    "deploy.finish": HEAT + "test_deploy_steps_after_the_stack_twice",
    # Run again by a real resume after a kill -9 while the stack is created.
    "deploy.stack": "tests/functional/heat/test_deploy_crash.py::"
                    "test_a_deploy_killed_while_the_stack_is_created_resumes",
    # Run again by a real resume after a kill -9 while Heat starts (a second run in the
    # living process that launched Heat is refused: test_deploy_steps_after_the_stack_twice).
    "deploy.launch_heat": "tests/functional/heat/test_deploy_crash.py::"
                          "test_a_deploy_killed_while_the_stack_is_created_resumes",
    # Its request holds the time of the first run (kept for a re-run by the journal).
    "deploy.check": HEAT + "test_deploy_check_twice_writes_the_same_request",
    # The sample plan's deploy steps playbook, run again.
    "deploy.run_ansible": "tests/functional/heat/test_deploy_ansible.py::"
                          "test_deploy_runs_the_deploy_steps_playbook_locally",
    # The THT 18 scale-down playbook on a throwaway host, run twice.
    "scale.run_playbook": "tests/functional/overcloud/test_tht18_scaledown.py::"
                          "test_the_scale_playbook_runs_on_the_leaving_server_only",
    # The THT 18 update steps playbook with --limit, run twice.
    "update.run_playbook": "tests/functional/overcloud/test_tht18_update.py::"
                           "test_update_run_runs_the_update_steps_with_the_limit",
    "nodes.register": IRONIC + "test_register_twice_registers_each_node_and_port_once",
    "nodes.find_existing": IRONIC + "test_find_existing_then_register_twice_converges",
    "nodes.select": IRONIC + "test_select_manage_inspect_clean_provide_twice",
    "nodes.manage": IRONIC + "test_select_manage_inspect_clean_provide_twice",
    "nodes.inspect": IRONIC + "test_select_manage_inspect_clean_provide_twice",
    "nodes.provide": IRONIC + "test_select_manage_inspect_clean_provide_twice",
    "nodes.clean": IRONIC + "test_select_manage_inspect_clean_provide_twice",
    "nodes.delete": IRONIC + "test_delete_twice_is_refused_naming_the_node",
    "nodes.choose": IRONIC + "test_choose_deploy_unprovision_undeploy_twice",
    "nodes.deploy": IRONIC + "test_choose_deploy_unprovision_undeploy_twice",
    "nodes.undeploy": IRONIC + "test_choose_deploy_unprovision_undeploy_twice",
    "nodes.unprovision_select": IRONIC + "test_choose_deploy_unprovision_undeploy_twice",
    "validations.select": VALIDATIONS + "test_select_converges_and_run_keeps_one_record",
    "validations.run": VALIDATIONS + "test_select_converges_and_run_keeps_one_record",
}


def test_every_action_declares_what_a_rerun_does() -> None:
    assert not REGISTRY.broken()
    undeclared = sorted(name for name, action in REGISTRY.classes().items()
                        if not isinstance(action.rerun, Rerun))
    assert undeclared == [], f"declare Action.rerun on {undeclared}"


def test_every_action_is_covered() -> None:
    registered = set(REGISTRY.names())
    covered = set(CASES) | set(SERVICE_ACTIONS) | ONCE
    assert not set(CASES) & set(SERVICE_ACTIONS) and not ONCE & (set(CASES) | set(SERVICE_ACTIONS))
    assert sorted(registered - covered) == [], \
        "a new action needs a rerun case here (or its service test in SERVICE_ACTIONS)"
    assert sorted(covered - registered) == []


def test_each_service_proof_names_a_test_that_exists() -> None:
    root = Path(__file__).resolve().parents[3]
    for name, where in SERVICE_ACTIONS.items():
        assert "::" in where, f"{name}: name the test that runs it twice"
        path, function = where.split("::")
        assert f"def {function}(" in (root / path).read_text(), f"{name}: {where}"


def _context(tmp_path: Path, store: PlanStore) -> ActionContext:
    conf = config.new_conf()
    conf([], project="tripleo-flow", default_config_files=[], default_config_dirs=[])
    conf.set_override("data_dir", str(tmp_path / "data"))
    return ActionContext(store=store, conf=conf,
                         locks=PlanLocks(f"file://{tmp_path / 'locks'}", timeout=30))


@pytest.fixture
def context(tmp_path: Path) -> ActionContext:
    """On the local plan store."""
    return _context(tmp_path, LocalStore(tmp_path / "plans"))


@pytest.fixture
def any_context(tmp_path: Path) -> ActionContext:
    """On the local plan store here; ``tests/functional/test_action_rerun_swift.py``
    runs the same tests on a real Swift."""
    return _context(tmp_path, LocalStore(tmp_path / "plans"))


def _run(context: ActionContext, name: str, inputs: dict[str, Any]) -> Any:
    action: Action = REGISTRY.get(name)(context)
    return action.execute(**inputs)


def _create(context: ActionContext, tmp: Path,
            extra_files: tuple[tuple[str, str], ...] = ()) -> None:
    templates = _templates(tmp / "first", dict(extra_files))
    _run(context, "plan.create", {"plan": PLAN, "templates": templates})
    _run(context, "plan.publish", {"plan": PLAN})


def _prepare(context: ActionContext, case: Case, tmp: Path) -> dict[str, Any]:
    """Create the plan and run the case's steps; the inputs of the action to run."""
    if not case.empty_store:
        _create(context, tmp, case.extra_files)
    for step, step_inputs in case.prepare:
        _run(context, step, step_inputs(tmp))
    inputs = case.inputs(tmp)
    if inputs.get("version") == "FIRST":
        inputs["version"] = _run(context, "plan.history", {"plan": PLAN})[-1]["version"]
    return inputs


def _outcome(context: ActionContext, name: str, inputs: dict[str, Any]) -> Any:
    try:
        return _run(context, name, inputs)
    except exceptions.TripleoFlowError as exc:
        return exc


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_second_run_changes_nothing_more(name: str, any_context: ActionContext,
                                           tmp_path: Path) -> None:
    context = any_context
    case = CASES[name]
    action = REGISTRY.get(name)
    inputs = _prepare(context, case, tmp_path)
    before = _state(context, tmp_path)
    first = _outcome(context, name, inputs)
    if isinstance(first, exceptions.TripleoFlowError):
        assert name == "std.fail", f"{name} failed on its first run: {first}"
    middle = _state(context, tmp_path)
    if case.new_process:  # what the killed process held dies with it
        OWN_CREATES.discard(first["create_id"])
        context.locks.close()
        middle = _without_create_ids(middle)
    second = _outcome(context, name, inputs)
    after = _state(context, tmp_path)
    if case.new_process:
        OWN_CREATES.discard(second["create_id"])
        assert second["create_id"] != first["create_id"]
        after = _without_create_ids(after)
    assert state_diff(middle, after) == [], f"a second {name} changed the store"
    if action.rerun is Rerun.READS:
        assert state_diff(before, middle) == [], f"{name} is declared as only reading"
        assert repr(second) == repr(first)
    elif action.rerun is Rerun.REFUSES:
        assert state_diff(before, middle), f"{name} changed nothing on its first run"
        assert isinstance(second, exceptions.TripleoFlowError), second
        assert PLAN in str(second) or inputs.get("output", "//") in str(second), str(second)
    else:
        assert action.rerun is Rerun.CONVERGES, action.rerun
        assert not isinstance(second, exceptions.TripleoFlowError), \
            f"a second {name} failed: {second}"
        assert state_diff(before, middle) or name in ("plan.publish",), \
            f"{name} is declared as changing something, but its run changed nothing"


def _state(context: ActionContext, tmp: Path) -> dict[str, Any]:
    """The plan store's state, and the files actions write in the test's directory
    (as a pseudo container named by the directory)."""
    state = store_state(context.store)
    written = {p.name: hashlib.md5(p.read_bytes()).hexdigest() for p in tmp.glob("*.tar.gz")}
    state[f"{tmp}/"] = ({}, written, [])
    return state


def _without_create_ids(state: dict[str, Any]) -> dict[str, Any]:
    return {container: ({k: v for k, v in meta.items() if k not in CREATE_IDS}, objects,
                        versions)
            for container, (meta, objects, versions) in state.items()}


#: Actions whose second run would do it again with new values (Rerun.ONCE).
ONCE = {name for name, action in REGISTRY.classes().items() if action.rerun is Rerun.ONCE}


def _shipped_tasks() -> list[tuple[str, Any]]:
    tasks = []
    for path in sorted(workbook_loader.SHIPPED_DIR.glob("*.yaml")):
        book, problems = workbook_model.parse_workbook(yaml.safe_load(path.read_text()),
                                                       str(path))
        assert book is not None and not problems, problems
        tasks += [(f"{wf.full_name}.{task.name}", task) for wf in book.workflows.values()
                  for task in wf.tasks.values()]
    made = [action_workflows.spec(workflow) for workflow in workbooks.ACTION_WORKFLOWS]
    return tasks + [(f"{wf.full_name}.{task.name}", task) for wf in made
                    for task in wf.tasks.values()]


def test_a_task_that_must_not_run_twice_stops_a_resumed_execution() -> None:
    """Rerun.ONCE actions (passwords.rotate) are run by tasks marked ``safe-rerun:
    false`` in every shipped workbook and one-action workflow, and in its own action
    execution."""
    assert ONCE == {"passwords.rotate"}
    users = [(name, task) for name, task in _shipped_tasks() if task.action in ONCE]
    assert users, "no shipped workflow runs a Rerun.ONCE action"
    assert [name for name, task in users if task.safe_rerun is not False] == []
    for name in ONCE:
        [task] = action_workflows.for_action(name, REGISTRY.get(name)).tasks.values()
        assert task.action == name and task.safe_rerun is False


@pytest.mark.parametrize("name", sorted(ONCE))
def test_a_second_run_of_a_once_action_does_it_again(name: str, context: ActionContext,
                                                       tmp_path: Path) -> None:
    """Why ONCE: the rotation is done again (new values), so it must not be re-run."""
    _create(context, tmp_path)
    _run(context, "passwords.generate", {"plan": PLAN})
    original = _run(context, "passwords.get", {"plan": PLAN})
    _run(context, name, {"plan": PLAN})
    first = _run(context, "passwords.get", {"plan": PLAN})
    _run(context, name, {"plan": PLAN})
    second = _run(context, "passwords.get", {"plan": PLAN})
    assert set(original) == set(first) == set(second)
    assert first != original and second != first


def _revert(context: ActionContext, name: str, inputs: dict[str, Any], result: Any) -> None:
    action: Action = REGISTRY.get(name)(context)
    accepted = set(inspect.signature(action.revert).parameters)
    args = {k: v for k, v in inputs.items() if k in accepted or "kwargs" in accepted}
    action.revert(result=result, **args)


def _current(state: dict[str, Any]) -> dict[str, Any]:
    """The state without version histories (a revert writes a new version)."""
    return {container: (meta, objects, []) for container, (meta, objects, _v) in state.items()}


#: Every action a re-run leaves as the first left (CONVERGES) and that has an undo;
#: plus the variants whose undo record takes another path.
REVERTIBLE: dict[str, tuple[str, Case]] = {
    **{name: (name, case) for name, case in CASES.items()
       if REGISTRY.get(name).rerun is Rerun.CONVERGES and REGISTRY.get(name).has_revert()},
    # a secret's old value is not in the record: it names the version holding it
    "parameters.update(secret)": ("parameters.update", Case(
        lambda _tmp: {"plan": PLAN, "parameters": {"AdminPassword": "new", "A": 2}},
        prepare=(("parameters.update", lambda _tmp: {
            "plan": PLAN, "parameters": {"AdminPassword": "old", "A": 1}}),))),
}


@pytest.mark.parametrize("variant", sorted(REVERTIBLE))
def test_a_revert_after_a_second_run_restores_the_state_before_the_first(
        variant: str, any_context: ActionContext, tmp_path: Path) -> None:
    """A task killed after its change but before its result was saved runs again on
    resume; a later failure reverts it with the second run's result.  That revert
    must still restore the state before the first run: the second run gets the
    first run's undo record from the task's journal (:meth:`ActionContext.undo_record`)."""
    context = any_context
    name, case = REVERTIBLE[variant]
    inputs = _prepare(context, case, tmp_path)
    before = _state(context, tmp_path)
    journaled = dataclasses.replace(context, undo_journal=MemoryJournal())
    first = _run(journaled, name, inputs)
    if case.new_process:
        OWN_CREATES.discard(first["create_id"])
        context.locks.close()
    second = _run(journaled, name, inputs)
    assert state_diff(before, _state(context, tmp_path)), f"{name} changed nothing"
    _revert(journaled, name, inputs, second)
    assert state_diff(_current(before), _current(_state(context, tmp_path))) == [], \
        f"reverting a second {name} did not restore the state before the first"
