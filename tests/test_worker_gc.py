"""Garbage collection in a worker's wait (``textgyms.vector.collector``): CPython's rule at the
worker's quiet moments, automatic collection off inside its commands, and memory still bounded."""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Iterator
from dataclasses import dataclass

import gymnasium as gym
import pytest

from textgyms.core import Task, TextEnv, Turn, Verdict
from textgyms.errors import ConfigError
from textgyms.vector import make_vec
from textgyms.vector.collector import EMULATED, QuietCollector, due_generation, worker_gc_mode

needs_emulated = pytest.mark.skipif(not EMULATED, reason="the collector is not CPython's "
                                    "generational one: a worker keeps automatic collection")


@pytest.mark.parametrize(("counts", "pending", "total", "want"), [
    ((700, 0, 0), 0, 0, None),  # the young generation has not passed its threshold
    ((701, 0, 0), 0, 0, 0),
    ((701, 10, 0), 0, 0, 0),  # equal to a threshold is not past it
    ((701, 11, 0), 0, 0, 1),
    ((701, 11, 11), 249, 1000, 1),  # a full collection waits for a quarter to be new
    ((701, 11, 11), 250, 1000, 2),
    ((701, 0, 11), 250, 1000, 2),  # the oldest generation past its threshold goes first
    ((5000, 3, 11), 0, 1000, 0),  # no full collection due: the next generation down that is
])
def test_due_generation_follows_cpythons_rule(counts, pending, total, want) -> None:
    assert due_generation(counts, (700, 10, 10), pending, total) == want


def test_a_first_threshold_of_zero_turns_collection_off() -> None:
    assert due_generation((10**6, 99, 99), (0, 10, 10), 10**6, 1) is None


@pytest.fixture
def collector() -> Iterator[QuietCollector]:
    """A started collector; the process's automatic collection is restored afterwards."""
    was = gc.isenabled()
    gc.enable()
    qc = QuietCollector()
    try:
        yield qc
    finally:
        qc.stop()
        if not was:
            gc.disable()


class _Node:
    """One half of a reference cycle (two nodes that hold each other)."""

    def __init__(self) -> None:
        self.other: _Node | None = None


def _cycles(n: int, freed: list[int]) -> None:
    """Make ``n`` unreachable reference cycles; ``freed[0]`` counts those collected."""
    for _ in range(n):
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        weakref.finalize(a, _bump, freed)


def _bump(freed: list[int]) -> None:
    freed[0] += 1


@needs_emulated
def test_cycles_wait_for_the_quiet_moment_then_go(collector: QuietCollector) -> None:
    gc.collect()
    assert collector.start() and not gc.isenabled()
    freed = [0]
    _cycles(2000, freed)  # far past the first threshold: automatic collection would have run
    assert freed[0] == 0
    assert collector.collect_due() == 0
    assert freed[0] == 2000
    assert collector.collect_due() is None  # nothing allocated since: nothing due


@needs_emulated
def test_every_generation_is_collected_in_turn(collector: QuietCollector) -> None:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)  # CPython's defaults, whatever this process had set
    try:
        collector.start()
        kept, gens = [], []
        # Long-lived objects, as a worker's caches gather, until a full collection comes due:
        # once a quarter of what the oldest generation held at the start is new (a test
        # process may hold millions of objects, hence no fixed count).
        while 2 not in gens and len(kept) < 10_000:
            kept.append([[] for _ in range(800)])
            gens.append(collector.collect_due())
    finally:
        gc.set_threshold(*before)
    assert 0 in gens and 1 in gens and 2 in gens
    assert gens.index(0) < gens.index(1) < gens.index(2)
    assert collector.collections == [gens.count(g) for g in (0, 1, 2)]


def test_a_collector_the_process_turned_off_stays_off() -> None:
    was = gc.isenabled()
    gc.disable()
    try:
        qc = QuietCollector()
        assert not qc.start()
        assert qc.collect_due() is None
        qc.stop()
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()


@dataclass(frozen=True)
class _Seed(Task):
    seed: int


class _Cyclic(TextEnv):
    """Each step leaves reference cycles behind; ``probe`` says, in the worker, whether
    automatic collection is on and how many cycles have been collected."""

    def __init__(self) -> None:
        super().__init__(max_turns=100)
        self.freed = [0]

    def generate(self, rng) -> Task:
        return _Seed(int(rng.integers(1000)))

    def prompt(self, task: Task) -> str:
        return "go"

    def respond(self, state: object, action: str) -> Turn:
        _cycles(1000, self.freed)
        return Turn("ok")

    def final_verdict(self, state: object) -> Verdict:
        return Verdict(0.0, False)

    def probe(self) -> tuple[bool, int]:
        return gc.isenabled(), self.freed[0]


gym.register("textgyms-test/Cyclic-v0", entry_point=_Cyclic)


@pytest.mark.parametrize("mode", ["wait", "auto"])
def test_a_worker_collects_its_garbage_after_each_reply(mode: str, monkeypatch) -> None:
    monkeypatch.setenv("TEXTGYMS_WORKER_GC", mode)
    with make_vec("textgyms-test/Cyclic-v0", 2, backend="multiprocessing", num_workers=1,
                  context="fork") as vec:  # (fork: the worker has this module's env)
        vec.reset(seed=0)
        for _ in range(3):
            vec.step(["x", "x"])
        on, freed = vec.call_env(0, "probe")
    assert on == (mode == "auto" or not EMULATED)
    assert freed >= 2000  # the first two steps' cycles at least: none is kept for long


def test_an_unknown_worker_gc_mode_is_refused_before_any_worker_starts(monkeypatch) -> None:
    monkeypatch.setenv("TEXTGYMS_WORKER_GC", "sometimes")
    with pytest.raises(ConfigError, match="TEXTGYMS_WORKER_GC must be one of wait, auto"):
        worker_gc_mode()
    with pytest.raises(ConfigError, match="TEXTGYMS_WORKER_GC"):
        make_vec("textgyms/Wordle-v0", 2, backend="multiprocessing", num_workers=1)
    pytest.importorskip("ray")
    with pytest.raises(ConfigError, match="TEXTGYMS_WORKER_GC"):  # before Ray starts anything
        make_vec("textgyms/Wordle-v0", 2, backend="ray", num_workers=1)


@needs_emulated
def test_a_ray_actor_collects_after_each_step_on_its_own_thread() -> None:
    pytest.importorskip("ray")
    from textgyms.vector.ray import _Worker

    was = gc.isenabled()
    gc.enable()
    worker = _Worker(_Cyclic, 2, 1, "same_step", gc_mode="wait")  # the actor's body, here
    try:
        assert not gc.isenabled()
        worker.reset([0, 1], None, [True, True])
        worker.step(["x", "x"])  # 2,000 cycles left behind: past the first threshold
        deadline = time.monotonic() + 30  # the actor's thread collects after the step
        while not sum(worker.collector_state()[1]) and time.monotonic() < deadline:
            time.sleep(0.01)  # (polled, not a fixed wait: a loaded machine may be slow)
        on, collections = worker.collector_state()
        assert not on and sum(collections) >= 1  # (which generation: what the process ran before)
        assert sum(r.env.unwrapped.freed[0] for r in worker.runners) >= 2000
        # It only collected: nothing was drawn ahead, since the step did not ask for it.
        assert [worker.call(i, "forget_pregenerated", ()) for i in range(2)] == [False, False]
    finally:
        worker._stop = True
        worker._wake.set()
        worker._collector.stop()
        if not was:
            gc.disable()
