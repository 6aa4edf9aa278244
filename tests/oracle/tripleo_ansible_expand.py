"""Run by the python of the Ansible virtualenv (tripleo-ansible 6.0.0 installed): print
the ``parameter_defaults`` tripleo-ansible's baremetal provisioning generates for a
baremetal deployment file (stdin) and a stack name (argv[1]), as JSON.

This is what ``openstack overcloud node provision`` (python-tripleoclient 20.0.0) puts
in the deployed environment, ``{Role}RemovalPolicies`` for the instances marked
``provisioned: false`` included.  ``module_utils/baremetal_deploy.py`` imports
metalsmith (not installed here) for Ironic's client and image sources: neither is
used by ``expand`` beyond the image source check of each instance, stubbed here.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import yaml

PLUGINS = Path(sys.prefix) / "share" / "ansible" / "plugins"


def main() -> None:
    sources = types.ModuleType("metalsmith.sources")
    sources.detect = lambda **_kwargs: None  # type: ignore[attr-defined]
    metalsmith = types.ModuleType("metalsmith")
    metalsmith.sources = sources  # type: ignore[attr-defined]
    sys.modules.update({"metalsmith": metalsmith, "metalsmith.sources": sources,
                        "openstack": types.ModuleType("openstack")})
    sys.path.insert(0, str(PLUGINS))
    from module_utils import baremetal_deploy  # type: ignore[import-not-found]

    roles = yaml.safe_load(sys.stdin.read())
    _instances, env, _nets, _roles = baremetal_deploy.expand(
        roles, sys.argv[1], True, default_image={"href": "overcloud-full"})
    json.dump(env["parameter_defaults"], sys.stdout)


if __name__ == "__main__":
    main()
