"""Errors as JSON: ``{"error": {"kind", "message"[, "hints"][, "reason", "details"]}}``
with the status of their kind (``reason``: what a client such as the GUI may word in
its own terms, with ``details``).

A :class:`~tripleo_flow.exceptions.TripleoFlowError` answers its message with its
next steps (:class:`~tripleo_flow.exceptions.Hint`) worded as HTTP API requests,
and lists them in ``hints`` (each its ``request`` and the ``command`` that does the
same on the server, None when only this API does it: an upload); its status comes
from :func:`tripleo_flow.exceptions.http_status`;
falcon's own errors (unknown route, bad query value, 401) and waitress's (a body
past its limit, a malformed request: :mod:`tripleo_flow.http.server`) get the same
shape.
"""

from __future__ import annotations

import errno
import logging
from typing import Any

import falcon

from tripleo_flow import exceptions

LOG = logging.getLogger(__name__)

_KINDS = {400: "invalid-input", 401: "unauthorized", 403: "forbidden", 404: "not-found",
          405: "method-not-allowed", 409: "conflict", 413: "too-large", 415: "invalid-input",
          431: "invalid-input"}


def kind_of(status: int) -> str:
    """The error kind of an HTTP status that no TripleoFlowError produced."""
    return _KINDS.get(status, "error")


def body(kind: str, message: str, hints: tuple[exceptions.Hint, ...] = (),
         reason: str | None = None, details: dict[str, Any] | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"kind": kind, "message": message}
    if hints:
        error["hints"] = [h.as_json() for h in hints]
    if reason:  # a client words the error itself from these
        error["reason"] = reason
        error["details"] = details or {}
    return {"error": error}


def handle_tripleo_error(req: falcon.Request, resp: falcon.Response,
                         error: exceptions.TripleoFlowError, params: Any) -> None:
    status = exceptions.http_status(error)
    if status >= 500:
        LOG.warning("%s %s failed: %s", req.method, req.path, error)
    resp.status = falcon.code_to_http_status(status)
    # The next steps in the API's words (its requests), and as data.
    resp.media = body(error.kind, error.render(exceptions.API), error.hints, error.reason_code,
                      error.details())


#: errno values of an OSError that a request's own value causes (a name too long for
#: the file system, a byte it refuses), answered 400; any other OSError is the server's
#: (503).  Neither answer names a server path.
_INPUT_ERRNOS = {errno.ENAMETOOLONG: "a name in the request is too long for the server's "
                                     "file system (255 bytes at most)",
                 errno.EINVAL: "a name in the request is not valid on the server's file system",
                 errno.EILSEQ: "a name in the request is not valid on the server's file system",
                 errno.ELOOP: "a name in the request leads to a symbolic link loop",
                 errno.EISDIR: "a name in the request is a directory on the server",
                 errno.ENOTDIR: "a name in the request goes through a file as a directory"}


def translate(error: Exception) -> exceptions.TripleoFlowError | None:
    """The API error an unexpected ``error`` stands for (None: a bug, answered 500).

    An OSError a request's value provokes (a name too long for the file system) is the
    request's fault; other OSErrors mean the server cannot work.  A bare ValueError is
    not translated: the code that reads a request's value says what is wrong with it
    (an :class:`~tripleo_flow.exceptions.InvalidInput`), so a ValueError reaching here
    is a bug, answered 500 rather than blamed on the client (issue 28, item 7).
    """
    if isinstance(error, OSError):
        reason = _INPUT_ERRNOS.get(error.errno or 0)
        if reason is not None:
            return exceptions.InvalidInput(f"Refused: {reason}. Use a shorter, plainer name.")
        return exceptions.BackendUnavailable(
            f"The server could not read or write its files ({error.strerror or 'I/O error'}); "
            "try again later or tell its administrator.")
    if isinstance(error, RecursionError):
        return exceptions.InvalidInput(
            "Refused: a value in the request is nested too deeply; flatten it.")
    return None


def handle_unexpected(req: falcon.Request, resp: falcon.Response, error: Exception,
                      params: Any) -> None:
    if isinstance(error, falcon.HTTPError):
        raise error
    translated = translate(error)
    if translated is not None:
        LOG.info("%s %s refused: %s: %s", req.method, req.path, type(error).__name__, error)
        handle_tripleo_error(req, resp, translated, params)
        return
    LOG.exception("%s %s crashed", req.method, req.path)
    resp.status = falcon.HTTP_500
    resp.media = body("error", f"Internal error ({type(error).__name__}); "
                               "the server log has the traceback.")


def serialize_http_error(req: falcon.Request, resp: falcon.Response,
                         error: falcon.HTTPError) -> None:
    code = error.status_code
    message = error.description or error.title or f"HTTP {code}"
    resp.content_type = falcon.MEDIA_JSON
    resp.media = body(kind_of(code), message)


def install(app: falcon.App) -> None:
    """Register the handlers on ``app`` (the most specific wins in falcon)."""
    app.add_error_handler(Exception, handle_unexpected)
    app.add_error_handler(exceptions.TripleoFlowError, handle_tripleo_error)
    app.set_error_serializer(serialize_http_error)
