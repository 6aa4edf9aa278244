"""``ansible-playbook --syntax-check`` of a rendered config-download project, with the
Ansible virtualenv tripleo-flow runs it with (``[ansible] venv``: tripleo-ansible's
roles, modules and plugins on Ansible's paths)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tripleo_flow.actions.ansible import content_paths, find_ansible_playbook
from tripleo_flow.core.deploy import ansible
from tripleo_flow.core.deploy import config_download as layout

#: Playbooks that need content nothing installable here provides, with the reason
#: Ansible gives: THT's pacemaker update tasks use ``pacemaker_resource`` from
#: openstack/ansible-pacemaker, which is on neither PyPI nor the package mirrors
#: (only opendev and Ansible Galaxy, unreachable from these machines).
NEEDS_ANSIBLE_PACEMAKER = "couldn't resolve module/action 'pacemaker_resource'"


def playbooks(project: Path) -> list[str]:
    """The project's top-level playbooks (every ``*playbook*.yaml`` TripleO writes)."""
    return sorted(p.name for p in project.glob("*playbook*.yaml"))


def run(project: Path, playbook: str, venv: Path, home: Path, extra_args: list[str],
        content: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``playbook`` with the ``ansible-playbook`` of ``venv`` as ``deploy
    --run-ansible`` does (``content`` False: without tripleo-ansible's roles, modules
    and plugins)."""
    command = ansible.playbook_command(find_ansible_playbook(str(venv)), playbook,
                                       [str(project / layout.INVENTORY)], extra_args)
    paths = content_paths(str(venv)) if content else {}
    env = ansible.environment(os.environ, str(home), paths)
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True,
                          check=False, timeout=900)


def syntax_check(project: Path, playbook: str, venv: Path, home: Path,
                 content: bool = True) -> subprocess.CompletedProcess[str]:
    """Run the syntax check of ``playbook`` (see :func:`run`)."""
    return run(project, playbook, venv, home, ["--syntax-check"], content)


def failures(project: Path, venv: Path, home: Path) -> dict[str, str]:
    """The syntax check of every top-level playbook: the output of each that fails."""
    failed = {}
    for name in playbooks(project):
        done = syntax_check(project, name, venv, home)
        if done.returncode != 0:
            failed[name] = done.stdout + done.stderr
    return failed
