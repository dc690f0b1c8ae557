"""Probes for scripts/worker_crash_check.py: a test worker that dies, and one that hangs.

Not part of the suite (``make test`` collects ``tests/`` only); each probe runs only when the
check asks for it with ``TEXTGYMS_PROBE``, so the file collects harmlessly anywhere.
"""

from __future__ import annotations

import os
import signal
import threading

import pytest

PROBE = os.environ.get("TEXTGYMS_PROBE", "")


@pytest.mark.skipif(PROBE != "crash", reason="run by scripts/worker_crash_check.py")
def test_worker_dies_with_sigbus():
    """What a reader of index files rewritten in place got: a fatal signal, no exception."""
    os.kill(os.getpid(), signal.SIGBUS)


@pytest.mark.skipif(PROBE != "hang", reason="run by scripts/worker_crash_check.py")
def test_worker_hangs_forever():
    lock = threading.Lock()
    lock.acquire()
    lock.acquire()  # never returns: only the per-test timeout ends it


def test_a_neighbour_that_passes():
    assert sum(range(4)) == 6
