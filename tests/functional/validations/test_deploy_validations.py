"""deploy --run-validations runs the pre-deployment group first and stops on a failure.

The group is validations-common's and tripleo-validations' pre-deployment validations
run on this machine, plus a test-only one that always fails (so the outcome does not
depend on what this machine's DNS, SELinux or packages look like).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.functional.validations.conftest import make_client
from tripleo_flow import exceptions
from tripleo_flow.client.plans import sample_plan_dir

pytestmark = pytest.mark.functional

ALWAYS_FAILS = Path(__file__).resolve().parents[2] / "validations-pre-deployment"
REASON = "always-fails: localhost: Fail on purpose: tripleo-flow test pre-deployment failure"


@pytest.mark.parametrize("through", ["client", "workbook", "config-download-only"])
def test_a_failed_pre_deployment_validation_stops_the_deploy(
        tmp_path: Path, validations_venv: Path, through: str) -> None:
    client = make_client(tmp_path / "data", validations_venv)
    client.conf.set_override("validations_dirs", [str(ALWAYS_FAILS)], group="validations")
    try:
        client.plans.create("oc", sample_plan_dir())
        with pytest.raises(exceptions.WorkflowFailed) as failed:
            if through == "client":
                client.deployments.create("oc", work_dir=tmp_path / "work", run_validations=True)
            elif through == "config-download-only":  # one execution: validations first
                client.deployments.create("oc", work_dir=tmp_path / "work", run_validations=True,
                                          config_download_only=True)
            else:
                client.executions.create("tripleo.deploy.deploy", {
                    "plan": "oc", "work_dir": str(tmp_path / "work"), "run_validations": True})
        assert REASON in str(failed.value)
        assert "deploy without --run-validations" in str(failed.value)
        assert client.deployments.status("oc")["deployment_status"] == "NONE"
        assert not (tmp_path / "work").exists()
        [execution] = [e for e in client.executions.list()
                       if e.workflow.startswith("tripleo.deploy.")]
        assert execution.state == "ERROR" and execution.failed_task == "check_validations"
        kept = {r["validation"]: r["status"] for r in client.validations.results(plan="oc")}
        assert kept["always-fails"] == "FAILED" and kept["undercloud-debug"] == "SKIPPED"
    finally:
        client.close()
