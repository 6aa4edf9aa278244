"""What the executions database keeps of a secret: nothing.

Every row the execution backend writes (a task's outcome, its failure, its
revert result; an execution's input and output) goes through one
:class:`Redactor` first, which applies :func:`tripleo_flow.core.secrets.redact`:
values under secret names, strings holding a known secret, and the whole
result of a task whose action declares ``secret_result`` read ``<secret>``.
The in-memory copies the running engine hands from task to task keep the real
values, so a workflow can still publish a password for the next task.

The secret values seen so far (those of the plan an execution names and of
the configuration options marked secret, learned when it starts) are
remembered for the life of the process, so a password a task published under
an innocent name, or one inside a rendered configuration, is masked too.

Trade-off: a record read back from the database holds masks, not secrets.
A resumed execution whose remaining tasks need a value that was masked stops
with :class:`~tripleo_flow.exceptions.SecretNotPersisted` instead of using the
mask (rerun the workflow); the shipped workflows pass secrets only between
tasks through the plan store or the deployment's work dir, never through the
context, so they resume as before.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from tripleo_flow import config, exceptions
from tripleo_flow.core import jsonvalues, planenv, secrets

#: Outcome key set by a task whose action declares its result secret.
SECRET_RESULT = "secret_result"
#: Columns of an atom row that hold data (the others are names, states, versions).
_ATOM_DATA = ("results", "failure", "revert_results", "revert_failure", "meta")
_FLOW_DATA = ("meta",)
#: Columns holding a TaskFlow failure: its ``exc_args`` are the exception's own
#: arguments (a YAML parser's ``Mark``, a path object), which JSON cannot store as
#: they are; a row that fails to encode is not written at all.
_FAILURES = ("failure", "revert_failure")


class Redactor:
    """Masks secrets in rows before they are written; remembers the secrets it saw."""

    def __init__(self) -> None:
        self._known: set[str] = set()
        #: :func:`secrets.needles` of ``_known`` (sorted once per change, not per row).
        self._needles = secrets.Needles()
        self._lock = threading.Lock()

    def learn(self, values: Iterable[str]) -> None:
        """Mask these values wherever they appear from now on."""
        with self._lock:
            new = {v for v in values if isinstance(v, str) and v} - self._known
            if new:
                self._known.update(new)
                self._needles = secrets.needles(self._known)

    def value(self, data: Any, everything: bool = False) -> Any:
        """``data`` with every secret masked (``everything``: a secret result)."""
        masked, found = secrets.redact_sorted(data, self._needles, everything=everything)
        if found:
            self.learn(found)
        return masked

    def atom_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """An atom detail's ``to_dict()`` as it may be stored."""
        out = dict(row)
        for column in _ATOM_DATA:
            if out.get(column) is not None:
                value = out[column]
                if column in _FAILURES:  # an exception's args may be any object
                    value = jsonvalues.sanitize(value)
                out[column] = self._outcome(value)
        return out

    def flow_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """A flow detail's ``to_dict()`` as it may be stored."""
        out = dict(row)
        for column in _FLOW_DATA:
            if out.get(column) is not None:
                out[column] = self.value(out[column])
        return out

    def _outcome(self, data: Any) -> Any:
        if isinstance(data, Mapping) and data.get(SECRET_RESULT) and "result" in data:
            # Learn the secret result first, so its published copies are masked too.
            result = self.value(data["result"], everything=True)
            rest = self.value({k: v for k, v in data.items() if k != "result"})
            return {**rest, "result": result}
        return self.value(data)


def config_secrets(conf: Any) -> set[str]:
    """The values of the configuration options marked ``secret`` (Swift key, API token,
    database URLs...)."""
    found: set[str] = set()
    for group, opts in config.list_opts():
        section = conf if group == "DEFAULT" else getattr(conf, group, None)
        for opt in opts:
            if opt.secret and section is not None:
                value = getattr(section, opt.dest, None)
                found.update(secrets.leaves(value) if value else ())
    return found


def environment_file_secrets(inputs: Mapping[str, Any],
                             max_nodes: int = planenv.DEFAULT_MAX_NODES,
                             max_depth: int = planenv.DEFAULT_MAX_DEPTH) -> set[str]:
    """The secret values in the environment files an execution's inputs carry as text
    (``user_environments``: ``[{"name", "files": {path: text}}]``), so the record of
    that text is masked as the plan's own secrets are.  A file that does not parse
    (within the YAML limits) holds none: the action refuses it."""
    found: set[str] = set()
    environments = inputs.get("user_environments")
    for env in environments if isinstance(environments, list) else ():
        files = env.get("files") if isinstance(env, Mapping) else None
        for path, text in files.items() if isinstance(files, Mapping) else ():
            if not isinstance(text, str):
                continue
            try:
                parsed = planenv.load_yaml(text, str(path), max_nodes=max_nodes,
                                           max_depth=max_depth)
            except exceptions.TripleoFlowError:
                continue
            found |= secrets.environment_secrets(parsed)
    return found


def masked_inputs(inputs: Mapping[str, Any]) -> list[str]:
    """Names of the inputs that hold a mask instead of a value (a resumed execution)."""
    return sorted(name for name, value in inputs.items() if secrets.is_masked(value))
