"""The WSGI application of the HTTP API (falcon), built from :data:`ROUTES`.

Handlers call only :class:`tripleo_flow.api.Client`; errors come back as
``{"error": {"kind", "message"}}`` (:mod:`tripleo_flow.http.errors`).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import falcon

import tripleo_flow
from tripleo_flow.api.paths import ServerPaths, purge_downloads
from tripleo_flow.api.workflows import EXECUTION_ID_PATTERN
from tripleo_flow.config import EXECUTIONS_PAGE_MAX
from tripleo_flow.core.nodes import INITIAL_STATES
from tripleo_flow.core.path_redaction import PathRedactor, server_roots
from tripleo_flow.http import (
    auth,
    backups,
    bodies,
    downloads,
    errors,
    events,
    gui,
    hint_words,
    login,
    media,
    nodes,
    plans,
    stackheat,
    uploads,
    validations,
    workbooks,
    workflows,
)
from tripleo_flow.http.spec import (
    ARRAY,
    GZIP,
    OBJECT,
    PLAN_NAME,
    SSE,
    Operation,
    Param,
    Route,
    openapi,
)

if TYPE_CHECKING:
    from tripleo_flow.api import Client

BOOL = {"type": "boolean"}
STRING = {"type": "string"}
JSON_BODY = {"type": "object"}
TAGS_PLAN = ("plans",)
#: An environment file and the files it refers to, by path relative to its directory.
ENVIRONMENT_FILE = {"type": "object", "required": ["name", "files"], "properties": {
    "name": STRING, "files": {"type": "object", "additionalProperties": STRING}}}
TAGS_WF = ("workflows",)
TAGS_AUTH = ("auth",)
TAGS_NODES = ("nodes",)
TAGS_VALIDATIONS = ("validations",)
TAGS_BACKUPS = ("backups",)
#: A backup kept on the server, as listed.
BACKUP = {"type": "object", "required": ["id", "created", "size", "encrypted"],
          "properties": {"id": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
                         "created": {"type": "string", "format": "date-time"},
                         "size": {"type": "integer"}, "encrypted": BOOL}}
#: Inputs of the node workflows, as request body properties.
NODE_INPUTS: dict[str, Any] = {
    "nodes": {"type": "array", "items": STRING, "description": "Node names or UUIDs."},
    "all_manageable": BOOL, "provide": BOOL,
    "steps": {"type": "array", "items": OBJECT,
              "description": "Manual clean steps (default: erase devices' metadata)."},
    "plan": {**STRING, "description": "The plan the nodes are provisioned for (default "
                                      "overcloud)."},
    "baremetal_deployment": {**STRING, "description": "TripleO's baremetal deployment "
                                                      "file (its YAML text)."},
    "hostnames": {"type": "array", "items": STRING,
                  "description": "Host names whose nodes are released."},
    "all_nodes": BOOL,
}
#: What an import does after registering (workflow tripleo.nodes.register).
IMPORT_INPUTS: dict[str, Any] = {
    "initial_state": {"type": "string", "enum": list(INITIAL_STATES),
                      "description": "Where the nodes found in enroll are left (default "
                                     "manageable, as TripleO)."},
    "introspect": {**BOOL, "description": "Then introspect every node of the list."},
    "provide": {**BOOL, "description": "Then make every node of the list available."},
}
#: Errors of a route that takes an archive body (413: past [api] max_upload_size).
UPLOAD_ERRORS = (400, 404, 409, 413, 503)

#: Files of the uploaded tree to use as roles, networks, VIP data (CLI -r, -n, --vip-file).
DATA_FILE_QUERY = tuple(Param(name, STRING) for name in plans.DATA_FILE_PARAMS)

ROUTES: list[Route] = [
    Route("/v1/openapi.json", "openapi", {
        "get": Operation("This OpenAPI document", public=True, errors=())}),
    Route("/v1/auth", "auth_info", {
        "get": Operation("How this server authenticates: token or keystone", public=True,
                         errors=(), tags=TAGS_AUTH)}),
    Route("/v1/auth/tokens", "auth_tokens", {
        "post": Operation(
            "Log in with a Keystone user name and password (auth_strategy keystone): a "
            "token scoped to the project", public=True, tags=TAGS_AUTH,
            errors=(400, 401, 503),
            body={"type": "object", "required": ["username", "password", "project"],
                  "properties": {"username": STRING, "password": STRING, "project": STRING,
                                 "user_domain": STRING, "project_domain": STRING}})}),
    Route("/v1/plans", "plans", {
        "get": Operation("List plans", response=ARRAY, errors=(503,), tags=TAGS_PLAN),
        "post": Operation(
            "Create a plan from a .tar.gz body (or the shipped sample)", status=201,
            body={}, body_type=GZIP, body_required=False, tags=TAGS_PLAN,
            errors=UPLOAD_ERRORS,
            params=(Param("name", PLAN_NAME,
                          required=True),
                    Param("description", STRING), Param("sample", BOOL), *DATA_FILE_QUERY))}),
    Route("/v1/plans/{name}", "plan", {
        "get": Operation("Show a plan", tags=TAGS_PLAN),
        "put": Operation("Replace a plan's templates from a .tar.gz body", body={},
                         body_type=GZIP, tags=TAGS_PLAN, errors=UPLOAD_ERRORS,
                         params=DATA_FILE_QUERY),
        "delete": Operation("Delete a plan", status=204, response=None,
                            params=(Param("force", BOOL),), tags=TAGS_PLAN)}),
    Route("/v1/plans/{name}/export", "plan_export", {
        "get": Operation("Download a plan as .tar.gz (without its secrets)", response={},
                         response_type=GZIP,
                         tags=TAGS_PLAN)}),
    Route("/v1/plans/{name}/history", "plan_history", {
        "get": Operation("Versions of plan-environment.yaml, newest first", response=ARRAY,
                         tags=TAGS_PLAN)}),
    Route("/v1/plans/{name}/restore", "plan_restore", {
        "post": Operation("Make an earlier plan-environment.yaml current (the current "
                          "passwords kept unless keep_passwords is false)", tags=TAGS_PLAN,
                          body={"type": "object", "required": ["version"],
                                "properties": {"version": STRING,
                                               "keep_passwords": BOOL}})}),
    Route("/v1/plans/{name}/capabilities", "capabilities", {
        "get": Operation("Capabilities map with the enabled environments", tags=TAGS_PLAN),
        "put": Operation("Enable or disable environments", tags=TAGS_PLAN, body={
            "type": "object", "required": ["environments"],
            "properties": {"environments": {"type": "object",
                                            "additionalProperties": BOOL},
                           "purge": BOOL}})}),
    Route("/v1/plans/{name}/environments", "environments", {
        "get": Operation("The plan's environments in order (user ones last)", response=ARRAY,
                         tags=TAGS_PLAN),
        "post": Operation(
            "Add user environment files, each with the files it refers to", tags=TAGS_PLAN,
            body={"type": "object", "required": ["environments"], "properties": {
                "environments": {"type": "array", "minItems": 1, "items": ENVIRONMENT_FILE},
                "position": {"type": "integer", "minimum": 1}}})}),
    Route("/v1/plans/{name}/environments/remove", "environments_remove", {
        "post": Operation("Remove user environments (by plan path) and their files",
                          tags=TAGS_PLAN, body={
                              "type": "object", "required": ["paths"], "properties": {
                                  "paths": {"type": "array", "minItems": 1,
                                            "items": STRING}}})}),
    Route("/v1/plans/{name}/parameters", "parameters", {
        "get": Operation("Parameter values set on the plan", tags=TAGS_PLAN),
        "put": Operation("Set parameter values", tags=TAGS_PLAN, body={
            "type": "object", "required": ["parameters"],
            "properties": {"parameters": OBJECT, "validate": BOOL}})}),
    Route("/v1/plans/{name}/parameters/reset", "parameters_reset", {
        "post": Operation("Remove parameter values (all unless names are given)",
                          tags=TAGS_PLAN, body_required=False, body={
                              "type": "object",
                              "properties": {"names": {"type": "array", "items": STRING}}})}),
    Route("/v1/plans/{name}/parameters/schema", "parameter_schema", {
        "get": Operation("Every parameter of the stack tree (validated by an ephemeral Heat)",
                         tags=TAGS_PLAN)}),
    Route("/v1/plans/{name}/roles", "roles", {
        "get": Operation("Roles of the plan", response=ARRAY, params=(Param("detail", BOOL),),
                         tags=TAGS_PLAN),
        "put": Operation("Replace the plan's roles: a list, or the text of a "
                         "roles_data.yaml", tags=TAGS_PLAN, body={
                             "type": "object",
                             "properties": {"roles": {"type": "array", "items": OBJECT},
                                            "yaml": STRING}})}),
    Route("/v1/plans/{name}/networks", "networks", {
        "get": Operation("Networks of the plan", response=ARRAY,
                         params=(Param("detail", BOOL),), tags=TAGS_PLAN),
        "put": Operation("Replace the plan's networks: a list, or the text of a "
                         "network_data.yaml", tags=TAGS_PLAN, body={
                             "type": "object",
                             "properties": {"networks": {"type": "array", "items": OBJECT},
                                            "yaml": STRING}})}),
    Route("/v1/plans/{name}/passwords", "passwords", {
        "get": Operation("Password names (their values are never served)",
                         response={"type": "array", "items": STRING}, tags=TAGS_PLAN)}),
    Route("/v1/plans/{name}/deployment", "deployment", {
        "get": Operation("The plan's last deployment status", tags=TAGS_PLAN)}),
    Route("/v1/plans/{name}/deployment/servers", "deployment_servers", {
        "get": Operation("The servers of the last deployment (host names by role), as "
                         "workflow tripleo.scale.delete_nodes takes them", tags=TAGS_PLAN)}),
    Route("/v1/plans/{name}/deployment/failures", "deployment_failures", {
        "get": Operation("Resources that failed in the last deployment", response=ARRAY,
                         tags=TAGS_PLAN)}),
    Route("/v1/nodes", "nodes", {
        "get": Operation("Bare metal nodes in Ironic, with their (introspected) properties",
                         response=ARRAY, errors=(404, 503), tags=TAGS_NODES),
        "post": Operation(
            "Register or update nodes (instackenv.json's node list) with workflow "
            "tripleo.nodes.register; 202 with the execution", status=202, tags=TAGS_NODES,
            body={"type": "object", "required": ["nodes"],
                  "properties": {"nodes": {"type": "array", "minItems": 1,
                                           "items": OBJECT},
                                 **IMPORT_INPUTS}})}),
    *(Route(f"/v1/nodes/{verb}", f"nodes_{verb}", {
        "post": Operation(f"Start workflow tripleo.nodes.{verb}; 202 with the execution",
                          status=202, tags=TAGS_NODES, body_required=verb != "introspect",
                          body={"type": "object",
                                "properties": {k: NODE_INPUTS[k] for k in keys},
                                **({"required": ["baremetal_deployment"]}
                                   if verb == "provision" else {})})})
      for verb, keys in nodes.VERBS.items()),
    Route("/v1/nodes/{node}", "node", {
        "get": Operation("Show a node (name or UUID): states, properties, capabilities, "
                         "ports", tags=TAGS_NODES)}),
    Route("/v1/validations", "validations", {
        "get": Operation("Installed validations with their metadata and parameters",
                         response=ARRAY, errors=(404,), tags=TAGS_VALIDATIONS,
                         params=(Param("group", STRING), Param("category", STRING)))}),
    Route("/v1/validations/run", "validations_run", {
        "post": Operation(
            "Run validations with workflow tripleo.validations.run; 202 with the execution",
            status=202, tags=TAGS_VALIDATIONS, body={"type": "object", "properties": {
                "validations": {"type": "array", "items": STRING, "minItems": 1},
                "group": STRING, "plan": PLAN_NAME,
                "inventory": {"type": "string", "enum": ["localhost"],
                              "description": "Left out: the plan's config-download "
                                             "inventory."},
                "extra_vars": OBJECT}})}),
    Route("/v1/validations/stop", "validations_stop", {
        "post": Operation("Stop a validation run (its Ansible processes end)",
                          tags=TAGS_VALIDATIONS,
                          body={"type": "object", "required": ["execution"],
                                "properties": {"execution": STRING}})}),
    Route("/v1/validations/results", "validation_results", {
        "get": Operation("Stored validation results (of a plan), newest first",
                         response=ARRAY, tags=TAGS_VALIDATIONS,
                         params=(Param("plan", PLAN_NAME), Param("validation", STRING)))}),
    Route("/v1/validations/results/{result_id}", "validation_result", {
        "get": Operation("One validation result with its log", tags=TAGS_VALIDATIONS,
                         params=(Param("plan", PLAN_NAME),))}),
    Route("/v1/validations/{validation}", "validation", {
        "get": Operation("A validation's metadata and parameters", errors=(404,),
                         tags=TAGS_VALIDATIONS)}),
    Route("/v1/backups", "backups", {
        "get": Operation("Backups kept on the server (id, created, size, encrypted), newest "
                         "first", response={"type": "array", "items": BACKUP}, errors=(503,),
                         tags=TAGS_BACKUPS),
        "post": Operation(
            "Back up everything tripleo-flow keeps (as backup create) into a new backup "
            "kept on the server, encrypted with the passphrase (required: at least [api] "
            "backup_passphrase_min_length characters); refused while a workflow runs, "
            "and once [api] max_stored_backups are kept",
            status=201, response=BACKUP, tags=TAGS_BACKUPS,
            body={"type": "object", "required": ["passphrase"],
                  "properties": {"passphrase": {"type": "string", "minLength": 1,
                                                "format": "password"}}})}),
    Route("/v1/backups/restore", "backup_restore", {
        "post": Operation(
            "Make the data directory what an uploaded backup archive holds (as backup "
            "restore): send the archive to POST /v1/uploads first; force replaces the "
            "state the data directory holds (kept aside). A wrong passphrase or a corrupt "
            "archive is refused and changes nothing; the upload is deleted once restored",
            tags=TAGS_BACKUPS, errors=UPLOAD_ERRORS,
            body={"type": "object", "required": ["upload", "passphrase"],
                  "properties": {"upload": STRING,
                                 "passphrase": {"type": "string", "minLength": 1,
                                                "format": "password"},
                                 "force": BOOL}})}),
    Route("/v1/backups/{backup_id}", "backup", {
        "get": Operation("Download a backup: its encrypted archive (an unencrypted one is "
                         "never served: 409); with Keystone, only for a writer role",
                         response={},
                         response_type="application/octet-stream", errors=(404, 409),
                         tags=TAGS_BACKUPS),
        "delete": Operation("Delete a backup", status=204, response=None, errors=(404,),
                            tags=TAGS_BACKUPS)}),
    Route("/v1/uploads", "uploads", {
        "post": Operation("Keep a .tar.gz on the server (its path can be a workflow input), "
                          "or a backup archive to restore",
                          status=201, body={}, body_type=GZIP, tags=TAGS_WF,
                          errors=UPLOAD_ERRORS)}),
    Route("/v1/uploads/{upload_id}", "upload", {
        "get": Operation("Show an upload", tags=TAGS_WF),
        "delete": Operation("Delete an upload", status=204, response=None, tags=TAGS_WF)}),
    Route("/v1/downloads/{download_id}", "download", {
        "get": Operation("A file written by a workflow started here (an output-path input)",
                         response={}, response_type="application/octet-stream",
                         errors=(404,), tags=TAGS_WF)}),
    Route("/v1/workflows", "workflows", {
        "get": Operation("List workflows with their inputs", response=ARRAY, errors=(503,),
                         tags=TAGS_WF)}),
    Route("/v1/workflows/{name}", "workflow", {
        "get": Operation("A workflow's task graph: its tasks and their transitions",
                         tags=TAGS_WF)}),
    Route("/v1/workflows/{name}/executions", "workflow_executions", {
        "post": Operation(
            "Start workflow NAME in the background; 202 with the execution; 400, with "
            "nothing recorded, for an input or env over [limits] input_max_size bytes",
            status=202,
            body_required=False, tags=TAGS_WF,
            body={"type": "object", "properties": {"input": OBJECT, "target": STRING,
                                                   "env": OBJECT,
                                                   "evaluate_env": {"type": "boolean"}}},
            params=(Param(workflows.IDEMPOTENCY_HEADER, {"type": "string", "maxLength": 255},
                          where="header",
                          description="A retried start with the same key returns the "
                                      "same execution."),))}),
    *workbooks.ROUTES, *stackheat.ROUTES,
    Route("/v1/executions", "executions", {
        "get": Operation("List a page of executions, oldest first (sort_dir desc: newest "
                         "first), without their output unless include_output=true (as "
                         "Mistral's); a page ends early when its executions' records take "
                         "over [api] executions_page_max_bytes; a Link header with "
                         "rel=\"next\" gives the next page",
                         response=ARRAY, tags=TAGS_WF,
                         params=(Param("workflow", STRING),
                                 Param("limit", {"type": "integer", "minimum": 1,
                                                 "maximum": EXECUTIONS_PAGE_MAX},
                                       description="At most [api] executions_page_max "
                                       f"({EXECUTIONS_PAGE_MAX} unless configured)"),
                                 Param("marker", {"type": "string",
                                                  "pattern": EXECUTION_ID_PATTERN},
                                       description="The id of the last execution of the "
                                       "previous page (404 when there is none)"),
                                 Param("sort_dir", {"type": "string",
                                                    "enum": ["asc", "desc"]}),
                                 Param("include_output", {"type": "boolean"},
                                       description="Each execution with its output "
                                       "(default: false)")))}),
    Route("/v1/executions/{execution_id}", "execution", {
        "get": Operation("Show an execution", tags=TAGS_WF),
        "put": Operation(
            "Change an execution's state as Mistral's PUT /v2/executions/{id} (RUNNING "
            "resumes, PAUSED, CANCELLED, ERROR or SUCCESS stops it); 200 with the execution, "
            "400 for a transition Mistral refuses (SUCCESS of a paused or ended one), 409 "
            "when it cannot change so now", body=workflows.UPDATE_BODY, tags=TAGS_WF,
            errors=UPLOAD_ERRORS)}),
    Route("/v1/executions/{execution_id}/resume", "execution_resume", {
        "post": Operation(
            "Continue a paused, suspended or interrupted execution that was started "
            "through this API, in the background (on a conductor with a jobboard); 202 "
            "with the execution (200 with one that ended, left unchanged, as Mistral's "
            "resume)", status=202,
            body_required=False, body={"type": "object"}, tags=TAGS_WF)}),
    Route("/v1/executions/{execution_id}/cancel", "execution_cancel", {
        "post": Operation(
            "Cancel a running, paused or interrupted execution that was started through "
            "this API, wherever it runs, with its sub-workflow executions: it reads "
            "CANCELLED at once (state_info: the message given, output: {\"result\": "
            "message}), its running tasks end, no new one starts and it is never resumed; "
            "body empty, {} or {\"state\": \"CANCELLED\", \"state_info\": \"why\"}; "
            "202 with the execution (200 with one that ended, left unchanged, as "
            "Mistral's cancel)",
            status=202, body_required=False, body={"type": "object"}, tags=TAGS_WF)}),
    Route("/v1/executions/{execution_id}/pause", "execution_pause", {
        "post": Operation(
            "Pause a running execution that was started through this API, wherever it "
            "runs: its running tasks end and no new one starts (then it reads PAUSED; "
            "resume continues it); 202 with the execution (a paused one is left as it "
            "is), 409 when it ended or was interrupted",
            status=202, body_required=False, body={"type": "object"}, tags=TAGS_WF)}),
    Route("/v1/executions/{execution_id}/tasks", "execution_tasks", {
        "get": Operation("Tasks of an execution; a workflow: task that has ended lists "
                         "its child executions in executions (one per item and attempt), "
                         "each naming it in its parent_id and parent_task",
                         response=ARRAY, tags=TAGS_WF)}),
    Route("/v1/executions/{execution_id}/tasks/{task}", "execution_task", {
        "put": Operation(
            "Rerun a failed task execution (its name, as poll[2], or id) of a failed "
            "execution that was started through this API, as Mistral's PUT /v2/tasks/{id}: "
            "the tasks that completed keep their results, it runs again and the execution "
            "goes on in the background; 202 with the execution, 400 when the task did not "
            "fail, reset is false without with-items or a completed task was undone (its "
            "action reverts), 409 when the execution did not fail",
            status=202, body=workflows.RERUN_BODY, tags=TAGS_WF)}),
    Route("/v1/executions/{execution_id}/tasks/{task}/complete", "execution_task_complete", {
        "post": Operation(
            "Complete the asynchronous action (std.async_noop...) a task execution waits "
            "for, named by its name (poll[2]) or id: SUCCESS makes output its result, "
            "ERROR its error (its on-error runs); 409 when it does not wait",
            tags=TAGS_WF,
            body={"type": "object", "required": ["state"], "properties": {
                "state": {"type": "string", "enum": ["SUCCESS", "ERROR"]},
                "output": {"description": "Any JSON value: the action's result, or its "
                                          "error (masked as other records)"},
                "item": {"type": "integer", "minimum": 0,
                         "description": "The item of a with-items task (when several "
                                        "wait)"}}})}),
    Route("/v1/executions/{execution_id}/events", "execution_events", {
        "get": Operation("Server-sent events (task, then execution at the end)",
                         response={}, response_type=SSE, tags=TAGS_WF)}),
]


class OpenAPI:
    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self.document


def public_paths() -> list[str]:
    """The paths any client may ask without a token: the public routes and the GUI."""
    return [r.path for r in ROUTES if all(op.public for op in r.operations.values())] + list(
        gui.FILES)


def stream_limit(max_event_streams: int, threads: int) -> int:
    """Event streams open at once: ``[api] max_event_streams``, and always fewer than the
    request threads, so that other requests find one."""
    return max(1, min(max_event_streams, threads - 1))


def upload_dir(client: Client) -> Path:
    """Where ``POST /v1/uploads`` keeps archives: ``<data_dir>/uploads``."""
    return Path(client.data_dir) / "uploads"


def server_paths(client: Client) -> ServerPaths:
    """What a workflow started over HTTP may read and write (:mod:`tripleo_flow.api.paths`)."""
    api = client.conf.api
    return ServerPaths.for_data_dir(Path(client.data_dir), api.allowed_paths, api.upload_ttl)


def redactor(client: Client) -> PathRedactor:
    """What takes the server's paths out of every answer
    (:mod:`tripleo_flow.core.path_redaction`)."""
    conf = client.conf
    others = [conf.heat.venv, conf.ironic.venv, conf.ansible.venv, conf.validations.venv,
              sys.prefix, str(Path.home()), str(Path(tripleo_flow.__file__).parents[1]),
              os.getcwd()]
    return PathRedactor(server_roots(str(client.data_dir), others,
                                     [tempfile.gettempdir(), "/dev/shm"]))


def _resources(client: Client, sse_interval: float,
               redact: PathRedactor, threads: int) -> dict[str, Any]:
    api = client.conf.api
    uploaded = upload_dir(client)
    upload = uploads.Upload(uploaded)
    paths = server_paths(client)
    return {
        "openapi": OpenAPI(openapi(ROUTES)),
        "auth_info": login.AuthInfo(client.conf), "auth_tokens": login.Tokens(client.conf),
        "plans": plans.Plans(client, api.max_upload_size),
        "plan": plans.Plan(client, api.max_upload_size),
        "plan_export": plans.PlanExport(client), "plan_history": plans.PlanHistory(client),
        "plan_restore": plans.PlanRestore(client),
        "capabilities": plans.Capabilities(client), "parameters": plans.Parameters(client),
        "environments": plans.Environments(client),
        "environments_remove": plans.EnvironmentsRemove(client),
        "parameters_reset": plans.ParametersReset(client),
        "parameter_schema": plans.ParameterSchema(client),
        "roles": plans.Roles(client), "networks": plans.Networks(client),
        "passwords": plans.Passwords(client), "deployment": plans.Deployment(client),
        "deployment_servers": plans.DeploymentServers(client),
        "deployment_failures": plans.DeploymentFailures(client),
        "uploads": uploads.Uploads(uploaded, api.max_upload_size, api.upload_ttl),
        "upload": upload,
        "backups": backups.Backups(client), "backup": backups.Backup(client),
        "backup_restore": backups.RestoreBackup(client, upload),
        "workflows": workflows.Workflows(client), "workflow": workflows.Workflow(client),
        **workbooks.resources(client), **stackheat.resources(client, paths),
        "nodes": nodes.Nodes(client), "node": nodes.Node(client),
        **{f"nodes_{verb}": nodes.NodeWorkflow(client, verb) for verb in nodes.VERBS},
        "validations": validations.Validations(client),
        "validation": validations.Validation(client),
        "validations_run": validations.RunValidations(client),
        "validations_stop": validations.StopValidations(client),
        "validation_results": validations.Results(client),
        "validation_result": validations.Result(client),
        "workflow_executions": workflows.WorkflowExecutions(client, paths),
        "download": downloads.Download(paths.downloads),
        "executions": workflows.Executions(client), "execution": workflows.Execution(client),
        "execution_tasks": workflows.ExecutionTasks(client),
        "execution_resume": workflows.ResumeExecution(client),
        "execution_pause": workflows.PauseExecution(client),
        "execution_cancel": workflows.CancelExecution(client),
        "execution_task": workflows.ExecutionTask(client),
        "execution_task_complete": workflows.CompleteTask(client),
        "execution_events": workflows.ExecutionEvents(
            client, sse_interval, redact.json_bytes,
            events.StreamSlots(stream_limit(api.max_event_streams, threads))),
    }


def make_app(client: Client, sse_interval: float = 0.2, threads: int | None = None) -> Any:
    """The WSGI app over ``client`` (a :class:`tripleo_flow.api.Client`); its ``[api]``
    options choose the authentication and the upload limits.  Uploads older than
    ``[api] upload_ttl`` are deleted here, as the server starts.

    :param threads: the request threads of the server (default ``[api] threads``): fewer
        event streams than these may be open at once"""
    hint_words.install()  # errors name their next steps as this API's requests
    conf = client.conf
    auth.check_configured(conf)
    uploads.purge_expired(upload_dir(client), conf.api.upload_ttl)
    purge_downloads(server_paths(client).downloads, conf.api.upload_ttl)
    keystone = conf.api.auth_strategy == "keystone"
    public = public_paths()
    middleware: list[Any] = [
        auth.TokenAuth(conf.api.auth_token, keystone, public, conf.api.reader_roles,
                       conf.api.writer_roles, conf.api.project_ids),
        bodies.JsonBodyLimit(conf.api.max_json_size)]
    app = falcon.App(middleware=middleware)
    app.req_options.strip_url_path_trailing_slash = True
    redact = redactor(client)
    json_handler = media.handler(conf.limits.yaml_max_depth, conf.limits.yaml_max_nodes,
                                 redact.json_bytes)
    app.req_options.media_handlers[falcon.MEDIA_JSON] = json_handler
    app.resp_options.media_handlers[falcon.MEDIA_JSON] = json_handler
    errors.install(app)
    resources = _resources(client, sse_interval, redact, threads or conf.api.threads)
    for route in ROUTES:
        app.add_route(route.path, resources[route.resource])
    gui.add_routes(app)
    return auth.wrap_keystone(app, conf, public) if keystone else app
