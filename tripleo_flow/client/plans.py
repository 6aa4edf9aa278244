"""Plan operations of the Python API: plans, capabilities, roles, networks,
passwords and parameters.  A method that reads runs one action, or reads the plan
repository itself (listing and showing plans, their parameters); one that changes
a plan runs a shipped workflow (``tripleo.plan.*``: a named, persisted execution, as
when the HTTP API or ``workflow run`` starts it); a change that is one action runs it
as an execution under that workflow's name
(:data:`~tripleo_flow.client.workbooks.ACTION_WORKFLOWS`).

The actions and the workflow engine are imported by the methods
that use them: a command that reads a plan loads neither TaskFlow nor SQLAlchemy
(``tests/unit/test_cli_startup.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tripleo_flow import exceptions
from tripleo_flow.client import workbooks
from tripleo_flow.client.base import Manager
from tripleo_flow.client.environments import EnvironmentSource, read_data_files
from tripleo_flow.core.deploy.progress import PlanProgress, PlanProgressListener

if TYPE_CHECKING:
    import builtins

    from tripleo_flow.actions.base import Action
    from tripleo_flow.client.environments import EnvironmentManager
    from tripleo_flow.client.session import Session
    from tripleo_flow.engine.compile.runner import Listener, ProgressEvent

A = TypeVar("A", bound="Action")

#: The progress stages of a plan's template check and upload (:class:`PlanProgress`).
PLAN_STAGES = ("check", "upload")


def sample_plan_dir() -> Path:
    """The small sample plan shipped inside the package."""
    return Path(str(resources.files("tripleo_flow") / "sample_plan"))


def plan_progress_events(name: str, listener: PlanProgressListener) -> Listener:
    """A workflow listener telling ``listener`` the template check and upload progress
    the tasks of plan ``name``'s workflow report."""

    def on_event(event: ProgressEvent) -> None:
        report = event.progress
        if event.event == "progress" and report and report.get("stage") in PLAN_STAGES:
            listener(PlanProgress(name, report["stage"], int(report["done"]),
                                  int(report["total"])))

    return on_event


class PlanManager(Manager):
    """Plans: create, update, list, get, render, export, delete, history, restore
    (``client.plans``)."""

    def __init__(self, session: Session, environments: EnvironmentManager) -> None:
        super().__init__(session)
        self._environments = environments

    # -- plans -------------------------------------------------------------

    def _run_plan_workflow(self, workflow: str, name: str, inputs: dict[str, Any],
                           progress: PlanProgressListener | None) -> dict[str, Any]:
        """Run plan workflow ``workflow`` of the plan workbook for plan ``name``; its
        output.  ``progress`` hears the template check and upload of its tasks."""
        listeners = [] if progress is None else [plan_progress_events(name, progress)]
        execution = self._session.run_operation(workbooks.plan_workflow(workflow), inputs,
                                                listeners)
        return dict(execution.output or {})

    def create(self, name: str, templates: str | Path | None = None,
               description: str = "", sample: bool = False,
               progress: PlanProgressListener | None = None,
               environments: Sequence[EnvironmentSource] = (),
               roles_file: str | Path | None = None,
               networks_file: str | Path | None = None,
               vip_file: str | Path | None = None) -> dict[str, Any]:
        """Create plan ``name`` from a directory or .tar.gz (or the sample plan), render
        its templates and generate its passwords; on any failure no plan is left.

        Runs the workflow ``tripleo.plan.create_deployment_plan`` (an execution of it
        is recorded, as when the HTTP API or ``workflow run`` starts it).

        :param progress: told how far the template check (files) and the upload
            (bytes) are, in whole-percent steps
            (:class:`~tripleo_flow.core.deploy.progress.PlanProgress`).
        :param environments: environment files (``-e``) stored in the plan as user
            environments, applied after the plan's own in this order (the last wins).
        :param roles_file: replaces the templates' ``roles_data.yaml``; ``networks_file``
            and ``vip_file`` replace ``network_data.yaml`` and ``vip_data.yaml`` (by
            default those of the tree, or its ``*_data_default.yaml`` (THT 18.x)).
        """
        source = sample_plan_dir() if sample else templates
        if source is None:
            raise exceptions.InvalidInput("Give the templates (a directory or .tar.gz) or sample.")
        envs = self._environments.read(environments)
        output = self._run_plan_workflow("create_deployment_plan", name, {
            "plan": name, "templates": str(source), "description": description,
            "data_files": read_data_files(roles_file, networks_file, vip_file),
            "user_environments": envs}, progress)
        return {"name": name, "files": output["files"], "rendered": output["rendered"],
                "passwords": output["passwords_generated"],
                "environments": list(output.get("environments") or [])}

    def update(self, name: str, templates: str | Path,
               progress: PlanProgressListener | None = None,
               environments: Sequence[EnvironmentSource] | None = None,
               roles_file: str | Path | None = None,
               networks_file: str | Path | None = None,
               vip_file: str | Path | None = None) -> dict[str, Any]:
        """Replace the templates of ``name``, keeping the user's values and files.

        Runs the workflow ``tripleo.plan.update_deployment_plan``.

        :param progress: as for :meth:`create` (the upload counts changed files only).
        :param environments: when given, they become the plan's user environments
            (replacing the earlier ones); otherwise those are kept.
        :param roles_file: as for :meth:`create`, with ``networks_file`` and ``vip_file``.
        """
        envs = self._environments.read(environments or ())
        output = self._run_plan_workflow("update_deployment_plan", name, {
            "plan": name, "templates": str(templates),
            "data_files": read_data_files(roles_file, networks_file, vip_file),
            "user_environments": envs}, progress)
        return {"name": name, "changed": output["changed"], "deleted": output["deleted"],
                "rendered": output["rendered"],
                "dropped_environments": output["dropped_environments"]}

    def list(self) -> list[dict[str, Any]]:
        """Every plan with its description and deployment status."""
        repo = self._repo
        rows = []
        for name in repo.list_plans():
            status = repo.deployment_status(name) or {}
            try:
                description = repo.environment(name).get("description", "")
            except Exception:  # a broken plan-environment still lists
                description = "(unreadable plan-environment.yaml)"
            rows.append({"name": name, "description": description,
                         "deployment_status": status.get("deployment_status", "")})
        return rows

    def get(self, name: str) -> dict[str, Any]:
        repo = self._repo
        repo.require(name)
        env = repo.environment(name)
        manifest = repo.manifest(name)
        status = repo.deployment_status(name) or {}
        return {
            "name": name,
            "description": env.get("description", ""),
            "template": env.get("template", ""),
            "files": len(repo.names(name)),
            "rendered_files": len(manifest.rendered),
            "environments": [e.get("path", "(inline data)") for e in env.get("environments") or []],
            "parameters_set": len(env.get("parameter_defaults") or {}),
            "passwords": len(env.get("passwords") or {}),
            "deployment_status": status.get("deployment_status", ""),
            # a killed template update left the tree part old, part new, or unrendered
            "update_unfinished": repo.update_unfinished(name),
        }

    def render(self, name: str) -> dict[str, Any]:
        """Render the plan's j2 templates again (after editing roles, networks or files):
        the workflow ``tripleo.plan.render_deployment_plan``, a recorded execution."""
        output = self._run_plan_workflow("render_deployment_plan", name, {"plan": name},
                                         None)
        return {"name": name, "rendered": output["rendered"], "written": output["written"],
                "removed": output["removed"]}

    def export(self, name: str, output: str | Path, secrets: bool = True) -> str:
        """Write the plan as a .tar.gz archive to ``output`` (the workflow
        ``tripleo.plan.export_deployment_plan``); the archive's path.  Without
        ``secrets`` the passwords and secret parameters are left out."""
        output_path = self._run_plan_workflow(
            "export_deployment_plan", name,
            {"plan": name, "output": str(output), "secrets": secrets}, None)
        return str(output_path["export"])

    def delete(self, name: str, force: bool = False) -> str:
        """Delete plan ``name`` (the workflow ``tripleo.plan.delete_deployment_plan``);
        refused while a deployment is recorded unless ``force``."""
        return str(self._run_plan_workflow("delete_deployment_plan", name,
                                           {"plan": name, "force": force}, None)["deleted"])

    def history(self, name: str) -> builtins.list[dict[str, Any]]:
        """The stored versions of the plan's plan-environment.yaml, newest first."""
        from tripleo_flow.actions import plan_versions

        return self._action(plan_versions.PlanHistory).execute(plan=name)

    def restore(self, name: str, version: str,
                keep_passwords: bool = True) -> dict[str, Any]:
        """Make an earlier plan-environment.yaml the current one (the workflow
        ``tripleo.plan.restore_deployment_plan``), keeping the plan's current passwords
        unless ``keep_passwords`` is false (then the version's own are restored:
        none, for the first version, and the next update generates new ones)."""
        output = self._run_plan_workflow("restore_deployment_plan", name, {
            "plan": name, "version": version, "keep_passwords": keep_passwords}, None)
        return {"name": name, "restored": version,
                "passwords_kept": bool(output.get("passwords_kept"))}
