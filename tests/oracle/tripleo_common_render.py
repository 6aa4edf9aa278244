"""Render a stack's config-download with the reference, tripleo-common itself.

Run with the python of a virtualenv made by ``tools/setup-tripleo-common.sh`` (never
imported by tripleo-flow or by the test process): it asks the ephemeral Heat at
``--endpoint`` (noauth, any token) for stack ``--plan`` and writes into ``--out``
what tripleo-common writes for it:

- ``Config(heat).download_config(plan, out, None, preserve_config_dir=True)``, the
  call tripleo-ansible's ``tripleo_config_download`` module makes (18.x; 12.x's
  Mistral action makes the same call);
- the inventory ``tripleo-ansible-inventory.yaml``: 18.x through
  ``generate_tripleo_ansible_inventory`` (no Neutron, no Keystone: Heat outputs
  only, as tripleoclient's deploy with pre-provisioned servers), 12.x through
  ``TripleoInventory(...).write_static_inventory`` as its Mistral action
  ``tripleo.ansible-generate-inventory`` did (the undercloud reached over SSH).

Prints one JSON line: the tripleo-common version and the Python that ran it (the
inventory names it as the undercloud's ``ansible_python_interpreter``).
"""

import argparse
import importlib.metadata
import json
import os
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", required=True, help="Heat's v1 URL with the tenant")
    parser.add_argument("--plan", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--ssh-user", default="tripleo-admin")
    args = parser.parse_args()

    from heatclient import client as heat_client
    from tripleo_common import inventory
    from tripleo_common.utils import config

    version = importlib.metadata.version("tripleo-common")
    heat = heat_client.Client("1", endpoint=args.endpoint, token="oracle")
    config.Config(heat).download_config(args.plan, args.out, None, preserve_config_dir=True)
    path = os.path.join(args.out, "tripleo-ansible-inventory.yaml")
    if int(version.split(".")[0]) >= 15:  # merged inventories (Wallaby and later)
        written = inventory.generate_tripleo_ansible_inventory(
            heat=heat, plan=args.plan, work_dir=args.out, ansible_ssh_user=args.ssh_user,
            ssh_network="ctlplane", session=None, cloud_name=None)
        assert written == path, written
    else:
        inventory.TripleoInventory(
            session=None, hclient=heat, plan_name=args.plan, ansible_ssh_user=args.ssh_user,
            undercloud_connection=inventory.UNDERCLOUD_CONNECTION_SSH,
            host_network="ctlplane").write_static_inventory(path)
    print(json.dumps({"tripleo_common": version, "python": sys.executable}))


if __name__ == "__main__":
    main()
