"""Validation resources: list and show validations, start and stop runs, read results.

A run is the ``tripleo.validations.run`` workflow the CLI runs, started in the
background (202, an execution: ``/v1/executions/{id}`` and its ``/events`` show each
validation's progress).  Over HTTP a run's inventory is never a path of this server:
``"localhost"``, or (left out) the plan's last config-download inventory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import falcon

from tripleo_flow import exceptions
from tripleo_flow.core import validations as core
from tripleo_flow.http.plans import json_object
from tripleo_flow.http.workflows import execution_body

if TYPE_CHECKING:
    from tripleo_flow.api import Client

#: What ``POST /v1/validations/run`` takes.
RUN_KEYS = ("validations", "group", "plan", "inventory", "extra_vars")


def _string(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise exceptions.InvalidInput(f"{what} must be a non-empty string.")
    return value


class Validations:
    """``GET /v1/validations[?group=G&category=C]``."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self.client.list_validations(req.get_param("group"),
                                                  req.get_param("category"))


class Validation:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, validation: str) -> None:
        shown = self.client.show_validation(validation)
        shown.pop("path", None)  # a server path
        resp.media = shown


class RunValidations:
    """``POST /v1/validations/run``: start a run; 202 with the execution."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        unknown = sorted(set(body) - set(RUN_KEYS))
        if unknown:
            raise exceptions.InvalidInput(f"Unknown keys {unknown}: give {list(RUN_KEYS)}.")
        names = body.get("validations")
        if names is not None and not (isinstance(names, list)
                                      and all(isinstance(n, str) for n in names)):
            raise exceptions.InvalidInput("validations must be a list of validation names.")
        inventory = _string(body.get("inventory"), "inventory")
        if inventory not in (None, core.LOCALHOST):
            raise exceptions.InvalidInput(
                "Over the HTTP API the inventory is 'localhost', or left out for the plan's "
                "last config-download inventory; an inventory file is for the CLI.")
        extra_vars = body.get("extra_vars")
        if extra_vars is not None and not isinstance(extra_vars, dict):
            raise exceptions.InvalidInput("extra_vars must be an object.")
        execution = self.client.start_validations(
            names, group=_string(body.get("group"), "group"),
            plan=_string(body.get("plan"), "plan"), localhost=inventory == core.LOCALHOST,
            extra_vars=extra_vars, api_user=True)
        resp.status = falcon.HTTP_202
        resp.location = f"/v1/executions/{execution.id}"
        resp.media = execution_body(execution)


class StopValidations:
    """``POST /v1/validations/stop`` ``{"execution": ID}``."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        execution = _string(json_object(req).get("execution"), "execution")
        if execution is None:
            raise exceptions.InvalidInput("Give the execution to stop: {\"execution\": ID}.")
        resp.media = self.client.stop_validations(execution)


class Results:
    """``GET /v1/validations/results[?plan=P&validation=N]``, newest first."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self.client.validation_results(req.get_param("plan"),
                                                    req.get_param("validation"))


class Result:
    """``GET /v1/validations/results/{result_id}[?plan=P]``, with its log."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, result_id: str) -> None:
        resp.media = self.client.show_validation_result(result_id, req.get_param("plan"))
