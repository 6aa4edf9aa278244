"""What a plan holds besides its templates, each its own manager: ``client.capabilities``
(the environments it offers), ``client.roles``, ``client.networks``,
``client.passwords`` and ``client.parameters``.  A method that reads runs one
action; one that changes the plan runs a shipped workflow (``tripleo.plan.*``,
``tripleo.parameters.*``: a named, persisted execution), most of them one action run
as an execution (:data:`~tripleo_flow.client.workbooks.ACTION_WORKFLOWS`).

The actions and the workflow engine are imported by the methods that use them
(``tests/functional/cli/test_cli_startup.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.client import workbooks
from tripleo_flow.client.base import Manager
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.plan import validation

if TYPE_CHECKING:
    import builtins

    pass


class CapabilityManager(Manager):
    """The environments a plan offers, and which are enabled (``client.capabilities``)."""

    def get(self, name: str) -> dict[str, Any]:
        from tripleo_flow.actions import capabilities

        return self._action(capabilities.GetCapabilities).execute(plan=name)

    def update(self, name: str, environments: Mapping[str, bool],
               purge: bool = False) -> list[Any]:
        result = self._operation(workbooks.PLAN, "update_capabilities", {
            "plan": name, "environments": dict(environments), "purge": purge})
        return list(result["environments"])


class RoleManager(Manager):
    """A plan's roles (``client.roles``)."""

    def list(self, name: str, detail: bool = False) -> list[Any]:
        from tripleo_flow.actions import roles

        return self._action(roles.ListRoles).execute(plan=name, detail=detail)

    def counts(self, name: str) -> dict[str, int]:
        """Each role's effective count (CountDefault, then the plan's environments in
        order, then its own parameter values)."""
        from tripleo_flow.actions import roles

        return self._action(roles.RoleCounts).execute(plan=name)

    def set(self, name: str, role_list: builtins.list[dict[str, Any]] | str) -> builtins.list[str]:
        """Replace the plan's roles (workflow ``update_roles``), as ``role set FILE``.

        :param role_list: the roles, or the text of a roles_data.yaml holding them
        :raises InvalidInput: text that is not YAML, over a ``[limits]`` YAML limit, or
            not a list; roles the workflow refuses
        """
        result = self._operation(workbooks.PLAN, "update_roles", {
            "plan": name,
            "roles": _data_list(self._session.conf.limits, role_list, "roles", "roles file")})
        return list(result["names"])


class NetworkManager(Manager):
    """A plan's networks (``client.networks``)."""

    def list(self, name: str, detail: bool = False) -> list[Any]:
        from tripleo_flow.actions import networks

        return self._action(networks.ListNetworks).execute(plan=name, detail=detail)

    def set(self, name: str,
            network_list: builtins.list[dict[str, Any]] | str) -> builtins.list[str]:
        """Replace the plan's networks (workflow ``update_networks``), as ``network set
        FILE``.

        :param network_list: the networks, or the text of a network_data.yaml holding them
        :raises InvalidInput: as :meth:`RoleManager.set`
        """
        result = self._operation(workbooks.PLAN, "update_networks", {
            "plan": name,
            "networks": _data_list(self._session.conf.limits, network_list, "networks",
                                   "networks file")})
        return list(result["names"])


class PasswordManager(Manager):
    """A plan's generated passwords (``client.passwords``)."""

    def get(self, name: str) -> dict[str, Any]:
        from tripleo_flow.actions import passwords

        return self._action(passwords.GetPasswords).execute(plan=name)

    def rotate(self, name: str, rotate: list[str] | None = None,
               do_not_rotate: list[str] | None = None) -> list[str]:
        """Rotate passwords; returns the names that changed."""
        from tripleo_flow.actions.envedit import changed_keys

        return changed_keys(self._operation(workbooks.PARAMETERS, "rotate_passwords", {
            "plan": name, "rotate": rotate, "do_not_rotate": do_not_rotate}))


class ParameterManager(Manager):
    """A plan's parameter values and schema (``client.parameters``)."""

    def get(self, name: str) -> dict[str, Any]:
        """The plan's parameter_defaults (the values set by the user)."""
        repo = self._repo
        repo.require(name)
        return dict(repo.environment(name).get("parameter_defaults") or {})

    def schema(self, name: str) -> dict[str, Any]:
        """Every parameter of the plan's stack tree (validated by an ephemeral Heat, cached
        by plan content): ``{"plan", "key", "cached", "parameters": {name: entry}}``."""
        from tripleo_flow.actions import parameters

        return self._action(parameters.GetParameters).execute(plan=name)

    def set(self, name: str, values: Mapping[str, Any],
            validate: bool = False) -> list[str]:
        """Set parameter values; returns the names that changed.  With ``validate``,
        names and types are checked against the parameter schema first.  Values over
        ``[limits] parameters_max_size`` are refused before the execution is recorded."""
        from tripleo_flow.actions.envedit import changed_keys

        validation.check_size(values, self._session.context.limit("parameters_max_size"),
                              "The parameter values")
        return changed_keys(self._operation(workbooks.PARAMETERS, "update_parameters", {
            "plan": name, "parameters": dict(values), "key": "parameter_defaults",
            "validate": validate}))

    def reset(self, name: str, parameter_names: list[str] | None = None) -> list[str]:
        """Remove parameter values (all when no names are given); returns the removed names."""
        result = self._operation(workbooks.PARAMETERS, "reset_parameters",
                                 {"plan": name, "names": parameter_names})
        return sorted(result["previous"])


def _data_list(limits: Any, value: Any, noun: str, source: str) -> Any:
    """``value``, or the YAML text it is parsed within the ``[limits]`` (then it must
    be a list of ``noun``, as ``role set FILE`` reads its file)."""
    if not isinstance(value, str):
        return value
    if "\0" in value:
        raise exceptions.InvalidInput(
            f"The {source} is binary, not a YAML text file: give a YAML list of {noun}.")
    try:
        parsed = safe_yaml.load_yaml(value, source, max_nodes=limits.yaml_max_nodes,
                                     max_depth=limits.yaml_max_depth)
    except exceptions.InvalidTemplate as exc:
        raise exceptions.InvalidInput(
            f"The {source} is not valid YAML: {exc.reason}. Nothing was changed.") from exc
    if not isinstance(parsed, list):
        kind = "a mapping" if isinstance(parsed, dict) else "a single value"
        raise exceptions.InvalidInput(
            f"The {source} must hold a YAML list of {noun}, not {kind}. Nothing was "
            "changed.")
    return parsed
