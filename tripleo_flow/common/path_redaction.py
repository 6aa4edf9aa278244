"""Server paths out of what the HTTP API answers.

Deployment records, execution inputs and results, and error messages name files
on the server (a work dir, config-download, Heat's directory, a virtualenv).  An
API user needs to know which deployment or download they are, not where the
server keeps them, so each answer is written with every known server root
replaced by a label: ``/var/lib/tripleo-flow/work/oc`` becomes ``<data>/work/oc``.

The replacement works on the JSON text an answer is written as (one regular
expression pass, whatever the nesting), matching a root only where a path starts
and ends.  A JSON string that is a whole absolute path under none of the roots
(an execution's ``templates`` input given to the CLI as ``/srv/tht``) keeps only
its last name: ``<server>/tht``; the API's own routes (``/v1/...``) are kept.
:meth:`PathRedactor.restore` turns a label back into its root, for values the API
hands out and takes back (an upload's ``path``).  Pure: no I/O.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable

#: The label of the server's data area (work dirs, uploads, downloads, plans).
DATA = "<data>"
#: The label of any other server directory (virtualenvs, home, the program's own).
SERVER = "<server>"
#: The label of the temporary directory.
TMP = "<tmp>"

#: A root starts where no name character comes before it ...
_BEFORE = r"(?<![\w.~-])"
#: ... and ends before a separator, the end of a JSON string or of the text.
_AFTER = r"(?=[/\"\\\s'`,;:)\]}>]|$)"
#: A JSON string that is an absolute path (not one of the API's routes), unescaped.
_WHOLE_PATH = re.compile(r'"(/(?!v1/)[^"\\\x00-\x1f]*)"')


class PathRedactor:
    """Replaces known server roots by labels in JSON text (longest root first)."""

    def __init__(self, roots: Iterable[tuple[str, str]]) -> None:
        cleaned: dict[str, str] = {}
        for root, label in roots:
            path = os.path.normpath(root) if root else ""
            if path and path != os.sep and os.path.isabs(path) and path not in cleaned:
                cleaned[path] = label
        self.roots = dict(sorted(cleaned.items(), key=lambda kv: -len(kv[0])))
        # A root as it appears in JSON text (quotes and backslashes escaped).
        self._labels = {json.dumps(root)[1:-1]: label for root, label in self.roots.items()}
        self._pattern = (re.compile(_BEFORE + "(" + "|".join(map(re.escape, self._labels))
                                    + ")" + _AFTER) if self._labels else None)

    def json_text(self, text: str) -> str:
        """``text`` (JSON) with each server root replaced by its label, and each other
        absolute path that is a whole string by :data:`SERVER` and its last name."""
        if "/" not in text:
            return text
        if self._pattern is not None:
            text = self._pattern.sub(lambda m: self._labels[m.group(1)], text)
        return _WHOLE_PATH.sub(_foreign, text)

    def json_bytes(self, data: bytes) -> bytes:
        """:meth:`json_text` of UTF-8 JSON."""
        return self.json_text(data.decode("utf-8")).encode("utf-8")

    def restore(self, value: str) -> str:
        """``value`` with a leading :data:`DATA` label turned back into the data root
        (other values unchanged): the API takes back what it answered."""
        if value == DATA or value.startswith(DATA + "/"):
            for root, label in self.roots.items():
                if label == DATA:
                    return root + value[len(DATA):]
        return value


def _foreign(match: re.Match[str]) -> str:
    name = os.path.basename(match.group(1).rstrip("/"))
    return f'"{SERVER}/{name}"' if name else f'"{SERVER}"'


def server_roots(data_dir: str, others: Iterable[str | None] = (),
                 tmp_dirs: Iterable[str | None] = ()) -> list[tuple[str, str]]:
    """The roots of a server, labelled: its data area, other directories it uses
    (virtualenvs, home, its own code), its temporary directories; each also as its
    real path when that differs (a symbolic link)."""
    roots = [(data_dir, DATA)]
    roots += [(path, SERVER) for path in others if path]
    roots += [(path, TMP) for path in tmp_dirs if path]
    resolved = [(os.path.realpath(path), label) for path, label in roots]
    return roots + [r for r in resolved if r not in roots]
