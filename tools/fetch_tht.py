#!/usr/bin/env python3
"""Download and unpack a tripleo-heat-templates source distribution.

Wheels of tripleo-heat-templates carry no templates, so this fetches the
sdist (``.tar.gz``) through PyPI's JSON API, checks its SHA-256 digest,
unpacks it into a cache directory and prints the path of the template tree.
Running it again with the tree in place downloads nothing.

Usage::

    python tools/fetch_tht.py 12.1.0
    python tools/fetch_tht.py 18.0.0 --cache-dir /tmp/tht

The cache directory defaults to ``$TRIPLEO_FLOW_THT_CACHE`` or
``~/.cache/tripleo-flow/tht``; the tree lands in ``<cache>/<version>``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import shutil
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request

PROJECT = "tripleo-heat-templates"
INDEX = "https://pypi.org/pypi"
ENV_CACHE = "TRIPLEO_FLOW_THT_CACHE"
#: Marker written once a tree is completely unpacked.
DONE_MARKER = ".tripleo-flow-complete"
TIMEOUT = 60


class FetchError(Exception):
    """The sdist could not be found, downloaded or unpacked."""


def default_cache_dir() -> pathlib.Path:
    """The cache root: ``$TRIPLEO_FLOW_THT_CACHE`` or ``~/.cache/tripleo-flow/tht``."""
    env = os.environ.get(ENV_CACHE)
    if env:
        return pathlib.Path(env).expanduser()
    return pathlib.Path.home() / ".cache" / "tripleo-flow" / "tht"


def _get(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
            return bytes(response.read())
    except (urllib.error.URLError, OSError) as exc:
        raise FetchError(
            f"Cannot download {url}: {exc}. Check the network connection to PyPI "
            f"or pass --cache-dir pointing at an already fetched tree."
        ) from exc


def find_sdist(version: str, index: str = INDEX) -> dict[str, str]:
    """Return ``{url, sha256, filename}`` of the sdist of ``version``."""
    data = json.loads(_get(f"{index}/{PROJECT}/json"))
    files = data.get("releases", {}).get(version)
    if files is None:
        raise FetchError(f"{PROJECT} has no release {version!r} on {index}.")
    for entry in files:
        if entry.get("packagetype") == "sdist" and entry["filename"].endswith(".tar.gz"):
            return {
                "url": entry["url"],
                "sha256": entry["digests"]["sha256"],
                "filename": entry["filename"],
            }
    raise FetchError(f"{PROJECT} {version} has no .tar.gz sdist on {index}.")


def _safe_members(archive: tarfile.TarFile, prefix: str) -> list[tarfile.TarInfo]:
    members = []
    for member in archive.getmembers():
        name = member.name
        if name.startswith("/") or ".." in pathlib.PurePosixPath(name).parts:
            raise FetchError(f"Refusing unsafe path {name!r} in the sdist.")
        if not (name == prefix or name.startswith(prefix + "/")):
            raise FetchError(f"Unexpected path {name!r} outside {prefix!r} in the sdist.")
        if not (member.isfile() or member.isdir()):
            continue
        members.append(member)
    return members


def fetch(version: str, cache_dir: pathlib.Path | None = None) -> pathlib.Path:
    """Make sure the tree of ``version`` is unpacked in the cache; return its path."""
    root = (cache_dir or default_cache_dir()).expanduser()
    target = root / version
    if (target / DONE_MARKER).is_file():
        return target
    sdist = find_sdist(version)
    payload = _get(sdist["url"])
    digest = hashlib.sha256(payload).hexdigest()
    if digest != sdist["sha256"]:
        raise FetchError(
            f"{sdist['filename']}: SHA-256 {digest} does not match PyPI's {sdist['sha256']}."
        )
    root.mkdir(parents=True, exist_ok=True)
    prefix = sdist["filename"][: -len(".tar.gz")]
    with tempfile.TemporaryDirectory(dir=root, prefix=f".{version}-") as tmp:
        archive_path = pathlib.Path(tmp) / sdist["filename"]
        archive_path.write_bytes(payload)
        with tarfile.open(archive_path, "r:gz") as archive:
            members = _safe_members(archive, prefix)
            archive.extractall(tmp, members=members, filter="data")
        if target.exists():
            shutil.rmtree(target)
        os.replace(pathlib.Path(tmp) / prefix, target)
    (target / DONE_MARKER).write_text(sdist["sha256"] + "\n")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", help="release to fetch, e.g. 12.1.0")
    parser.add_argument(
        "--cache-dir",
        type=pathlib.Path,
        default=None,
        help=f"cache root (default ${ENV_CACHE} or ~/.cache/tripleo-flow/tht)",
    )
    args = parser.parse_args(argv)
    try:
        path = fetch(args.version, args.cache_dir)
    except FetchError as exc:
        print(f"fetch_tht: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
