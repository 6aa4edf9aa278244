"""The sample plan made ready for the minor update and major upgrade workflows: THT's
lifecycle environments (``environments/lifecycle/update-prepare.yaml`` and
``upgrade-prepare.yaml``, hand-made with the shape of THT 18.0.0's: the pre/post config
tasks mapped to ``OS::Heat::None`` and a few of its parameters) and, in the stack's
``RoleConfig`` output, the playbooks config-download writes for them (one debug task
each: the sample plan has no update or upgrade tasks of its own), and the deploy
parameters THT's root template declares (``DeployIdentifier``, ``UpdateIdentifier``,
``StackAction``, ``RootStackName``: a deploy sets only those the templates declare)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tripleo_flow.api.plans import sample_plan_dir
from tripleo_flow.core import update

#: As THT 18.0.0's lifecycle environments: their resource_registry, and parameters the
#: sample plan does not declare (Heat ignores those) beside one it does not either but
#: a test can find in the stack's environment.
_REGISTRY = ("resource_registry:\n"
             "  OS::TripleO::Tasks::*PreConfig: OS::Heat::None\n"
             "  OS::TripleO::Tasks::*PostConfig: OS::Heat::None\n")
ENVIRONMENTS = {
    update.UPDATE.prepare_environment: _REGISTRY + (
        "parameter_defaults:\n  SampleUpdatePrepared: true\n"),
    update.UPGRADE.prepare_environment: _REGISTRY + (
        "parameter_defaults:\n  SampleUpgradePrepared: true\n"
        "  ServerDeletionPolicy: retain\n  UpgradeLevelNovaCompute: auto\n"),
}
#: The playbooks added to RoleConfig, and the hosts each runs on.
PLAYBOOKS = {
    "upgrade_steps_playbook": "allovercloud",
    "post_upgrade_steps_playbook": "allovercloud",
    "external_upgrade_steps_playbook": "Undercloud",
    "external_update_steps_playbook": "Undercloud",
}


#: The parameters tripleoclient's deploy sets, as THT 18.0.0's overcloud.j2.yaml declares them.
DEPLOY_PARAMETERS = "".join(
    f"  {name}:\n    type: string\n    default: ''\n"
    for name in ("DeployIdentifier", "UpdateIdentifier", "StackAction", "RootStackName"))


def _play(name: str, hosts: str) -> str:
    return (f"      {name}:\n"
            f"        - name: {name}\n"
            f"          hosts: {hosts}\n"
            "          gather_facts: false\n"
            "          tasks:\n"
            f"            - name: Sample {name}\n"
            f"              debug: {{msg: {name}}}\n")


def lifecycle_templates(root: Path, environments: bool = True) -> Path:
    """A copy of the sample plan at ``root`` with the lifecycle playbooks and (with
    ``environments``) THT's lifecycle environments."""
    shutil.copytree(sample_plan_dir(), root)
    if environments:
        for path, text in ENVIRONMENTS.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)
    top = root / "overcloud.j2.yaml"
    marker = "    value:\n      deploy_steps_playbook:\n"
    text = top.read_text()
    assert marker in text, "the sample plan's RoleConfig output moved"
    plays = "".join(_play(name, hosts) for name, hosts in PLAYBOOKS.items())
    text = text.replace(marker, "    value:\n" + plays + "      deploy_steps_playbook:\n", 1)
    top.write_text(text.replace("\nparameters:\n", "\nparameters:\n" + DEPLOY_PARAMETERS, 1))
    return root
