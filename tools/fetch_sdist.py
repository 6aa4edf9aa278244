#!/usr/bin/env python3
"""Download and unpack the source distribution of a project on PyPI, once.

What the tests and the demo need from TripleO comes only in sdists: wheels of
tripleo-heat-templates carry no templates, and tripleo-common's Train Mistral
workbooks (``workbooks/*.yaml``) are not installed by its wheel.  This fetches the
sdist (``.tar.gz``) through PyPI's JSON API (PyPI is what CI reaches), checks its
SHA-256 digest, unpacks it into a cache directory and prints the path of the tree.
Running it again with the tree in place downloads nothing.

Usage::

    python tools/fetch_sdist.py tripleo-heat-templates 18.0.0
    python tools/fetch_sdist.py tripleo-common 11.3.0 --cache-dir /tmp/tc

The cache root of a project defaults to ``$TRIPLEO_FLOW_THT_CACHE`` or
``~/.cache/tripleo-flow/tht`` for tripleo-heat-templates (``tools/fetch_tht.py
VERSION`` is that case), ``~/.cache/tripleo-flow/<project>`` for any other; the
tree lands in ``<root>/<version>``.
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

THT = "tripleo-heat-templates"
INDEX = "https://pypi.org/pypi"
ENV_CACHE = "TRIPLEO_FLOW_THT_CACHE"
#: Marker written once a tree is completely unpacked.
DONE_MARKER = ".tripleo-flow-complete"
TIMEOUT = 60


class FetchError(Exception):
    """The sdist could not be found, downloaded or unpacked."""


def default_cache_dir(project: str = THT) -> pathlib.Path:
    """The cache root of ``project``: for tripleo-heat-templates
    ``$TRIPLEO_FLOW_THT_CACHE`` or ``~/.cache/tripleo-flow/tht``, for any other
    ``~/.cache/tripleo-flow/<project>``."""
    env = os.environ.get(ENV_CACHE) if project == THT else None
    if env:
        return pathlib.Path(env).expanduser()
    return pathlib.Path.home() / ".cache" / "tripleo-flow" / ("tht" if project == THT else project)


def cached(project: str, version: str, cache_dir: pathlib.Path | None = None
           ) -> pathlib.Path | None:
    """The unpacked tree of ``project`` ``version`` when it is completely in the cache."""
    target = (cache_dir or default_cache_dir(project)).expanduser() / version
    return target if (target / DONE_MARKER).is_file() else None


def _get(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
            return bytes(response.read())
    except (urllib.error.URLError, OSError) as exc:
        raise FetchError(
            f"Cannot download {url}: {exc}. Check the network connection to PyPI "
            f"or pass --cache-dir pointing at an already fetched tree."
        ) from exc


def find_sdist(version: str, index: str = INDEX, project: str = THT) -> dict[str, str]:
    """Return ``{url, sha256, filename}`` of the sdist of ``project`` ``version``."""
    data = json.loads(_get(f"{index}/{project}/json"))
    files = data.get("releases", {}).get(version)
    if files is None:
        raise FetchError(f"{project} has no release {version!r} on {index}.")
    for entry in files:
        if entry.get("packagetype") == "sdist" and entry["filename"].endswith(".tar.gz"):
            return {
                "url": entry["url"],
                "sha256": entry["digests"]["sha256"],
                "filename": entry["filename"],
            }
    raise FetchError(f"{project} {version} has no .tar.gz sdist on {index}.")


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


def fetch(version: str, cache_dir: pathlib.Path | None = None,
          project: str = THT) -> pathlib.Path:
    """Make sure the tree of ``project`` ``version`` is unpacked in the cache; return
    its path."""
    done = cached(project, version, cache_dir)
    if done is not None:
        return done
    root = (cache_dir or default_cache_dir(project)).expanduser()
    target = root / version
    sdist = find_sdist(version, project=project)
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


def main(argv: list[str] | None = None, project: str | None = None) -> int:
    """The command line; ``project`` given leaves it out of the arguments."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    if project is None:
        parser.add_argument("project", help="PyPI project, e.g. tripleo-common")
    parser.add_argument("version", help="release to fetch, e.g. 12.1.0")
    parser.add_argument(
        "--cache-dir",
        type=pathlib.Path,
        default=None,
        help=f"cache root (default ${ENV_CACHE} or ~/.cache/tripleo-flow/tht for "
        f"{THT}, ~/.cache/tripleo-flow/PROJECT otherwise)",
    )
    args = parser.parse_args(argv)
    name = project or args.project
    try:
        path = fetch(args.version, args.cache_dir, name)
    except FetchError as exc:
        print(f"fetch_sdist: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
