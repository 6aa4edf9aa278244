"""TripleO's own Train workbooks (tripleo-common 11.3.0's 25) through our workbook validation.

The workbooks come from tripleo-common's PyPI sdist, fetched once into a cache by
``tools/fetch_sdist.py tripleo-common 11.3.0`` (``tools/run-tests.sh`` does it).
Every file is checked with the API call ``tripleo-flow workbook validate`` makes
(:meth:`~tripleo_flow.client.catalog.WorkbookManager.validate`, the real
action registry).  The OpenStack and TripleO actions we do not have (``swift.*``,
``nova.*``, ``tripleo.deployment.config`` ...) are unknown actions, left out here;
every other problem is listed below with the reason we differ from Mistral, so a
new problem, or one fixed, fails the test and the list says what changed.

Without the cache the tests skip, saying how to get it; in CI
(``TRIPLEO_FLOW_CI=1``, set by ``.ci/run``) they fail instead.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
from pathlib import Path

import pytest

from tests.engine_helpers import Host
from tripleo_flow.actions.registry import ActionRegistry
from tripleo_flow.engine.lang import action_aliases, workbook_loader

ROOT = Path(__file__).resolve().parents[3]
VERSION = "11.3.0"
_spec = importlib.util.spec_from_file_location("fetch_sdist", ROOT / "tools" / "fetch_sdist.py")
assert _spec and _spec.loader
fetch_sdist = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fetch_sdist)

UNKNOWN_ACTION = re.compile(r"^unknown action '[^']+' \(list actions with")

#: Deliberately stricter than Mistral, whose inline-parameter pattern skips what it
#: cannot read: ``maintenance=False associated=False`` (Python's capitalised booleans)
#: reach Ironic as no filter at all, so the task lists every node.  We refuse the
#: text at validation; the whole workbook is then unreadable.
INLINE = ("'action' 'ironic.node_list maintenance=False associated=False': cannot read "
          "'maintenance=False associated=False' as a parameter (KEY=VALUE with a quoted "
          "string, a [JSON list], digits, true, false, null or an expression)")
#: Bugs of the workbooks, where we are deliberately stricter: Mistral gives a
#: sub-workflow the inputs it declares and keeps every other one as a parameter of
#: the execution (``task_name``, ``env`` ...: engine/actions.py, WorkflowAction), so
#: a misnamed input is silently lost (``messages`` never becomes ``message``); we
#: refuse it at validation.
MESSAGING = ("unexpected input {!r} for workflow 'tripleo.messaging.v1.send' (its inputs: "
             "deployment_status, execution, message, payload, plan_name, queue_name, "
             "status, type)")
BACKUP = ("unexpected input 'use_default_templates' for workflow "
          "'tripleo.swift_backup.v1.create_swift_backup_container_plan' (its inputs: "
          "container, container_suffix, get_url_parm, put_url_parm, queue_name, swift_tar, "
          "validate_stack)")
HOST_CPUS = ("unexpected input 'role_name' for workflow "
             "'tripleo.derive_params_formulas.v1.get_host_cpus' (its inputs: hw_data)")

#: (file, workflow, task, message) -> why we report it.
EXPECTED: dict[tuple[str, str, str, str], str] = {
    ("baremetal.yaml", "provide_manageable_nodes", "get_manageable_nodes", INLINE):
        "stricter: Mistral ignores the unreadable inline parameters",
    ("baremetal.yaml", "introspect_manageable_nodes", "get_manageable_nodes", INLINE):
        "stricter: Mistral ignores the unreadable inline parameters",
    ("baremetal.yaml", "configure_manageable_nodes", "get_manageable_nodes", INLINE):
        "stricter: Mistral ignores the unreadable inline parameters",
    ("derive_params.yaml", "_derive_parameters_per_role", "get_node_with_hint",
     "unknown workflow 'tripleo.baremetal.v1.nodes_with_hint'"):
        "follows from baremetal.yaml refused (the workflow is there)",
    ("derive_params.yaml", "_derive_parameters_per_role", "get_profile_node",
     "unknown workflow 'tripleo.baremetal.v1.nodes_with_profile'"):
        "follows from baremetal.yaml refused (the workflow is there)",
    ("baremetal_deploy.yaml", "_deploy_one", "send_message", MESSAGING.format("instance")):
        "workbook bug: send has no input 'instance'",
    ("derive_params.yaml", "get_flattened_parameters", "send_message",
     MESSAGING.format("messages")): "workbook bug: 'messages' for 'message'",
    ("heat_environments.yaml", "update", "send_message", MESSAGING.format("messages")):
        "workbook bug: 'messages' for 'message'",
    ("heat_environments.yaml", "get", "send_message", MESSAGING.format("messages")):
        "workbook bug: 'messages' for 'message'",
    ("deployment.yaml", "deploy_plan", "create_swift_rings_backup_plan", BACKUP):
        "workbook bug: the backup plan workflow has no use_default_templates",
    ("deployment.yaml", "deploy_plan", "create_ceph_ansible_fetch_directory_backup_plan",
     BACKUP): "workbook bug: the backup plan workflow has no use_default_templates",
    ("plan_management.yaml", "update_deployment_plan", "create_swift_rings_backup_plan",
     BACKUP): "workbook bug: the backup plan workflow has no use_default_templates",
    ("plan_management.yaml", "update_deployment_plan",
     "create_ceph_ansible_fetch_directory_backup_plan", BACKUP):
        "workbook bug: the backup plan workflow has no use_default_templates",
    ("derive_params_formulas.yaml", "dpdk_derive_params", "get_host_cpus", HOST_CPUS):
        "workbook bug: get_host_cpus takes only hw_data",
    ("derive_params_formulas.yaml", "sriov_derive_params", "get_host_cpus", HOST_CPUS):
        "workbook bug: get_host_cpus takes only hw_data",
    ("stack.yaml", "wait_for_stack_in_progress", "wait_for_stack_status",
     "unexpected input 'stack' for workflow 'tripleo.stack.v1._heat_stacks_list' "
     "(its inputs: queue_name)"): "workbook bug: _heat_stacks_list takes only queue_name",
    ("networks.yaml", "update_networks", "get_current_networks",
     "unknown workflow 'tripleo.plan_management.v1.get_network_data'"):
        "workbook bug: no workflow get_network_data in 11.3.0",
    ("networks.yaml", "update_networks", "get_networks",
     "unknown workflow 'tripleo.plan_management.v1.get_network_data'"):
        "workbook bug: no workflow get_network_data in 11.3.0",
    ("plan_management.yaml", "validate_roles", "get_roles_data", "unknown workflow "
     "'list_roles'"): "workbook bug: plan_management has list_available_roles, no list_roles",
    # Mistral's task('x') of a task that never ran is null, and '.result' of it fails
    # the expression when that (error) path runs; we refuse it at validation.
    ("package_update.yaml", "converge_upgrade_plan", "set_update_failed",
     "'publish' refers to task('upgrade_converge'), which is not in this workflow"):
        "stricter, and a workbook bug (the task is in another workflow)",
    ("support.yaml", "create_container", "check_container",
     "'publish-on-error' refers to task('create_container'), which is not in this "
     "workflow"): "stricter, and a workbook bug (the workflow's name, not a task's)",
    # TripleO's UpdateCapabilitiesAction ordered the environments by the
    # capabilities map only with sort_environments: true; ours always puts each
    # environment after those it requires (and adds them), so false has no meaning.
    ("heat_environments.yaml", "update", "update",
     "unexpected input 'sort_environments' for action 'tripleo.heat_capabilities.update' "
     "(its inputs: container, environments, purge_missing)"):
        "ours always sorts: an input that could only turn that off is not taken",
    # Not problems any more: rotate_passwords/rotate_pw_list (generate_passwords
    # rotates), purge_missing (capabilities' purge) and key (reset_parameters'
    # section) are honoured (test_action_aliases.py).  derive_params.yaml's reset of
    # key 'derived_parameters' fails when it runs: we keep no such section.
}

#: What reading baremetal.yaml (``maintenance=false associated=false``) adds: more
#: bugs of the workbook.  Mistral silently drops the undeclared inputs (above) and
#: fails the task missing ``node_uuid`` when it runs (``Invalid input [...,
#: missing=['node_uuid']]``); we refuse both at validation.
SET_STATE = ("unexpected input 'queue_name' for workflow 'tripleo.baremetal.v1.{}' (its "
             "inputs: {})")
CLEANING = ("unexpected input {!r} for workflow 'tripleo.baremetal.v1.manual_cleaning' (its "
            "inputs: clean_steps, node_uuid, queue_name, retry_count, retry_delay, timeout)")
MISSING_NODE = ("missing required input 'node_uuid' of workflow "
                "'tripleo.baremetal.v1.manual_cleaning'")
BAREMETAL_READ: dict[tuple[str, str, str, str], str] = {
    ("baremetal.yaml", "provide", "set_nodes_available", SET_STATE.format(
        "set_node_state", "error_states, node_uuid, state_action, target_state")): "bug",
    ("baremetal.yaml", "provide", "cell_v2_discover_hosts", SET_STATE.format(
        "cellv2_discovery", "node_uuids")): "bug",
    ("baremetal.yaml", "provide", "try_power_off", SET_STATE.format(
        "set_power_state", "error_state, node_uuid, state_action, target_state")): "bug",
    **{("baremetal.yaml", workflow, task, message): "bug: manual_cleaning runs one node"
       for workflow, task in (
           ("apply_bios_settings_on_manageable_nodes", "apply_configuration_manageable"),
           ("reset_bios_settings_on_manageable_nodes", "factory_reset_manageable"))
       for message in (CLEANING.format("concurrency"), CLEANING.format("node_uuids"),
                       MISSING_NODE)},
}

#: The actions of ours (TripleO's names aliased: engine/lang/action_aliases.py, and std.*)
#: the 25 workbooks call: losing one turns its tasks into unknown actions.
KNOWN_ACTIONS = {
    "std.echo", "std.noop",
    "tripleo.heat_capabilities.get", "tripleo.heat_capabilities.update",
    "tripleo.parameters.generate_passwords", "tripleo.parameters.get_passwords",
    "tripleo.parameters.reset", "tripleo.parameters.update", "tripleo.plan.delete",
    "tripleo.plan.list", "tripleo.role.list",
}


def workbooks_dir() -> Path:
    """The cached workbooks; skips (or fails in CI) when they were never fetched."""
    tree = fetch_sdist.cached("tripleo-common", VERSION)
    if tree is None:
        where = fetch_sdist.default_cache_dir("tripleo-common") / VERSION
        reason = (f"tripleo-common {VERSION}'s workbooks are not in {where}: run "
                  f"python tools/fetch_sdist.py tripleo-common {VERSION} (tools/run-tests.sh "
                  "does)")
        if os.environ.get("TRIPLEO_FLOW_CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return tree / "workbooks"


def problems_of(tmp_path: Path, files: list[Path]) -> tuple[set[tuple[str, ...]], list[str]]:
    """The problems of ``files`` (unknown actions left out) and the unknown actions."""
    host = Host(tmp_path, ActionRegistry.load().classes())
    found = host.workbooks.validate(files)
    unknown = [p.message for p in found if UNKNOWN_ACTION.match(p.message)]
    rest = {(Path(p.path).name, p.workflow or "", p.task or "", p.message) for p in found
            if not UNKNOWN_ACTION.match(p.message)}
    return rest, unknown


def _differences(found: set[tuple[str, ...]], expected: set[tuple[str, ...]]) -> str:
    new = "\n  ".join(" | ".join(p) for p in sorted(found - expected))
    gone = "\n  ".join(" | ".join(p) for p in sorted(expected - found))
    return f"new problems:\n  {new}\nno longer found:\n  {gone}"


def test_the_25_train_workbooks_have_exactly_the_listed_problems(tmp_path: Path) -> None:
    files = sorted(workbooks_dir().glob("*.yaml"))
    assert len(files) == 25, [f.name for f in files]
    found, unknown = problems_of(tmp_path, files)
    assert found == set(EXPECTED), _differences(found, set(EXPECTED))
    # The tasks calling what we do not have (swift.*, nova.*, tripleo.deployment.config
    # ...): an action of ours that one of them could call as an alias lowers it.
    assert len(unknown) == 148, "\n".join(sorted(set(unknown)))


def test_with_baremetal_yaml_readable_every_workbook_is_checked(tmp_path: Path) -> None:
    """baremetal.yaml's three inline booleans written as we read them (``false``: a
    filter, where Mistral passed none) let its other workflows be checked too, and
    derive_params.yaml find the two baremetal workflows it calls."""
    source = workbooks_dir()
    copy = tmp_path / "workbooks"
    shutil.copytree(source, copy)
    baremetal = copy / "baremetal.yaml"
    text = baremetal.read_text()
    assert text.count("maintenance=False associated=False") == 3
    baremetal.write_text(text.replace("maintenance=False associated=False",
                                      "maintenance=false associated=false"))
    found, _unknown = problems_of(tmp_path / "data", sorted(copy.glob("*.yaml")))
    follows = {p for p, why in EXPECTED.items() if "baremetal.yaml refused" in why
               or p[3] == INLINE}
    expected = (set(EXPECTED) - follows) | set(BAREMETAL_READ)
    assert found == expected, _differences(found, expected)


def test_the_aliased_and_std_actions_they_call_are_ours() -> None:
    classes = ActionRegistry.load().classes()
    ours = {**classes, **action_aliases.alias_classes(classes)}
    calls = set()
    for path in sorted(workbooks_dir().glob("*.yaml")):
        workbook, _problems = workbook_loader.read_file(path)
        for workflow in (workbook.workflows.values() if workbook else ()):
            calls |= {t.action for t in workflow.tasks.values() if t.action}
    assert {name for name in calls if name in ours} == KNOWN_ACTIONS
