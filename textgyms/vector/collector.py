"""Garbage collection in a worker's wait: the cyclic collector's work moved off the steps.

CPython's cyclic garbage collector runs when allocations pass a threshold, wherever the
process is: in a worker of 256 envs, inside the steps the trainer waits for. A full
collection there scans every object the worker holds (NetConfig's memos alone hold hundreds of
thousands), and the collector took about a third of such a worker's CPU time, most of it on a
step's critical path.

:class:`QuietCollector` turns automatic collection off in a worker process of ours and runs
the collections that CPython would have run, by CPython's own rule, at the worker's quiet
moments instead: after it has sent a reply, while the trainer reads the batch and the model
takes its turn. Nothing is collected less: the same garbage goes at the next quiet moment, so
a worker's memory stays bounded by what one command allocates between two of them.

``TEXTGYMS_WORKER_GC`` chooses, per vector: ``wait`` (the default) or ``auto`` (CPython's own
automatic collection, inside the commands). On interpreters whose collector is not the
generational one this emulates (CPython before 3.9 or from 3.14 on, other implementations),
``wait`` leaves the automatic collector as it is.
"""

from __future__ import annotations

import gc
import os
import sys

from textgyms.errors import ConfigError

__all__ = ["ENV_VAR", "MODES", "QuietCollector", "due_generation", "worker_gc_mode"]

ENV_VAR = "TEXTGYMS_WORKER_GC"
MODES = ("wait", "auto")
# The generational collector whose rule due_generation follows (three generations, the
# "a quarter of the long-lived objects are new" condition for a full collection).
EMULATED = sys.implementation.name == "cpython" and (3, 9) <= sys.version_info[:2] < (3, 14)


def worker_gc_mode() -> str:
    """The mode ``TEXTGYMS_WORKER_GC`` names (``wait`` when unset); a ConfigError for any other
    value, raised where the vector is made."""
    raw = os.environ.get(ENV_VAR, "").strip().lower() or MODES[0]
    if raw not in MODES:
        raise ConfigError(f"{ENV_VAR} must be one of {', '.join(MODES)}, got {raw!r}")
    return raw


def due_generation(counts: tuple[int, int, int], thresholds: tuple[int, ...],
                   pending: int, total: int) -> int | None:
    """The generation CPython's automatic collection would collect now, or None.

    ``counts`` and ``thresholds`` as :func:`gc.get_count` and :func:`gc.get_threshold` give
    them; ``pending``: objects moved into the oldest generation since its last collection;
    ``total``: the oldest generation's size after that collection. The oldest generation whose
    count passed its threshold is collected, except that a full collection also waits until
    the pending objects are a quarter of ``total`` (CPython's rule, which keeps the cost of
    full collections linear in the objects allocated). A first threshold of 0 turns
    automatic collection off, as in CPython."""
    if not thresholds[0] or counts[0] <= thresholds[0]:
        return None
    for gen in (2, 1, 0):
        if counts[gen] > thresholds[gen]:
            if gen == 2 and pending < total // 4:
                continue
            return gen
    return 0


class QuietCollector:
    """Automatic cyclic collection off in this process, and :meth:`collect_due` to run, at a
    moment of the caller's choosing, the collection CPython would have run by then.

    Meant for a process textgyms owns (a vector's worker): automatic collection is a
    process-wide switch. The thresholds are read at every call, so ``gc.set_threshold`` in the
    process still applies."""

    def __init__(self) -> None:
        self.active = False
        self.collections = [0, 0, 0]  # per generation, run by collect_due
        self._pending = 0
        self._total = 0

    def start(self) -> bool:
        """Turn automatic collection off (where the collector is one this emulates and the
        process had it on); whether collections are now this object's to run."""
        if self.active or not EMULATED or not gc.isenabled():
            return self.active
        self._total = len(gc.get_objects(2))
        self._pending = 0
        gc.disable()
        self.active = True
        return True

    def stop(self) -> None:
        """Give collection back to the interpreter (automatic again)."""
        if self.active:
            self.active = False
            gc.enable()

    def collect_due(self) -> int | None:
        """Run the collection that is due (:func:`due_generation`); the generation collected,
        or None if none was due."""
        if not self.active:
            return None
        gen = due_generation(gc.get_count(), gc.get_threshold(), self._pending, self._total)
        if gen is None:
            return None
        if gen == 2:
            gc.collect(2)
            self._total, self._pending = len(gc.get_objects(2)), 0
        elif gen == 1:
            # What survives a collection of the two young generations moves to the oldest.
            young = len(gc.get_objects(0)) + len(gc.get_objects(1))
            self._pending += max(0, young - gc.collect(1))
        else:
            gc.collect(0)
        self.collections[gen] += 1
        return gen
