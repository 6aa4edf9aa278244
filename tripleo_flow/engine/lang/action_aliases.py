"""TripleO's Mistral-era action names, as aliases of ours where the meaning is the same.

TripleO's workbooks called ``tripleo-common`` actions (``mistral.actions``
entry points) that took the plan as ``container`` (default ``overcloud``).
Each alias here is an ad-hoc action (:mod:`.adhoc_actions`) over one of our
actions with that input renamed (and TripleO's name of an input whose meaning ours
shares: ``purge_missing`` for ``purge``); every other input keeps its name, so an
input ours does not have (``sort_environments``, ``role_file_name`` ...) is
reported as unexpected.  ``tripleo.parameters.generate_passwords`` also rotated
(``rotate_passwords: true``, only the names in ``rotate_pw_list`` when given),
which ours do as two actions: its alias runs ``passwords.rotate`` then.  Names
whose meaning differs from every action of ours (``tripleo.plan.create_container``
makes an empty Swift container; ``tripleo.deployment.config`` runs a Heat software
config on a server; ``tripleo.plan.export`` writes to a Swift container) are not
aliased and stay unknown actions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.engine.lang.action import Action, reverter
from tripleo_flow.engine.lang.adhoc_actions import AdhocSpec, build

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
#: alias -> {our input: TripleO's name of it} (besides ``plan``, ``container``).
RENAMED = {
    "tripleo.heat_capabilities.update": {"purge": "purge_missing"},
    "tripleo.update_capabilities": {"purge": "purge_missing"},
}
#: The alias that rotates with ``rotate_passwords: true``, and the action it runs then.
ROTATING = ("tripleo.parameters.generate_passwords", "passwords.rotate")


def alias_spec(alias: str, base: type[Action]) -> AdhocSpec:
    """The ad-hoc action ``alias`` over ``base`` (``plan`` given as ``container``)."""
    inputs = []
    base_input = {}
    renamed = {"plan": "container", **RENAMED.get(alias, {})}
    for name, _type, required, default in base.inputs():
        own = renamed.get(name, name)
        if own == "container" and alias not in CONTAINER_REQUIRED:
            required, default = False, DEFAULT_CONTAINER
        inputs.append((own, required, default))
        base_input[name] = f"<% $.{own} %>"
    ours = base.action_name or ALIASES.get(alias, base.__name__)
    return AdhocSpec(alias, ours, base_input, tuple(inputs),
                     description=f"TripleO's {alias}: {base.description()}")


def rotating_alias(generate: type[Action], rotate: type[Action]) -> type[Action]:
    """TripleO's ``generate_passwords``: ``generate`` (the missing passwords), or with
    ``rotate_passwords: true`` ``rotate`` (every rotatable password, or only those
    named in ``rotate_pw_list``; ours refuses to rotate a protected one by name)."""
    alias = ROTATING[0]

    def chosen(rotate_passwords: Any, rotate_pw_list: Any) -> type[Action]:
        if not isinstance(rotate_passwords, bool):
            raise exceptions.InvalidInput(
                f"{alias}: rotate_passwords must be true or false, not {rotate_passwords!r}.")
        if rotate_pw_list is not None and not (
                isinstance(rotate_pw_list, list)
                and all(isinstance(n, str) for n in rotate_pw_list)):
            raise exceptions.InvalidInput(
                f"{alias}: rotate_pw_list must be a list of password names.")
        if rotate_pw_list and not rotate_passwords:
            raise exceptions.InvalidInput(
                f"{alias}: rotate_pw_list names passwords to rotate, which happens only "
                "with rotate_passwords: true.")
        return rotate if rotate_passwords else generate

    def execute(self: Action, container: str = DEFAULT_CONTAINER, rotate_passwords: bool = False,
                rotate_pw_list: list[str] | None = None) -> Any:
        action = chosen(rotate_passwords, rotate_pw_list)(self.context)
        if rotate_passwords:
            return action.execute(plan=container, rotate=list(rotate_pw_list or []) or None)
        return action.execute(plan=container)

    def revert(self: Action, result: Any, container: str = DEFAULT_CONTAINER,
               rotate_passwords: bool = False, rotate_pw_list: list[str] | None = None,
               **kwargs: Any) -> None:
        """Undo what the generation or the rotation did (its undo record)."""
        try:
            action = chosen(rotate_passwords, rotate_pw_list)
        except exceptions.InvalidInput:
            return  # refused before anything changed
        revert = reverter(action(self.context))
        if revert is not None:
            revert(plan=container, result=result)

    body = {"__doc__": f"TripleO's {alias}: {generate.description()} With "
            f"rotate_passwords: true, {rotate.description()[0].lower()}"
            f"{rotate.description()[1:]}",
            "action_name": alias, "execute": execute, "revert": revert}
    return type("TripleOGeneratePasswords", (Action,), body)


def alias_classes(actions: Mapping[str, type[Action]]) -> dict[str, type[Action]]:
    """The aliases whose action is registered, as Action classes by alias."""
    made = {alias: build(alias_spec(alias, actions[ours]), actions[ours])
            for alias, ours in ALIASES.items() if ours in actions}
    alias, rotate = ROTATING
    if alias in made and rotate in actions:
        made[alias] = rotating_alias(actions[ALIASES[alias]], actions[rotate])
    return made
