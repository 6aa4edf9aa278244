"""An in-process cache for a one-process Swift proxy (test servers only).

The Swift proxy looks up account and container info on every object request
unless ``env['swift.cache']`` holds a memcache client.  A test proxy runs as
one process (``workers = 0``), so a dictionary in that process serves the same
purpose as memcached without a separate service.

This module is loaded by the proxy's own Python (the Swift venv) through
``paste.filter_factory = swift_proxy_cache:filter_factory``; it must import
nothing from tripleo-flow.  Values are JSON round-tripped like memcached does,
so callers never share mutable objects with the cache.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

_MAX_RELATIVE_TTL = 30 * 24 * 3600  # memcached: larger values are absolute times


class DictCache:
    """The subset of ``swift.common.memcached.MemcacheRing`` the proxy uses."""

    def __init__(self) -> None:
        self._data: dict[str, tuple[float, str]] = {}
        self._lock = threading.Lock()
        self.memcache_servers: list[str] = []

    @staticmethod
    def _expiry(ttl: float) -> float:
        if not ttl:
            return float("inf")
        if ttl > _MAX_RELATIVE_TTL:
            return float(ttl)
        return time.time() + float(ttl)

    def _load(self, key: str) -> Any:
        entry = self._data.get(key)
        if entry is None:
            return None
        expires, raw = entry
        if expires < time.time():
            del self._data[key]
            return None
        return json.loads(raw)

    def get(self, key: str, raise_on_error: bool = False) -> Any:
        with self._lock:
            return self._load(key)

    def set(self, key: str, value: Any, serialize: bool = True, time: float = 0,
            min_compress_len: int = 0, raise_on_error: bool = False) -> None:
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        with self._lock:
            self._data[key] = (self._expiry(time), json.dumps(value))

    def incr(self, key: str, delta: int = 1, time: float = 0) -> int:
        with self._lock:
            current = self._load(key)
            new = max(int(current or 0) + int(delta), 0)
            self._data[key] = (self._expiry(time), json.dumps(new))
            return new

    def decr(self, key: str, delta: int = 1, time: float = 0) -> int:
        return self.incr(key, -delta, time)

    def delete(self, key: str, server_key: str | None = None) -> None:
        with self._lock:
            self._data.pop(key, None)

    def set_multi(self, mapping: Mapping[str, Any], server_key: str, serialize: bool = True,
                  time: float = 0, min_compress_len: int = 0) -> None:
        for key, value in mapping.items():
            self.set(key, value, time=time)

    def get_multi(self, keys: Iterable[str], server_key: str) -> list[Any]:
        return [self.get(key) for key in keys]


class _CacheMiddleware:
    def __init__(self, app: Callable[..., Any], cache: DictCache) -> None:
        self.app = app
        self.cache = cache

    def __call__(self, env: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        env["swift.cache"] = self.cache
        return self.app(env, start_response)


def filter_factory(global_conf: Mapping[str, str], **local_conf: str) -> Callable[..., Any]:
    """Paste filter factory: one shared :class:`DictCache` per proxy process."""
    cache = DictCache()

    def cache_filter(app: Callable[..., Any]) -> _CacheMiddleware:
        return _CacheMiddleware(app, cache)

    return cache_filter
