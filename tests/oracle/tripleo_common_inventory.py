"""Write a stack's inventory with the reference, tripleo-common itself, from outputs given as JSON.

Run with the python of a virtualenv made by ``tools/setup-tripleo-common.sh`` (never
imported by tripleo-flow or by the test process).  Reads one JSON object on stdin::

    {"plan": "overcloud", "outputs": {"RoleNetHostnameMap": ..., ...},
     "environment": {"parameter_defaults": {...}}, "ssh_user": "tripleo-admin",
     "python": null}

and gives tripleo-common a Heat client of its own making (no Heat server): its
``stacks.get(plan)`` returns an object whose ``outputs`` are those outputs, as Heat
lists them; ``stacks.environment(plan)`` returns the environment; any other stack is
not found.  Then it writes the inventory as tripleo-common does on a deploy: 18.x
through ``generate_tripleo_ansible_inventory`` (no Neutron, no Keystone), 12.x through
``TripleoInventory(...).write_static_inventory`` as its Mistral action did (the
undercloud reached over SSH).  ``python`` is ``ansible_python_interpreter`` (null:
none given, tripleo-common then names its own ``sys.executable``).

Prints one JSON line: ``{"inventory": <the file, loaded>, "python": sys.executable,
"tripleo_common": version}``, or ``{"error": <exception class>, "message": ...}``
when tripleo-common raised.
"""

import importlib.metadata
import json
import os
import sys
import tempfile

import yaml


class _Stack:
    def __init__(self, outputs):
        self.outputs = [{"output_key": key, "output_value": value}
                        for key, value in outputs.items()]


class _Stacks:
    def __init__(self, plan, outputs, environment):
        self._plan, self._outputs, self._environment = plan, outputs, environment

    def _check(self, name):
        if name != self._plan:
            from heatclient.exc import HTTPNotFound
            raise HTTPNotFound(f"Stack {name} not found")

    def get(self, name, **_kwargs):
        self._check(name)
        return _Stack(self._outputs)

    def environment(self, name):
        self._check(name)
        return self._environment


class _Heat:
    def __init__(self, plan, outputs, environment):
        self.stacks = _Stacks(plan, outputs, environment)


def main():
    case = json.load(sys.stdin)
    from tripleo_common import inventory

    version = importlib.metadata.version("tripleo-common")
    plan = case["plan"]
    heat = _Heat(plan, case["outputs"], case.get("environment") or {})
    ssh_user = case.get("ssh_user") or "tripleo-admin"
    python = case.get("python")
    with tempfile.TemporaryDirectory() as work_dir:
        path = os.path.join(work_dir, "tripleo-ansible-inventory.yaml")
        try:
            if int(version.split(".")[0]) >= 15:  # merged inventories (Wallaby and later)
                inventory.generate_tripleo_ansible_inventory(
                    heat=heat, plan=plan, work_dir=work_dir, ansible_ssh_user=ssh_user,
                    ansible_python_interpreter=python, ssh_network="ctlplane",
                    session=None, cloud_name=None)
            else:
                inventory.TripleoInventory(
                    session=None, hclient=heat, plan_name=plan, ansible_ssh_user=ssh_user,
                    ansible_python_interpreter=python,
                    undercloud_connection=inventory.UNDERCLOUD_CONNECTION_SSH,
                    host_network="ctlplane").write_static_inventory(path)
        except Exception as exc:  # the reference refusing is an outcome to compare
            print(json.dumps({"error": type(exc).__name__, "message": str(exc),
                              "tripleo_common": version}))
            return
        with open(path) as written:
            loaded = yaml.safe_load(written)
    print(json.dumps({"inventory": loaded, "python": sys.executable,
                      "tripleo_common": version}))


if __name__ == "__main__":
    main()
