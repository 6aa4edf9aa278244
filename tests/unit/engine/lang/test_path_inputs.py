"""Path types of action inputs, and the workflow inputs that reach them."""

from __future__ import annotations

from typing import Any

import pytest

from tripleo_flow.actions.registry import ActionRegistry
from tripleo_flow.client import workbooks
from tripleo_flow.engine.lang import paths, workbook_loader
from tripleo_flow.engine.lang.action import InputPath, OutputPath, SecretsOut, WorkDir, path_kind


@pytest.mark.parametrize("annotation, kind", [
    ("InputPath", "input-path"), ("OutputPath | None", "output-path"),
    ("Optional[WorkDir]", "work-dir"), ("str", None), ("dict[str, Any]", None),
    (InputPath, "input-path"), (OutputPath, "output-path"), (WorkDir, "work-dir"), (str, None),
    ("SecretsOut", "secrets-out"), (SecretsOut, "secrets-out"),
])
def test_path_kind(annotation: Any, kind: str | None) -> None:
    assert path_kind(annotation) == kind


def test_shipped_workflows_name_their_server_paths() -> None:
    registry = ActionRegistry.load()
    catalog = workbook_loader.load_catalog([(workbook_loader.SHIPPED_DIR, True)],
                                           registry.classes(), registry.broken(),
                                           made=workbooks.ACTION_WORKFLOWS)
    found = {w.full_name: paths.path_inputs(w, catalog, registry.get)
             for w in catalog.workflows()}
    assert {name: kinds for name, kinds in found.items() if kinds} == {
        "tripleo.plan.create_deployment_plan": {"templates": "input-path"},
        "tripleo.plan.update_deployment_plan": {"templates": "input-path"},
        # Not a path, checked with them: over HTTP the export holds no secret.
        "tripleo.plan.export_deployment_plan": {"output": "output-path",
                                                "secrets": "secrets-out"},
        # The SSH key is a server path: over HTTP, under [api] allowed_paths only.
        "tripleo.deploy.deploy": {"work_dir": "work-dir", "overcloud_ssh_key": "input-path"},
        "tripleo.deploy.config_download_only": {"work_dir": "work-dir",
                                                "overcloud_ssh_key": "input-path"},
        # The steps after the stack both run as a sub-workflow, called directly too.
        "tripleo.deploy.config_download_deploy": {"work_dir": "work-dir",
                                                  "overcloud_ssh_key": "input-path"},
        "tripleo.validations.run": {"inventory": "input-path"},
        # Its deploy sub-workflow takes the work dir only.
        "tripleo.scale.delete_nodes": {"work_dir": "work-dir"},
        # tripleoclient's deploy options reach their deploy sub-workflow: the key too.
        "tripleo.update.prepare": {"work_dir": "work-dir", "overcloud_ssh_key": "input-path"},
        # Playbooks are file names of the config-download project, not paths; extra vars
        # are a mapping (an @FILE is read by the CLI), tripleoclient's --static-inventory
        # a file read.
        "tripleo.update.run": {"work_dir": "work-dir", "static_inventory": "input-path"},
        "tripleo.update.converge": {"work_dir": "work-dir",
                                    "overcloud_ssh_key": "input-path"},
        "tripleo.update.external_run": {"work_dir": "work-dir",
                                        "static_inventory": "input-path"},
        "tripleo.upgrade.prepare": {"work_dir": "work-dir",
                                    "overcloud_ssh_key": "input-path"},
        "tripleo.upgrade.run": {"work_dir": "work-dir", "static_inventory": "input-path"},
        "tripleo.upgrade.converge": {"work_dir": "work-dir",
                                     "overcloud_ssh_key": "input-path"},
        "tripleo.upgrade.external_run": {"work_dir": "work-dir",
                                         "static_inventory": "input-path"},
        # A heat-dir is a work directory: over HTTP a name in the server's work area.
        **{f"tripleo.heat.{name}": {"heat_dir": "work-dir"}
           for name in ("launch", "kill", "dump_db", "restore_db")},
    }
