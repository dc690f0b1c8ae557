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
import math
import threading
import weakref
from collections import deque
from collections.abc import Callable, Hashable, Iterator
from typing import Any

__all__ = ["NO_ITEMS", "NO_MEMBERS", "TASKS_AT_BASE", "Key", "Memo", "MemoShare", "NoItems",
           "NoMembers", "by_identity", "gc_paused", "is_shared", "set_tasks_at_base", "share",
           "sized_for", "tasks_in_flight"]


_MISSING = object()


# The distinct tasks in flight a growing memo's base size serves: 32 envs' current and next
TASKS_AT_BASE = 64
_MEMOS: weakref.WeakSet[Memo] = weakref.WeakSet()
# Reentrant: a collection inside a locked section may run a dead env's finalizer (_drop)
_SIZE_LOCK = threading.RLock()
_in_flight: dict[str, int] = {}  # a task's id -> the live shares naming it (MemoShare)
# The most distinct tasks held at once since an env last released its share: the growing
# memos are sized for it (see _resize)
_sized_for = 0


class Memo:
    """A dict of at most ``size`` results; the oldest goes first when it is full. Safe to
    share between threads (a result computed twice at once is the same value).

    ``grows``: ``size`` is a base size, for :data:`TASKS_AT_BASE` distinct tasks in flight
    (32 envs' current and next), and grows in proportion with the tasks in flight beyond that
    (:class:`MemoShare`). NetConfig's memos of what a task's episode asks for again grow (the
    drawn tasks, parsed configs, compiled networks, check results, a task's values); the
    intermediate caches of a compile keep their sizes: they serve compiles that a warmed
    network spares, and grown they only gave the garbage collector more to scan (at 256
    envs a process's tracked objects went from 520k to 800k, its episodes 1.15x slower).
    Otherwise ``size`` is fixed."""

    def __init__(self, size: int, *, grows: bool = False) -> None:
        self.base = size
        self.size = size
        if grows:
            self.size = _scaled(size)
            _MEMOS.add(self)
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


def _scaled(base: int) -> int:
    return max(base, math.ceil(base * _sized_for / TASKS_AT_BASE))


def _count(key: str, change: int) -> None:
    n = _in_flight.get(key, 0) + change
    if n > 0:
        _in_flight[key] = n
    else:
        _in_flight.pop(key, None)


def _apply_sizes() -> None:
    for memo in list(_MEMOS):
        memo.size = _scaled(memo.base)  # (a smaller size evicts at the next puts)


def _resize(release: bool = False) -> None:
    """Size every growing memo for the distinct tasks held now (called with the lock held).

    They grow at once and shrink only when an env releases its share. An env holds one task
    between its reset and its next ``pregenerate`` and two after: shrinking at every reset
    evicted the parsed configs a wrong submission reads again (a worker of 256 envs ran its
    episodes' critical path 1.5x slower than with this high-water mark)."""
    global _sized_for
    held = len(_in_flight)
    if held > _sized_for or (release and held != _sized_for):
        _sized_for = held
        _apply_sizes()


def _drop(keys: list[str]) -> None:
    with _SIZE_LOCK:
        for key in keys:
            _count(key, -1)
        keys.clear()
        _resize(release=True)


def set_tasks_at_base(tasks: int) -> int:
    """Size every growing memo for ``tasks`` distinct tasks in flight at its base size (64 by
    default; a very large number keeps them at their base sizes whatever the tasks, to save
    memory); resizes them now and returns the previous value."""
    global TASKS_AT_BASE
    if tasks < 1:
        raise ValueError(f"tasks must be at least 1, got {tasks}")
    with _SIZE_LOCK:
        old, TASKS_AT_BASE = TASKS_AT_BASE, tasks
        _apply_sizes()
    return old


def tasks_in_flight() -> int:
    """The distinct tasks the live envs' shares name now (:class:`MemoShare`)."""
    return len(_in_flight)


def sized_for() -> int:
    """The distinct tasks the growing memos are sized for: the most held at once since an
    env last released its share."""
    return _sized_for


class MemoShare:
    """An env's share of the growing memos: the tasks it holds, its episode's and the one
    drawn ahead for its next episode (reset-ahead). The memos are sized for the distinct
    tasks every live share names, so they keep each env's warmed next task until its episode
    begins; envs of a GRPO group on one seed name one task.

    Sized per env instead, a process of 256 envs in GRPO groups of 8 (32 distinct tasks)
    would keep old tasks it never asks for again and pay the garbage collector for them;
    at fixed sizes, 64 envs on distinct tasks recompiled 76 of their 192 warmed networks
    and 128 envs all of them. The share ends at :meth:`release` or when ``owner`` is
    collected, whichever comes first."""

    def __init__(self, owner: object) -> None:
        self._names: list[str] = []
        self._end = weakref.finalize(owner, _drop, self._names)

    def hold(self, *tasks: str | None) -> None:
        """The env now holds these tasks (their ids; None: no task), and no others."""
        names = sorted({t for t in tasks if t is not None})
        if names == self._names or not self._end.alive:
            return  # (unchanged, or an env used after its close)
        with _SIZE_LOCK:
            for name in self._names:
                _count(name, -1)
            for name in names:
                _count(name, +1)
            self._names[:] = names  # (in place: the finalizer drops this very list)
            _resize()

    def release(self) -> None:
        """End the share now (a second call does nothing)."""
        self._end()


# id -> the registered object (held, so its id is never reused); as large as the parse memo,
# which registers each config it stores: the two evict in step (and grow in step)
_SHARED = Memo(2048, grows=True)


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
