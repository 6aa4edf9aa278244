"""Backup resources: make, list, download and delete the backups kept on the server;
restore one that was uploaded.

The same Python API as ``tripleo-flow backup create|restore``, with what HTTP adds: a
backup is always encrypted (a passphrase of at least ``[api]
backup_passphrase_min_length`` characters is required), kept on the server under an id
it draws (:class:`tripleo_flow.client.backup.BackupManager`), and only its sealed bytes are served.
A restore reads an archive sent first to ``POST /v1/uploads`` (so ``[api]
max_upload_size`` and ``upload_ttl`` bound it), with its passphrase and ``force`` as the
CLI's; the upload is deleted once restored.  Passphrases travel in JSON bodies only:
never in a URL, a header, a log line, an execution record or an answer.

Neither runs as a workflow (the CLI runs none either): a backup is refused while any
execution runs, which a backup workflow would itself be, and a restore replaces the
executions database a workflow is recorded in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import falcon

from tripleo_flow import exceptions
from tripleo_flow.http.json_bodies import body
from tripleo_flow.http.routes import BOOL, UPLOAD_ERRORS, Operation, Route, with_client
from tripleo_flow.http.uploads import Upload

if TYPE_CHECKING:
    from tripleo_flow.client import Client

#: A passphrase (a backup over HTTP is always encrypted).
PASSPHRASE = {"type": "string", "minLength": 1, "format": "password",
              "description": "Over the HTTP API a backup is always encrypted."}
#: A backup kept on the server, as listed.
BACKUP = {"type": "object", "required": ["id", "created", "size", "encrypted"],
          "properties": {"id": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
                         "created": {"type": "string", "format": "date-time"},
                         "size": {"type": "integer"}, "encrypted": BOOL}}


class Backups:
    """``GET /v1/backups`` lists; ``POST /v1/backups`` ``{"passphrase": P}`` makes one."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self.client.backups.list()

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        made = self.client.backups.store(body(req)["passphrase"])
        resp.status = falcon.HTTP_201
        resp.location = f"/v1/backups/{made['id']}"
        resp.media = made


class Backup:
    """``GET /v1/backups/{id}``: the encrypted archive; ``DELETE`` deletes it.  With
    Keystone both need a writer role (:meth:`tripleo_flow.http.auth.TokenAuth.process_resource`):
    a reader sees the list, not the archives."""

    writers_only = True

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, backup_id: str) -> None:
        stream, shown = self.client.backups.open(backup_id)
        resp.stream = stream
        resp.content_length = shown["size"]
        resp.content_type = "application/octet-stream"
        stamp = shown["created"].replace(":", "").replace("-", "")
        resp.downloadable_as = f"tripleo-flow-backup-{stamp}-{backup_id[:8]}.tfbackup"

    def on_delete(self, req: falcon.Request, resp: falcon.Response, backup_id: str) -> None:
        self.client.backups.delete(backup_id)
        resp.status = falcon.HTTP_204


class RestoreBackup:
    """``POST /v1/backups/restore`` ``{"upload": ID, "passphrase": P, "force": B}``."""

    def __init__(self, client: Client, uploads: Upload) -> None:
        self.client = client
        self.uploads = uploads

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        given = body(req)
        upload_id, passphrase = given["upload"], given["passphrase"]
        force = given.get("force", False)
        archive = self.uploads.path(upload_id)
        try:
            restored = self.client.backups.restore(archive, force=force, passphrase=passphrase)
        except exceptions.InvalidArchive as exc:
            raise exceptions.InvalidArchive(f"upload {upload_id}", exc.reason) from None
        archive.unlink(missing_ok=True)
        resp.media = restored


TAGS = ("backups",)

ROUTES = [
    Route("/v1/backups", "backups", with_client(Backups), {
        "get": Operation("Backups kept on the server (id, created, size, encrypted), newest "
                         "first", response={"type": "array", "items": BACKUP}, errors=(503,),
                         tags=TAGS),
        "post": Operation(
            "Back up everything tripleo-flow keeps (as backup create) into a new backup "
            "kept on the server, encrypted with the passphrase (required: at least [api] "
            "backup_passphrase_min_length characters); refused while a workflow runs, "
            "and once [api] max_stored_backups are kept",
            status=201, response=BACKUP, tags=TAGS,
            body={"type": "object", "required": ["passphrase"], "additionalProperties": False,
                  "properties": {"passphrase": PASSPHRASE}})}),
    Route("/v1/backups/restore", "backup_restore",
          lambda s: RestoreBackup(s.client, s.upload), {
              "post": Operation(
                  "Make the data directory what an uploaded backup archive holds (as backup "
                  "restore): send the archive to POST /v1/uploads first; force replaces the "
                  "state the data directory holds (kept aside). A wrong passphrase or a "
                  "corrupt archive is refused and changes nothing; the upload is deleted "
                  "once restored",
                  tags=TAGS, errors=UPLOAD_ERRORS,
                  body={"type": "object", "required": ["upload", "passphrase"],
                        "additionalProperties": False,
                        "properties": {"upload": {"type": "string", "description":
                                                  "The id POST /v1/uploads answered."},
                                       "passphrase": PASSPHRASE, "force": BOOL}})}),
    Route("/v1/backups/{backup_id}", "backup", with_client(Backup), {
        "get": Operation("Download a backup: its encrypted archive (an unencrypted one is "
                         "never served: 409); with Keystone, only for a writer role",
                         response={}, response_type="application/octet-stream",
                         errors=(404, 409), tags=TAGS),
        "delete": Operation("Delete a backup", status=204, response=None, errors=(404,),
                            tags=TAGS)}),
]
