"""A real OpenStack Ironic for node registration and introspection.

``[ironic] endpoint`` names an existing Ironic; without it the node commands use
the local all-in-one Ironic that ``tripleo-flow launch ironic`` started in
``[ironic] ironic_dir`` (:mod:`.launcher`), found through its run record.
:mod:`.client` is the HTTP client both use.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tripleo_flow import config, exceptions

if TYPE_CHECKING:
    from oslo_config import cfg


def venv_path(conf: cfg.ConfigOpts) -> Path:
    """Ironic's virtualenv: ``[ironic] venv`` or ``<data_dir>/ironic-venv``."""
    return Path(conf.ironic.venv) if conf.ironic.venv else config.data_dir(conf) / "ironic-venv"


def ironic_dir(conf: cfg.ConfigOpts) -> Path:
    """The work directory of the local Ironic: ``[ironic] ironic_dir`` or ``<data_dir>/ironic``."""
    if conf.ironic.ironic_dir:
        return Path(conf.ironic.ironic_dir).expanduser()
    return config.data_dir(conf) / "ironic"


def endpoint(conf: cfg.ConfigOpts) -> str:
    """The Ironic API URL: ``[ironic] endpoint``, else the launched local Ironic's.

    :raises IronicNotConfigured: neither is there.
    """
    if conf.ironic.endpoint:
        return str(conf.ironic.endpoint).rstrip("/")
    from tripleo_flow.ironic.workdir import IronicDir

    work = IronicDir(ironic_dir(conf))
    record = work.read_run()
    if not record or not record.get("ready") or not record.get("port"):
        raise exceptions.IronicNotConfigured(str(work.given))
    return f"http://127.0.0.1:{int(record['port'])}"
