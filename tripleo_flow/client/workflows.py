"""Workflows: ``client.workflows`` (list, get, dot, graph), as python-mistralclient's
``workflows`` manager.  Running one is ``client.executions.create``
(:mod:`tripleo_flow.client.executions`); the catalog they are read from is the
session's (:mod:`tripleo_flow.client.session`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tripleo_flow.client.base import Manager

if TYPE_CHECKING:

    from tripleo_flow.engine.lang.workbook_model import WorkflowSpec


class WorkflowManager(Manager):
    """The workflows of the shipped and user workbooks (``client.workflows``)."""

    def list(self) -> list[WorkflowSpec]:
        """Every workflow of every loadable workbook, by full name (read without
        checking the workbooks: their problems are raised when one runs)."""
        return sorted(self._session.listed_catalog().workflows(), key=lambda w: w.full_name)

    def get(self, name: str) -> WorkflowSpec:
        """The workflow ``name`` (full or unique short name); raises if its workbook is invalid."""
        return self._session.catalog().get(name)

    def dot(self, name: str) -> str:
        """The task graph of workflow ``name`` in Graphviz DOT."""
        from tripleo_flow.engine.compile import compiler

        return compiler.to_dot(self.get(name))

    def graph(self, name: str) -> dict[str, Any]:
        """The task graph of workflow ``name`` as data
        (:func:`~tripleo_flow.engine.compile.compiler.to_graph`)."""
        from tripleo_flow.engine.compile import compiler

        return compiler.to_graph(self.get(name))

