"""The accountant's one cache: a bounded, thread-safe LRU of single-epoch laws and tables.

Everything stored here is a pure function of its key (the law of (sigma, M) built the same way
every time), so a hit returns exactly what a miss would have built: answers never depend on
what was computed before, nor in which thread.  Two threads that miss on the same key at once
may both build it; both results are identical and one is kept.

Memory cap: entries are weighed by the bytes of the numpy arrays they hold; least recently used
entries are evicted once the total exceeds :data:`DEFAULT_LIMIT_BYTES` (256 MiB, settable with
:func:`set_cache_limit`).  :func:`clear_cache` empties it (benchmarks time cold queries so).
"""
from __future__ import annotations

import functools
import sys
import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable, ParamSpec, TypeVar, cast

import numpy as np

from dpbounds import _validation as V

__all__ = ["clear_cache", "cache_info", "set_cache_limit", "cached", "memoize", "DEFAULT_LIMIT_BYTES"]

DEFAULT_LIMIT_BYTES = 256 * 2 ** 20

T = TypeVar("T")
P = ParamSpec("P")


def _weigh(value: Any, depth: int = 0) -> int:
    """Approximate bytes held by ``value`` (numpy arrays counted exactly, containers walked)."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if depth > 3:
        return 64
    if isinstance(value, (tuple, list)):
        return 64 + sum(_weigh(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return 64 + sum(_weigh(v, depth + 1) for v in value.values())
    d = getattr(value, "__dict__", None)
    if d is not None:
        return 64 + sum(_weigh(v, depth + 1) for v in d.values())
    return int(sys.getsizeof(value))


class _LRU:
    def __init__(self, limit: int) -> None:
        self._lock = threading.Lock()
        self._data: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self.limit = limit
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable) -> tuple[bool, Any]:
        with self._lock:
            item = self._data.get(key)
            if item is None:
                self.misses += 1
                return False, None
            self._data.move_to_end(key)
            self.hits += 1
            return True, item[0]

    def put(self, key: Hashable, value: Any) -> Any:
        size = _weigh(value)
        with self._lock:
            old = self._data.get(key)
            if old is not None:  # another thread built it first: keep that one (identical)
                self._data.move_to_end(key)
                return old[0]
            self._data[key] = (value, size)
            self._bytes += size
            while self._bytes > self.limit and len(self._data) > 1:
                _, (_, sz) = self._data.popitem(last=False)
                self._bytes -= sz
            return value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._bytes = 0
            self.hits = self.misses = 0

    def info(self) -> dict[str, int]:
        with self._lock:
            return {"entries": len(self._data), "bytes": self._bytes, "limit": self.limit,
                    "hits": self.hits, "misses": self.misses}


_STORE = _LRU(DEFAULT_LIMIT_BYTES)


def lookup(key: Hashable) -> tuple[bool, Any]:
    """``(True, value)`` if ``key`` is cached, else ``(False, None)``; builds nothing."""
    return _STORE.get(key)


def cached(key: Hashable, build: Callable[[], T]) -> T:
    """The cached value of ``key``, built by ``build()`` on a miss."""
    found, value = _STORE.get(key)
    if found:
        return value  # type: ignore[no-any-return]
    return _STORE.put(key, build())  # type: ignore[no-any-return]


def memoize(kind: str, maxsize: int = 0) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """Decorator: cache a pure function of hashable positional arguments in the one store
    (``maxsize`` unused: the store is bounded by bytes, not entries).  The decorated function
    keeps its signature (for type checkers and ``inspect``)."""
    def deco(fn: Callable[P, T]) -> Callable[P, T]:
        plain: Callable[..., T] = fn

        @functools.wraps(fn)
        def wrapper(*args: Any) -> T:
            return cached((kind,) + tuple(args), lambda: plain(*args))
        return cast(Callable[P, T], wrapper)
    return deco


def clear_cache() -> None:
    """Forget every cached single-epoch law and tail table of the exact accountants.

    Answers do not change (every cached value is a pure function of its key); only the time of
    the next query does.  Benchmarks call this to time cold queries.
    """
    _STORE.clear()


def cache_info() -> dict[str, int]:
    """Entries, bytes held, byte limit, hits and misses of the accountant cache."""
    return _STORE.info()


def set_cache_limit(nbytes: int) -> None:
    """Set the cache's memory cap in bytes (default 256 MiB); evicts down to it at the next insert."""
    _STORE.limit = V.check_count("nbytes", nbytes, minimum=0)
