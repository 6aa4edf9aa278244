"""Backup resources: make, list, download and delete the backups kept on the server;
restore one that was uploaded.

The same Python API as ``tripleo-flow backup create|restore``, with what HTTP adds: a
backup is always encrypted (a passphrase of at least ``[api]
backup_passphrase_min_length`` characters is required), kept on the server under an id
it draws (:mod:`tripleo_flow.api.stored_backups`), and only its sealed bytes are served.
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
from tripleo_flow.http.plans import field, json_object
from tripleo_flow.http.uploads import Upload

if TYPE_CHECKING:
    from tripleo_flow.api import Client

#: What ``POST /v1/backups/restore`` takes.
RESTORE_KEYS = ("upload", "passphrase", "force")


def _passphrase(body: dict[str, object]) -> str:
    value = body.get("passphrase")
    if not isinstance(value, str) or not value:
        raise exceptions.InvalidInput(
            "The request body needs 'passphrase' (a non-empty string): over the HTTP API a "
            "backup is always encrypted.")
    return value


class Backups:
    """``GET /v1/backups`` lists; ``POST /v1/backups`` ``{"passphrase": P}`` makes one."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self.client.list_backups()

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        unknown = sorted(set(body) - {"passphrase"})
        if unknown:
            raise exceptions.InvalidInput(f"Unknown keys {unknown[:10]}: give 'passphrase'.")
        made = self.client.store_backup(_passphrase(body))
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
        stream, shown = self.client.open_backup(backup_id)
        resp.stream = stream
        resp.content_length = shown["size"]
        resp.content_type = "application/octet-stream"
        stamp = shown["created"].replace(":", "").replace("-", "")
        resp.downloadable_as = f"tripleo-flow-backup-{stamp}-{backup_id[:8]}.tfbackup"

    def on_delete(self, req: falcon.Request, resp: falcon.Response, backup_id: str) -> None:
        self.client.delete_backup(backup_id)
        resp.status = falcon.HTTP_204


class RestoreBackup:
    """``POST /v1/backups/restore`` ``{"upload": ID, "passphrase": P, "force": B}``."""

    def __init__(self, client: Client, uploads: Upload) -> None:
        self.client = client
        self.uploads = uploads

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        unknown = sorted(set(body) - set(RESTORE_KEYS))
        if unknown:
            raise exceptions.InvalidInput(
                f"Unknown keys {unknown[:10]}: give {list(RESTORE_KEYS)}.")
        upload_id = field(body, "upload", str, what=" (the id POST /v1/uploads answered)")
        passphrase = _passphrase(body)
        force = field(body, "force", bool, False)
        archive = self.uploads.path(upload_id)
        try:
            restored = self.client.restore_backup(archive, force=force, passphrase=passphrase)
        except exceptions.InvalidArchive as exc:
            raise exceptions.InvalidArchive(f"upload {upload_id}", exc.reason) from None
        archive.unlink(missing_ok=True)
        resp.media = restored
