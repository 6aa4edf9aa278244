"""Serve the HTTP API with waitress (a production WSGI server, pure Python).

Waitress reads a whole request, body included, before the application sees it,
so ``[api] max_upload_size`` is enforced twice: waitress gets a limit
:data:`BODY_SLACK` bytes above it and refuses a far larger body as soon as its
Content-Length is read, or as it streams in chunked, before buffering it; the
application checks the exact limit (:mod:`tripleo_flow.http.bodies`).  Waitress's
own error answers (413, 400 for a malformed request) are given the API's JSON
error shape and, for 413, the application's message.

Nobody may hold the server without a token: with ``[api] auth_strategy = token``
a request with a body and a wrong or missing ``X-Auth-Token`` (outside the public
routes) gets its 401 as soon as its headers are read, before its body is (with
``keystone``, a missing one; a present one is checked with Keystone in a thread,
the body left unread until Keystone accepted it); a
connection whose request headers have not all arrived ``[api] header_timeout``
seconds after it opened (or after the request's first byte) is closed, as is one
idle for ``[api] channel_timeout``; ``[api] connection_limit`` connections are
served at once, at most ``[api] connections_per_client`` from one client (an address;
an IPv6 /64 network: ``[api] client_ipv6_prefix``) (a further
one is answered 503 and closed as soon as it is accepted, before anything is read
from it).  Waitress reads requests in its one I/O thread, so none of these
holds a request thread.
"""

from __future__ import annotations

import concurrent.futures
import hmac
import ipaddress
import json
import logging
import queue
import sys
import threading
import time
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.http import auth, errors

if TYPE_CHECKING:
    from tripleo_flow.client import Client

LOG = logging.getLogger(__name__)

#: Bytes above ``[api] max_upload_size`` that waitress lets through to the application.
BODY_SLACK = 1 << 20


def waitress_body_limit(max_upload: int) -> int:
    """waitress's ``max_request_body_size`` for ``[api] max_upload_size`` (0: no limit)."""
    return max_upload + BODY_SLACK if max_upload else sys.maxsize


class JsonError:
    """A waitress error answer (it calls :meth:`to_response`) with a JSON body."""

    def __init__(self, code: int, reason: str, kind: str, message: str) -> None:
        self.code = code
        self.reason = reason
        self.body = message
        self.kind = kind

    def to_response(self, ident: str | None = None) -> tuple[str, list[tuple[str, str]], bytes]:
        payload = json.dumps(errors.body(self.kind, self.body)).encode("utf-8")
        return f"{self.code} {self.reason}", [("Content-Type", "application/json")], payload


class _Unauthorized(Exception):
    """A waitress error (``code``, ``reason``, ``body``) for a body sent without the token."""

    code = 401
    reason = "Unauthorized"

    def __init__(self) -> None:
        super().__init__()
        self.body = f"Send a valid token in the {auth.TOKEN_HEADER} header."


def _public(path: str, public: Collection[str]) -> bool:
    return path.rstrip("/") in public or path in public


def _token_refused(headers: dict[str, str], path: str, token: bytes | None,
                   public: Collection[str]) -> bool:
    """Whether a request to ``path`` with waitress's ``headers`` lacks ``token`` (None:
    not checked here, as with Keystone tokens)."""
    if token is None or _public(path, public):
        return False
    given = headers.get("X_AUTH_TOKEN", "").encode("latin-1")
    return not hmac.compare_digest(given, token)


def _refusal(error: exceptions.TripleoFlowError) -> bytes:
    """A whole HTTP answer for ``error``, written to a connection that is then closed."""
    payload = json.dumps(errors.body(error.kind, error.render(exceptions.API))).encode()
    status = exceptions.http_status(error)
    reason = "Service Unavailable" if status == 503 else "Error"
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\nConnection: close\r\nRetry-After: 1\r\n"
            "Server: tripleo-flow\r\n\r\n")
    return head.encode("latin-1") + payload


def _discard_received(sock: Any, most: int = 1 << 20) -> None:
    """Read and drop what ``sock`` (non-blocking) has already received, up to ``most``
    bytes, so that closing it sends the peer a FIN after its answer rather than a
    reset (which may cost the peer the answer)."""
    left = most
    try:
        while left > 0 and (chunk := sock.recv(min(left, 65536))):
            left -= len(chunk)
    except OSError:  # nothing more now (EAGAIN), or the peer left
        pass


def client_key(addr: Any, ipv6_prefix: int = 64) -> str | None:
    """Who a connection comes from, as ``[api] connections_per_client`` counts clients
    (None for a UNIX socket's): an IPv4 address (an IPv4-mapped IPv6 one as the IPv4
    it maps), the network of an IPv6 address's first ``ipv6_prefix`` bits (``[api]
    client_ipv6_prefix``: a /64 is one site's, where any address is the holder's to
    choose).  IPv4 addresses stay one each (127.0.0.2 is another client than
    127.0.0.1: tests and local proxies use them so)."""
    if not (isinstance(addr, tuple) and addr):
        return None
    host = str(addr[0])
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])  # a link-local zone
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if isinstance(address, ipaddress.IPv4Address):
        return str(address)
    return str(ipaddress.IPv6Network((address, ipv6_prefix), strict=False))


#: Keystone tokens checked at once before their requests' bodies are read (each check
#: holds one of these threads, not the I/O thread; the others wait their turn).
TOKEN_CHECKS = 4


class TokenChecks:
    """Token checks (``check``) run at most ``workers`` at once, in daemon threads: a
    Keystone that never answers holds its check, never the process's exit (the threads
    of a ``ThreadPoolExecutor`` are joined when the interpreter exits)."""

    def __init__(self, check: Callable[[str], bool | None], workers: int = TOKEN_CHECKS) -> None:
        self._check = check
        self._workers = workers
        self._started = 0
        self._jobs: queue.SimpleQueue[tuple[str, concurrent.futures.Future[bool | None]]] = \
            queue.SimpleQueue()
        self._lock = threading.Lock()

    def submit(self, token: str) -> concurrent.futures.Future[bool | None]:
        future: concurrent.futures.Future[bool | None] = concurrent.futures.Future()
        self._jobs.put((token, future))
        with self._lock:
            if self._started < self._workers:
                self._started += 1
                threading.Thread(target=self._work, name=f"token-check-{self._started}",
                                 daemon=True).start()
        return future

    def _work(self) -> None:
        while True:
            token, future = self._jobs.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(self._check(token))
            except BaseException as exc:  # noqa: BLE001 - the channel reads it
                future.set_exception(exc)


def _channel_class(max_upload: int, header_timeout: float, token: bytes | None,
                   public: Collection[str], per_client: int = 0,
                   ipv6_prefix: int = 64,
                   check_token: Callable[[str], bool | None] | None = None) -> type:
    """waitress's channel whose error answers are :class:`JsonError`, that refuses a
    body without the token before reading it, closes a connection whose request
    headers take over ``header_timeout`` seconds to arrive, and answers a connection
    from a client (:func:`client_key`: an address, an IPv6 network of ``ipv6_prefix``
    bits) that already holds ``per_client`` others (0: no limit) with 503 as soon as
    it is accepted, reading nothing from it.

    With ``check_token`` (Keystone's: true for a valid token, false for one it refuses,
    None when it cannot tell), a body without a token is refused as soon as the headers
    are read, and the body of a request with one is not read further until
    ``check_token`` (run in a thread, the I/O thread goes on) accepted it: refused, the
    request gets its 401 and the connection closes.  A client that asks ``Expect:
    100-continue`` is invited to send its body only once its token is accepted (never
    for a refused one), so it need not send a body that is refused."""
    from waitress.channel import HTTPChannel
    from waitress.parser import HTTPRequestParser
    from waitress.task import ErrorTask

    class JsonErrorTask(ErrorTask):  # type: ignore[misc]
        def execute(self) -> None:
            error = self.request.error
            code, reason = int(error.code), str(error.reason)
            if code == 413:
                message = str(exceptions.BodyTooLarge(max_upload))
            elif code == 401:
                message = str(error.body)
            else:
                message = f"{reason}: {error.body}"
            self.request.error = JsonError(code, reason, errors.kind_of(code), message)
            super().execute()

    checks = TokenChecks(check_token) if check_token is not None else None

    class TokenFirstParser(HTTPRequestParser):  # type: ignore[misc]
        #: a Keystone token the body waits for (checked by the channel)
        token_to_check: str | None = None
        #: ``Expect: 100-continue`` answered only once the token is accepted
        continue_held = False

        def parse_header(self, header_plus: bytes) -> None:
            super().parse_header(header_plus)
            if self.body_rcv is None:
                return
            if _token_refused(self.headers, self.path, token, public):
                self._refuse()
            elif check_token is not None and not _public(self.path, public):
                given = self.headers.get("X_AUTH_TOKEN", "")
                if not given:
                    self._refuse()
                else:
                    self.token_to_check = given
                    # waitress would invite the body at once: not before the check
                    asked: bool = bool(getattr(self, "expect_continue", False))
                    self.continue_held = asked
                    self.expect_continue = False

        def _refuse(self) -> None:
            self.error = _Unauthorized()
            self.expect_continue = False  # never invite a body that is refused
            self.completed = True  # the body is never read: the connection closes

    class JsonErrorChannel(HTTPChannel):  # type: ignore[misc]
        error_task_class = JsonErrorTask
        parser_class = TokenFirstParser

        #: answered :class:`~tripleo_flow.exceptions.TooManyConnections`, closing
        refused = False
        request: Any  # waitress's: the request being read (None: none)
        #: the check of the token of the request being read (its body waits for it)
        token_check: concurrent.futures.Future[bool | None] | None = None

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            #: when the request being read must have its headers (None: not reading one)
            self.headers_due: float | None = self.creation_time + header_timeout
            self.client_host = client_key(self.addr, ipv6_prefix)
            if per_client and self.client_host is not None and self._held() > per_client:
                self._refuse(exceptions.TooManyConnections(per_client))

        def _held(self) -> int:
            """Connections open from this one's client, itself included (waitress
            accepts and closes connections in its one I/O thread, this one)."""
            return sum(1 for other in list(self.server.active_channels.values())
                       if getattr(other, "client_host", None) == self.client_host
                       and not getattr(other, "refused", False))

        def _refuse(self, error: exceptions.TripleoFlowError) -> None:
            """Answer ``error`` and close once it is sent; nothing is read."""
            LOG.info("Refused a connection from %s: %s", self.client_host, error)
            self.refused = True
            answer = _refusal(error)
            with self.outbuf_lock:
                self.outbufs[-1].append(answer)
                self.current_outbuf_count += len(answer)
                self.total_outbufs_len += len(answer)
            self.close_when_flushed = True

        def handle_close(self) -> None:
            if self.refused:
                _discard_received(self.socket)
            super().handle_close()

        def received(self, data: bytes) -> bool:
            result: bool = super().received(data)
            partial: Any = self.request
            if partial is None or partial.headers_finished:
                self.headers_due = None
            elif self.headers_due is None:
                self.headers_due = time.time() + header_timeout
            given = getattr(partial, "token_to_check", None)
            if given and checks is not None:
                partial.token_to_check = None  # a body still to come: wait for its check
                self.token_check = checks.submit(given)
                self.token_check.add_done_callback(lambda _: self.server.pull_trigger())
            return result

        def _token_checked(self) -> bool:
            """Whether the body being read may be read on (its token's check done)."""
            check = self.token_check
            if check is None:
                return True
            if not check.done():
                return False
            self.token_check = None
            with self.requests_lock:
                request: Any = self.request
                if check.exception() is None and check.result() is False:
                    self.request = None
                    if request is not None:
                        request.error = _Unauthorized()
                        request.completed = True
                        self.requests.append(request)
                        if len(self.requests) == 1:
                            self.server.add_task(self)
                elif request is not None and request.continue_held:
                    # accepted (or Keystone could not tell: auth_token decides): the
                    # client may send its body now, after any answers still owed
                    request.continue_held, request.expect_continue = False, True
                    if not self.requests and not self.sent_continue:
                        self.send_continue()
            return True

        def readable(self) -> bool:
            if not self._token_checked():
                return False
            # waitress asks before each poll of its I/O loop (at least every second)
            if (header_timeout and self.headers_due is not None and not self.requests
                    and time.time() > self.headers_due):
                self.will_close = True
            return bool(super().readable())

    return JsonErrorChannel


def make_server(client: Client, host: str | None = None, port: int | None = None,
                threads: int | None = None) -> Any:
    """A waitress server bound to ``host:port`` (``[api]`` values by default), not yet
    serving: call ``.run()``, ``.close()`` to stop.  Port 0 picks a free port
    (``.effective_port``)."""
    import waitress.server

    from tripleo_flow.http.app import make_app, public_paths

    conf = client.conf
    bind_host = host or conf.api.host
    for warning in auth.check_exposure(conf, bind_host):
        LOG.warning("%s", warning)
    threads = threads or conf.api.threads
    app = make_app(client, threads=threads)
    # Warm the workflow engine so concurrent first requests share one runner (one
    # execution read: never every one).
    client.workbooks.list()  # the checked catalog (listing workflows reads files alone)
    client.executions.page(limit=1)
    bind_port = conf.api.port if port is None else port
    if not 0 <= bind_port <= 65535:  # the socket layer would take it modulo 65536
        raise exceptions.InvalidInput(
            f"Port {bind_port} is not a port: give one from 1 to 65535 (0: any free port) "
            "with --port or [api] port.")
    max_upload = conf.api.max_upload_size
    sockets: dict[Any, Any] = {}
    try:
        server = waitress.server.create_server(
            app, map=sockets, host=bind_host, port=bind_port,
            threads=threads, ident="tripleo-flow",
            clear_untrusted_proxy_headers=True,
            max_request_body_size=waitress_body_limit(max_upload),
            connection_limit=conf.api.connection_limit,
            channel_timeout=conf.api.channel_timeout,
            # how often idle connections are looked for (whole seconds)
            cleanup_interval=max(1, min(30, conf.api.channel_timeout // 2)))
    except OSError as exc:
        raise exceptions.Conflict(
            f"Cannot listen on {bind_host}:{bind_port}: {exc.strerror}. Stop what uses it, "
            "or choose another with --port or [api] port.") from exc
    except ValueError as exc:  # waitress: "Invalid host/port specified."
        raise exceptions.InvalidInput(
            f"Cannot listen on {bind_host!r} port {bind_port}: not an address of this "
            "machine or a host name it resolves, or not a port from 0 to 65535. Give "
            "them with --host (for example 127.0.0.1) and --port, or [api] host and "
            "[api] port.") from exc
    token = conf.api.auth_token.encode() if conf.api.auth_strategy == "token" else None
    channel = _channel_class(max_upload, conf.api.header_timeout, token, public_paths(),
                             conf.api.connections_per_client, conf.api.client_ipv6_prefix,
                             getattr(app, "check_token", None))
    for listener in {id(s): s for s in [server, *sockets.values()]}.values():
        if hasattr(listener, "channel_class"):
            listener.channel_class = channel
    return server


def serve(client: Client, host: str | None = None, port: int | None = None) -> None:
    """Serve until interrupted."""
    server = make_server(client, host, port)
    LOG.info("tripleo-flow API on http://%s:%s/v1/", server.effective_host,
             server.effective_port)
    try:
        server.run()
    finally:
        server.close()
