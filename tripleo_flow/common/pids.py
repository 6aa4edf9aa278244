"""Whether a process id names a live process (the writers of partial files left behind)."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (another user's counts: it cannot be signalled,
    but it runs)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
