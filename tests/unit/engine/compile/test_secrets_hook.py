"""The engine learns a plan's secrets through the hook of the layer above (the action
context's ``plan_secrets``): it knows no plan repository (issue 28 item 1)."""

from __future__ import annotations

from types import SimpleNamespace

from tripleo_flow.engine.compile import runner
from tripleo_flow.engine.store import redaction


def _runner(context: object) -> runner.Runner:
    made = object.__new__(runner.Runner)
    made.store = SimpleNamespace(backend=SimpleNamespace(redactor=redaction.Redactor()))
    made._action_context = context
    return made


def test_the_contexts_hook_gives_the_plans_secrets() -> None:
    asked = []

    def plan_secrets(plan: str) -> set[str]:
        asked.append(plan)
        return {"hunter2-of-oc"}

    made = _runner(SimpleNamespace(plan_secrets=plan_secrets))
    made._learn_secrets("oc")
    assert asked == ["oc"]
    assert "hunter2-of-oc" not in str(made.store.backend.redactor.value({"out": "hunter2-of-oc"}))


def test_no_hook_no_plan_secrets() -> None:
    made = _runner(SimpleNamespace(store=object()))
    made._learn_secrets("oc")
    assert made.store.backend.redactor.value({"out": "x"}) == {"out": "x"}
