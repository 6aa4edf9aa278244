"""The record of a plan's last render, so that a reader can use the rendered files the
plan holds instead of rendering its templates again.

``templates.process`` renders a plan's j2 templates and stores the outputs in the
plan; a deploy's check needs the same outputs, and rendering THT 18.0.0 again took
about a third of its CPU.  The render writes its record in the plan's manifest
(:attr:`~tripleo_flow.plans.plan.Manifest.render`): the SHA-256 of every file whose
content or absence the render depended on (the data files, every template, every path
an include looked for: ``None`` for one absent), of every output, and the key of what
else decides the outputs (:func:`code_key`: the render's code and the versions of
Python, Jinja, MarkupSafe and PyYAML, and ``[limits] render_max_size``).

A reader takes the stored outputs only when all of it holds for the files it read
(:func:`holds`): the same key, every file the render read the same (absent where it
was absent), no template it did not render, and every output stored as rendered.
Anything else (a source or a rendered file changed by hand, another roles_data, a new
template, other code or limits, no record) means a fresh render, as before.  Nothing
executable is kept: only digests.
"""

from __future__ import annotations

import functools
import hashlib
import sys
from collections.abc import Collection, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from tripleo_flow import __version__
from tripleo_flow.common import safe_yaml, template_sandbox, time_budget, yaml_build
from tripleo_flow.core.plan import rendering

#: The version of the record's layout.
FORMAT = 1
#: The modules whose code decides what a render outputs or refuses.
CODE = (rendering, template_sandbox, time_budget, safe_yaml, yaml_build)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@functools.cache
def _code_digest() -> str:
    import yaml

    digest = hashlib.sha256()
    versions = [metadata.version(name) for name in ("Jinja2", "MarkupSafe", "PyYAML")]
    parts: list[bytes] = [str(FORMAT).encode(), __version__.encode(), sys.version.encode(),
                          *(v.encode() for v in versions),
                          str(getattr(yaml, "__with_libyaml__", False)).encode()]
    parts += [Path(str(module.__file__)).read_bytes() for module in CODE]
    for part in parts:
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


def code_key(max_size: int) -> str:
    """The key of what, besides the plan's files, decides a render's outputs."""
    return f"{_code_digest()}:{max_size}"


def make(files: Mapping[str, bytes], reads: Collection[str],
         outputs: Mapping[str, bytes], max_size: int) -> dict[str, Any]:
    """The record of a render of ``files`` that read ``reads`` (as
    :func:`~tripleo_flow.core.plan.rendering.render_plan` fills them) and made
    ``outputs`` within ``max_size``."""
    return {"format": FORMAT, "key": code_key(max_size),
            "reads": {name: _sha256(files[name]) if name in files else None
                      for name in sorted(reads)},
            "outputs": {name: _sha256(data) for name, data in sorted(outputs.items())}}


def names(record: Any) -> list[str]:
    """The files :func:`holds` reads for ``record`` (none for a malformed one)."""
    if not isinstance(record, Mapping):
        return []
    reads, outputs = record.get("reads"), record.get("outputs")
    if not isinstance(reads, Mapping) or not isinstance(outputs, Mapping):
        return []
    return sorted({*reads, *outputs})


def holds(record: Any, files: Mapping[str, bytes], max_size: int) -> bool:
    """Whether rendering ``files`` within ``max_size`` gives exactly the outputs
    ``record`` names, which ``files`` hold: then they need no render."""
    if not isinstance(record, Mapping) or record.get("format") != FORMAT:
        return False
    reads, outputs = record.get("reads"), record.get("outputs")
    if (record.get("key") != code_key(max_size) or not isinstance(reads, Mapping)
            or not isinstance(outputs, Mapping)):
        return False
    if any(name not in reads for name in rendering.templates(files)):
        return False  # a template the render did not see
    for name, wanted in reads.items():
        if (_sha256(files[name]) if name in files else None) != wanted:
            return False
    return all(name in files and _sha256(files[name]) == wanted
               for name, wanted in outputs.items())
