"""The ``tripleo-flow`` command run in this process, as a subprocess would be seen.

:func:`run` calls the cliff app's :func:`~tripleo_flow.cli.main.main` with its own
stdout and stderr and returns what :func:`subprocess.run` would: the exit code and
both outputs.  It spares each call the start-up of a Python process (about 1.5 s of
CPU importing the libraries); a test about what only a process shows (an exit on a
signal, start-up) runs the real command instead.
"""

from __future__ import annotations

import contextlib
import io
import subprocess

from tripleo_flow.cli.main import main


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    """``tripleo-flow ARGV...`` run in this process: its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse: --help, a usage error
            code = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(list(argv), code, out.getvalue(), err.getvalue())
