"""``GET /v1/downloads/{id}``: a file a workflow started over the API wrote.

An output-path input of a workflow started over HTTP (``export_deployment_plan``'s
``output``) is a plain file name the server places in a new directory
``<data_dir>/downloads/<id>/`` (:mod:`tripleo_flow.client.paths`); this route serves
the one file there once the workflow has written it.  Directories older than
``[api] upload_ttl`` are deleted when the application is built and whenever a new
one is made.
"""

from __future__ import annotations

import os
from pathlib import Path

import falcon

from tripleo_flow import exceptions
from tripleo_flow.client.paths import DOWNLOAD_ID
from tripleo_flow.http.routes import Operation, Route

CHUNK = 1 << 20


class Download:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _file(self, download_id: str) -> os.DirEntry[str]:
        entries: list[os.DirEntry[str]] = []
        if DOWNLOAD_ID.match(download_id):
            try:
                entries = [e for e in os.scandir(self.directory / download_id)
                           if not e.name.startswith(".") and e.is_file(follow_symlinks=False)]
            except (FileNotFoundError, NotADirectoryError):
                entries = []
        if len(entries) != 1:
            raise exceptions.NotFound(
                f"Download {download_id[:64]!r} does not exist (yet): it appears when the "
                "workflow that writes it succeeds, and is deleted after [api] upload_ttl "
                "seconds. Check the execution with GET /v1/executions/{id}.")
        return entries[0]

    def on_get(self, req: falcon.Request, resp: falcon.Response, download_id: str) -> None:
        entry = self._file(download_id)
        handle = open(entry.path, "rb")  # noqa: SIM115 (falcon closes the stream)
        resp.content_length = os.fstat(handle.fileno()).st_size
        resp.stream = handle
        resp.content_type = ("application/gzip" if entry.name.endswith((".tar.gz", ".tgz"))
                             else "application/octet-stream")
        resp.downloadable_as = entry.name


ROUTES = [
    Route("/v1/downloads/{download_id}", "download", lambda s: Download(s.paths.downloads), {
        "get": Operation("A file written by a workflow started here (an output-path input)",
                         response={}, response_type="application/octet-stream",
                         errors=(404,), tags=("workflows",))}),
]
