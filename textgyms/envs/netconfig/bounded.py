"""A bounded memo (a dict that drops its oldest entry when full), for NetConfig's caches of
pure functions of immutable inputs; :mod:`memo` holds the shared ones and their rules.

:func:`share` registers an object handed out read-only to every caller (a memoized parsed
config), so a per-device cache may key on its identity: :func:`is_shared` says whether an
object is one (an edited candidate's own copy never is). A shared config's empty fields
all hold :data:`NO_ITEMS` or :data:`NO_MEMBERS`, which refuse changes.

:func:`gc_paused` holds the cyclic garbage collector off while a task is drawn or a
submission verified: see its docstring for why."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections import deque
from collections.abc import Callable, Hashable, Iterator
from typing import Any

__all__ = ["NO_ITEMS", "NO_MEMBERS", "Key", "Memo", "NoItems", "NoMembers", "by_identity",
           "gc_paused", "is_shared", "share"]


_MISSING = object()


class Memo:
    """A dict of at most ``size`` results; the oldest goes first when it is full. Safe to
    share between threads (a result computed twice at once is the same value)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._d: dict[Hashable, Any] = {}
        # The keys in insertion order, for eviction: a dict's own oldest key
        # (``next(iter(d))``) is found by skipping the slots its earlier evictions left
        # empty, which grows with the number evicted since the dict last resized (about
        # 4 us a put at 2,048 entries, against 1 us this way).
        self._order: deque[Hashable] = deque()

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The cached value of ``key``, or ``make()`` stored under it."""
        value = self._d.get(key, _MISSING)  # (a raised KeyError made each miss slower)
        if value is not _MISSING:
            return value
        value = make()
        self.put(key, value)
        return value

    def put(self, key: Hashable, value: Any) -> None:
        """Store ``key``'s value (a new key drops the oldest one's when it is full)."""
        d = self._d
        if key not in d:
            order = self._order
            while len(d) >= self.size and order:
                d.pop(order.popleft(), None)  # (None: a key two threads added at once)
            order.append(key)
        d[key] = value

    def __len__(self) -> int:
        return len(self._d)

    def clear(self) -> None:
        """Forget everything (tests and benchmarks measure cold caches with it)."""
        self._d.clear()
        self._order.clear()


_SHARED = Memo(2048)  # id -> the registered object (held, so its id is never reused); as
# large as the parse memo, which registers each config it stores: the two evict in step


def share(obj: Any) -> Any:
    """Register ``obj`` as shared and read-only from now on; returns it."""
    _SHARED.get(id(obj), lambda: obj)
    return obj


def is_shared(obj: Any) -> bool:
    """Whether ``obj`` is registered by :func:`share` (and so never changes)."""
    return _SHARED._d.get(id(obj)) is obj


def _read_only(self, *_args, **_kw):
    raise TypeError("this config is shared and read-only; edit its clone() instead")


class NoItems(list):
    """The empty list every field of a shared config that has no items holds
    (``model.compact``): one object, where a list per field would be (a config has several,
    the parse memo thousands of configs, and the garbage collector scans every list again
    at each collection). Changing it raises; a config's clone, deep copy and pickle give a
    plain empty list for each field."""

    __slots__ = ()
    append = extend = insert = pop = remove = clear = sort = reverse = _read_only
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only

    def __deepcopy__(self, _memo: dict) -> list:
        return []


class NoMembers(set):
    """:class:`NoItems` for set fields (passive interfaces and the like)."""

    __slots__ = ()
    add = update = discard = remove = pop = clear = _read_only
    difference_update = intersection_update = symmetric_difference_update = _read_only
    __ior__ = __iand__ = __isub__ = __ixor__ = _read_only

    def __deepcopy__(self, _memo: dict) -> set:
        return set()

    def __repr__(self) -> str:  # as a plain one (equal configs have equal reprs)
        return "set()"


NO_ITEMS: list = NoItems()
NO_MEMBERS: set = NoMembers()


def by_identity(memo: Memo, obj: Any, extra: Hashable, make: Callable[[], Any]) -> Any:
    """``make()``, cached in ``memo`` under ``obj``'s identity and ``extra`` when ``obj`` is
    shared (each entry holds ``obj``, so the id cannot stand for another object while it
    lives); computed afresh for any other object."""
    key = (id(obj), extra)
    hit = memo._d.get(key)  # the common case first, without building a closure
    if hit is not None and hit[0] is obj:
        return hit[1]
    value = make()
    if _SHARED._d.get(id(obj)) is obj:  # shared, so it never changes: cache it
        memo.put(key, (obj, value))
    return value


class Key:
    """A memo key that hashes its parts once (a dict hashes a plain tuple key again for
    every lookup and for the insert after a miss): a network's key (every device's text
    and the cabling) is looked up again for each derived network and check result, and
    the SPF and layer-2 keys are deep tuples."""

    __slots__ = ("_hash", "parts")

    def __init__(self, parts: Hashable) -> None:
        self.parts = parts
        self._hash = hash(parts)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (type(other) is Key and self._hash == other._hash
                                 and self.parts == other.parts)

    def __repr__(self) -> str:
        return f"Key({self.parts!r})"


_GC_LOCK = threading.Lock()
_gc_holders = 0  # calls inside gc_paused that paused the collector (any thread)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Run the body with Python's cyclic garbage collector paused, then resume it.

    Drawing a task or verifying a submission allocates tens of thousands of short-lived
    objects, which are freed by reference counting; the collector, triggered by the count of
    allocations, would meanwhile scan the young objects of half-built networks again and
    again, and every long-lived cached object behind them (the memos hold hundreds of
    thousands), about a sixth of a reset's CPU time. Paused, the next collection after the
    body scans only what survived it. Nothing is lost: cycles made in the body are collected
    then. A collector the caller had disabled stays disabled; threads nest (the last one out
    resumes it)."""
    global _gc_holders
    with _GC_LOCK:
        mine = _gc_holders > 0 or gc.isenabled()
        if mine:
            _gc_holders += 1
            gc.disable()
    try:
        yield
    finally:
        if mine:
            with _GC_LOCK:
                _gc_holders -= 1
                if _gc_holders == 0:
                    gc.enable()
