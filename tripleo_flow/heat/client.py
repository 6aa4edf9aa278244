"""A small HTTP client of the Heat orchestration API (v1), for the ephemeral Heat.

Only what a deployment needs: find, create and update a stack, follow it to
COMPLETE or FAILED, list failed resources, read outputs and software
deployments.  HTTP and socket errors become :class:`HeatError` here.
"""

from __future__ import annotations

import json
import logging
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.core.plan.spelled import Spelling
from tripleo_flow.core.plan.stack_request import request_secrets

LOG = logging.getLogger(__name__)

Progress = Callable[[dict[str, Any]], None]


#: What Heat says when a resource listing meets rows being written or purged.
TRANSIENT_LISTING = "ResourcePropertiesData with id"
#: A listing meeting it is asked again this many times in all, waiting
#: ``LISTING_DELAY`` seconds, doubled after each try up to ``LISTING_MAX_DELAY``
#: (about 40 s in all: on a busy machine Heat's purge of replaced rows after an
#: update, stack by nested stack, has outlasted five tries a second apart).
LISTING_ATTEMPTS = 10
LISTING_DELAY = 0.5
LISTING_MAX_DELAY = 8.0


def _timed_out(error: exceptions.HeatError) -> bool:
    """Whether ``error`` is a request Heat did not answer in time (it may still)."""
    cause = error.__cause__
    if isinstance(cause, urllib.error.URLError):
        cause = cause.reason if isinstance(cause.reason, BaseException) else None
    return isinstance(cause, TimeoutError)


#: Reasons masked once are remembered (an event stream repeats them), up to this many.
_MASKED_KEPT = 4096


class HeatClient:
    """Calls one Heat endpoint (``http://host:port/v1/<tenant>``); no I/O until used.

    The texts Heat writes that a template controls (its refusals, the reasons of a
    stack, of its resources and events) come back with the secrets this client sent
    it (``secrets``, and those of each stack request it sent) masked however a
    template spelled them (:class:`~tripleo_flow.core.plan.spelled.Spelling`)."""

    def __init__(self, endpoint: str, timeout: float = 60.0,
                 secrets: Iterable[str] = ()) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.timeout = timeout
        self._secrets = set(secrets)
        self._sent: list[dict[str, Any]] = []  # requests whose secrets are not read yet
        self._spelling: Spelling | None = None
        self._masked: dict[str, str] = {}

    def _sending(self, body: dict[str, Any]) -> None:
        """Heat is sent ``body``: its errors may quote the secrets it holds."""
        self._sent.append(body)
        self._spelling = None

    def mask(self, texts: list[str]) -> list[str]:
        """``texts`` Heat wrote, with the secrets it was sent masked (looked at together:
        pieces spread over several of them count together)."""
        if self._spelling is None:
            for body in self._sent:
                self._secrets |= request_secrets(body)
            self._sent.clear()
            self._spelling = Spelling.of(self._secrets)
            self._masked.clear()
        return self._spelling.mask_all(texts) if self._spelling else texts

    def _mask_one(self, text: Any) -> Any:
        """A reason Heat wrote, masked (remembered: events repeat the same ones)."""
        if not isinstance(text, str) or not text:
            return text
        if self._spelling is not None and text in self._masked:
            return self._masked[text]
        masked = self.mask([text])[0]
        if len(self._masked) >= _MASKED_KEPT:
            self._masked.clear()
        self._masked[text] = masked
        return masked

    def _masked_reasons(self, items: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
        return [{**item, key: self._mask_one(item[key])} if item.get(key) else item
                for item in items]

    def _call(self, method: str, path: str, body: Any = None,
              missing_ok: bool = False) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.endpoint + path, data=data, method=method,
            headers={"Content-Type": "application/json", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            if exc.code == 404 and missing_ok:
                return None
            detail = exc.read().decode(errors="replace")[:2000]
            explained = self.mask([_explain(detail)])[0]
            raise exceptions.HeatError(
                f"Heat refused {method} {path}: HTTP {exc.code} {explained}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise exceptions.HeatError(
                f"Heat at {self.endpoint} does not answer ({exc});",
                hints=[exceptions.Hint("check it runs with", "heat.status", tail=".")]) from exc
        return json.loads(raw) if raw else None

    # -- stacks --------------------------------------------------------------------

    def find_stack(self, name: str) -> dict[str, Any] | None:
        """The stack called ``name`` (with id, status and outputs), or None."""
        # A lookup by name alone answers 500 (not 404) for a missing stack on the fake
        # RPC transport: list with a name filter, then read by name and id.
        listed = self._listed(name)
        if listed is None:
            return None
        return self._read(name, str(listed["id"]))

    def _read(self, name: str, stack_id: str) -> dict[str, Any] | None:
        """The whole stack ``name`` of id ``stack_id`` (outputs resolved), or None."""
        found = self._call("GET", f"/stacks/{urllib.parse.quote(name)}/{stack_id}",
                           missing_ok=True)
        return None if found is None else self._masked_reasons(
            [dict(found["stack"])], "stack_status_reason")[0]

    def create_stack(self, body: dict[str, Any]) -> str:
        """Create a stack; return its id."""
        self._sending(body)
        return str(self._call("POST", "/stacks", body)["stack"]["id"])

    def update_stack(self, name: str, stack_id: str, body: dict[str, Any]) -> None:
        self._sending(body)
        update = {k: v for k, v in body.items() if k != "stack_name"}
        self._call("PUT", f"/stacks/{urllib.parse.quote(name)}/{stack_id}", update)

    def stack_status(self, name: str) -> str | None:
        """The status of the stack called ``name`` as Heat's stack list gives it (a cheap
        look: no outputs are resolved), or None when there is no such stack."""
        listed = self._listed(name)
        return None if listed is None else str(listed.get("stack_status", ""))

    def _listed(self, name: str) -> dict[str, Any] | None:
        """The stack list's entry of the stack called ``name`` (id and status), or None."""
        query = urllib.parse.urlencode({"stack_name": name})
        listed = self._call("GET", f"/stacks?{query}")["stacks"]
        return self._masked_reasons([dict(listed[0])], "stack_status_reason")[0] \
            if listed else None

    def wait(self, name: str, progress: Progress | None = None, interval: float = 2.0,
             timeout: float = 3600.0, poll: float = 0.5) -> dict[str, Any]:
        """Follow the stack until it is no longer IN_PROGRESS; return it whole (outputs
        resolved).

        Its status is looked at in the stack list every ``poll`` seconds (a cheap look:
        the end is seen within ``poll`` seconds); ``progress`` gets that list entry (id
        and status) at once and every ``interval`` seconds, and the whole stack once it
        ended.  The whole stack is read only then: while a big stack is created, each
        read resolves its outputs in the engine that creates it.
        """
        deadline = time.monotonic() + timeout
        report_at = time.monotonic()  # when progress gets the next look
        while True:
            try:
                listed = self._listed(name)
                status = "" if listed is None else str(listed.get("stack_status", ""))
                if listed is None or not status.endswith("IN_PROGRESS"):
                    stack = None if listed is None else self._read(name, str(listed["id"]))
                    if stack is None:
                        raise exceptions.HeatError(
                            f"Stack {name!r} disappeared while it was followed.")
                    if progress is not None:
                        progress(stack)
                    return stack
                if progress is not None and time.monotonic() >= report_at:
                    progress(listed)
                    report_at = time.monotonic() + interval
            except exceptions.HeatError as exc:
                # heat-all serves its API between the engine's work: on a loaded
                # machine a look at a big stack being updated can go unanswered for a
                # minute.  Ask again (until the deadline); any other error stops.
                if not _timed_out(exc) or time.monotonic() > deadline:
                    raise
                LOG.warning("Heat did not answer a look at stack %s in %.0f s; asking "
                            "again.", name, self.timeout)
                time.sleep(interval)
                continue
            if time.monotonic() > deadline:
                raise exceptions.HeatError(
                    f"Stack {name!r} still {status} after {timeout:.0f} s.")
            time.sleep(min(poll, interval))

    def resources(self, name: str, stack_id: str, nested_depth: int = 5,
                  with_detail: bool = False, resource_name: str | None = None,
                  attempts: int = LISTING_ATTEMPTS) -> list[dict[str, Any]]:
        """The stack's resources (nested ones to ``nested_depth``); with details
        (attributes), only those named ``resource_name`` when given.

        Heat answers 404 "ResourcePropertiesData ... not found" to a listing that meets
        rows it is still writing or purging (nested resources while a stack is built,
        replaced ones just after an update completes): such a listing is asked again,
        ``attempts`` times in all, waiting longer each time.
        """
        query: dict[str, Any] = {"nested_depth": nested_depth}
        if with_detail:
            query["with_detail"] = "true"
        if resource_name:
            query["name"] = resource_name
        path = (f"/stacks/{urllib.parse.quote(name)}/{stack_id}/resources"
                f"?{urllib.parse.urlencode(query)}")
        delay = LISTING_DELAY
        for attempt in range(1, attempts + 1):
            try:
                found = self._call("GET", path)
                break
            except exceptions.HeatError as exc:
                if attempt == attempts or TRANSIENT_LISTING not in str(exc):
                    raise
                LOG.debug("Heat's listing of %s met rows being purged (try %d of %d): %s",
                          name, attempt, attempts, exc)
                time.sleep(delay)
                delay = min(delay * 2, LISTING_MAX_DELAY)
        return self._masked_reasons(list(found["resources"]), "resource_status_reason")

    def events(self, name: str, stack_id: str, nested_depth: int = 5) -> list[dict[str, Any]]:
        """The stack's events, nested stacks' included, oldest first."""
        query = urllib.parse.urlencode({"nested_depth": nested_depth, "sort_dir": "asc"})
        found = self._call("GET", f"/stacks/{urllib.parse.quote(name)}/{stack_id}/events?{query}")
        return self._masked_reasons(list(found["events"]), "resource_status_reason")

    def failed_resources(self, name: str, stack_id: str) -> list[dict[str, str]]:
        """Each FAILED resource (nested ones included) with its reason."""
        failed = [{"resource": r["resource_name"], "type": r.get("resource_type", ""),
                   "status": r["resource_status"], "reason": r.get("resource_status_reason", ""),
                   "stack": r.get("stack_name", name)}
                  for r in self.resources(name, stack_id)
                  if str(r.get("resource_status", "")).endswith("FAILED")]
        # each reason is masked; together, pieces spread over several of them count
        reasons = self.mask([str(f["reason"] or "") for f in failed])
        return [{**f, "reason": reason} for f, reason in zip(failed, reasons, strict=True)]

    def outputs(self, name: str) -> dict[str, Any]:
        return outputs_of(self.existing_stack(name))

    def existing_stack(self, name: str) -> dict[str, Any]:
        """The stack called ``name`` (:meth:`find_stack`); HeatError when there is none."""
        stack = self.find_stack(name)
        if stack is None:
            raise exceptions.HeatError(f"Stack {name!r} does not exist in this Heat.")
        return stack

    def environment(self, name: str, stack_id: str) -> dict[str, Any]:
        """The stack's environment as Heat keeps it (``parameter_defaults`` merged from
        every environment file of the request)."""
        return dict(self._call(
            "GET", f"/stacks/{urllib.parse.quote(name)}/{stack_id}/environment") or {})

    def resource(self, stack_id: str, resource_name: str) -> dict[str, Any]:
        """One resource of the stack ``stack_id`` (Heat finds the stack by its id)."""
        return dict(self._call("GET", f"/stacks/{urllib.parse.quote(stack_id)}/resources/"
                                      f"{urllib.parse.quote(resource_name)}")["resource"])

    # -- software deployments ------------------------------------------------------

    def software_deployment(self, deployment_id: str) -> dict[str, Any]:
        return dict(self._call("GET", f"/software_deployments/"
                                      f"{urllib.parse.quote(deployment_id)}")
                    ["software_deployment"])

    def deployments(self, server_id: str) -> list[dict[str, Any]]:
        query = urllib.parse.urlencode({"server_id": server_id})
        return list(self._call("GET", f"/software_deployments?{query}")["software_deployments"])

    def software_config(self, config_id: str) -> dict[str, Any]:
        return dict(self._call("GET", f"/software_configs/{config_id}")["software_config"])


def outputs_of(stack: Mapping[str, Any]) -> dict[str, Any]:
    """``{key: value}`` of the outputs of ``stack`` as Heat shows a stack."""
    return {o["output_key"]: o.get("output_value") for o in stack.get("outputs") or []}


def _explain(detail: str) -> str:
    try:
        error = json.loads(detail).get("error", {})
        return f"{error.get('type', '')}: {error.get('message', detail)}"
    except (ValueError, AttributeError):
        return detail
