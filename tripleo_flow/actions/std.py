"""Mistral's plain standard actions, so workbooks written for Mistral run unchanged.

``std.noop``, ``std.async_noop``, ``std.echo``, ``std.test_dict``, ``std.fail``, ``std.sleep`` and
``std.http``; the ones that reach other machines by other protocols are in
:mod:`tripleo_flow.actions.std_remote`.  None of them changes anything that a
revert could undo, so their reverts do nothing.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, Rerun
from tripleo_flow.common import clock
from tripleo_flow.exceptions import ActionFailed


class Noop(Action):
    """Do nothing and return None."""

    rerun = Rerun.READS

    def execute(self) -> None:
        return None


class AsyncNoop(Action):
    """Do nothing, asynchronously: the task waits until a client completes the action
    (``execution complete``), whose output is then its result."""

    rerun = Rerun.READS
    asynchronous = True

    def execute(self) -> None:
        return None


class Echo(Action):
    """Return the given output unchanged (after ``delay`` seconds)."""

    rerun = Rerun.READS

    def execute(self, output: Any = None, delay: float = 0) -> Any:
        clock.sleep(_seconds("std.echo", "delay", delay))
        return output


class TestDict(Action):
    """Return a mapping of ``size`` keys ``KEY_PREFIX0``... to ``val`` (for tests of big
    results, as Mistral's)."""

    rerun = Rerun.READS
    __test__ = False  # not a pytest test class

    def execute(self, size: int = 0, key_prefix: str = "", val: Any = "") -> dict[str, Any]:
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise exceptions.InvalidInput(
                f"std.test_dict 'size' must be a whole number >= 0 (got {size!r}).")
        return {f"{key_prefix}{index}": val for index in range(size)}


class Fail(Action):
    """Always fail (to test error handling or end a workflow as failed)."""

    rerun = Rerun.READS

    def execute(self, error_data: Any = None) -> None:
        detail = f": {error_data}" if error_data is not None else ""
        raise ActionFailed(f"std.fail was called{detail}", data=error_data)


class Sleep(Action):
    """Sleep for the given number of seconds."""

    rerun = Rerun.READS

    def execute(self, seconds: float = 1) -> None:
        clock.sleep(max(0.0, float(seconds)))


def _seconds(action: str, name: str, value: Any) -> float:
    """``value`` as seconds >= 0; InvalidInput naming the action's input otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise exceptions.InvalidInput(
            f"{action} '{name}' must be a number of seconds >= 0 (got {value!r}).")
    return float(value)


#: The only URL schemes ``std.http`` sends to (urllib also reads file://, ftp://, data:).
HTTP_SCHEMES = ("http", "https")


def check_http_url(url: Any) -> str:
    """``url`` when it is an http(s) URL with a host; InvalidInput otherwise."""
    parts = urllib.parse.urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme.lower() not in HTTP_SCHEMES or not parts.hostname:
        raise exceptions.InvalidInput(
            f"std.http only sends http:// and https:// requests (got {str(url)[:200]!r}); "
            "give the task an http(s) URL with a host.")
    return str(url)


class _HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects only to http(s) URLs (urllib's own also follows ftp://)."""

    def http_error_302(self, req: Any, fp: Any, code: int, msg: str, headers: Any) -> Any:
        location = headers.get("location") or headers.get("uri")
        if location:
            check_http_url(urllib.parse.urljoin(req.full_url, location))
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


def _opener() -> urllib.request.OpenerDirector:
    """An opener with only the http(s) handlers: no file, ftp or data URLs."""
    opener = urllib.request.OpenerDirector()
    for handler in (urllib.request.ProxyHandler(), urllib.request.HTTPHandler(),
                    urllib.request.HTTPSHandler(), urllib.request.HTTPDefaultErrorHandler(),
                    _HttpOnlyRedirects(), urllib.request.HTTPErrorProcessor()):
        opener.add_handler(handler)
    return opener


class Http(Action):
    """Send an HTTP request and return its status, headers and content."""

    rerun = Rerun.CALLER

    def execute(self, url: str, method: str = "GET", params: dict[str, Any] | None = None,
                body: Any = None, json: Any = None, headers: dict[str, str] | None = None,
                timeout: float | None = None) -> dict[str, Any]:
        check_http_url(url)
        if params:
            sep = "&" if urllib.parse.urlsplit(url).query else "?"
            url = f"{url}{sep}{urllib.parse.urlencode(params, doseq=True)}"
        send_headers = dict(headers or {})
        data: bytes | None = None
        if json is not None:
            data = _json_bytes(json)
            send_headers.setdefault("Content-Type", "application/json")
        elif body is not None:
            data = body.encode() if isinstance(body, str) else (
                body if isinstance(body, bytes) else _json_bytes(body))
        request = urllib.request.Request(url, data=data, headers=send_headers,
                                         method=method.upper())
        try:
            with _opener().open(request, timeout=timeout) as response:
                return _result(response.status, response.reason, dict(response.headers),
                               response.read(), response.url)
        except urllib.error.HTTPError as exc:
            result = _result(exc.code, str(exc.reason), dict(exc.headers or {}),
                             exc.read(), url)
            raise ActionFailed(
                f"std.http {method.upper()} {url} returned {exc.code} {exc.reason}: "
                f"{str(result['content'])[:200]}") from exc
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise ActionFailed(f"std.http {method.upper()} {url} failed: {exc}") from exc


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value).encode()


def _result(status: int, reason: str, headers: dict[str, str], raw: bytes,
            url: str) -> dict[str, Any]:
    text = raw.decode("utf-8", errors="replace")
    content: Any
    try:
        content = json.loads(text) if text else text
    except ValueError:
        content = text
    return {"status": status, "reason": reason, "headers": headers, "content": content,
            "url": url}
