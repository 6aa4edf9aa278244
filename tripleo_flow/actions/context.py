"""What an action may use: the plan store, plan locks, the configuration, where it
reports progress and how it learns to stop (:class:`ActionContext`).

Kept apart from :mod:`tripleo_flow.actions.base` (the class every action is), which
re-exports its names: the Python API builds its context from this module alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from tripleo_flow import config, exceptions
from tripleo_flow.core.plan import input_size, secrets
from tripleo_flow.engine.lang.action import ExecutionInfo as ExecutionInfo
from tripleo_flow.plans.plan import PlanRepository

if TYPE_CHECKING:
    from oslo_config import cfg

    from tripleo_flow.core.deploy.progress import Progress, Reporter
    from tripleo_flow.plans.lock import PlanLocks
    from tripleo_flow.plans.store import PlanStore


T = TypeVar("T")


class UndoJournal(Protocol):
    """Where the running task keeps its undo record before it changes anything.

    A resumed execution runs the task a crash interrupted again with the same
    inputs; if the first run had already made its change, the second would compute
    its undo record from the changed state (the "previous" values would be the new
    ones) and a later revert could not restore the original.  The workflow runner's
    journal (:mod:`tripleo_flow.engine.store.undo_journal`) keeps the first run's record,
    keyed by execution, task, attempt, item and inputs, and hands it to the re-run.
    """

    def recall(self, make: Callable[[], T], part: str = "") -> T:
        """The record (or the named ``part`` of it) kept for the running task, or
        ``make()`` kept now."""
        ...


@dataclass(frozen=True)
class ActionContext:
    """What actions may use: the plan store, plan locks and the configuration; where
    they report progress, and how they learn that the operation should stop."""

    store: PlanStore
    locks: PlanLocks
    conf: cfg.ConfigOpts
    #: Told what the running action has done so far (a plan's check and upload, a
    #: stack's resources and events, a node's state, a validation): the one channel
    #: every interface's progress comes through.
    reporter: Reporter | None = None
    #: Raises :class:`~tripleo_flow.exceptions.Interrupted` once a signal asked the
    #: operation to stop; long waits call it (:meth:`check_stop`) between looks.
    stop_check: Callable[[], None] | None = None
    #: Keeps the running task's undo record for a re-run (:class:`UndoJournal`); None
    #: outside a workflow (an action called directly computes its record each time).
    undo_journal: UndoJournal | None = None
    #: The workflow execution and task the action runs in (None outside a workflow).
    execution: ExecutionInfo | None = None
    #: The execution was started by a user of the HTTP API (what it may leave behind on
    #: this server is limited: ``[api] launched_heats_max``).
    api_user: bool = False

    @contextlib.contextmanager
    def hold_plan(self, plan: str, rendering: bool = False) -> Iterator[None]:
        """Hold ``plan``'s write lock for an operation on its files other than a
        template update (or its undo): it waits for a running update to finish, and
        a plan a killed update left part old, part new, or with its new templates
        not rendered yet, is refused until the update is run again or resumed.
        The later tasks of the update's own execution go ahead.

        :param rendering: the operation renders the templates (what completes an
            update whose tree is whole)
        :raises PlanUpdateUnfinished: when the plan's update journal is there, or
            (unless ``rendering``) its templates wait for another execution to
            render them.
        """
        with self.locks.hold(plan):
            # Under the lock no update runs: a journal is one a killed update left.
            repo = PlanRepository(self.store)
            try:
                pending = repo.journal(plan) is not None
                owner = None if rendering else repo.unrendered(plan)
            except exceptions.ContainerNotFound:  # no plan: the action says so its way
                pending, owner = False, None
            if owner is not None and not (owner and self.execution is not None
                                          and self.execution.execution_id == owner):
                pending = True
            if pending:
                raise exceptions.PlanUpdateUnfinished(plan)
            yield

    def plan_secrets(self, plan: str) -> set[str]:
        """The secrets of ``plan`` the workflow engine masks in what it records (its
        secrets hook: the engine knows no plan)."""
        return PlanRepository(self.store).secrets(plan)

    def config_secrets(self) -> set[str]:
        """The values of the configuration's secret options (the workflow engine's
        configuration secrets hook: the engine knows no TripleO option)."""
        return config.secret_values(self.conf)

    def check_input(self, workflow: str, inputs: Mapping[str, object]) -> None:
        """Refuse an execution's input before it is recorded, as the workflow's actions
        would (the workflow engine's input hook: parameter values and user environment
        files within ``[limits] parameters_max_size``)."""
        input_size.check_parameter_sizes(workflow, inputs, self.limit("parameters_max_size"))

    def input_secrets(self, inputs: Mapping[str, object]) -> set[str]:
        """The secrets an execution's inputs carry (the workflow engine's input secrets
        hook: those of the environment files given as text, within the YAML limits).

        :raises InvalidInput: a file with a mapping or list of over ``[limits]
            input_max_items`` entries: the execution is refused"""
        return secrets.environment_file_secrets(
            inputs, max_nodes=self.limit("yaml_max_nodes"),
            max_depth=self.limit("yaml_max_depth"), max_items=self.limit("input_max_items"))

    def report(self, progress: Progress) -> None:
        """Tell the reporter, if any, how far the running action is."""
        if self.reporter is not None:
            self.reporter(progress)

    def undo_record(self, make: Callable[[], T], part: str = "") -> T:
        """The undo record of the running task: ``make()`` (computed from the state
        before the change), kept before the action changes anything; a re-run of the
        same task gets the first run's record instead of computing it again.

        :param part: names a later part of the record, learnt during the change (the
            stored version a deletion left)
        """
        return self.once(make, part)

    def once(self, make: Callable[[], T], part: str = "") -> T:
        """What ``make()`` gave on the running task's first run (a time, an id, an undo
        record): a re-run of the task (a resumed execution) gets the same value back.
        Outside a workflow, ``make()``."""
        if self.undo_journal is None:
            return make()
        return self.undo_journal.recall(make, part)

    def check_stop(self) -> None:
        """Raise :class:`~tripleo_flow.exceptions.Interrupted` when asked to stop."""
        if self.stop_check is not None:
            self.stop_check()

    def limit(self, name: str) -> int:
        """The ``[limits]`` option ``name``."""
        return int(getattr(self.conf.limits, name))

    def seconds(self, name: str) -> float:
        """The ``[limits]`` time option ``name`` (seconds), as :meth:`limit`."""
        return float(getattr(self.conf.limits, name))
