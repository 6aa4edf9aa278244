"""Parameter actions: a plan's parameter schema (validated by an ephemeral Heat)
and its ``parameter_defaults``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, ActionContext, Rerun
from tripleo_flow.actions.envedit import edit_section, undo_section
from tripleo_flow.actions.schema import load_schema
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.plan import parameter_schema, roles, validation
from tripleo_flow.core.plan.rendering import ROLES_FILE
from tripleo_flow.plans.plan import check_plan_name


def _check_parameters(context: ActionContext, plan: str, parameters: Any) -> Mapping[str, Any]:
    """``parameters`` when each name is valid, they are within ``[limits]
    parameters_max_size`` together and no role count is over ``nodes_max``."""
    if not isinstance(parameters, Mapping):
        raise exceptions.InvalidParameter(
            f"Parameters must be a mapping of name to value, not {type(parameters).__name__}.")
    for key in parameters:
        validation.check_parameter_name(key)
    validation.check_size(parameters, context.limit("parameters_max_size"), "The parameter values")
    roles.check_counts(parameters, _role_names(context, plan), context.limit("nodes_max"))
    return parameters


def _role_names(context: ActionContext, plan: str) -> list[str]:
    """The names of the plan's roles (none when it has no roles_data.yaml)."""
    check_plan_name(plan)  # before the store is asked: its own refusal names a container
    try:
        data = context.store.get_object(plan, ROLES_FILE)
    except exceptions.NotFound:  # no such file, or no such plan (said when it is edited)
        return []
    listed = safe_yaml.load_yaml(data, ROLES_FILE, max_nodes=context.limit("yaml_max_nodes"),
                               max_depth=context.limit("yaml_max_depth"))
    return [r["name"] for r in listed or [] if isinstance(r, Mapping)
            and isinstance(r.get("name"), str)] if isinstance(listed, list) else []


#: The plan-environment sections that hold parameter values (TripleO's ``key``).
SECTIONS = ("parameter_defaults", "parameters")


def _check_section(key: str) -> None:
    if key not in SECTIONS:
        raise exceptions.InvalidParameter(
            f"Unknown parameter section {key!r}: use parameter_defaults or parameters.")


class GetParameters(Action):
    """Get a plan's parameter schema (every parameter of its stack tree, validated by Heat)."""

    rerun = Rerun.READS

    def execute(self, plan: str) -> dict[str, Any]:
        return load_schema(self.context, plan)


class UpdateParameters(Action):
    """Set parameter values in a plan's parameter_defaults."""

    rerun = Rerun.CONVERGES

    def execute(self, plan: str, parameters: dict[str, Any],
                key: str = "parameter_defaults", validate: bool = False) -> dict[str, Any]:
        values = dict(_check_parameters(self.context, plan, parameters))
        _check_section(key)
        if validate:
            schema = load_schema(self.context, plan)["parameters"]
            parameter_schema.check_values(plan, schema, values)

        def change(section: dict[str, Any]) -> dict[str, Any]:
            section.update(values)
            return section

        return edit_section(self.context, plan, key, change)

    def revert(self, plan: str, result: Any, **kwargs: Any) -> None:
        """Put back the previous values of the parameters this action set."""
        if isinstance(result, dict) and "section" in result:
            undo_section(self.context, plan, result)


class ResetParameters(Action):
    """Remove parameter values from parameter_defaults (all of them when no names are given).

    ``key`` names the section, as for :class:`UpdateParameters` (``parameters``
    instead). Run again with names (a resumed job), it fails naming the values it
    already removed.
    """

    rerun = Rerun.REFUSES

    def execute(self, plan: str, names: list[str] | None = None,
                key: str = "parameter_defaults") -> dict[str, Any]:
        _check_section(key)
        wanted = None if names is None else list(names)

        def change(section: dict[str, Any]) -> dict[str, Any]:
            if wanted is None:
                return {}
            unknown = [n for n in wanted if n not in section]
            if unknown:
                raise exceptions.InvalidParameter(
                    f"Plan {plan!r} has no value for {', '.join(sorted(unknown))};",
                    hints=[exceptions.Hint("see them with", "parameter.show",
                                           {"plan": plan})])
            return {k: v for k, v in section.items() if k not in wanted}

        return edit_section(self.context, plan, key, change)

    def revert(self, plan: str, result: Any, **kwargs: Any) -> None:
        """Put back the values this action removed."""
        if isinstance(result, dict) and "section" in result:
            undo_section(self.context, plan, result)
