"""The deployment's stack: the plan check that writes its stack request, its create or
update in the ephemeral Heat (followed to COMPLETE or FAILED), and the stack an earlier
deploy kept, for re-running only the steps after it."""

from __future__ import annotations

import contextlib
import json
import logging
import time
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, ActionContext, Rerun
from tripleo_flow.actions.deploy import ENVIRONMENT_FILE, REQUEST_FILE, pointer, read_pointer
from tripleo_flow.actions.deploy_heat import PRE_DEPLOY_DUMP, live_heat
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.deploy import progress, update
from tripleo_flow.core.plan import rendering
from tripleo_flow.core.plan import stack_request as requests
from tripleo_flow.engine.lang.action import WorkDir
from tripleo_flow.heat.client import HeatClient
from tripleo_flow.heat.workdir import HeatDir
from tripleo_flow.plans import render_record
from tripleo_flow.plans.plan import PlanRepository
from tripleo_flow.workspace import files as private_files

LOG = logging.getLogger(__name__)


def load_request(stack_request: dict[str, Any], work_dir: str | None = None) -> dict[str, Any]:
    """The stack request a :class:`CheckPlan` result points at (or holds, when older).

    :param work_dir: the deployment's work dir, whose request file alone it may point at
        (the steps after the stack take it as an input of their sub-workflow, which can
        be started alone: a file elsewhere is refused before it is read)
    """
    if "file" not in stack_request:
        return stack_request
    if work_dir is not None and Path(str(stack_request["file"])) != Path(work_dir) / REQUEST_FILE:
        raise exceptions.InvalidInput(
            f"The stack request must be the work dir's {REQUEST_FILE} ({Path(work_dir)}), "
            f"not {str(stack_request['file'])!r}: deploy the plan to write it.")
    return dict(json.loads(read_pointer(stack_request)))


def _record_stack_status(store: Any, plan: str, status: str) -> None:
    """Add the finished stack's status to the running deployment's status record."""
    repo = PlanRepository(store)
    record = repo.deployment_status(plan) or {}
    repo.set_deployment_status(plan, {**record, "stack_status": status})


#: The share of the time a stack is followed that its progress looks may take: every
#: resource and event of the stack tree, which the engine creating the stack answers
#: between its own work (a single heat-all spent half its time on them at 2 s apart
#: for THT 18.0.0 on a busy machine).  Looks are taken while the time spent on them is
#: within LOOK_SHARE of the time followed plus LOOK_ALLOWANCE seconds (a small stack
#: still gets a look at each poll); the stack's end is always looked at.
LOOK_SHARE = 0.05
LOOK_ALLOWANCE = 5.0


class _Follower:
    """Called by :meth:`HeatClient.wait` on each poll: logs and reports progress."""

    def __init__(self, client: HeatClient, plan: str, context: ActionContext,
                 clock: Any = time.monotonic) -> None:
        self.client, self.plan, self.context = client, plan, context
        self.clock = clock
        self.seen: set[str] = set()
        self.last: tuple[str, int, int] | None = None
        #: The largest share reported so far.
        self.share = 0.0
        #: When the first look was taken, and the seconds the looks took (:data:`LOOK_SHARE`).
        self.first: float | None = None
        self.spent = 0.0

    def __call__(self, stack: dict[str, Any]) -> None:
        self.context.check_stop()  # Ctrl-C: this task fails, the deployment reverts
        status = str(stack.get("stack_status"))
        started = self.clock()
        self.first = started if self.first is None else self.first
        budget = LOOK_SHARE * (started - self.first) + LOOK_ALLOWANCE
        if status.endswith("IN_PROGRESS") and self.spent > budget:
            return
        try:
            resources = self.client.resources(self.plan, stack["id"])
            listed = self.client.events(self.plan, stack["id"])
        except exceptions.HeatError as exc:
            # Listing nested resources while Heat writes them can fail for a moment
            # (e.g. 404 "ResourcePropertiesData ... not found"): progress is only
            # informative, the stack's own status decides, so skip this look.
            LOG.debug("Stack %s: no progress this time (%s)", self.plan, exc)
            return
        self.spent += self.clock() - started
        complete, total = progress.count_resources(resources)
        events = progress.new_events(listed, self.seen)
        share = progress.stack_share(resources, str(stack["id"]))
        if share is None:
            share = complete / total if total else 0.0
        if status.endswith("_COMPLETE"):
            share = 1.0
        if not status.startswith("CREATE"):
            # An update takes resources from COMPLETE back to IN_PROGRESS for a while: the
            # share reported never goes down (a create's cannot: see stack_share).
            share = max(self.share, share)
        self.share = share
        report = progress.StackProgress(self.plan, status, complete, total, tuple(events),
                                        share=self.share)
        if (status, complete, total) != self.last:
            self.last = (status, complete, total)
            LOG.info("%s", report.line())
        for line in events:
            LOG.debug("%s", line)
        self.context.report(report)


class CheckPlan(Action):
    """Render a plan, compute its container image and deploy parameters, check that every
    parameter of its stack tree has a value, and save the stack request in the work dir.

    The plan's rendered files are taken as they are when the record of its last render
    says they are what rendering its files now gives
    (:mod:`~tripleo_flow.plans.render_record`).

    The result points at ``stack-request.json`` (path and sha256): the request
    holds every password.
    """

    rerun = Rerun.CONVERGES

    def execute(self, plan: str, work_dir: WorkDir,
                lifecycle: str | None = None) -> dict[str, Any]:
        """``lifecycle``: the kind (update, upgrade) of the prepare or converge this
        deploy makes; its lifecycle environments are sent, no other's
        (:func:`~tripleo_flow.core.deploy.update.sent_environments`)."""
        repo = PlanRepository(self.context.store)
        plan_env = dict(repo.environment(plan))
        plan_env["environments"] = update.sent_environments(
            plan_env.get("environments") or [], lifecycle)
        files = repo.files(plan)  # each read once, when the check or the request needs it
        max_size = self.context.limit("render_max_size")
        record = repo.manifest(plan).render
        files.prefetch(render_record.names(record))
        # The rendered files the plan holds, when its last render's record says they
        # are what rendering these files gives; else a fresh render (as before).
        rendered: dict[str, bytes] = {}
        if not render_record.holds(record, files, max_size):
            files.prefetch(rendering.render_inputs(files))
            rendered = rendering.render_plan(
                files, max_size=max_size, timeout=self.context.seconds("render_timeout"))
        # The stack exists when the work dir holds a Heat dump (the launch restores it).
        action = "UPDATE" if HeatDir(work_dir).dump_file.exists() else "CREATE"
        # The same DeployIdentifier on a re-run (a resumed job): the same request.
        identifier = self.context.once(lambda: int(time.time()), part="deploy_identifier")
        checked = requests.deploy_request(plan, rendering.Rendered(files, rendered),
                                          plan_env, identifier, action)
        for warning in [*checked.images.warnings, *checked.risky]:
            LOG.warning("%s", warning)
        if checked.missing:
            raise exceptions.MissingParameters(plan, [str(m) for m in checked.missing])
        request = checked.request
        last = Path(work_dir) / ENVIRONMENT_FILE
        last_env = safe_yaml.load_yaml(last.read_bytes(), str(last)) if last.exists() else None
        for warning in requests.check_against_last(request, last_env):
            LOG.warning("%s", warning)
        data = json.dumps(request, sort_keys=True).encode()
        backup = private_files.write(Path(work_dir), {REQUEST_FILE: data},
                                     self.context.undo_record)
        return {**pointer(Path(work_dir) / REQUEST_FILE, data), "backup": backup}

    def revert(self, plan: str, work_dir: str, result: Any = None, **kwargs: Any) -> None:
        """Put back the request of the stack the work dir keeps (or remove this one),
        unless this run's stack finished: then it describes the kept stack."""
        if not isinstance(result, dict) or "file" not in result:
            return
        if (PlanRepository(self.context.store).deployment_status(plan) or {}).get(
                "stack_status"):
            return
        if "backup" in result:
            private_files.restore(Path(work_dir), result["backup"])
        else:  # a result recorded before requests were backed up
            with contextlib.suppress(FileNotFoundError):
                Path(result["file"]).unlink()


class DeployStack(Action):
    """Create or update the plan's stack and follow it to COMPLETE or FAILED.

    No revert: the stack lives in the ephemeral Heat, whose launch revert dumps and
    drops it (a failed stack stays in the dump for debugging, a finished one stays
    the current stack).
    """

    rerun = Rerun.CONVERGES

    def execute(self, plan: str, work_dir: WorkDir, stack_request: dict[str, Any],
                heat: dict[str, Any]) -> dict[str, Any]:
        stack_request = load_request(stack_request, work_dir)
        client = live_heat(self.context, plan, work_dir, heat)
        existing = client.find_stack(plan)
        follow = _Follower(client, plan, self.context)
        # Run again after a kill (a resumed execution), the stack may be IN_PROGRESS with
        # nothing driving it: the update below takes it over (convergence steals the
        # dead engine's resource locks and retries them).
        action = "CREATE" if existing is None else "UPDATE"
        stack_request = requests.set_stack_action(stack_request, action)
        if existing is None:
            client.create_stack(stack_request)
        else:
            progress.new_events(client.events(plan, existing["id"]), follow.seen)  # old ones
            client.update_stack(plan, existing["id"], stack_request)
        stack = client.wait(plan, follow)
        status = str(stack["stack_status"])
        if status != f"{action}_COMPLETE":
            failures = client.failed_resources(plan, stack["id"])
            raise exceptions.StackFailed(plan, status,
                                         str(stack.get("stack_status_reason", "")), failures)
        self._keep(plan, work_dir, status)
        return {"id": stack["id"], "action": action, "status": status}

    def _keep(self, plan: str, work_dir: str, status: str) -> None:
        """The stack finished: from now on it replaces the pre-deploy dump whatever
        fails later, and the status record says so (for a failure's message)."""
        with contextlib.suppress(FileNotFoundError):
            (HeatDir(work_dir).root / PRE_DEPLOY_DUMP).unlink()
        _record_stack_status(self.context.store, plan, status)


class KeptStack(Action):
    """Check that the work dir holds a stack kept by an earlier deploy (its dump and
    stack request), for re-running the steps after the stack without changing it.

    Provides the stack request of the deploy that made the stack, so the outputs and
    environment saved next describe that stack.
    """

    rerun = Rerun.READS

    def execute(self, plan: str, work_dir: WorkDir) -> dict[str, Any]:
        PlanRepository(self.context.store).require(plan)
        heat = HeatDir(work_dir)
        request = Path(work_dir) / REQUEST_FILE
        if not heat.dump_file.exists() or not request.exists():
            raise exceptions.NoKeptStack(plan, str(work_dir))
        return pointer(request, request.read_bytes())


class CheckKeptStack(Action):
    """The restored stack must be the plan's finished stack (CREATE or UPDATE COMPLETE).

    It records the stack's status in the running deployment's status record (as
    :class:`DeployStack` does): run again, it records the same.
    """

    rerun = Rerun.CONVERGES

    def execute(self, plan: str, work_dir: WorkDir, heat: dict[str, Any]) -> dict[str, Any]:
        # The work dir's own Heat (its run record's port), never an endpoint taken from
        # the input: ``heat`` only names the type it was launched as.
        stack = live_heat(self.context, plan, work_dir, heat, need_stack=True).find_stack(plan)
        status = str((stack or {}).get("stack_status", "missing"))
        if stack is None or status not in ("CREATE_COMPLETE", "UPDATE_COMPLETE"):
            raise exceptions.StackNotFinished(plan, status)
        _record_stack_status(self.context.store, plan, status)
        return {"id": stack["id"], "action": status.split("_")[0], "status": status}
