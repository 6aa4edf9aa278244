"""tripleoclient's check for deprecated services enabled by the ``-e`` environment
files (``utils.check_deprecated_service_is_enabled``): a service mapped in an
environment's ``resource_registry`` to anything but ``OS::Heat::None``.

tripleoclient's list (``constants.DEPRECATED_SERVICES``) names OpenDaylight's API from
Rocky to Victoria and is empty in the releases that ship THT 18: the one entry is kept
here so that an environment brought over from those older plans is still caught."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.common.safe_yaml import load_yaml

#: Service resource type -> why it should not be enabled.
DEPRECATED_SERVICES: Mapping[str, str] = {
    "OS::TripleO::Services::OpenDaylightApi": (
        "OpenDaylight as the networking driver was deprecated in Rocky and removed in "
        "Stein; nothing upgrades or migrates it to another networking backend (OVS or "
        "OVN are the alternatives)."),
}
#: tripleoclient's question after the warnings; anything but yes stops the command.
QUESTION = "Do you still wish to continue with deployment [y/N]"


def enabled_deprecated_services(environments: Iterable[Mapping[str, Any]]) -> list[str]:
    """One warning per deprecated service an environment enables, in the environments'
    order: ``service S is enabled in NAME. WHY``.  ``environments``: as
    ``EnvironmentFile.to_json`` gives them (``{"name", "files"}``); one that does not
    parse is left to the reader that stores it."""
    warnings: list[str] = []
    for env in environments:
        name = str(env.get("name", ""))
        text = (env.get("files") or {}).get(name)
        if not isinstance(text, str):
            continue
        try:
            content = load_yaml(text, name)
        except exceptions.InvalidTemplate:
            continue
        registry = content.get("resource_registry") if isinstance(content, dict) else None
        if not isinstance(registry, dict):
            continue
        warnings += [f"service {service} is enabled in {name}. {why}"
                     for service, why in DEPRECATED_SERVICES.items()
                     if service in registry and registry[service] != "OS::Heat::None"]
    return warnings
