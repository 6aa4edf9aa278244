"""What a deploy sets by itself reaches Heat: the client-owned parameters and the images.

The sample plan, its root template declaring ``StackAction``,
``DeployIdentifier``, ``RootStackName`` and a container image parameter with no
default (outputs echo them): a first deploy creates with StackAction CREATE and
the computed image, a redeploy updates with UPDATE and a new DeployIdentifier.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.functional.heat.conftest import make_conf
from tripleo_flow.client import Client
from tripleo_flow.client.plans import sample_plan_dir
from tripleo_flow.plans.local import LocalStore

pytestmark = pytest.mark.functional

PARAMETERS = """parameters:
  StackAction: {type: string}
  DeployIdentifier: {type: string, default: ''}
  RootStackName: {type: string}
  ContainerKeystoneImage: {type: string}
"""
OUTPUT = """outputs:
  DeployParameters:
    value:
      StackAction: {get_param: StackAction}
      DeployIdentifier: {get_param: DeployIdentifier}
      RootStackName: {get_param: RootStackName}
      ContainerKeystoneImage: {get_param: ContainerKeystoneImage}
"""


def _templates(tmp_path: Path) -> Path:
    tree = shutil.copytree(sample_plan_dir(), tmp_path / "templates")
    root = tree / "overcloud.j2.yaml"
    text = root.read_text()
    assert text.count("\nparameters:\n") == 1 and text.count("\noutputs:\n") == 1
    root.write_text(text.replace("\nparameters:\n", "\n" + PARAMETERS)
                    .replace("\noutputs:\n", "\n" + OUTPUT))
    return tree


def _deployed(work: Path) -> dict[str, str]:
    saved = yaml.safe_load((work / "outputs.yaml").read_text())
    return dict(saved["outputs"]["DeployParameters"])


def test_deploy_sets_client_parameters_and_images(tmp_path: Path, heat_venv: Path) -> None:
    client = Client(make_conf(tmp_path, heat_venv), store=LocalStore(tmp_path / "plans"))
    client.plans.create("oc", _templates(tmp_path))
    work = tmp_path / "work"

    client.deployments.create("oc", heat_type="native", work_dir=work)
    first = _deployed(work)
    assert first["StackAction"] == "CREATE" and first["RootStackName"] == "oc"
    assert first["ContainerKeystoneImage"] == (
        "quay.io/tripleomastercentos9/openstack-keystone:current-tripleo")
    assert int(first["DeployIdentifier"]) > 0

    # The operator's ContainerImagePrepare, then a redeploy: an update.
    client.parameters.set("oc", {"ContainerImagePrepare": [
        {"set": {"namespace": "registry.example:5000/tripleo", "tag": "t1"}}]})
    client.deployments.create("oc", heat_type="native", work_dir=work)
    second = _deployed(work)
    assert second["StackAction"] == "UPDATE"
    assert second["ContainerKeystoneImage"] == "registry.example:5000/tripleo/openstack-keystone:t1"
    assert int(second["DeployIdentifier"]) > int(first["DeployIdentifier"])
    saved = yaml.safe_load((work / "environment.yaml").read_text())
    assert saved["parameters"]["StackAction"] == "UPDATE"
