"""Runs one recorded execution in its own process (``workflow run --no-wait``).

``python -m tripleo_flow.client.worker EXECUTION_ID [--data-dir DIR] [--config-file FILE]...``
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tripleo_flow import exceptions
from tripleo_flow.exceptions import operations


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tripleo-flow-worker")
    parser.add_argument("execution_id")
    parser.add_argument("--data-dir")
    parser.add_argument("--config-file", action="append", default=[])
    args = parser.parse_args(argv)
    from tripleo_flow import client as api

    # its errors' next steps in the words of the process that started it
    operations.install_exported()
    overrides = {"data_dir": args.data_dir} if args.data_dir else {}
    client = api.Client.from_config_files(args.config_file, **overrides)
    try:
        client.executions.resume(args.execution_id)
    except exceptions.TripleoFlowError as exc:
        sys.stderr.write(f"Error: {exc}\n")
        return exceptions.exit_code(exc)
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
