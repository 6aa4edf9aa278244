"""How the HTTP API spells each operation an error's hint names: the request that
does it, over the operation's arguments (none for an operation only the server can
do: the API says "on the server: tripleo-flow ..." in the CLI's words).

:func:`install` registers them, with the CLI's (:mod:`tripleo_flow.cli.hint_words`,
a plain table), when the app is made; :mod:`tripleo_flow.exceptions.operations` is
the table they spell.
"""

from __future__ import annotations

from tripleo_flow.cli import hint_words as cli_words
from tripleo_flow.exceptions import operations

REQUESTS: dict[str, str] = {
    "plan.create": "POST /v1/plans?name={plan}",
    "plan.update": "PUT /v1/plans/{plan}",
    "plan.update_files": "PUT /v1/plans/{plan} with a .tar.gz of the templates",
    "plan.delete": "DELETE /v1/plans/{plan}",
    "plan.history": "GET /v1/plans/{plan}/history",
    "plan.environments": "GET /v1/plans/{plan}/environments",
    "parameter.show": "GET /v1/plans/{plan}/parameters",
    "parameter.schema": "GET /v1/plans/{plan}/parameters/schema",
    "parameter.set": "PUT /v1/plans/{plan}/parameters",
    "capabilities.show": "GET /v1/plans/{plan}/capabilities",
    "capabilities.disable": "PUT /v1/plans/{plan}/capabilities",
    "role.set": "PUT /v1/plans/{plan}/roles",
    "network.set": "PUT /v1/plans/{plan}/networks",
    "password.show": "GET /v1/plans/{plan}/passwords",
    "backup.restore_force": 'POST /v1/backups/restore with "force": true',
    "upload.create": "POST /v1/uploads",
    "download.get": "GET /v1/downloads/ID",
    "execution.poll": "GET /v1/executions/{execution}",
    "deploy": "POST /v1/workflows/tripleo.deploy.deploy/executions",
    "deployment.status": "GET /v1/plans/{plan}/deployment",
    "deployment.failures": "GET /v1/plans/{plan}/deployment/failures",
    "validation.run_pre_deployment": "POST /v1/validations/run",
    "lifecycle.prepare": "POST /v1/workflows/tripleo.{kind}.prepare/executions",
    "node.list": "GET /v1/nodes",
    "node.manage": "POST /v1/nodes/manage",
    "node.import": "POST /v1/nodes",
    "node.provision": "POST /v1/workflows/tripleo.nodes.provision/executions",
    "action.list": "GET /v1/actions",
    "workflow.list": "GET /v1/workflows",
    "workflow.run": "POST /v1/workflows/{workflow}/executions",
    "workflow.run_with_input": ('POST /v1/workflows/{workflow}/executions with '
                                '{{"input": {{"{input}": VALUE}}}}'),
    "execution.list": "GET /v1/executions",
    "execution.show": "GET /v1/executions/{execution}",
    "execution.tasks": "GET /v1/executions/{execution}/tasks",
    "execution.resume": "POST /v1/executions/{execution}/resume",
    "workbook.list": "GET /v1/workbooks",
    "workbook.create": "POST /v1/workbooks",
    "workbook.update": "PUT /v1/workbooks",
    "heat.kill": "POST /v1/workflows/tripleo.heat.kill/executions with input heat_dir",
}


def install() -> None:
    """Word every error's next steps as this API's requests (and, for the steps only
    the server can do, as the CLI's commands) from now on."""
    cli_words.install()
    operations.register(operations.API, REQUESTS)


__all__ = ["REQUESTS", "install"]
