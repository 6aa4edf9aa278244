"""A small HTTP client of the Bare Metal (Ironic) API v1, for node workflows.

Plain ``urllib`` like :mod:`tripleo_flow.heat.client`: noauth Ironic needs no
token, and what the node workflows use is a dozen calls.  HTTP and socket
errors become :class:`~tripleo_flow.exceptions.IronicError` here; a node that
does not exist becomes :class:`~tripleo_flow.exceptions.NodeNotFound`.

Waiting for nodes is :mod:`tripleo_flow.ironic.watch`'s (one poller for many nodes).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable
from typing import Any

from tripleo_flow import exceptions

#: The API microversion spoken (Ironic 2023.2 and later: inspection and node fields used).
API_VERSION = "1.87"
#: Provision states a transition ends in when it failed.
FAILED_STATES = frozenset({"enroll", "clean failed", "inspect failed", "deploy failed", "error",
                           "adopt failed", "rescue failed", "unrescue failed", "service failed"})
#: Node fields a listing shows (the introspected facts live in ``properties``).
NODE_FIELDS = ("uuid", "name", "driver", "provision_state", "power_state", "maintenance",
               "properties", "last_error", "inspection_finished_at", "resource_class")


class IronicClient:
    """Calls one Ironic endpoint (``http://host:port``); no I/O until used."""

    def __init__(self, endpoint: str, timeout: float = 60.0) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.timeout = timeout

    def _call(self, method: str, path: str, body: Any = None, missing: str | None = None) -> Any:
        """One request; ``missing``: the node named in ``path`` (404 -> NodeNotFound)."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self.endpoint}/v1{path}", data=data, method=method,
            headers={"Content-Type": "application/json", "Accept": "application/json",
                     "X-OpenStack-Ironic-API-Version": API_VERSION})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            if exc.code == 404 and missing is not None:
                raise exceptions.NodeNotFound(missing) from exc
            detail = _explain(exc.read().decode(errors="replace")[:2000])
            refused = exceptions.IronicError(
                f"Ironic refused {method} {path}: HTTP {exc.code} {detail}")
            refused.status = exc.code
            raise refused from exc
        except (urllib.error.URLError, OSError) as exc:
            raise exceptions.IronicError(
                f"Ironic at {self.endpoint} does not answer ({exc});",
                hints=[exceptions.Hint("launch it with", "ironic.launch",
                                       tail=", or check [ironic] endpoint.")]) from exc
        return json.loads(raw) if raw else None

    # -- nodes -----------------------------------------------------------------------

    def list_nodes(self, fields: Iterable[str] = NODE_FIELDS,
                   provision_state: str | None = None,
                   maintenance: bool | None = None) -> list[dict[str, Any]]:
        """Every node (all pages), with ``fields``; only those in ``provision_state`` and
        in (True) or out of (False) ``maintenance`` when given."""
        query: dict[str, Any] = {"fields": ",".join(fields), "limit": 1000}
        if provision_state:
            query["provision_state"] = provision_state
        if maintenance is not None:
            query["maintenance"] = str(maintenance).lower()
        return self._all_pages("nodes", query)

    def _all_pages(self, kind: str, query: dict[str, Any]) -> list[dict[str, Any]]:
        """Every item of the listing ``/kind?query``, following Ironic's pages."""
        items: list[dict[str, Any]] = []
        path = f"/{kind}?{urllib.parse.urlencode(query)}"
        while path:
            page = self._call("GET", path)
            items.extend(_clean(item) for item in page[kind])
            marker = items[-1]["uuid"] if page.get("next") and items else None
            path = f"/{kind}?{urllib.parse.urlencode({**query, 'marker': marker})}" if marker \
                else ""
        return items

    def get_node(self, ident: str, fields: Iterable[str] | None = None) -> dict[str, Any]:
        """The node named or numbered ``ident``; raises NodeNotFound."""
        query = f"?fields={','.join(fields)}" if fields else ""
        return _clean(self._call("GET", f"/nodes/{_q(ident)}{query}", missing=ident))

    def find_node(self, ident: str) -> dict[str, Any] | None:
        try:
            return self.get_node(ident)
        except exceptions.NodeNotFound:
            return None

    def create_node(self, body: dict[str, Any]) -> dict[str, Any]:
        return _clean(self._call("POST", "/nodes", body))

    def patch_node(self, ident: str, ops: list[dict[str, Any]]) -> dict[str, Any]:
        return _clean(self._call("PATCH", f"/nodes/{_q(ident)}", ops, missing=ident))

    def delete_node(self, ident: str) -> None:
        self._call("DELETE", f"/nodes/{_q(ident)}", missing=ident)

    def set_provision_state(self, ident: str, target: str, **extra: Any) -> None:
        self._call("PUT", f"/nodes/{_q(ident)}/states/provision", {"target": target, **extra},
                   missing=ident)

    # -- ports -------------------------------------------------------------------------

    def find_port(self, address: str) -> dict[str, Any] | None:
        query = urllib.parse.urlencode({"address": address, "fields": "uuid,address,node_uuid"})
        ports = self._call("GET", f"/ports?{query}")["ports"]
        return _clean(ports[0]) if ports else None

    def list_ports(self) -> list[dict[str, Any]]:
        """Every port (all pages): its uuid, address and node_uuid."""
        return self._all_pages("ports", {"fields": "uuid,address,node_uuid", "limit": 1000})

    def node_ports(self, node_uuid: str) -> list[dict[str, Any]]:
        query = urllib.parse.urlencode({"node": node_uuid, "fields": "uuid,address"})
        return [_clean(p) for p in self._call("GET", f"/ports?{query}")["ports"]]

    def create_port(self, node_uuid: str, address: str) -> dict[str, Any]:
        return _clean(self._call("POST", "/ports", {"node_uuid": node_uuid, "address": address}))

    def delete_port(self, port_uuid: str) -> None:
        self._call("DELETE", f"/ports/{port_uuid}")


def _q(ident: str) -> str:
    return urllib.parse.quote(str(ident), safe="")


def _clean(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` without its HATEOAS links."""
    return {k: v for k, v in item.items() if k != "links"}


def _explain(detail: str) -> str:
    try:
        message = json.loads(detail).get("error_message", detail)
        return str(json.loads(message).get("faultstring", message))
    except (ValueError, AttributeError, TypeError):
        return detail
