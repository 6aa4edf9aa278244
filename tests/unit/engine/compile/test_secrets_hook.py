"""The engine learns a plan's secrets and the configuration's through the hooks of the
layer above (the action context's ``plan_secrets`` and ``config_secrets``): it knows no
plan repository and no TripleO option (issue 28 item 1)."""

from __future__ import annotations

from pathlib import Path
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


def test_the_contexts_hook_gives_the_configurations_secrets() -> None:
    made = _runner(SimpleNamespace(config_secrets=lambda: {"swift-key-of-the-conf"}))
    made._learn_secrets(None)
    masked = made.store.backend.redactor.value({"out": "swift-key-of-the-conf"})
    assert "swift-key-of-the-conf" not in str(masked)


def test_the_action_contexts_hook_reads_the_options_marked_secret() -> None:
    from tripleo_flow import config
    from tripleo_flow.actions.context import ActionContext

    conf = config.new_conf()
    conf([], project="tripleo-flow", default_config_files=[], default_config_dirs=[])
    conf.set_override("key", "swift-key-secret", group="swift")
    context = object.__new__(ActionContext)
    object.__setattr__(context, "conf", conf)
    assert "swift-key-secret" in context.config_secrets()


def test_an_execution_masks_a_secret_option_its_task_echoes(tmp_path: Path) -> None:
    from tests.engine_helpers import Host
    from tests.unit.engine.test_mistral_async_actions import _install

    host = Host(tmp_path / "data")
    try:
        key = "swift-key-0123456789abcdef"
        host.conf.set_override("key", key, group="swift")
        name = _install(host, tmp_path, f"""\
            workflows:
              wf:
                tasks:
                  echo:
                    action: std.echo output="{key}"
                    publish:
                      got: <% task().result %>
            """)
        done = host.executions.create(name, {})
        assert done.state == "SUCCESS"
        records = str(host.tasks.list(done.id)) + str(host.executions.get(done.id))
        assert "swift-key-0123" not in records
        assert "<secret>" in records or "***" in records
    finally:
        host._session.close_workflows()
