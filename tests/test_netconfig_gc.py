"""NetConfig pauses the cyclic garbage collector while it draws a task or verifies a
submission (bounded.gc_paused), and always gives it back as it found it."""

from __future__ import annotations

import gc
import threading

import gymnasium as gym
import pytest

import textgyms  # noqa: F401  (registers the ids)
from textgyms.envs.netconfig import env as env_module
from textgyms.envs.netconfig.bounded import gc_paused


@pytest.fixture(autouse=True)
def _collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_inside_and_resumed_after_even_on_error():
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_a_collector_the_caller_disabled_stays_disabled():
    gc.disable()
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_nested_and_threaded_holders_resume_only_when_the_last_leaves():
    inside, leave = threading.Event(), threading.Event()

    def other():
        with gc_paused():
            inside.set()
            leave.wait(10)

    t = threading.Thread(target=other)
    with gc_paused():
        t.start()
        assert inside.wait(10)
        with gc_paused():
            assert not gc.isenabled()
    assert not gc.isenabled()  # the other thread still holds it
    leave.set()
    t.join(10)
    assert gc.isenabled()


def test_reset_and_submission_run_with_the_collector_paused(monkeypatch):
    seen = []
    real_generate, real_verify = env_module.generate, env_module.verify_submission

    def generate(*a, **k):
        seen.append(("generate", gc.isenabled()))
        return real_generate(*a, **k)

    def verify(*a, **k):
        seen.append(("verify", gc.isenabled()))
        return real_verify(*a, **k)

    monkeypatch.setattr(env_module, "generate", generate)
    monkeypatch.setattr(env_module, "verify_submission", verify)
    env = gym.make("textgyms/NetConfig-v4", family="routing", difficulty="easy").unwrapped
    env.reset(seed=123_457)
    assert gc.isenabled()
    _obs, _r, term, _tr, info = env.step(env.solve(env.task)[-1])
    assert term and info["score"] == 1.0
    assert gc.isenabled()
    assert ("generate", False) in seen and ("verify", False) in seen
    assert all(not on for _name, on in seen)


@pytest.mark.parametrize("family", ["routing", "ospf_areas", "bgp", "acl"])
def test_resets_and_episodes_leave_no_reference_cycles(family):
    """Paused or not, the collector is what frees a reference cycle: a reset or a step that
    leaves one makes garbage only a collection reclaims. (Repair and diagnosis draw their
    faults with networkx, whose graphs and decorators make cycles of their own.)"""
    env = gym.make("textgyms/NetConfig-v4", family=family, difficulty="medium").unwrapped
    env.reset(seed=1)  # first uses: imports, regular expressions, caches
    env.step(env.solve(env.task)[-1])
    gc.collect()
    gc.disable()
    try:
        for seed in range(100, 104):
            env.reset(seed=seed)
            env.step(f'<show_ip_route device="{env.task.start[0][0]}"/>')
            env.step("<submit>\n! device nothing\n</submit>")
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_routes_and_fib_buckets_are_untracked_after_a_collection():
    """A compiled network's routes and FIB buckets are plain tuples of ints and strings: the
    collector stops tracking them at its first look, so the memos' networks cost full
    collections nothing for them (a NamedTuple, a tuple subclass, stays tracked for life)."""
    from textgyms.envs.netconfig.verify import text_network

    env = gym.make("textgyms/NetConfig-v4", family="ospf_areas", difficulty="medium").unwrapped
    env.reset(seed=3)
    net = text_network(env.task, dict(env.task.reference))
    gc.collect()
    routes = [r for rib in net.rib.values() for r in rib]
    buckets = [b for fib in net.fib.values() for by_net in fib[1].values()
               for b in by_net.values()]
    assert routes and buckets
    assert not any(gc.is_tracked(x) for x in routes + buckets)
