"""Ephemeral Heat: launchers (native, processes, container, pod, installed) and their pieces.

:func:`make_launcher` builds the launcher of a heat type from the ``[heat]``
options; see :mod:`tripleo_flow.heat.launcher` for the port.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from tripleo_flow import exceptions

if TYPE_CHECKING:
    from oslo_config import cfg

    from tripleo_flow.heat.launcher import HeatLauncher

# ``tripleo_flow.config`` (oslo.config) is imported by the functions that read the
# configuration: the CLI's commands name HEAT_TYPES in their parsers, and a command's
# ``--help`` loads no configuration library.

HEAT_TYPES = ("native", "processes", "container", "pod", "installed")


def venv_path(conf: cfg.ConfigOpts) -> Path:
    """Heat's virtualenv: ``[heat] venv`` or ``<data_dir>/heat-venv``."""
    from tripleo_flow import config

    return Path(conf.heat.venv) if conf.heat.venv else config.data_dir(conf) / "heat-venv"


def clouds_yaml_path(conf: cfg.ConfigOpts) -> Path:
    """The clouds.yaml that gets the ``heat`` entry."""
    if conf.heat.clouds_yaml:
        return Path(conf.heat.clouds_yaml).expanduser()
    return Path.home() / ".config" / "openstack" / "clouds.yaml"


def resolve_type(conf: cfg.ConfigOpts, heat_type: str | None,
                 heat_dir: str | os.PathLike[str], deployed: str | None = None) -> str:
    """The heat type a command on ``heat_dir`` uses: ``heat_type`` when given, else
    the one the heat-dir records (its running Heat's, else its dump's: a kill finds
    what a launch started, and a later deploy or ``--restore-db`` launches the type
    that can load the dump), else ``deployed`` (what a deployment status recorded),
    else ``[heat] heat_type``.  So changing the default never breaks a deployment
    made with another type.
    """
    if heat_type:
        return heat_type
    from tripleo_flow.heat.workdir import HeatDir

    return HeatDir(heat_dir).recorded_type() or deployed or str(conf.heat.heat_type)


def make_launcher(conf: cfg.ConfigOpts, heat_type: str | None,
                  heat_dir: str | os.PathLike[str]) -> HeatLauncher:
    """The launcher of ``heat_type`` for ``heat_dir`` (none: :func:`resolve_type`)."""
    from tripleo_flow import config

    kind = resolve_type(conf, heat_type, heat_dir)
    opts = conf.heat
    if kind == "native":
        from tripleo_flow.heat.native import NativeLauncher

        return NativeLauncher(heat_dir, venv_path(conf), port=opts.api_port,
                              api_timeout=opts.api_timeout, database=opts.database,
                              sqlite_dir=Path(opts.sqlite_dir) if opts.sqlite_dir else None,
                              mariadb_url=opts.mariadb_url, clouds_yaml=clouds_yaml_path(conf),
                              pace_leaves=opts.pace_leaves,
                              quick_rpc_replies=opts.quick_rpc_replies)
    if kind == "processes":
        from tripleo_flow.heat.processes import ProcessesLauncher

        return ProcessesLauncher(heat_dir, venv_path(conf), engine_workers=opts.engine_workers,
                                 port=opts.api_port, api_timeout=opts.api_timeout,
                                 clouds_yaml=clouds_yaml_path(conf),
                                 pace_leaves=opts.pace_leaves,
                                 quick_rpc_replies=opts.quick_rpc_replies)
    if kind == "installed":
        from tripleo_flow.heat.installed import InstalledLauncher

        return InstalledLauncher(heat_dir, opts.endpoint, clouds_yaml=clouds_yaml_path(conf))
    if kind == "container":
        from tripleo_flow.heat.container import ContainerLauncher

        return ContainerLauncher(heat_dir, image=opts.image, podman_url=opts.podman_url,
                                 podman_dir=config.data_dir(conf) / "podman",
                                 port=opts.api_port, api_timeout=opts.api_timeout,
                                 database=opts.database,
                                 sqlite_dir=Path(opts.sqlite_dir) if opts.sqlite_dir else None,
                                 mariadb_url=opts.mariadb_url,
                                 clouds_yaml=clouds_yaml_path(conf))
    if kind == "pod":
        from tripleo_flow.heat.pod import PodLauncher

        return PodLauncher(heat_dir, image=opts.image, services_image=opts.services_image,
                           podman_url=opts.podman_url,
                           podman_dir=config.data_dir(conf) / "podman",
                           engine_workers=opts.engine_workers,
                           rabbitmq_url=opts.rabbitmq_url, port=opts.api_port,
                           api_timeout=opts.api_timeout, mariadb_url=opts.mariadb_url,
                           clouds_yaml=clouds_yaml_path(conf))
    raise exceptions.InvalidInput(
        f"Unknown heat type {kind!r}: use one of {', '.join(HEAT_TYPES)}."
    )
