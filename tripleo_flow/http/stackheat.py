"""The Heat of a plan's deployment, as ``heat status --heat-dir`` reads it: whether
the ephemeral Heat of the deployment's work dir runs and where it answers.  Starting
and stopping it are the ``tripleo.heat.launch`` / ``kill`` workflows, started as any
other (``POST /v1/workflows/{name}/executions``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import falcon

from tripleo_flow.client.paths import WORK_DIR, ServerPaths
from tripleo_flow.client.workbooks import heat_workflow
from tripleo_flow.http.routes import Operation, Route

if TYPE_CHECKING:
    from tripleo_flow.client import Client

class DeploymentHeat:
    def __init__(self, client: Client, paths: ServerPaths) -> None:
        self.client = client
        self.paths = paths

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        self.client.deployments.status(name)  # 404 for a plan that does not exist
        heat_dir = self.paths.apply(heat_workflow("launch"), {"heat_dir": WORK_DIR},
                                    {"heat_dir": name})["heat_dir"]
        resp.media = self.client.heat.status(heat_dir)


ROUTES = [
    Route("/v1/plans/{name}/deployment/heat", "deployment_heat",
          lambda s: DeploymentHeat(s.client, s.paths), {
        "get": Operation("Whether the ephemeral Heat of the plan's deployment (its work dir, "
                         "named as the plan) runs and answers: heat status, no workflow",
                         tags=("plans",))}),
]
