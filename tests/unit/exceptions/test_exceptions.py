"""Every error renders a message and maps to one exit code and HTTP status."""

from __future__ import annotations

import inspect

import pytest

from tripleo_flow import exceptions

SAMPLE_ARGS = {
    "name": "overcloud", "path": "roles_data.yaml", "reason": "bad", "source": "x.tar.gz",
    "plan": "overcloud", "container": "c", "version": "v1", "execution_id": "e1",
    "state_info": "Cancelled by user.",
    "status": "DEPLOYING", "seconds": 2.0, "workflow": "deploy", "task": "t", "cause": "boom",
    "reverted": True, "stack": "overcloud", "what": "heat-all", "heat_dir": "/w",
    "host": "127.0.0.1", "port": 8006, "detail": "running", "command": "tripleo-flow heat install",
    "playbook": "deploy_steps_playbook.yaml", "returncode": 2, "log": "/w/ansible.log",
    "tail": "fatal: [c-0]: FAILED!", "owner": "pid 12 on host-a", "limit": 1024,
    "signal_name": "SIGINT", "missing": ["A of x.yaml"],
    "failures": [{"stack": "overcloud", "resource": "r", "type": "T", "reason": "bad"}],
    "inputs": ["stack_request"], "action": "deploy.run_ansible",
    "venv": "/v", "ironic_dir": "/i", "node": "ctrl-0", "entry": "node 2 ('ctrl-0')",
    "found": "sqlite", "wanted": "mariadb", "work_dir": "/w", "expression": "<% $.x %>",
    "state": "manageable", "counts": {"enroll": 2, "available": 1},
    "option": "[api] max_json_size",
    "servers": ["compute-0", "compute-1"], "kind": "upgrade",
    "data_dir": "/d", "holding": ["plans", "executions.sqlite"], "archive": "/b.tar.gz",
    "heat_dirs": ["/d/work/a", "/d/work/b"],
}


def _all_errors() -> list[type[exceptions.TripleoFlowError]]:
    return [cls for _, cls in inspect.getmembers(exceptions, inspect.isclass)
            if issubclass(cls, exceptions.TripleoFlowError)]


def _build(cls: type[exceptions.TripleoFlowError]) -> exceptions.TripleoFlowError:
    params = inspect.signature(cls.__init__).parameters
    if any(p.kind is p.VAR_POSITIONAL for p in params.values()):
        return cls("something went wrong")
    kwargs = {n: SAMPLE_ARGS[n] for n, p in params.items()
              if n != "self" and (n in SAMPLE_ARGS or p.default is p.empty)}
    return cls(**kwargs)


@pytest.mark.parametrize("cls", _all_errors(), ids=lambda c: c.__name__)
def test_every_error_renders(cls: type[exceptions.TripleoFlowError]) -> None:
    error = _build(cls)
    message = str(error)
    assert message and "\n" not in message
    assert exceptions.exit_code(error) in {1, 2, 3, 4, 5, 6, 130}
    assert exceptions.http_status(error) in {400, 403, 404, 409, 413, 500, 503}


@pytest.mark.parametrize("error, code, status", [
    (exceptions.PlanNotFound("p"), 3, 404),
    (exceptions.InvalidPlanName("a b"), 2, 400),
    (exceptions.PlanExists("p"), 4, 409),
    (exceptions.PlanStoreError("down"), 5, 503),
    (exceptions.BodyTooLarge(1024), 2, 413),
    (exceptions.PlanCodeNotAllowed("deploy.run_ansible", "run_ansible"), 2, 403),
    (exceptions.WorkflowFailed("w", "t", "boom", True), 6, 500),
    (exceptions.Interrupted("Deployment of plan 'p'", "SIGINT", "stack"), 130, 500),
    (exceptions.InvalidNodes("nodes.json", "node 2", "has no name"), 2, 400),
    (exceptions.NodeNotFound("ctrl-0"), 3, 404),
    (exceptions.IronicRunning("/i", "pid 1"), 4, 409),
    (exceptions.NoNodesInState("manageable", {}), 4, 409),
    (exceptions.IronicError("down"), 5, 503),
    (exceptions.TooManyConnections(32), 5, 503),
    (RuntimeError("unexpected"), 1, 500),
])
def test_kind_mapping(error: BaseException, code: int, status: int) -> None:
    assert exceptions.exit_code(error) == code
    assert exceptions.http_status(error) == status


def test_messages_say_what_to_do_next() -> None:
    assert "tripleo-flow plan create overcloud" in str(exceptions.PlanNotFound("overcloud"))
    assert "--force" in str(exceptions.PlanBusy("overcloud", "DEPLOYING"))
    assert "reverted" in str(exceptions.WorkflowFailed("deploy", "stack", "boom", True))
    assert "[api] max_upload_size" in str(exceptions.BodyTooLarge(1024))
    assert "[api] connections_per_client" in str(exceptions.TooManyConnections(32))


@pytest.mark.parametrize("counts, cli, api", [
    ({}, "(Ironic has no node). Register nodes with: tripleo-flow node import FILE.",
     "Register nodes with: POST /v1/nodes."),
    ({"enroll": 2, "available": 1},
     "(Ironic's 3 nodes: 2 enroll, 1 available). Move those in enroll to manageable with: "
     "tripleo-flow node manage NODE...; see them with: tripleo-flow node list.",
     "Move those in enroll to manageable with: POST /v1/nodes/manage; see them with: "
     "GET /v1/nodes."),
    ({"manageable in maintenance": 1},
     "(Ironic's 1 node: 1 manageable in maintenance). See them with: tripleo-flow node list.",
     "See them with: GET /v1/nodes."),
])
def test_an_empty_selection_tells_the_states_and_what_to_run(
        counts: dict[str, int], cli: str, api: str) -> None:
    error = exceptions.NoNodesInState("manageable", counts)
    assert str(error).startswith("No node is manageable and out of maintenance, so nothing "
                                 "was done ")
    assert str(error).endswith(cli)
    assert error.render(exceptions.API).endswith(api)
