"""Request bodies written to files, within ``[api] max_upload_size``.

A body with a Content-Length above the limit is refused before it is read; a
body without one (chunked, from a WSGI server that sets ``wsgi.input_terminated``)
is refused as soon as it grows past the limit.  Either way nothing is left on
disk.  Waitress buffers a whole request before the application sees it, so
:mod:`tripleo_flow.http.server` also gives waitress a limit just above this one:
it stops a far larger body before buffering it, with the same message.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import falcon

from tripleo_flow import exceptions

CHUNK = 1 << 20


class JsonBodyLimit:
    """Falcon middleware: a JSON body over ``limit`` bytes (``[api] max_json_size``; 0:
    none) gets 413 before it is read or parsed."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        kind = (req.content_type or "").split(";")[0].strip().lower()
        if (self.limit and (req.content_length or 0) > self.limit
                and kind in ("", falcon.MEDIA_JSON)):
            raise exceptions.BodyTooLarge(self.limit, "[api] max_json_size")


def _stream(req: falcon.Request, limit: int) -> Any:
    """The body to read (None when there is none); refuses a Content-Length past ``limit``."""
    length = req.content_length
    if length is not None:
        if limit and length > limit:
            raise exceptions.BodyTooLarge(limit)
        return req.bounded_stream if length else None
    if req.env.get("wsgi.input_terminated"):
        return req.stream
    return None


def save_body(req: falcon.Request, path: Path, limit: int, missing: str) -> int:
    """Write the request body to a new private file ``path`` and return its size.

    :param limit: the largest body in bytes (0: no limit)
    :param missing: the message when the request has no body
    :raises BodyTooLarge: the body is larger than ``limit`` (``path`` is not left behind)
    :raises InvalidInput: the request has no body
    """
    stream = _stream(req, limit)
    if stream is None:
        raise exceptions.InvalidInput(missing)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    size = 0
    try:
        with os.fdopen(fd, "wb") as out:
            while True:
                want = min(CHUNK, limit - size + 1) if limit else CHUNK
                chunk = stream.read(want)
                if not chunk:
                    break
                size += len(chunk)
                if limit and size > limit:
                    raise exceptions.BodyTooLarge(limit)
                out.write(chunk)
        if not size:
            raise exceptions.InvalidInput(missing)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return size
