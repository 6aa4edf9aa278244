"""Validation resources: list and show validations, start and stop runs, read results.

A run is the ``tripleo.validations.run`` workflow the CLI runs, started in the
background (202, an execution: ``/v1/executions/{id}`` and its ``/events`` show each
validation's progress).  Over HTTP a run's inventory is never a path of this server:
``"localhost"``, or (left out) the plan's last config-download inventory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import falcon

from tripleo_flow.core.deploy import validations as core
from tripleo_flow.http.json_bodies import body
from tripleo_flow.http.routes import (
    ARRAY,
    OBJECT,
    PLAN_NAME,
    STRING,
    Operation,
    Param,
    Route,
    with_client,
)
from tripleo_flow.http.workflows import execution_body

if TYPE_CHECKING:
    from tripleo_flow.client import Client

class Validations:
    """``GET /v1/validations[?group=G&category=C]``."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self.client.validations.list(req.get_param("group"),
                                                  req.get_param("category"))


class Validation:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, validation: str) -> None:
        shown = self.client.validations.get(validation)
        shown.pop("path", None)  # a server path
        resp.media = shown


class RunValidations:
    """``POST /v1/validations/run``: start a run; 202 with the execution."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        given = body(req)
        execution = self.client.validations.start(
            given.get("validations"), group=given.get("group"), plan=given.get("plan"),
            localhost=given.get("inventory") == core.LOCALHOST,
            extra_vars=given.get("extra_vars"), api_user=True)
        resp.status = falcon.HTTP_202
        resp.location = f"/v1/executions/{execution.id}"
        resp.media = execution_body(execution)


class StopValidations:
    """``POST /v1/validations/stop`` ``{"execution": ID}``."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        execution = body(req)["execution"]
        resp.media = self.client.validations.stop(execution)


class Results:
    """``GET /v1/validations/results[?plan=P&validation=N]``, newest first."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self.client.validations.results(req.get_param("plan"),
                                                     req.get_param("validation"))


class Result:
    """``GET /v1/validations/results/{result_id}[?plan=P]``, with its log."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, result_id: str) -> None:
        resp.media = self.client.validations.get_result(result_id, req.get_param("plan"))


TAGS = ("validations",)
NAME = {"type": "string", "minLength": 1}

ROUTES = [
    Route("/v1/validations", "validations", with_client(Validations), {
        "get": Operation("Installed validations with their metadata and parameters",
                         response=ARRAY, errors=(404,), tags=TAGS,
                         params=(Param("group", STRING), Param("category", STRING)))}),
    Route("/v1/validations/run", "validations_run", with_client(RunValidations), {
        "post": Operation(
            "Run validations with workflow tripleo.validations.run; 202 with the execution",
            status=202, tags=TAGS, body={
                "type": "object", "additionalProperties": False, "properties": {
                    "validations": {"type": "array", "items": STRING, "minItems": 1,
                                    "description": "Validation names."},
                    "group": NAME, "plan": PLAN_NAME,
                    "inventory": {"type": "string", "enum": [core.LOCALHOST],
                                  "description": "Left out: the plan's last config-download "
                                                 "inventory (an inventory file is for the "
                                                 "CLI)."},
                    "extra_vars": OBJECT}})}),
    Route("/v1/validations/stop", "validations_stop", with_client(StopValidations), {
        "post": Operation("Stop a validation run (its Ansible processes end)", tags=TAGS,
                          body={"type": "object", "required": ["execution"],
                                "properties": {"execution": {
                                    **NAME, "description": "The run's execution id."}}})}),
    Route("/v1/validations/results", "validation_results", with_client(Results), {
        "get": Operation("Stored validation results (of a plan), newest first",
                         response=ARRAY, tags=TAGS,
                         params=(Param("plan", PLAN_NAME), Param("validation", STRING)))}),
    Route("/v1/validations/results/{result_id}", "validation_result", with_client(Result), {
        "get": Operation("One validation result with its log", tags=TAGS,
                         params=(Param("plan", PLAN_NAME),))}),
    Route("/v1/validations/{validation}", "validation", with_client(Validation), {
        "get": Operation("A validation's metadata and parameters", errors=(404,),
                         tags=TAGS)}),
]
