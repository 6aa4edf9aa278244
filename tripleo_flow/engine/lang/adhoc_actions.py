"""Ad-hoc actions: a workbook's ``actions:`` section, as in Mistral.

An ad-hoc action is a named wrapper of an existing action (``base``) with some
of its inputs fixed as expressions over the ad-hoc action's own inputs
(``base-input``), and optionally its result reshaped (``output``, an
expression over the base action's result as ``$``)::

    actions:
      greet:
        base: std.echo
        base-input:
          output: "Hello, <% $.name %>"
        input:
          - name
        output: <% $.toUpper() %>

Tasks of the workbook call it ``greet`` (or ``WORKBOOK.greet`` from anywhere).
:func:`parse_actions` reads the section (pure); :func:`build` makes an
:class:`~tripleo_flow.actions.base.Action` class of one, whose signature is the
declared inputs, so the validator checks the tasks that call it as it checks
any action.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tripleo_flow.engine.lang import workbook_clauses
from tripleo_flow.engine.lang.action import Action, reverter
from tripleo_flow.engine.lang.workbook_clauses import Collector
from tripleo_flow.exceptions import Hint, TaskFailed

# The expression language (YAQL) and the execution scope (TaskFlow) are imported where
# a section is read or an action built: reading workbooks without one (the shipped
# ones, to list their workflows) loads neither (tests/unit/test_cli_startup.py).

#: A problem's next step when it names no known action (worded when the problem is).
LIST_ACTIONS = Hint("list actions with", "action.list", sep=" (", tail=")")

ACTION_KEYS = {"base", "base-input", "input", "output", "description", "tags"}


@dataclass(frozen=True)
class AdhocSpec:
    """One ad-hoc action: ``name`` is ``WORKBOOK.SHORT``."""

    name: str
    base: str
    base_input: Any
    #: ``(name, required, default)`` of each declared input.
    inputs: tuple[tuple[str, bool, Any], ...] = ()
    output: Any = None
    description: str = ""


def parse_actions(raw: Any, workbook: str, out: Collector) -> dict[str, AdhocSpec]:
    """The ``actions:`` section of ``workbook`` by short name (problems go to ``out``)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        out.add("'actions' must be a mapping of action names to definitions")
        return {}
    from tripleo_flow.engine.lang import expressions

    specs = {}
    for short, body in raw.items():
        where = f"action {short!r}"
        if not isinstance(body, dict) or not isinstance(body.get("base"), str):
            out.add(f"{where}: an ad-hoc action is a mapping with 'base' (the action it "
                    "wraps), 'base-input', 'input' and 'output'")
            continue
        for key in sorted(set(body) - ACTION_KEYS):
            out.add(f"{where}: unknown key {key!r} (expected one of "
                    f"{', '.join(sorted(ACTION_KEYS))})")
        base_input = body.get("base-input") or {}
        if not isinstance(base_input, dict) and not expressions.has_expression(base_input):
            out.add(f"{where}: 'base-input' must be a mapping or one expression")
            base_input = {}
        inputs = []
        for item in body.get("input") or []:
            if isinstance(item, str):
                inputs.append((item, True, None))
            elif isinstance(item, dict) and len(item) == 1:
                (key, default), = item.items()
                inputs.append((str(key), False, default))
            else:
                out.add(f"{where}: bad input entry {item!r}: use a name or a "
                        "{name: default} mapping")
        base, inline, unread = workbook_clauses.split_inline(body["base"])
        if unread:
            out.add(f"{where}: 'base' {body['base']!r}: cannot read {unread!r} as a "
                    f"parameter ({workbook_clauses.INLINE_FORMS})")
        if inline and isinstance(base_input, dict):
            base_input = workbook_clauses.merge_inline(base_input, inline)
        elif inline:
            out.add(f"{where}: give the parameters of 'base' in 'base-input' when it is "
                    "one expression")
        for text in expressions.check([base_input, body.get("output")]):
            out.add(f"{where}: bad expression: {text}")
        specs[str(short)] = AdhocSpec(f"{workbook}.{short}", base, base_input,
                                      tuple(inputs), body.get("output"),
                                      str(body.get("description") or ""))
    return specs


def problems(spec: AdhocSpec, actions: Mapping[str, type[Action]]) -> list[str]:
    """What is wrong with ``spec`` given the registered ``actions``."""
    base = actions.get(spec.base)
    where = f"action {spec.name.rsplit('.', 1)[-1]!r}"
    if base is None:
        return [f"{where}: unknown base action {spec.base!r}{LIST_ACTIONS.words()}"]
    found = []
    if isinstance(spec.base_input, dict):
        known = {name for name, _t, _r, _d in base.inputs()}
        takes_any = any(p.kind is p.VAR_KEYWORD
                        for p in inspect.signature(base.execute).parameters.values())
        for key in sorted(set(spec.base_input) - known):
            if not takes_any:
                found.append(f"{where}: unexpected base-input {key!r} for action "
                             f"{spec.base!r} (its inputs: {', '.join(sorted(known))})")
        for name, _type, required, _default in base.inputs():
            if required and name not in spec.base_input:
                found.append(f"{where}: missing base-input {name!r} of action {spec.base!r}")
    if spec.output is not None and base.has_revert():
        found.append(f"{where}: 'output' cannot reshape the result of {spec.base!r}: "
                     "undoing it needs its result")
    return found


def build(spec: AdhocSpec, base: type[Action]) -> type[Action]:
    """An Action class running ``base`` with the inputs ``spec`` derives."""
    from tripleo_flow.engine.compile import execution_scope
    from tripleo_flow.engine.lang import expressions

    def base_inputs(given: Mapping[str, Any]) -> dict[str, Any]:
        data = {name: default for name, required, default in spec.inputs if not required}
        data.update(given)
        value = expressions.Evaluator(
            data, hooks={"env": execution_scope.current_env}).evaluate(spec.base_input)
        if not isinstance(value, Mapping):
            raise TaskFailed(f"ad-hoc action {spec.name!r}: 'base-input' must give a "
                             f"mapping (got {type(value).__name__})")
        return dict(value)

    def execute(self: Action, **given: Any) -> Any:
        result = base(self.context).execute(**base_inputs(given))
        if spec.output is None:
            return result
        return expressions.Evaluator(result).evaluate(spec.output)

    def completed(self: Action, output: Any) -> Any:
        """The result of the asynchronous base action completed with ``output``,
        reshaped by this action's ``output``."""
        result = base(self.context).completed(output)
        if spec.output is None:
            return result
        return expressions.Evaluator(result).evaluate(spec.output)

    def revert(self: Action, result: Any, flow_failures: Any = None, **given: Any) -> None:
        """Undo what the base action did, with the inputs it was given."""
        revert = reverter(base(self.context))
        if revert is None:  # not reached: only a base that reverts gives one
            return
        params = inspect.signature(revert).parameters.values()
        inputs = base_inputs(given)
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            accepted = {p.name for p in params}
            inputs = {k: v for k, v in inputs.items() if k in accepted}
            if "flow_failures" in accepted:
                inputs["flow_failures"] = flow_failures
        else:
            inputs["flow_failures"] = flow_failures
        revert(result=result, **inputs)

    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                 default=inspect.Parameter.empty if required else default)
               for name, required, default in spec.inputs]
    execute.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    body: dict[str, Any] = {
        "__doc__": spec.description or f"Ad-hoc action: {spec.base} with derived inputs.",
        "action_name": spec.name, "secret_result": base.secret_result,
        "runs_plan_code": base.runs_plan_code, "connects_out": base.connects_out,
        "asynchronous": base.asynchronous, "execute": execute, "completed": completed}
    if base.has_revert():
        body["revert"] = revert
    return type(f"Adhoc_{spec.name.replace('.', '_')}", (Action,), body)
