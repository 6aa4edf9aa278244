"""A second run of validations.select and validations.run, with the same inputs, with
the real validations virtualenv (issue 17: a resumed workflow runs its interrupted
task again from its start).

The inputs are those the ``tripleo.validations`` workflow gives (every interface
picks the run id before the workflow starts).  validations.select converges: the
same selection, the run's localhost inventory written once.  validations.run is
CALLER: a second run runs the validation's playbook again (ansible-playbook against
the same inventory: it only inspects its hosts) and stores its record again under
the same id, so the plan keeps one record per validation, the second run's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.plan_state import store_state
from tripleo_flow.actions.base import Rerun
from tripleo_flow.actions.registry import ActionRegistry
from tripleo_flow.client import Client
from tripleo_flow.plans.plan import MESSAGES_SUFFIX
from tripleo_flow.validations import runner, runs_dir

pytestmark = pytest.mark.functional

REGISTRY = ActionRegistry.load()


def _run(client: Client, name: str, **inputs: Any) -> Any:
    return REGISTRY.get(name)(client._session.context).execute(**inputs)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()} if root.exists() else {}


def test_select_converges_and_run_keeps_one_record(
        vclient: Client, plan: str) -> None:
    assert REGISTRY.get("validations.select").rerun is Rerun.CONVERGES
    assert REGISTRY.get("validations.run").rerun is Rerun.CALLER
    runs = runs_dir(vclient.conf)
    inputs = {"validations": ["no-op"], "group": None, "category": None, "plan": plan,
              "inventory": None, "localhost": True, "run_id": runner.new_run_id()}
    store_before = store_state(vclient._session.store)
    selection = _run(vclient, "validations.select", **inputs)
    files = _files(runs)
    again = _run(vclient, "validations.select", **inputs)
    assert again == selection
    assert selection["validations"] == ["no-op"] and selection["run_id"] == inputs["run_id"]
    assert list(files) == [f"{inputs['run_id']}/{Path(selection['inventory']).name}"]
    assert _files(runs) == files  # the inventory, written once
    assert store_state(vclient._session.store) == store_before

    messages = plan + MESSAGES_SUFFIX
    first = _run(vclient, "validations.run", validation="no-op", selection=selection)
    after_first = store_state(vclient._session.store)
    second = _run(vclient, "validations.run", validation="no-op", selection=selection)
    after_second = store_state(vclient._session.store)
    assert first["status"] == second["status"] == "PASSED"
    assert first["id"] == second["id"] == f"{inputs['run_id']}-no-op"
    # One record, stored twice: the second run's replaces the first's.
    assert set(after_first) == set(after_second) == set(store_before) | {messages}
    records = after_second[messages][1]
    assert list(records) == list(after_first[messages][1])
    assert len(records) == 1
    stored = json.loads(vclient._session.store.get_object(messages, next(iter(records))))
    assert (stored["id"], stored["status"], stored["started_at"]) == (
        second["id"], "PASSED", second["started_at"])
    # The plan itself is not touched by either run.
    assert after_second[plan] == store_before[plan]
    # The summary reports the same outcome both times (times aside).
    times = ("started_at", "duration", "finished_at")
    assert {k: v for k, v in first.items() if k not in times} == \
        {k: v for k, v in second.items() if k not in times}
