"""config-download writer and saved outputs: real TaskFlow, real git, revert leaves nothing."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from taskflow import engines, task
from taskflow.patterns import linear_flow

from tests.engine_helpers import ActionTask
from tripleo_flow import config, exceptions
from tripleo_flow.actions.base import ActionContext
from tripleo_flow.actions.deploy_outputs import WriteConfigDownload
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.lock import PlanLocks
from tripleo_flow.workspace import git as git_dir

OUTPUTS = {"outputs": {"RoleNames": ["Compute"], "RoleData": {"Compute": {}},
                       "RoleNetHostnameMap": {"Compute": {"ctlplane": ["c-0.ctlplane.local"]}},
                       "RoleNetIpMap": {"Compute": {"ctlplane": ["192.168.24.7"]}},
                       "ServerIdData": {"server_ids": {"Compute": ["id0"]}}},
           "deployments": {"c-0": [{"name": "D", "config": {"a": 1}, "group": "hiera",
                                    "inputs": {}}]}}


class Boom(task.Task):  # type: ignore[misc]
    def execute(self) -> None:
        raise RuntimeError("boom")


@pytest.fixture
def context(tmp_path: Path) -> ActionContext:
    return ActionContext(store=LocalStore(tmp_path / "plans"),
                         locks=PlanLocks(f"file://{tmp_path / 'locks'}", 5), conf=config.load([]))


def _run(context: ActionContext, work: Path, fail: bool) -> dict[str, Any]:
    flow = linear_flow.Flow("t").add(ActionTask(WriteConfigDownload(context),
                                                provides="config_download"))
    if fail:
        flow.add(Boom())
    engine = engines.load(flow, store={"plan": "oc", "work_dir": str(work),
                                       "stack_outputs": OUTPUTS})
    engine.run()
    return dict(engine.storage.fetch_all())


def _commits(repo: Path) -> int:
    out = subprocess.run(["git", "-C", str(repo), "rev-list", "--count", "HEAD"],
                         capture_output=True, text=True, check=True).stdout
    return int(out)


def _failing_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: git_dir.GitDir, message: str) -> str:
        raise RuntimeError("disk full")
    monkeypatch.setattr(git_dir.GitDir, "commit", refuse)


def test_a_failed_first_write_leaves_no_directory(context: ActionContext, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _failing_commit(monkeypatch)
    with pytest.raises(RuntimeError, match="disk full"):
        _run(context, tmp_path / "w", fail=False)
    assert not (tmp_path / "w" / "config-download").exists()


def test_a_failed_write_goes_back_to_the_last_commit(context: ActionContext, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "w"
    result = _run(context, work, fail=False)["config_download"]
    repo = Path(result["path"])
    assert _commits(repo) == 1
    assert stat.S_IMODE((repo / "host_vars" / "c-0").stat().st_mode) == 0o600
    assert stat.S_IMODE((repo / "Compute" / "c-0").stat().st_mode) == 0o700
    (repo / "stray").write_text("left by hand")
    with monkeypatch.context() as patched:
        _failing_commit(patched)
        with pytest.raises(RuntimeError, match="disk full"):
            _run(context, work, fail=False)
    assert _commits(repo) == 1
    assert not (repo / "stray").exists()
    assert (repo / "Compute" / "c-0" / "D").is_file()
    _run(context, work, fail=False)
    assert _commits(repo) == 2


def test_a_later_failure_keeps_the_commit(context: ActionContext, tmp_path: Path) -> None:
    """The stack it was rendered from is kept too: the project stays with it, for
    ``deploy --config-download-only`` or a rerun of Ansible."""
    work = tmp_path / "w"
    with pytest.raises(RuntimeError, match="boom"):
        _run(context, work, fail=True)
    repo = work / "config-download"
    assert _commits(repo) == 1
    assert (repo / "Compute" / "c-0" / "D").is_file()
    with pytest.raises(RuntimeError, match="boom"):
        _run(context, work, fail=True)
    assert _commits(repo) == 2


def test_a_path_that_is_not_a_directory_is_refused_and_left(context: ActionContext,
                                                            tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    (work / "config-download").write_text("mine")
    with pytest.raises(exceptions.InvalidInput, match="is not a directory"):
        _run(context, work, fail=False)
    assert (work / "config-download").read_text() == "mine"


class _FlakyListing:
    """Lists a stack's resources and events; the first listing fails as Heat's
    can while nested resources are being written."""

    def __init__(self) -> None:
        self.calls = 0

    def resources(self, name: str, stack_id: str) -> list[dict[str, Any]]:
        self.calls += 1
        if self.calls == 1:
            raise exceptions.HeatError("Heat refused GET /stacks/oc/1/resources: HTTP 404 "
                                       "NotFound: ResourcePropertiesData with id {} not found")
        return [{"resource_status": "CREATE_COMPLETE"}, {"resource_status": "INIT_COMPLETE"}]

    def events(self, name: str, stack_id: str) -> list[dict[str, Any]]:
        return []


def test_a_failed_progress_look_is_skipped_not_fatal() -> None:
    from tripleo_flow.actions.deploy_stack import _Follower

    seen: list[Any] = []
    context = ActionContext(store=None, locks=None, conf=None,  # type: ignore[arg-type]
                            reporter=seen.append)
    follow = _Follower(_FlakyListing(), "oc", context)  # type: ignore[arg-type]
    stack = {"id": "1", "stack_status": "CREATE_IN_PROGRESS"}
    follow(stack)   # the listing failed: no report, no error
    follow(stack)
    assert [(r.complete, r.total, r.status) for r in seen] == [(1, 2, "CREATE_IN_PROGRESS")]


class _SlowListing:
    """Lists a stack's resources and events; each look takes ``cost`` seconds of a
    fake clock (a big stack's tree, answered by a busy engine)."""

    def __init__(self, clock: list[float], cost: float) -> None:
        self.clock, self.cost, self.looks = clock, cost, 0

    def resources(self, name: str, stack_id: str) -> list[dict[str, Any]]:
        self.looks += 1
        self.clock[0] += self.cost
        return [{"resource_status": "CREATE_COMPLETE"}]

    def events(self, name: str, stack_id: str) -> list[dict[str, Any]]:
        return []


def test_progress_looks_take_a_bounded_share_of_the_stack_time() -> None:
    """Looks of 1 s offered every 2 s for 400 s (a big stack on a busy engine, which
    answers them between its own work): the first ones are taken (a small stack gets
    its progress), then only as many as keep their time within LOOK_SHARE of the time
    followed plus LOOK_ALLOWANCE; the stack's end is looked at whenever it comes."""
    from tripleo_flow.actions import deploy_stack

    clock = [0.0]
    seen: list[Any] = []
    context = ActionContext(store=None, locks=None, conf=None,  # type: ignore[arg-type]
                            reporter=seen.append)
    heat = _SlowListing(clock, cost=1.0)
    follow = deploy_stack._Follower(heat, "oc", context,  # type: ignore[arg-type]
                                    clock=lambda: clock[0])
    running = {"id": "1", "stack_status": "CREATE_IN_PROGRESS"}
    while clock[0] < 400.0:
        follow(running)
        clock[0] += 2.0
    assert heat.looks >= 3  # the first polls looked
    budget = deploy_stack.LOOK_SHARE * 400.0 + deploy_stack.LOOK_ALLOWANCE
    assert budget <= heat.looks * heat.cost <= budget + heat.cost
    assert heat.looks < 400.0 / 3.0  # far fewer than the 200 offered
    looks = heat.looks
    follow({"id": "1", "stack_status": "CREATE_COMPLETE"})  # the end, at once
    assert heat.looks == looks + 1 and seen[-1].status == "CREATE_COMPLETE"


def test_saved_files_undo_record_names_a_private_copy_not_the_content(tmp_path: Path) -> None:
    """The work dir's outputs hold secrets: their undo record (persisted) names a copy."""
    import json

    from tripleo_flow.workspace import files as private_files

    (tmp_path / "outputs.yaml").write_bytes(b"pw: first-secret-value\n")
    record = private_files.write(tmp_path, {"outputs.yaml": b"pw: second\n", "env.yaml": b"e"})
    assert "first-secret" not in json.dumps(record)
    assert record == {"outputs.yaml": "outputs.yaml.prev", "env.yaml": None}
    assert stat.S_IMODE((tmp_path / "outputs.yaml.prev").stat().st_mode) == 0o600
    for _ in range(2):  # safe to run twice
        private_files.restore(tmp_path, record)
        assert (tmp_path / "outputs.yaml").read_bytes() == b"pw: first-secret-value\n"
        assert not (tmp_path / "env.yaml").exists()


@pytest.mark.parametrize(("given", "refused"), [
    ({}, False),
    ({"user_environments": []}, False),
    ({"user_environments": [{"name": "e.yaml", "files": {}}]}, True),
    ({"baremetal_deployment": ""}, True),  # given, though empty: refused all the same
    ({"baremetal_deployment": "- name: Compute\n"}, True),
])
def test_config_download_only_refuses_what_it_does_not_read(
        context: ActionContext, given: dict[str, Any], refused: bool) -> None:
    """deploy.check_inputs: config_download_only reads no plan, so environments or a
    baremetal deployment given with it are refused (the same given to a plain deploy
    pass this check)."""
    from tripleo_flow.actions.deploy import CheckDeployInputs

    check = CheckDeployInputs(context)
    assert check.execute(plan="oc", **given) == {"plan": "oc"}
    if not refused:
        assert check.execute(plan="oc", config_download_only=True, **given) == {"plan": "oc"}
        return
    with pytest.raises(exceptions.InvalidInput, match="leave out -e, --environment-directory"):
        check.execute(plan="oc", config_download_only=True, **given)


@pytest.mark.parametrize("action", ["save_outputs", "stack"])
def test_a_stack_request_outside_the_work_dir_is_refused_before_it_is_read(
        context: ActionContext, tmp_path: Path, action: str) -> None:
    """The steps after the stack are a sub-workflow that can be started alone, with a
    stack request pointer as input: one that names another file than the work dir's
    own request is refused before that file is read or Heat reached, nothing written."""
    from tripleo_flow.actions.deploy import REQUEST_FILE, pointer
    from tripleo_flow.actions.deploy_outputs import SaveStackOutputs
    from tripleo_flow.actions.deploy_stack import DeployStack

    work = tmp_path / "work"
    work.mkdir()
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text('{"environment_files": []}')
    forged = pointer(elsewhere, elsewhere.read_bytes())  # its digest right
    cls = SaveStackOutputs if action == "save_outputs" else DeployStack
    with pytest.raises(exceptions.InvalidInput, match=f"the work dir's {REQUEST_FILE}"):
        cls(context).execute(plan="oc", work_dir=str(work), stack_request=forged,
                             heat={"endpoint": "http://192.0.2.1:1/v1/admin"})
    assert list(work.iterdir()) == []
