"""Deployments: ``client.deployments`` deploys a plan, updates or scales down its
deployment and reads its status and failures."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.client import workbooks
from tripleo_flow.client.base import Manager
from tripleo_flow.core.deploy.progress import ProgressListener, StackProgress
from tripleo_flow.core.plan import deprecated_services
from tripleo_flow.plans.plan import PlanRepository, check_plan_name
from tripleo_flow.workspace import owner

if TYPE_CHECKING:
    from tripleo_flow.client.environments import EnvironmentManager, EnvironmentSource
    from tripleo_flow.client.session import Session
    from tripleo_flow.engine.compile.runner import Listener, ProgressEvent

DEPLOY = workbooks.DEPLOY
CONFIG_DOWNLOAD_ONLY = workbooks.CONFIG_DOWNLOAD_ONLY
DELETE_NODES = workbooks.DELETE_NODES


def stack_progress_events(listener: ProgressListener) -> Listener:
    """A workflow listener telling ``listener`` each look at the stack a deploy task
    reports (resources complete of total, and the Heat events since the last)."""

    def on_event(event: ProgressEvent) -> None:
        if event.event == "progress" and isinstance(event.report, StackProgress):
            listener(event.report)

    return on_event


class DeploymentManager(Manager):
    """Deploy a plan, update or scale down its deployment; read its status and failures
    (``client.deployments``)."""

    def __init__(self, session: Session, environments: EnvironmentManager) -> None:
        super().__init__(session)
        self._environments = environments

    def create(self, plan: str, heat_type: str | None = None,
               work_dir: str | Path | None = None,
               progress: ProgressListener | None = None, run_ansible: bool = False,
               ansible_connection: str | None = None,
               environments: Sequence[EnvironmentSource] | None = None,
               baremetal_deployment: str | Path | None = None,
               config_download_only: bool = False, ansible_tags: str | None = None,
               ansible_skip_tags: str | None = None,
               ansible_limit: str | None = None, overcloud_ssh_user: str | None = None,
               overcloud_ssh_key: str | Path | None = None,
               run_validations: bool = False,
               ansible_forks: int | None = None,
               ansible_verbosity: int | None = None,
               environment_directories: Sequence[str | Path] = (),
               default_environment_directory: bool = True) -> dict[str, Any]:
        """Deploy ``plan`` with an ephemeral Heat of ``heat_type``.

        Runs the workflow ``tripleo.deploy.deploy`` (``config_download_only``:
        ``tripleo.deploy.config_download_only``), as the HTTP API and ``workflow run``
        do: a named execution, persisted and listed; one a crash or ``kill -9`` left
        behind continues with ``tripleo-flow execution resume``.

        :param heat_type: how Heat runs; none: the type the deployment in ``work_dir``
            was made with (its Heat dump's, else its status'), else ``[heat]
            heat_type`` (scale, update and upgrade resolve it the same way).
        :param work_dir: where Heat's dump, the outputs and config-download go
            (default: ``<data_dir>/deployments/<plan>``).
        :param progress: called on each look at the stack while it is followed, with a
            :class:`~tripleo_flow.core.deploy.progress.StackProgress` (resources complete/total
            and the events since the last call).
        :param run_ansible: after config-download, run its deploy steps playbook with
            ansible-playbook (needs the ``ansible`` extra); its output goes to
            ``<work_dir>/ansible.log``.
        :param ansible_connection: give every inventory host this Ansible connection
            (``local`` runs the playbook on this machine, as for the sample plan).
        :param ansible_tags: run only the tasks with these tags (``ansible-playbook
            --tags``, comma-separated), as ``ansible_skip_tags`` (``--skip-tags``) and
            ``ansible_limit`` (``--limit``, hosts or groups) select what runs.
        :param ansible_forks: Ansible's forks for the run (tripleoclient's
            ``--ansible-forks``; default ``min(4 x CPUs, 100)``).
        :param ansible_verbosity: ansible-playbook's ``-v`` count (0 to 6; the CLI
            gives tripleoclient's: 3 with ``--debug``, else its ``-v`` level past one).
        :param overcloud_ssh_user: the user Ansible logs in to the servers as, named by
            config-download's inventory and ``ansible.cfg`` (default: ``[ansible]
            ssh_user``, ``tripleo-admin``).
        :param overcloud_ssh_key: the private key file it logs in with (default:
            ``[ansible] ssh_private_key``, else none named: Ansible's own); its path
            goes into the project, never its content.
        :param environments: when given, they first become the plan's user environments
            (a plan change with history, as ``client.environments.set``; nothing changes
            when they are those already stored; a failed deployment puts the earlier
            ones back).
        :param environment_directories: directories whose ``*.yaml`` files (in name
            order) come before ``environments`` (tripleoclient's
            ``--environment-directory``).
        :param default_environment_directory: as tripleoclient, read
            ``~/.tripleo/environments`` first (and ``$TRIPLEO_ENVIRONMENT_DIRECTORY``
            last) when they exist; its files then replace the plan's user
            environments as ``environments`` do.  ``False``: neither is read.
        :param baremetal_deployment: TripleO's baremetal deployment file (a path, or its
            YAML text) describing pre-provisioned servers (``managed: false``): first
            the plan's deployed-servers environment is generated from it (addresses
            on the ``[ctlplane]`` subnet, kept across redeploys; VIP; host names;
            role counts) as :meth:`update_servers` does.
        :param config_download_only: neither create nor update the stack: restore the
            stack an earlier deploy kept in the work dir, save its outputs, write
            config-download (and run Ansible with ``run_ansible``). This re-runs what
            failed after a finished stack; the plan is not read, so ``environments``
            and ``baremetal_deployment`` are refused with it.
        :param run_validations: first run the ``pre-deployment`` validations group on
            this machine (results kept with the plan); a failed validation stops the
            deployment before anything changes.
        :returns: the DEPLOY_SUCCESS status record.
        :raises StackFailed: the stack failed (each failed resource listed);
            like any other failure, everything was reverted and the status is
            DEPLOY_FAILED with the reason.
        :raises ValidationsFailed: with ``run_validations``, a validation failed (each
            one's reasons in the message); nothing was deployed.
        :raises Interrupted: SIGINT or SIGTERM arrived (called from the main thread):
            the next task to start, or the stack being followed, failed with it, so
            everything was reverted as above.
        """
        # The rules on the workflow's own inputs (config_download_only refusing
        # environments, ...) are its first task, deploy.check_inputs, so that a start
        # over HTTP keeps them; the plan name is checked here as it makes a path.
        check_plan_name(plan)
        work = Path(work_dir) if work_dir else self._session.data_dir / "deployments" / plan
        inputs: dict[str, Any] = {
            "plan": plan, "work_dir": str(work.expanduser().absolute()),
            "heat_type": heat_type, "run_ansible": run_ansible,
            "ansible_connection": ansible_connection, "ansible_tags": ansible_tags,
            "ansible_skip_tags": ansible_skip_tags, "ansible_limit": ansible_limit,
            "ansible_forks": ansible_forks, "ansible_verbosity": ansible_verbosity,
            **self.options(environments, baremetal_deployment, run_validations,
                           overcloud_ssh_user, overcloud_ssh_key,
                           environment_directories,
                           default_environment_directory)}
        workflow = CONFIG_DOWNLOAD_ONLY if config_download_only else DEPLOY
        listeners = [] if progress is None else [stack_progress_events(progress)]
        execution = self._session.run_operation(workflow, inputs, listeners,
                                                interruptible=f"Deployment of plan {plan!r}")
        finished: dict[str, Any] = dict((execution.output or {})["deployment"])
        return finished

    def deprecated_services(self, environments: Sequence[EnvironmentSource]
                            ) -> list[str]:
        """tripleoclient's warnings for deprecated services that the ``-e`` files
        ``environments`` enable (``check_deprecated_service_is_enabled``, run before
        deploy and update/upgrade prepare): one line per service and file; the CLI
        shows them and asks before going on, as tripleoclient does.

        :raises InvalidInput: a file that cannot be read.
        """
        return deprecated_services.enabled_deprecated_services(
            self._environments.read(environments))

    def options(self, environments: Sequence[EnvironmentSource] | None = None,
                baremetal_deployment: str | Path | None = None,
                run_validations: bool = False,
                overcloud_ssh_user: str | None = None,
                overcloud_ssh_key: str | Path | None = None,
                environment_directories: Sequence[str | Path] = (),
                default_environment_directory: bool = True,
                ) -> dict[str, Any]:
        """The deploy workflow's inputs for tripleoclient's deploy options (those of
        :meth:`deploy`; also taken by a lifecycle prepare and converge): local files read
        here, the key file's path made absolute.  ``environment_directories``: each
        directory's ``*.yaml`` files, in name order, before ``environments``
        (tripleoclient's ``--environment-directory``), after tripleoclient's default
        directory's unless ``default_environment_directory`` is false (see
        :func:`environment_files`).

        :raises InvalidInput: a file or directory that cannot be read.
        """
        found = [*environment_files(environment_directories,
                                    default=default_environment_directory),
                 *(environments or ())]
        return {"user_environments": self._environments.read(found),
                "baremetal_deployment": (None if baremetal_deployment is None
                                         else read_baremetal(baremetal_deployment)),
                "run_validations": run_validations,
                "overcloud_ssh_user": overcloud_ssh_user,
                "overcloud_ssh_key": (str(Path(overcloud_ssh_key).expanduser().absolute())
                                      if overcloud_ssh_key else None)}

    def update_servers(self, plan: str,
                       baremetal_deployment: str | Path) -> dict[str, Any]:
        """Generate the plan's deployed-servers environment from a baremetal deployment
        file (a local path, or the file's YAML text) and enable it.

        :returns: ``path``, ``counts`` (servers per role), ``hosts`` and ``changed``.
        """
        check_plan_name(plan)
        text = read_baremetal(baremetal_deployment)
        execution = self._session.run_operation(workbooks.plan_workflow("update_deployed_servers"),
                                                {"plan": plan, "baremetal_deployment": text})
        done: dict[str, Any] = dict((execution.output or {})["result"])
        return {k: done[k] for k in ("path", "counts", "hosts", "changed")}

    def status(self, plan: str) -> dict[str, Any]:
        """The plan's last deployment status (``deployment_status`` is NONE if never).

        While DEPLOYING, ``process`` names the deploying process and whether it is
        ``running``, ``gone`` or ``unknown`` (another host's).  A record left
        DEPLOYING by a process that is gone (killed, crashed) is shown as
        ``DEPLOY_INTERRUPTED``: nothing runs it any more, and a new deploy is allowed
        (it also stops the Heat such a run may have left).
        """
        repo = PlanRepository(self._session.store)
        repo.require(plan)
        status = repo.deployment_status(plan)
        if status is None:
            return {"plan": plan, "deployment_status": "NONE", "message": "", "updated_at": ""}
        shown = {"plan": plan, **{k: v for k, v in status.items()
                                  if k not in ("failures", "owner")}}
        if status.get("deployment_status") == "DEPLOYING":
            recorded = status.get("owner")
            state = owner.liveness(recorded)
            shown["process"] = f"{owner.describe(recorded)} ({state})"
            if state == owner.GONE:
                shown["deployment_status"] = "DEPLOY_INTERRUPTED"
                shown["message"] = ("The process deploying this plan is gone (it crashed or "
                                    "was killed); deploy again to replace this deployment.")
        return shown

    def failures(self, plan: str) -> list[dict[str, str]]:
        """The resources that failed in the plan's last deployment, with their reasons."""
        repo = PlanRepository(self._session.store)
        repo.require(plan)
        status = repo.deployment_status(plan) or {}
        failures = list(status.get("failures") or [])
        if not failures and status.get("deployment_status") == "DEPLOY_FAILED":
            failures = [{"stack": plan, "resource": "", "type": "",
                         "status": "DEPLOY_FAILED", "reason": str(status.get("message", ""))}]
        return failures


    def servers(self, plan: str) -> dict[str, list[str]]:
        """The servers of ``plan``'s last deployment: host names by role, as
        :meth:`delete_nodes` takes them (read from the work dir the deploy
        recorded, else ``<data_dir>/deployments/<plan>``).

        :raises NoKeptStack: the plan has no deployment kept there.
        """
        from tripleo_flow.actions.scale import kept_servers

        check_plan_name(plan)
        recorded = self.status(plan).get("work_dir")
        work = Path(recorded) if recorded else self._session.data_dir / "deployments" / plan
        return kept_servers(work, plan)

    def delete_nodes(self, plan: str, hosts: Sequence[str] = (),
                     baremetal_deployment: str | os.PathLike[str] | None = None,
                     work_dir: str | Path | None = None,
                     heat_type: str | None = None,
                     run_ansible: bool = True, ansible_connection: str | None = None,
                     progress: ProgressListener | None = None) -> dict[str, Any]:
        """Remove the servers ``hosts`` (host names) from the deployment of ``plan``, as
        TripleO's ``overcloud node delete``.

        Runs the workflow ``tripleo.scale.delete_nodes`` (a named execution, persisted;
        ``execution resume`` continues one a crash left behind): each host's member of
        its role's ResourceGroup is found in the deployment kept in ``work_dir``, the
        scale-down playbook runs on those servers only (``run_ansible``), the plan gets
        ``{Role}Count``, ``{Role}RemovalPolicies`` (merged with earlier ones) and
        ``{Role}RemovalPoliciesMode: append``, and the plan is deployed again.

        :param baremetal_deployment: instead of ``hosts``, TripleO's baremetal
            deployment file (a path, or its YAML text): the servers to remove are its
            instances marked ``provisioned: false`` (an Ironic node of a managed one is
            not undeployed here: ``client.nodes.unprovision`` does that).
        :param work_dir: the deployment's work dir (default:
            ``<data_dir>/deployments/<plan>``, as :meth:`deploy`).
        :returns: ``deployment`` (the DEPLOY_SUCCESS status record), ``removed`` (host
            name -> role and group member) and ``parameters`` (what was set).
        :raises ServersNotInStack: a host is not a server of the stack; nothing changed.
        """
        check_plan_name(plan)
        if isinstance(hosts, str) or bool(hosts) == (baremetal_deployment is not None):
            raise exceptions.InvalidInput(
                "Name the servers to delete: a list of host names, or a baremetal "
                "deployment file (its instances marked provisioned: false), not both.")
        work = Path(work_dir) if work_dir else self._session.data_dir / "deployments" / plan
        inputs = {"plan": plan, "hosts": list(hosts) or None, "heat_type": heat_type,
                  "baremetal_deployment": (None if baremetal_deployment is None
                                           else read_baremetal(baremetal_deployment)),
                  "work_dir": str(work.expanduser().absolute()), "run_ansible": run_ansible,
                  "ansible_connection": ansible_connection}
        listeners = [] if progress is None else [stack_progress_events(progress)]
        execution = self._session.run_operation(DELETE_NODES, inputs, listeners,
                                                interruptible=f"Scale-down of plan {plan!r}")
        output = dict(execution.output or {})
        return {"deployment": dict(output["deployment"]), "removed": dict(output["removed"]),
                "parameters": dict(output["parameters"])}


def read_baremetal(source: str | os.PathLike[str]) -> str:
    """A baremetal deployment file's text: ``source`` is a path, or YAML text
    (several lines, or a YAML list)."""
    if isinstance(source, str) and ("\n" in source or source.lstrip().startswith("-")):
        return source
    path = Path(source).expanduser()
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
        raise exceptions.InvalidInput(
            f"Cannot read the baremetal deployment file {str(path)!r}: {why}.") from exc


#: tripleoclient's ``--environment-directory`` default (``DEFAULT_ENV_DIRECTORY``):
#: read first, before any directory given, whenever it exists.
DEFAULT_ENVIRONMENT_DIRECTORY = "~/.tripleo/environments"
#: tripleoclient's environment variable naming one more directory, read last.
ENVIRONMENT_DIRECTORY_VARIABLE = "TRIPLEO_ENVIRONMENT_DIRECTORY"


def environment_files(directories: Sequence[str | os.PathLike[str]],
                      default: bool = True) -> list[str]:
    """The ``*.yaml`` files of each directory, in name order, directory after directory
    (tripleoclient's ``load_environment_directories``).  With ``default``, as
    tripleoclient: ``~/.tripleo/environments`` comes first and the directory named by
    ``$TRIPLEO_ENVIRONMENT_DIRECTORY`` last, each only when it exists.

    :raises InvalidInput: a directory given that does not exist.
    """
    chosen: list[tuple[Path, bool]] = [(Path(d).expanduser(), True) for d in directories]
    if default:
        chosen.insert(0, (Path(DEFAULT_ENVIRONMENT_DIRECTORY).expanduser(), False))
        if os.environ.get(ENVIRONMENT_DIRECTORY_VARIABLE):
            chosen.append((Path(os.environ[ENVIRONMENT_DIRECTORY_VARIABLE]).expanduser(),
                           False))
    found: list[str] = []
    for path, given in chosen:
        if not path.is_dir():
            if not given:
                continue
            raise exceptions.InvalidInput(
                f"Environment directory {str(path)!r} is not a directory.")
        found += [str(f) for f in sorted(path.glob("*.yaml")) if f.is_file()]
    return found
