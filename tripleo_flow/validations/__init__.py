"""TripleO's validation framework: where it is installed, its playbooks, runs and results.

:mod:`.catalog` reads the validation playbooks of the validations virtualenv
(tools/setup-validations.sh) and of ``[validations] validations_dirs``;
:mod:`.runner` runs one with ansible-playbook in a process group of its own (so a
stop ends every Ansible process) and :mod:`.results` keeps the result records, with
the plan in the plan store or in the local data directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tripleo_flow import config

if TYPE_CHECKING:
    from oslo_config import cfg

#: The framework's content, under the virtualenv.
SHARE = "share/ansible"


def venv_path(conf: cfg.ConfigOpts) -> Path:
    """The validations virtualenv: ``[validations] venv`` or ``<data_dir>/validations-venv``."""
    configured = conf.validations.venv
    return Path(configured).expanduser() if configured else (
        config.data_dir(conf) / "validations-venv")


def runs_dir(conf: cfg.ConfigOpts) -> Path:
    """Where runs keep their inventories, Ansible state, logs and process groups."""
    return config.data_dir(conf) / "validations" / "runs"


def results_dir(conf: cfg.ConfigOpts) -> Path:
    """Where the results of runs without a plan are kept."""
    return config.data_dir(conf) / "validations" / "results"
