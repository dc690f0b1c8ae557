"""benchmarks/bench_netconfig_memos.py: a worker with memos fixed at their base sizes against
one with memos grown for the tasks in flight, and the table of both."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import bench_netconfig_memos as bench  # noqa: E402

from textgyms.envs.netconfig import bounded, memo  # noqa: E402


def test_fixed_memos_recompile_warmed_networks_and_grown_ones_do_not():
    """64 envs on distinct tasks hold 128: past the base sizes' 64. (Grown first:
    the memos evict in the order entries came in, so a second run on the same tasks finds
    the first run's networks oldest and loses them first.)"""
    base, compile_ = bounded.TASKS_AT_BASE, memo._compile
    grown = bench.worker(64, 1, "grown", rounds=1)
    fixed = bench.worker(64, 1, "fixed", rounds=1)
    assert bounded.TASKS_AT_BASE == base and memo._compile is compile_  # both undone
    assert fixed["memo_size"] == 128 < grown["memo_size"]
    assert grown["compiled_again"] == 0 < fixed["compiled_again"]
    assert grown["first_looks"] == fixed["first_looks"] == 64
    for res in (fixed, grown):
        assert res["agent_per_cpu_s"] > res["all_in_per_cpu_s"] > 0
    res = {"python": "3", "machine": "x", "pairs": 1, "rounds": 1,
           "cases": {"64x1": {"fixed": fixed, "grown": grown}}}
    table = bench.render(res)
    assert "| 64x1 | fixed | 128 |" in table and "| 64x1 | grown / fixed |" in table

