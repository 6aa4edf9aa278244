"""config-download's ``NetworkConfig`` files: each server's os-net-config script.

Which stack output holds the network configuration depends on the THT release,
and tripleo-common's ``Config.render_network_config`` follows it:

- Ussuri (THT 12.x, tripleo-common 12.1.0): ``HostnameNetworkConfigMap``, host
  name -> id of the server's ``NetworkConfig`` software config (the
  ``OsNetConfigImpl`` of ``OS::TripleO::<Role>::Net::SoftwareConfig``).  Its
  ``config`` is written to ``<Role>/<server>/NetworkConfig`` and to
  ``<Role>/NetworkConfig`` (the role's file holds the last server's, in the map's
  order).  An empty config (``net-config-noop``'s ``{}``) writes nothing; a host
  the stack has no server for (blacklisted) is left out.
- Victoria to Yoga (tripleo-common 13-16): ``RoleNetworkConfigMap``, role -> a
  software config id or the config itself (a map, written as JSON); only
  ``<Role>/NetworkConfig``.  When both outputs exist this one wins.
- Zed and later (THT 17+, 18.0.0 included): neither output.  tripleo-common writes
  no ``NetworkConfig``: the ``tripleo_network_config`` role of tripleo-ansible
  configures the network from group variables (``RoleGroupVars``:
  ``tripleo_network_config_template``, ``network_config_update``...), which
  ``group_vars/<Role>`` already carries.  Nothing is written here either.

The deploy fetches the software configs by id from Heat and saves their
``config`` values (:func:`config_ids` says which); this module only maps them to
files.  Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

#: Ussuri's output: host name -> software config id.
HOSTNAME_MAP = "HostnameNetworkConfigMap"
#: Victoria..Yoga's output: role -> software config id, or the config itself.
ROLE_MAP = "RoleNetworkConfigMap"
FILE_NAME = "NetworkConfig"


def config_ids(outputs: Mapping[str, Any]) -> list[str]:
    """The software config ids whose ``config`` :func:`files` needs, in order, no
    repeats (an inline map or a null of ``RoleNetworkConfigMap`` needs none)."""
    role_map = outputs.get(ROLE_MAP)
    source = role_map if role_map is not None else outputs.get(HOSTNAME_MAP)
    ids: list[str] = []
    for value in (source or {}).values():
        if isinstance(value, str) and value and value not in ids:
            ids.append(value)
    return ids


def _text(config: Any) -> str:
    """What a config becomes in the file: a script as it is, a map as JSON, nothing
    for an empty one."""
    if not config:
        return ""
    return config if isinstance(config, str) else json.dumps(config, sort_keys=True)


def _host_key(name: str) -> str:
    return name.split(".", 1)[0].lower()


def files(outputs: Mapping[str, Any], configs: Mapping[str, Any],
          server_roles: Iterable[tuple[str, str]]) -> dict[str, bytes]:
    """The ``NetworkConfig`` files, ``{relative path: bytes}``.

    :param outputs: the stack outputs.
    :param configs: software config id -> its ``config`` (as Heat gives it).
    :param server_roles: ``(server name, role)`` of every server of the stack.

    A config id missing from ``configs`` writes nothing (the deploy saved none for it).
    """
    written: dict[str, bytes] = {}
    role_map = outputs.get(ROLE_MAP)
    if role_map is not None:
        for role, value in role_map.items():
            config = configs.get(value) if isinstance(value, str) else value
            text = _text(config) if config is not None else ""
            if text:
                written[f"{role}/{FILE_NAME}"] = text.encode()
        return written
    roles = {_host_key(name): (name, role) for name, role in server_roles}
    for host, config_id in (outputs.get(HOSTNAME_MAP) or {}).items():
        server = roles.get(_host_key(str(host)))
        text = _text(configs.get(config_id)) if isinstance(config_id, str) else ""
        if server is None or not text:
            continue
        name, role = server
        written[f"{role}/{name}/{FILE_NAME}"] = text.encode()
        written[f"{role}/{FILE_NAME}"] = text.encode()
    return written


__all__ = ["FILE_NAME", "HOSTNAME_MAP", "ROLE_MAP", "config_ids", "files"]
