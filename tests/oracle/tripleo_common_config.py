"""Write a stack's config-download with the reference, tripleo-common itself, from outputs as JSON.

Run with the python of a virtualenv made by ``tools/setup-tripleo-common.sh`` (never
imported by tripleo-flow or by the test process).  Reads ``{"plan": ..., "outputs":
{...}}`` on stdin, gives tripleo-common a Heat client of its own making (no Heat
server: ``stacks.get`` returns the outputs as Heat lists them; the stack has no
software deployments) and runs ``Config(heat).download_config(plan, OUT, None)`` into
the directory named by the only argument.  Prints one JSON line: the version, or
``{"error": <exception class>, "message": ...}`` when tripleo-common raised.
"""

import importlib.metadata
import json
import sys


class _Stack:
    def __init__(self, plan, outputs):
        self.stack_name = plan
        self.stack_id = "00000000-0000-0000-0000-000000000000"
        self.outputs = [{"output_key": key, "output_value": value}
                        for key, value in outputs.items()]


class _Resources:
    @staticmethod
    def list(*_args, **_kwargs):
        return []  # no software deployments


class _Stacks:
    def __init__(self, plan, outputs):
        self._stack = _Stack(plan, outputs)

    def get(self, name, **_kwargs):
        if name != self._stack.stack_name:
            from heatclient.exc import HTTPNotFound
            raise HTTPNotFound(f"Stack {name} not found")
        return self._stack


class _Heat:
    def __init__(self, plan, outputs):
        self.stacks = _Stacks(plan, outputs)
        self.resources = _Resources()


def main():
    case = json.load(sys.stdin)
    from tripleo_common.utils import config

    version = importlib.metadata.version("tripleo-common")
    heat = _Heat(case["plan"], case["outputs"])
    try:
        config.Config(heat).download_config(case["plan"], sys.argv[1], None,
                                            preserve_config_dir=True)
    except Exception as exc:  # the reference refusing is an outcome to compare
        print(json.dumps({"error": type(exc).__name__, "message": str(exc),
                          "tripleo_common": version}))
        return
    print(json.dumps({"tripleo_common": version}))


if __name__ == "__main__":
    main()
