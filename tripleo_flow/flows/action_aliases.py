"""TripleO's Mistral-era action names, as aliases of ours where the meaning is the same.

TripleO's workbooks called ``tripleo-common`` actions (``mistral.actions``
entry points) that took the plan as ``container`` (default ``overcloud``).
Each alias here is an ad-hoc action (:mod:`.adhoc_actions`) over one of our
actions with that input renamed; every other input keeps its name, so an input
ours does not have (``rotate_passwords``, ``role_file_name`` ...) is reported
as unexpected.  Names whose meaning differs from every action of ours
(``tripleo.plan.create_container`` makes an empty Swift container;
``tripleo.deployment.config`` runs a Heat software config on a server;
``tripleo.plan.export`` writes to a Swift container) are not aliased and stay
unknown actions.
"""

from __future__ import annotations

from collections.abc import Mapping

from tripleo_flow.actions.base import Action
from tripleo_flow.flows.adhoc_actions import AdhocSpec, build

#: TripleO's default plan (``constants.DEFAULT_CONTAINER_NAME``).
DEFAULT_CONTAINER = "overcloud"

#: alias -> our action (its ``plan`` input is TripleO's ``container``).
ALIASES = {
    "tripleo.parameters.update": "parameters.update",
    "tripleo.update_parameters": "parameters.update",
    "tripleo.parameters.reset": "parameters.reset",
    "tripleo.reset_parameters": "parameters.reset",
    "tripleo.parameters.get_passwords": "passwords.get",
    "tripleo.parameters.generate_passwords": "passwords.generate",
    "tripleo.plan.delete": "plan.delete",
    "tripleo.delete_plan": "plan.delete",
    "tripleo.plan.list": "plan.list",
    "tripleo.list_plans": "plan.list",
    "tripleo.role.list": "roles.list",
    "tripleo.heat_capabilities.get": "capabilities.get",
    "tripleo.get_capabilities": "capabilities.get",
    "tripleo.heat_capabilities.update": "capabilities.update",
    "tripleo.update_capabilities": "capabilities.update",
}
#: Aliases whose ``container`` has no default in TripleO.
CONTAINER_REQUIRED = {"tripleo.plan.delete", "tripleo.delete_plan"}


def alias_spec(alias: str, base: type[Action]) -> AdhocSpec:
    """The ad-hoc action ``alias`` over ``base`` (``plan`` given as ``container``)."""
    inputs = []
    base_input = {}
    for name, _type, required, default in base.inputs():
        own = "container" if name == "plan" else name
        if own == "container" and alias not in CONTAINER_REQUIRED:
            required, default = False, DEFAULT_CONTAINER
        inputs.append((own, required, default))
        base_input[name] = f"<% $.{own} %>"
    ours = base.action_name or ALIASES.get(alias, base.__name__)
    return AdhocSpec(alias, ours, base_input, tuple(inputs),
                     description=f"TripleO's {alias}: {base.description()}")


def alias_classes(actions: Mapping[str, type[Action]]) -> dict[str, type[Action]]:
    """The aliases whose action is registered, as Action classes by alias."""
    return {alias: build(alias_spec(alias, actions[ours]), actions[ours])
            for alias, ours in ALIASES.items() if ours in actions}
