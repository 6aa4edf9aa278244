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

from tripleo_flow.client.plans import sample_plan_dir
from tripleo_flow.core.deploy import update

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
    "update_steps_playbook": "allovercloud",
    "upgrade_steps_playbook": "allovercloud",
    "post_upgrade_steps_playbook": "allovercloud",
    "external_upgrade_steps_playbook": "Undercloud",
    "external_update_steps_playbook": "Undercloud",
}


#: The parameters tripleoclient's deploy sets, as THT 18.0.0's overcloud.j2.yaml declares them.
DEPLOY_PARAMETERS = "".join(
    f"  {name}:\n    type: string\n    default: ''\n"
    for name in ("DeployIdentifier", "UpdateIdentifier", "StackAction", "RootStackName"))


#: Set in ansible-playbook's environment (a local connection), each run of a lifecycle
#: playbook appends a line ``<playbook> <host>`` to this file: how a test counts runs.
TRACE_ENV = "TRIPLEO_FLOW_TEST_TRACE"
#: Set too, the run then sleeps that many seconds after writing its line.
SLEEP_ENV = "TRIPLEO_FLOW_TEST_SLEEP"
#: Given as an extra var to an external playbook (which runs on the undercloud, this
#: machine), the file it writes what its run got: ``sample_extra`` and ``sample_more``
#: (extra vars), ``ansible_forks``, ``ansible_user`` and ``sample_inventory`` (a
#: variable a test's static inventory sets).
REPORT_VAR = "sample_report"
_REPORT = ('{"extra": sample_extra | default(None), "more": sample_more | default(None), '
           '"forks": ansible_forks, "user": ansible_user | default(None), '
           '"inventory": sample_inventory | default("generated")}')


def _play(name: str, hosts: str) -> str:
    trace = f'lookup("env", "{TRACE_ENV}")'
    text = (f"      {name}:\n"
            f"        - name: {name}\n"
            f"          hosts: {hosts}\n"
            "          gather_facts: false\n"
            "          tasks:\n"
            f"            - name: Sample {name}\n"
            f"              debug: {{msg: {name}}}\n"
            "            - name: Trace\n"
            f"              shell: '{{% raw %}}echo {name} {{{{ inventory_hostname }}}} >> "
            f"{{{{ {trace} | quote }}}}; sleep {{{{ (lookup(\"env\", \"{SLEEP_ENV}\") or 0) "
            "| int }}{% endraw %}'\n"
            f"              when: {trace} != \"\"\n")
    if name.startswith("external_"):
        text += ("            - name: Report\n"
                 "              copy:\n"
                 f"                dest: '{{% raw %}}{{{{ {REPORT_VAR} }}}}{{% endraw %}}'\n"
                 f"                content: '{{% raw %}}{{{{ {_REPORT} | to_json }}}}"
                 "{% endraw %}'\n"
                 f"              when: {REPORT_VAR} is defined\n")
    return text


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
