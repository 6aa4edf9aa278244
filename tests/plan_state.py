"""Everything a plan store holds, as digests: for "a refused request changed nothing".

:func:`store_state` covers every container (so a plan created or deleted by a
refused request shows too), its metadata, the MD5 of each object and the
version ids of each plan's ``plan-environment.yaml``.  On Swift the digests
come from the container listing (Swift's ETag is the MD5 of the object's
bytes), one request per container instead of one per object.
"""

from __future__ import annotations

import hashlib
from typing import Any

from swiftclient.exceptions import ClientException

from tripleo_flow import exceptions
from tripleo_flow.actions.schema import CACHE_OBJECT
from tripleo_flow.core.plan.planenv import PLAN_ENVIRONMENT
from tripleo_flow.plans.store import PlanStore
from tripleo_flow.plans.swift import SwiftStore

#: Derived data a read may write (the parameter schema Heat computed for the plan's
#: current templates, keyed by their digest): not a change of the plan.
DERIVED = {CACHE_OBJECT}


def md5(data: bytes) -> str:
    """The digest :func:`object_digests` gives for an object holding ``data``."""
    return hashlib.md5(data).hexdigest()


def object_digests(store: PlanStore, container: str) -> dict[str, str]:
    """Every current object of ``container`` -> the MD5 of its bytes (on Swift, from
    one container listing: the ETag Swift computed when it stored the object).

    :raises ContainerNotFound: when the container does not exist.
    """
    if isinstance(store, SwiftStore):
        try:
            _, listing = store.session.call(
                "list objects of container", container,
                lambda c: c.get_container(container, full_listing=True))
        except ClientException as exc:
            raise exceptions.ContainerNotFound(container) from exc
        return {entry["name"]: entry["hash"] for entry in listing}
    return {name: md5(store.get_object(container, name))
            for name in store.list_objects(container)}


def _digests(store: PlanStore, container: str) -> dict[str, str]:
    return {name: digest for name, digest in object_digests(store, container).items()
            if name not in DERIVED}


def _versions(store: PlanStore, container: str) -> list[str]:
    try:
        return [v.version_id for v in store.list_versions(container, PLAN_ENVIRONMENT)]
    except exceptions.TripleoFlowError:
        return []


def store_state(store: PlanStore) -> dict[str, Any]:
    """Container name -> (metadata, {object: md5}, plan-environment version ids)."""
    return {info.name: (dict(info.metadata), _digests(store, info.name),
                        _versions(store, info.name))
            for info in store.list_containers()}


def state_diff(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What changed between two :func:`store_state` results, one line per change."""
    lines = [f"container {c!r} {'removed' if c in before else 'added'}"
             for c in sorted(set(before) ^ set(after))]
    for container in sorted(set(before) & set(after)):
        (meta_a, objects_a, versions_a), (meta_b, objects_b, versions_b) = (
            before[container], after[container])
        if meta_a != meta_b:
            lines.append(f"{container}: metadata {meta_a} -> {meta_b}")
        for name in sorted(set(objects_a) | set(objects_b)):
            if objects_a.get(name) != objects_b.get(name):
                lines.append(f"{container}/{name}: {objects_a.get(name)} -> "
                             f"{objects_b.get(name)}")
        if versions_a != versions_b:
            lines.append(f"{container}: plan-environment versions {versions_a} -> "
                         f"{versions_b}")
    return lines
