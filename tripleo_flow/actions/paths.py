"""Path types for action inputs that name files or directories on the server.

An action declares such an input with one of these types in its ``execute``
signature (``templates: InputPath``).  They are plain strings at run time; the
type is metadata: :mod:`tripleo_flow.engine.lang.paths` finds every such input a
workflow reaches, so a workflow started over HTTP can only give them values the
server allows (:mod:`tripleo_flow.api.paths`), while the CLI and Python callers
keep passing any local path.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

INPUT_PATH, OUTPUT_PATH, WORK_DIR = "input-path", "output-path", "work-dir"
#: Not a path but checked with them: an input that, true, makes the action hand the
#: plan's secrets to its caller (an export with the passwords).
SECRETS_OUT = "secrets-out"

#: A file or directory the action reads (a template tree, a tarball, a playbook).
InputPath = Annotated[str, INPUT_PATH]
#: A file the action writes (an export).
OutputPath = Annotated[str, OUTPUT_PATH]
#: A directory the action reads and writes (a deployment's working directory).
WorkDir = Annotated[str, WORK_DIR]

#: Whether what the action writes for its caller holds the plan's secrets: over the
#: HTTP API always false (nothing secret is handed to an API user).
SecretsOut = Annotated[bool, SECRETS_OUT]

#: The kind of each path type, by its name as it appears in an action's signature.
KINDS = {"InputPath": INPUT_PATH, "OutputPath": OUTPUT_PATH, "WorkDir": WORK_DIR,
         "SecretsOut": SECRETS_OUT}


def path_kind(annotation: Any) -> str | None:
    """The path kind of an input's annotation (the type, or its text under ``from
    __future__ import annotations``: ``"InputPath | None"`` too), None if not a path."""
    if isinstance(annotation, str):
        for part in annotation.replace("Optional[", "").replace("]", "").split("|"):
            if part.strip() in KINDS:
                return KINDS[part.strip()]
        return None
    for kind in getattr(annotation, "__metadata__", ()):
        if kind in KINDS.values():
            return str(kind)
    return None


def path_inputs(execute: Any) -> dict[str, str]:
    """``{input name: path kind}`` of an action's ``execute`` method."""
    annotations = inspect.get_annotations(execute)
    found = {name: path_kind(value) for name, value in annotations.items() if name != "return"}
    return {name: kind for name, kind in found.items() if kind}
