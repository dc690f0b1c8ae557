"""benchmarks/netconfig_lockstep.py runs a small lockstep vector and reports every operation."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import netconfig_lockstep  # noqa: E402


def test_a_small_lockstep_vector_reports_each_operation():
    res = netconfig_lockstep.measure(n_envs=4, group=2, rounds=1)
    assert res["envs"] == 4 and res["group"] == 2
    assert set(res["ms_per_env"]) == {"reset", "tool", "submit"}
    assert all(v > 0 for v in res["ms_per_env"].values())
