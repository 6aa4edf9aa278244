"""``POST /v1/uploads``: keep a .tar.gz on the server so a workflow can be started
with its path as an input (``create_deployment_plan`` takes ``templates``).

Uploads are ``<data_dir>/uploads/<id>.tar.gz``.  A body is written to a hidden
``.<id>.partial`` file first and renamed once whole, so a refused or broken upload
leaves nothing that could be used.  Uploads older than ``[api] upload_ttl`` seconds
(by modification time) are deleted when the application is built and whenever a
new upload arrives: one scan of that directory.
"""

from __future__ import annotations

import logging
import os
import re
import time
import uuid
from pathlib import Path
from typing import Any

import falcon

from tripleo_flow import exceptions
from tripleo_flow.http.bodies import save_body
from tripleo_flow.http.routes import GZIP, UPLOAD_ERRORS, Operation, Route

LOG = logging.getLogger(__name__)

#: What an upload (or one being written) is called; nothing else there is touched.
UPLOAD_NAME = re.compile(r"^(\.[0-9a-f]{32}\.partial|[0-9a-f]{32}\.tar\.gz)$")


def purge_expired(directory: Path, ttl: int, now: float | None = None) -> list[str]:
    """Delete the uploads of ``directory`` last modified more than ``ttl`` seconds
    before ``now`` (0: delete none); the names deleted."""
    if not ttl:
        return []
    cutoff = (time.time() if now is None else now) - ttl
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return []
    removed = []
    for entry in entries:
        if not UPLOAD_NAME.match(entry.name):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(entry.path)
                removed.append(entry.name)
        except FileNotFoundError:  # deleted by a concurrent request
            continue
    if removed:
        LOG.info("Deleted %d upload(s) older than %d s from %s", len(removed), ttl, directory)
    return sorted(removed)


class Uploads:
    """``POST /v1/uploads``: a body of at most ``max_upload`` bytes (0: any size)."""

    def __init__(self, directory: Path, max_upload: int, ttl: int) -> None:
        self.directory = directory
        self.max_upload = max_upload
        self.ttl = ttl

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        purge_expired(self.directory, self.ttl)
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        upload_id = uuid.uuid4().hex
        partial = self.directory / f".{upload_id}.partial"
        size = save_body(req, partial, self.max_upload,
                         "Send the archive as the request body (Content-Type: application/gzip).")
        path = self.directory / f"{upload_id}.tar.gz"
        os.replace(partial, path)
        resp.status = falcon.HTTP_201
        resp.media = {"id": upload_id, "path": str(path), "size": size}


class Upload:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path(self, upload_id: str) -> Path:
        """The file of upload ``upload_id``.

        :raises NotFound: there is none (or the id is not one)
        """
        path = self.directory / f"{upload_id}.tar.gz"
        if not upload_id.isalnum() or not path.is_file():
            raise exceptions.NotFound(
                f"Upload {upload_id!r} does not exist (uploads are deleted after [api] "
                "upload_ttl seconds). Send the archive again with POST /v1/uploads.")
        return path

    def on_delete(self, req: falcon.Request, resp: falcon.Response, upload_id: str) -> None:
        self.path(upload_id).unlink()
        resp.status = falcon.HTTP_204

    def on_get(self, req: falcon.Request, resp: falcon.Response, upload_id: str) -> Any:
        path = self.path(upload_id)
        resp.media = {"id": upload_id, "path": str(path), "size": path.stat().st_size}


ROUTES = [
    Route("/v1/uploads", "uploads", lambda s: Uploads(
        s.upload_dir, s.client.conf.api.max_upload_size, s.client.conf.api.upload_ttl), {
        "post": Operation("Keep a .tar.gz on the server (its path can be a workflow input), "
                          "or a backup archive to restore",
                          status=201, body={}, body_type=GZIP, tags=("workflows",),
                          errors=UPLOAD_ERRORS)}),
    Route("/v1/uploads/{upload_id}", "upload", lambda s: s.upload, {
        "get": Operation("Show an upload", tags=("workflows",)),
        "delete": Operation("Delete an upload", status=204, response=None,
                            tags=("workflows",))}),
]
