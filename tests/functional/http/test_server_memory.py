"""A long-running API server forgets each execution once its run ends (found by the
soak, issue 29): the executions connection remembered the rows of every execution it
had written, results and failures included, so each request's values and each failed
render's traceback (its jinja2 environments, compiled templates and frames) stayed in
the server's memory for good."""

from __future__ import annotations

import gc
from pathlib import Path

from taskflow.persistence import models

from tests.functional.http.conftest import Api, running_api
from tests.functional.http.test_api import tarball
from tests.functional.http.test_soak import NESTED_LOOPS
from tests.plan_trees import write_tree
from tripleo_flow.common.template_sandbox import TemplateSandbox


def _alive(kind: type) -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, kind))


def _change(api: Api, n: int) -> None:
    answer = api("PUT", "/v1/plans/p/parameters",
                 json={"parameters": {"NtpServer": f"ntp{n}." + "x" * 10_000}})
    assert answer.status_code == 200, answer.text[:300]


def test_ended_executions_are_not_kept_in_memory(tmp_path: Path) -> None:
    with running_api(tmp_path) as api:
        assert api("POST", "/v1/plans", params={"name": "p", "sample": "true"}) \
            .status_code == 201
        for n in range(3):
            _change(api, n)
        before = (_alive(models.AtomDetail), _alive(models.FlowDetail))
        for n in range(3, 15):
            _change(api, n)
        after = (_alive(models.AtomDetail), _alive(models.FlowDetail))
        assert after[0] <= before[0] and after[1] <= before[1], (before, after)
        assert len(api("GET", "/v1/executions").json()) == 16  # all recorded still


def test_a_stopped_render_leaves_no_template_environment_behind(tmp_path: Path) -> None:
    loops = tarball(write_tree(tmp_path / "loops", {
        "roles_data.yaml": "- name: Controller\n", "loops.j2.yaml": NESTED_LOOPS}))
    # Counted in the whole test process: what earlier tests of the session left alive
    # (CI's session found 2) is the baseline, and these renders add nothing to it.
    before = _alive(TemplateSandbox)
    with running_api(tmp_path, {"limits": {"render_timeout": 0.5}}) as api:
        for _ in range(3):
            refused = api("POST", "/v1/plans", params={"name": "loops"}, data=loops,
                          headers={"Content-Type": "application/gzip"})
            assert refused.status_code == 400, refused.text[:300]
            assert "[limits] render_timeout" in refused.text
        assert _alive(TemplateSandbox) <= before, before
        # the failed executions are recorded, with their error
        failed = api("GET", "/v1/executions", params={"sort_dir": "desc", "limit": 3}).json()
        assert [e["state"] for e in failed] == ["ERROR"] * 3, failed
