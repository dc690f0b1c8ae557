"""The thread budget: the affinity mask by default, TEXTGYMS_THREADS when set, and Search's
batched searches stay on the calling thread when the budget is one."""

import os
import threading

import pytest

from textgyms.cpus import thread_budget, usable_cpus
from textgyms.envs.search.backends import batch as bk
from textgyms.errors import ConfigError


def test_budget_defaults_to_the_affinity_mask(monkeypatch):
    monkeypatch.delenv("TEXTGYMS_THREADS", raising=False)
    assert thread_budget() == usable_cpus() == len(os.sched_getaffinity(0))


@pytest.mark.parametrize("value, expected", [("3", 3), (" 1 ", 1)])
def test_budget_follows_the_variable(monkeypatch, value, expected):
    monkeypatch.setenv("TEXTGYMS_THREADS", value)
    assert thread_budget() == expected


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
def test_a_bad_budget_says_what_to_set(monkeypatch, value):
    monkeypatch.setenv("TEXTGYMS_THREADS", value)
    with pytest.raises(ConfigError, match="TEXTGYMS_THREADS must be a whole number >= 1"):
        thread_budget()


class _Recorder:
    """A threadsafe backend stand-in that records which thread ran each search."""

    name, path, threadsafe = "rec", "/nowhere", True

    def __init__(self):
        self.threads = []

    def search_uncached(self, query, k, offset=0, site=None):
        self.threads.append(threading.current_thread().name)
        return bk.Hits([len(query)], 1)


@pytest.mark.parametrize("budget, helpers", [("1", False), ("2", True)])
def test_prefetch_uses_helper_threads_only_within_the_budget(monkeypatch, budget, helpers):
    monkeypatch.setenv("TEXTGYMS_THREADS", budget)
    bk._RESULTS.clear()
    rec = _Recorder()
    words = "which person was born in the city where the company has its headquarters".split()
    requests = [(f"{' '.join(words)} {i}", 5, 0, None) for i in range(8)] * 2
    assert bk.prefetch(rec, requests) == 8  # repeats run once
    assert len(rec.threads) == 8
    assert any(t.startswith("textgyms-search") for t in rec.threads) is helpers
    assert "MainThread" in rec.threads  # the caller always runs a share itself
    assert [bk.cached_search(rec, None, *r) for r in requests] == [
        bk.Hits([len(r[0])], 1) for r in requests
    ]
    bk._RESULTS.clear()


def test_prefetch_keeps_cheap_batches_on_the_calling_thread(monkeypatch):
    """A batch of short queries costs less than a thread handoff: no helper runs it."""
    monkeypatch.setenv("TEXTGYMS_THREADS", "2")
    bk._RESULTS.clear()
    rec = _Recorder()
    assert bk.prefetch(rec, [(f"name {i}", 5, 0, None) for i in range(16)]) == 16
    assert set(rec.threads) == {"MainThread"}
    bk._RESULTS.clear()
