"""A bounded memo (a dict that drops its oldest entry when full), for NetConfig's caches of
pure functions of immutable inputs; :mod:`memo` holds the shared ones and their rules."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["Memo"]


class Memo:
    """A dict of at most ``size`` results; the oldest goes first when it is full. Safe to
    share between threads (a result computed twice at once is the same value)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._d: dict[Hashable, Any] = {}

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The cached value of ``key``, or ``make()`` stored under it."""
        try:
            return self._d[key]
        except KeyError:
            pass
        value = make()
        if len(self._d) >= self.size:
            try:
                del self._d[next(iter(self._d))]
            except (KeyError, RuntimeError, StopIteration):  # another thread evicted it first
                pass
        self._d[key] = value
        return value

    def __len__(self) -> int:
        return len(self._d)

    def clear(self) -> None:
        """Forget everything (tests and benchmarks measure cold caches with it)."""
        self._d.clear()
