"""benchmarks/bench_worker_gc.py: the schema of a small run's JSON and Markdown, and that both
ways and the serial plan agree batch for batch. No timing assertions (speed belongs to
benchmarks)."""

from __future__ import annotations

import json

import pytest
from support import load_benchmark


@pytest.fixture(scope="module")
def bench():
    """The benchmark module."""
    yield from load_benchmark("bench_worker_gc")


def test_small_run_writes_the_schema_and_equal_digests(bench, tmp_path):
    out = tmp_path / "gc.json"
    argv = ["--cases", "4x1", "--steps", "5", "--pairs", "1", "--gap", "5", "--out", str(out)]
    assert bench.main(argv) == 0
    res = json.loads(out.read_text())
    assert set(res) == {"rows", "backend", "steps", "pairs", "machine"}
    assert res["backend"] == "multiprocessing"  # --backend ray: Ray actors
    [row] = res["rows"]
    assert (row["envs"], row["workers"], row["gap_ms"], row["steps"]) == (4, 1, 5.0, 5)
    for way in bench.WAYS:
        assert row[way]["step_ms"] > 0 and row[way]["cpu_ms_per_env_step"] >= 0
        assert row[way]["digests"] == [row["digest_serial"]]
        assert len(row[way]["load_avg_at_start"]) == 1 and row[way]["load_avg_at_start"][0] >= 0
    assert row["same_results"] is True
    assert row["mean_ratio"] == pytest.approx(
        row["auto"]["step_ms_mean"] / row["wait"]["step_ms_mean"], rel=1e-2)
    md = out.with_suffix(".md").read_text()
    assert "| 4 x 1 | 5 |" in md and "| yes |" in md and "1-minute load average" in md


def test_the_plan_plays_tools_then_a_submission(bench):
    actions, digest = bench.plan(2, 5)
    assert len(actions) == 5 and all(len(a) == 2 for a in actions)
    assert all(a.startswith("<show_ip_route") for a in actions[0])
    assert all(a.startswith("<submit>") for a in actions[3])  # then autoreset: a new task
    assert all(a.startswith("<show_ip_route") for a in actions[4])
    assert len(digest) == 64
