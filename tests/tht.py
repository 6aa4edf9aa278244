"""The real tripleo-heat-templates trees, fetched from PyPI sdists by tools/fetch_tht.py."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
FETCHER = ROOT / "tools" / "fetch_tht.py"


def fetch_tree_dir(version: str) -> pathlib.Path:
    """The unpacked tree of ``version`` (cached); FAILS the test when it cannot be had."""
    command = [sys.executable, str(FETCHER), version]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600,
                            env=dict(os.environ))
    if result.returncode != 0:
        pytest.fail(
            f"Could not fetch tripleo-heat-templates {version} with {' '.join(command)}: "
            f"{result.stderr.strip()}. These tests need PyPI (or a cached tree in "
            "$TRIPLEO_FLOW_THT_CACHE).",
            pytrace=False,
        )
    return pathlib.Path(result.stdout.strip().splitlines()[-1])


def fetch_tree(version: str) -> dict[str, bytes]:
    """Every file of the tree of ``version``, path -> content."""
    tree = fetch_tree_dir(version)
    return {
        path.relative_to(tree).as_posix(): path.read_bytes()
        for path in tree.rglob("*")
        if path.is_file() and not path.name.startswith(".tripleo-flow")
    }
