"""How many cores this process may use: the affinity mask, and the ``TEXTGYMS_THREADS`` budget.

Envs that batch work across threads (Search runs a vector step's index searches together) ask
:func:`thread_budget`. The multiprocessing backend sets ``TEXTGYMS_THREADS`` in each worker to
its share of the cores, so that workers batching at once do not oversubscribe the machine; a
value the user exported wins.
"""

from __future__ import annotations

import os

from textgyms.errors import ConfigError

__all__ = ["SANDBOX_WORKERS_ENV", "sandbox_workers", "thread_budget", "usable_cpus"]

SANDBOX_WORKERS_ENV = "TEXTGYMS_SANDBOX_WORKERS"


def usable_cpus() -> int:
    """The cores this process may run on (its affinity mask where the OS has one), >= 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def thread_budget() -> int:
    """Threads this process may keep busy: ``$TEXTGYMS_THREADS``, else :func:`usable_cpus`."""
    raw = os.environ.get("TEXTGYMS_THREADS", "").strip()
    if not raw:
        return usable_cpus()
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"TEXTGYMS_THREADS must be a whole number >= 1, got {raw!r}")
    return int(raw)


def sandbox_workers() -> int:
    """Code sandbox servers a process may run at once: ``$TEXTGYMS_SANDBOX_WORKERS``, else
    :func:`usable_cpus` (what ``textgyms serve`` and the trainer adapters size their pool to)."""
    raw = os.environ.get(SANDBOX_WORKERS_ENV, "").strip()
    if not raw:
        return usable_cpus()
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"{SANDBOX_WORKERS_ENV} must be a whole number >= 1, got {raw!r}")
    return int(raw)
