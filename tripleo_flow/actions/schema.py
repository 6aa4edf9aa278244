"""A plan's parameter schema, cached in the plan by content (used by the parameter actions).

On a cache miss an ephemeral Heat (:func:`validation_heat_type`: native unless
``[heat] heat_type`` names a container, pod or installed Heat) is launched in a
private heat-dir, asked to validate the rendered plan with its nested stacks, and
always killed and removed afterwards.  The cache object
``.tripleo-flow/parameters-cache.json`` holds the schema under a key hashed over
every object name and content digest of the plan, so any change to the plan
(parameters, environments, roles, templates) misses.

Each such Heat takes about 330 MB, so at most ``[heat] schema_launches_max`` run
at once in a process: a further miss waits for one to end, up to ``[heat]
api_timeout`` seconds, and is then refused (:class:`~tripleo_flow.exceptions.
BackendUnavailable`, 503 over HTTP).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import threading
from collections.abc import Iterator
from typing import Any

from tripleo_flow import config, exceptions
from tripleo_flow.actions.base import ActionContext
from tripleo_flow.core.plan import heatfiles, parameter_schema
from tripleo_flow.heat import make_launcher
from tripleo_flow.heat.validate import validate_template
from tripleo_flow.plans.plan import DATA_FILES, PLAN_ENV, PlanRepository, digest

CACHE_OBJECT = ".tripleo-flow/parameters-cache.json"


def plan_digests(repo: PlanRepository, plan: str) -> dict[str, str]:
    """sha256 of every plan object: from the manifest for unchanged template files
    (plan create/update rewrite it), read for rendered, data and user files."""
    manifest = repo.manifest(plan)
    read = set(manifest.rendered) | set(DATA_FILES) | {PLAN_ENV}
    digests = {}
    for name in repo.names(plan):
        known = manifest.templates.get(name)
        digests[name] = (known if known and name not in read
                         else digest(repo.store.get_object(plan, name)))
    return digests


def _read_cache(repo: PlanRepository, plan: str, key: str) -> dict[str, Any] | None:
    try:
        cached = json.loads(repo.store.get_object(plan, CACHE_OBJECT))
    except (exceptions.ObjectNotFound, ValueError):
        return None
    if isinstance(cached, dict) and cached.get("key") == key:
        schema = cached.get("parameters")
        return schema if isinstance(schema, dict) else None
    return None


_slots_lock = threading.Lock()
#: One semaphore per ``[heat] schema_launches_max`` value (one in practice).
_slots: dict[int, threading.BoundedSemaphore] = {}


@contextlib.contextmanager
def _launch_slot(limit: int, wait: float) -> Iterator[None]:
    """Hold one of ``limit`` places for a schema Heat, waiting up to ``wait`` seconds."""
    with _slots_lock:
        slots = _slots.setdefault(limit, threading.BoundedSemaphore(limit))
    if not slots.acquire(timeout=wait):
        raise exceptions.BackendUnavailable(
            f"{limit} ephemeral Heats are already reading parameter schemas ([heat] "
            f"schema_launches_max) and none ended within {wait:g} s. Try again when they "
            "are done, or raise [heat] schema_launches_max if the server has the memory "
            "(about 330 MB each).")
    try:
        yield
    finally:
        slots.release()


def validate_with_heat(context: ActionContext, request: dict[str, Any],
                       template: str) -> dict[str, Any]:
    """Launch a private Heat, validate ``request`` and kill Heat whatever happens
    (within ``[heat] schema_launches_max`` at once)."""
    conf = context.conf
    with _launch_slot(conf.heat.schema_launches_max, float(conf.heat.api_timeout)):
        return _validate_with_heat(conf, request, template)


def validation_heat_type(configured: str) -> str:
    """The heat type launched to validate a plan when ``[heat] heat_type`` is
    ``configured``: ``processes`` (a database, a broker and several engines, for the
    throughput of a stack create) gives ``native``, which runs from the same virtualenv,
    starts sooner and takes a fraction of the memory; any other type is itself."""
    return "native" if configured == "processes" else configured


def _validate_with_heat(conf: Any, request: dict[str, Any], template: str) -> dict[str, Any]:
    parent = config.data_dir(conf) / "parameters-heat"
    parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    heat_dir = tempfile.mkdtemp(prefix="validate-", dir=parent)
    try:
        launcher = make_launcher(conf, validation_heat_type(conf.heat.heat_type), heat_dir)
        try:
            endpoint = launcher.launch().endpoint
            return validate_template(endpoint, request, template,
                                     timeout=float(conf.heat.api_timeout))
        finally:
            launcher.kill(dump=False)
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(heat_dir)


def load_schema(context: ActionContext, plan: str) -> dict[str, Any]:
    """``{"plan", "key", "cached", "parameters"}``: the flattened parameter schema of ``plan``.

    :raises InvalidTemplate: when Heat rejects the plan (nothing is cached).
    """
    repo = PlanRepository(context.store)
    repo.require(plan)
    if repo.update_unfinished(plan):  # a tree part old, part new or unrendered: no schema
        raise exceptions.PlanUpdateUnfinished(plan)
    key = parameter_schema.cache_key(plan_digests(repo, plan))
    env = repo.environment(plan)
    user_values = dict(env.get("parameter_defaults") or {})
    cached = _read_cache(repo, plan, key)
    if cached is not None:
        return {"plan": plan, "key": key, "cached": True, "parameters": cached}
    request = heatfiles.build_request(repo.files(plan), env)
    answer = validate_with_heat(context, request, str(env.get("template") or "overcloud.yaml"))
    schema = parameter_schema.flatten(answer, user_values)
    repo.store.put_object(plan, CACHE_OBJECT,
                          json.dumps({"key": key, "parameters": schema}, default=str).encode())
    return {"plan": plan, "key": key, "cached": False, "parameters": schema}
