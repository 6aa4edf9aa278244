"""The deployed-servers environment of a plan, from a baremetal deployment file.

``deployed_servers.update`` generates (:mod:`tripleo_flow.core.servers.deployed_servers`)
what the provision steps would for pre-provisioned servers and stores it as the
plan file ``deployed-servers-environment.yaml``, enabled after the plan's own
environments and before the user's (so ``-e`` files still win).  The addresses
of the file stored last time are kept.  One plan change under the plan's lock:
on a failure, or on revert, the earlier file and environment list come back.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, ActionContext, Rerun
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.plan import roles, userenvs
from tripleo_flow.core.servers import baremetal, deployed_servers, provision
from tripleo_flow.plans.plan import PlanRepository

LOG = logging.getLogger(__name__)
PATH = deployed_servers.ENVIRONMENT_NAME


def subnet_of(context: ActionContext) -> baremetal.Subnet:
    """The control plane subnet: the ``[ctlplane]`` options, or their defaults."""
    opts = context.conf.ctlplane
    return baremetal.Subnet(
        cidr=opts.cidr, gateway_ip=opts.gateway_ip, allocation_start=opts.allocation_start,
        allocation_end=opts.allocation_end, dns_nameservers=tuple(opts.dns_nameservers),
        dns_domain=opts.dns_domain, mtu=opts.mtu)


def load(context: ActionContext, data: bytes | str, path: str) -> Any:
    """YAML of ``path`` within the ``[limits]``."""
    return safe_yaml.load_yaml(data, path, max_nodes=context.limit("yaml_max_nodes"),
                             max_depth=context.limit("yaml_max_depth"))


def hostname_formats(context: ActionContext, repo: PlanRepository, plan: str
                     ) -> dict[str, str]:
    """Each role's ``HostnameFormatDefault`` in the plan's roles_data."""
    try:
        data = load(context, repo.store.get_object(plan, roles.ROLES_DATA), roles.ROLES_DATA)
    except exceptions.ObjectNotFound:
        return {}
    return {r["name"]: r["HostnameFormatDefault"] for r in data or []
            if isinstance(r, Mapping) and isinstance(r.get("name"), str)
            and isinstance(r.get("HostnameFormatDefault"), str)}


def data_file(context: ActionContext, repo: PlanRepository, plan: str, name: str
              ) -> list[Any]:
    """A data file of the plan (roles, network or VIP data) as a list, ``[]`` when
    the plan has none."""
    try:
        data = load(context, repo.store.get_object(plan, name), name)
    except exceptions.ObjectNotFound:
        return []
    if data is None:
        return []
    if not isinstance(data, list) or not all(isinstance(e, Mapping) for e in data):
        raise exceptions.InvalidInput(
            f"Plan {plan!r}: {name} is not a list of mappings. Fix it (plan update).")
    return data


def deployment_roles(context: ActionContext, repo: PlanRepository, plan: str,
                     text: Any) -> list[baremetal.Role]:
    """The roles of a baremetal deployment file's text, for ``plan`` (its host name
    formats and stack name)."""
    if not isinstance(text, str) or not text.strip():
        raise exceptions.InvalidInput(
            "Give the content of a baremetal deployment file (YAML).")
    data = load(context, text, "the baremetal deployment file")
    return baremetal.parse(data, subnet_of(context), hostname_formats(context, repo, plan),
                           stack=plan, max_servers=context.limit("nodes_max"))


def read_record(context: ActionContext, plan: str) -> dict[str, dict[str, Any]]:
    """The plan's record of provisioned nodes (host name -> node), empty when none."""
    try:
        data = context.store.get_object(plan, provision.RECORD)
    except exceptions.ObjectNotFound:
        return {}
    return provision.check_record(load(context, data, provision.RECORD))


def _entries(entries: list[Any]) -> list[Any]:
    """``entries`` with the generated environment after the plan's own, before the user's."""
    kept = [e for e in entries if not (isinstance(e, Mapping) and e.get("path") == PATH)]
    own = [e for e in kept if not userenvs.is_user_environment(str(e.get("path", "")))]
    users = [e for e in kept if userenvs.is_user_environment(str(e.get("path", "")))]
    return [*own, {"path": PATH}, *users]


class UpdateDeployedServers(Action):
    """Generate and store the plan's deployed-servers environment."""

    rerun = Rerun.CONVERGES

    def execute(self, plan: str, baremetal_deployment: str) -> dict[str, Any]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        store = self.context.store
        with self.context.hold_plan(plan):
            role_list = deployment_roles(self.context, repo, plan, baremetal_deployment)
            unprovisioned = provision.missing(role_list, read_record(self.context, plan))
            if unprovisioned:
                raise exceptions.InvalidInput(
                    f"The managed instances {', '.join(unprovisioned)} of the baremetal "
                    f"deployment file have no node in plan {plan!r}: provision them first",
                    hints=[exceptions.Hint(
                        "", "node.provision", {"plan": plan}, sep=" (",
                        tail="), or set managed: false for servers that are already "
                             "installed.")])
            files = repo.names(plan)
            try:
                before: bytes | None = store.get_object(plan, PATH)
            except exceptions.ObjectNotFound:
                before = None
            previous = load(self.context, before, PATH) if before else {}
            network_data = data_file(self.context, repo, plan, roles.NETWORK_DATA)
            roles.validate_networks(network_data)
            vip_data = data_file(self.context, repo, plan, roles.VIP_DATA)
            roles.validate_vips(vip_data)
            env = deployed_servers.generate(
                role_list, subnet_of(self.context), plan, files, previous,
                network_data=network_data,
                roles_data=data_file(self.context, repo, plan, roles.ROLES_DATA),
                vip_data=vip_data)
            missing = sorted(v for v in set(env["resource_registry"].values()) - set(files)
                             if not v.startswith("OS::"))
            if missing:
                raise exceptions.InvalidInput(
                    f"Plan {plan!r} cannot take pre-provisioned servers: its templates have "
                    f"no {', '.join(missing)} (tripleo-heat-templates have them). Update "
                    "the plan with the templates that do.")
            content = safe_yaml.dump_yaml(env)
            plan_env = repo.environment(plan)
            entries = list(plan_env.get("environments") or [])
            wanted = _entries(entries)
            # A re-run (a resumed job) finds the file written and gets the first run's
            # undo record; the stored version holding the old file is found after the
            # write (the version the store lists for it then), kept as a part.
            undo = self.context.undo_record(lambda: {
                "previous_environments": entries, "created": before is None,
                "written": content != before, "changed": content != before or wanted != entries})
            result = {"path": PATH, "counts": {r.name: r.count for r in role_list},
                      "hosts": sorted(h for r in role_list for h in
                                      (i.hostname for i in r.instances)),
                      **undo, "previous_version": None}
            if content == before and wanted == entries:
                result["previous_version"] = self.context.undo_record(lambda: None,
                                                                      part="version")
                return result
            try:
                if content != before:
                    store.put_object(plan, PATH, content)
                if wanted != entries:
                    plan_env["environments"] = wanted
                    repo.save_environment(plan, plan_env)
            except BaseException:
                self._undo(plan, result)
                raise
            old = before
            if old is not None and content != old:
                result["previous_version"] = self.context.undo_record(
                    lambda: repo.find_version(plan, PATH, old), part="version")
        return result

    def _undo(self, plan: str, record: Mapping[str, Any]) -> None:
        store = self.context.store
        PlanRepository(store).set_environments(plan, record["previous_environments"])
        if not record.get("written", True):
            pass  # the file was left as it was
        elif record["created"]:
            store.delete_objects(plan, [PATH])
        elif record["previous_version"]:
            store.put_object(plan, PATH, store.get_object(
                plan, PATH, version_id=record["previous_version"]))
        else:
            LOG.error("Cannot restore %s of plan %s: no stored version holds it.", PATH, plan)

    def revert(self, plan: str, result: Any, **kwargs: Any) -> None:
        """Put back the earlier environment file and list (safe to run twice)."""
        if not isinstance(result, dict) or not result.get("changed"):
            return
        repo = PlanRepository(self.context.store)
        if not repo.exists(plan):
            return
        with self.context.locks.hold(plan):
            self._undo(plan, result)
