"""What the executions database keeps of a secret: nothing.

Every row the execution backend writes (a task's outcome, its failure, its
revert result; an execution's input and output) goes through one
:class:`Redactor` first, which applies :func:`tripleo_flow.common.secret_masking.redact`:
values under secret names, strings holding a known secret, and the whole
result of a task whose action declares ``secret_result`` read ``<secret>``.
The in-memory copies the running engine hands from task to task keep the real
values, so a workflow can still publish a password for the next task.

The secret values seen so far (those of the plan an execution names and of
the configuration options marked secret, learned when it starts) are
remembered for the life of the process, so a password a task published under
an innocent name, or one inside a rendered configuration, is masked too.

TaskFlow saves a whole flow detail (its meta: the execution's inputs) and a
whole atom row at each change, so the same large value (80,000 parameters)
came to be masked at every save.  A masked part (an entry of a row's column)
is remembered by the SHA-256 of its JSON with the secrets known then: an
unchanged part is masked once and read back from its masked JSON afterwards;
learning a new secret forgets every remembered part, so a record never misses
a secret known when it is written.

Trade-off: a record read back from the database holds masks, not secrets.
A resumed execution whose remaining tasks need a value that was masked stops
with :class:`~tripleo_flow.exceptions.SecretNotPersisted` instead of using the
mask (rerun the workflow); the shipped workflows pass secrets only between
tasks through the plan store or the deployment's work dir, never through the
context, so they resume as before.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import json
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from tripleo_flow.common import jsonvalues, secret_masking

#: Outcome key set by a task whose action declares its result secret.
SECRET_RESULT = "secret_result"
#: Columns of an atom row that hold data (the others are names, states, versions).
_ATOM_DATA = ("results", "failure", "revert_results", "revert_failure", "meta")
_FLOW_DATA = ("meta",)
#: Columns holding a TaskFlow failure: its ``exc_args`` are the exception's own
#: arguments (a YAML parser's ``Mark``, a path object), which JSON cannot store as
#: they are; a row that fails to encode is not written at all.
_FAILURES = ("failure", "revert_failure")


#: Parts whose JSON is shorter than this are masked every time (cheap), not remembered.
_REMEMBER_FROM = 4096
#: A mapping or list with more entries than this is masked whole when it is new (each
#: entry looked up costs a hash of it).
_MOST_PARTS = 64
#: Parts deeper than this are not split further.
_SPLIT_DEPTH = 8


@dataclasses.dataclass
class _Part:
    """A value being masked, or one inside it, as :func:`secret_masking.mask_part` reaches it:
    ``secret`` as a whole or not, at ``depth``.  It is remembered (``masked``), split
    into ``entries`` (a large mapping or list seen for the first time: its unchanged
    entries are), or masked whole."""

    value: Any
    secret: bool
    depth: int
    digest: bytes | None = None
    masked: str | None = None
    entries: list[tuple[Any, _Part]] | None = None
    is_mapping: bool = False


class Redactor:
    """Masks secrets in rows before they are written; remembers the secrets it saw, and
    the large parts it masked while no new secret was learned."""

    def __init__(self, remember_bytes: int = 32 << 20) -> None:
        self._known: set[str] = set()
        #: :func:`secret_masking.needles` of ``_known`` (sorted once per change, not per row).
        self._needles = secret_masking.Needles()
        #: bumped by each new secret: parts remembered before are forgotten
        self._generation = 0
        #: digest of a part -> its masked JSON (all masked with the current secrets)
        self._remembered: collections.OrderedDict[bytes, str] = collections.OrderedDict()
        self._remembered_bytes = 0
        self._remember_bytes = remember_bytes
        #: large parts (a JSON of _REMEMBER_FROM characters or more) masked so far, not
        #: read back: what remembering saves shows here
        self.parts_masked = 0
        self._lock = threading.Lock()

    def learn(self, values: Iterable[str]) -> None:
        """Mask these values wherever they appear from now on."""
        with self._lock:
            new = {v for v in values if isinstance(v, str) and v} - self._known
            if new:
                self._known.update(new)
                self._needles = secret_masking.needles(self._known)
                self._generation += 1
                self._remembered.clear()
                self._remembered_bytes = 0

    def value(self, data: Any, everything: bool = False) -> Any:
        """``data`` with every secret masked (``everything``: a secret result).

        Its large parts masked before, while the known secrets were the same, are
        read back rather than masked again; the secrets the other parts hold are
        learned before any of them is masked, and when one is new (here or in
        another thread) all of ``data`` is masked afresh."""
        with self._lock:
            generation, needles = self._generation, self._needles
        if not everything:
            try:  # a small value (a task's outcome, its progress): one walk, nothing kept
                masked, held = secret_masking.mask_small(data, needles, _REMEMBER_FROM)
            except secret_masking.TooLarge:
                pass
            else:
                with self._lock:  # no secret new to it, nor learned meanwhile
                    if self._generation == generation and held <= self._known:
                        return masked
        todo: list[_Part] = []
        root = self._plan(data, everything, 0, todo)
        found: set[str] = set()
        for part in todo:
            found |= secret_masking.collect_secrets(part.value, part.secret, part.depth)
        self.learn(found)
        with self._lock:
            if self._generation != generation:
                needles = self._needles
                generation = -1  # nothing is remembered from this call
                root = _Part(data, everything, 0)
        return self._finish(root, needles, generation)

    def _plan(self, value: Any, secret: bool, depth: int, todo: list[_Part]) -> _Part:
        """``value``'s part: remembered, split into entries, or to mask (in ``todo``)."""
        part = _Part(value, secret, depth, digest=_digest(value, secret))
        if part.digest is not None:
            with self._lock:
                part.masked = self._remembered.get(part.digest)
                if part.masked is not None:
                    self._remembered.move_to_end(part.digest)
                    return part
        if part.digest is not None and depth < _SPLIT_DEPTH:
            if isinstance(value, Mapping) and 0 < len(value) <= _MOST_PARTS:
                part.is_mapping = True
                part.entries = [(key, self._plan(item, secret or secret_masking.entry_is_secret(
                    value, key), depth + 1, todo)) for key, item in value.items()]
                return part
            if isinstance(value, (list, tuple)) and 0 < len(value) <= _MOST_PARTS:
                part.entries = [(None, self._plan(item, secret, depth + 1, todo))
                                for item in value]
                return part
        todo.append(part)
        return part

    def _finish(self, part: _Part, needles: secret_masking.Needles, generation: int) -> Any:
        """``part`` masked with ``needles`` (every secret it holds among them)."""
        if part.masked is not None:
            return json.loads(part.masked)
        if part.entries is None:
            self.parts_masked += part.digest is not None
            out: Any = secret_masking.mask_part(part.value, part.secret, needles, part.depth)
        elif part.is_mapping:
            out = {key: self._finish(entry, needles, generation)
                   for key, entry in part.entries}
        else:
            out = [self._finish(entry, needles, generation) for _, entry in part.entries]
        if part.digest is not None and generation >= 0:
            self._remember(part.digest, out, generation)
        return out

    def _remember(self, digest: bytes, masked: Any, generation: int) -> None:
        """Keep ``masked`` (masked with the secrets of ``generation``) for ``digest``,
        unless a secret was learned since (its mask could miss it)."""
        try:
            text = json.dumps(masked, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):
            return
        with self._lock:
            if generation != self._generation or len(text) > self._remember_bytes:
                return
            old = self._remembered.pop(digest, None)
            self._remembered_bytes -= len(old) if old is not None else 0
            self._remembered[digest] = text
            self._remembered_bytes += len(text)
            while self._remembered_bytes > self._remember_bytes:
                _, dropped = self._remembered.popitem(last=False)
                self._remembered_bytes -= len(dropped)

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


def _digest(value: Any, secret: bool) -> bytes | None:
    """What identifies ``value`` among remembered parts: the SHA-256 of its JSON, and
    whether it is secret as a whole (None: not remembered: small, or not JSON).

    Where it lies does not count: masked higher up, it was looked into at least as
    deep (past :data:`secret_masking.MAX_DEPTH` the rest reads ``TOO_DEEP``, never more)."""
    if value is None or isinstance(value, (int, float)) or (
            isinstance(value, str) and len(value) < _REMEMBER_FROM):
        return None
    try:
        text = json.dumps(value, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None
    if len(text) < _REMEMBER_FROM:
        return None
    return hashlib.sha256(b"%d:%s" % (secret, text.encode("ascii"))).digest()


def masked_inputs(inputs: Mapping[str, Any]) -> list[str]:
    """Names of the inputs that hold a mask instead of a value (a resumed execution)."""
    return sorted(name for name, value in inputs.items() if secret_masking.is_masked(value))
