"""``POST /v1/uploads``: keep a .tar.gz on the server so a workflow can be started
with its path as an input (``create_deployment_plan`` takes ``templates``)."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import falcon

from tripleo_flow import exceptions
from tripleo_flow.http.plans import CHUNK


class Uploads:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        if not req.content_length:
            raise exceptions.InvalidInput("Send the archive as the request body "
                                          "(Content-Type: application/gzip).")
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        upload_id = uuid.uuid4().hex
        path = self.directory / f"{upload_id}.tar.gz"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(req.bounded_stream, out, CHUNK)
        resp.status = falcon.HTTP_201
        resp.media = {"id": upload_id, "path": str(path), "size": path.stat().st_size}


class Upload:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, upload_id: str) -> Path:
        path = self.directory / f"{upload_id}.tar.gz"
        if not upload_id.isalnum() or not path.is_file():
            raise exceptions.NotFound(f"Upload {upload_id!r} does not exist.")
        return path

    def on_delete(self, req: falcon.Request, resp: falcon.Response, upload_id: str) -> None:
        self._path(upload_id).unlink()
        resp.status = falcon.HTTP_204

    def on_get(self, req: falcon.Request, resp: falcon.Response, upload_id: str) -> Any:
        path = self._path(upload_id)
        resp.media = {"id": upload_id, "path": str(path), "size": path.stat().st_size}
