"""benchmarks/bench_iso20022.py's fresh-process rows: both kinds of process really run and
the table says what they measured."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import bench_iso20022 as bench  # noqa: E402

from textgyms.envs.iso20022 import banks  # noqa: E402


def test_cold_resets_runs_both_kinds_of_process():
    cold = bench.cold_resets(3, 1)
    assert cold["resets"] == 3
    assert cold["shipped_pools"] > 0 and cold["built_pools"] > 0
    assert cold["ratio"] == cold["shipped_pools"] / cold["built_pools"]
    assert cold["first_ms_shipped"] > 0 and cold["first_ms_built"] > 0


def test_only_the_built_process_ignores_the_shipped_data():
    # The script's set-up, then how many shipped pools that process would read.
    setup = bench._COLD.split("from textgyms.envs.iso20022.env")[0]
    script = setup + "print(len(bankdata._pools()))\n"
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    counts = {how: int(subprocess.run([sys.executable, "-c", script, how, "1"], env=env,
                                      check=True, capture_output=True, text=True).stdout)
              for how in ("shipped", "built")}
    assert counts["built"] == 0
    keys = {(b.bic, b.bank_code, b.branch_code) for b in banks.pooled_banks()}
    assert counts["shipped"] == len(keys)


def test_cold_table():
    cold = {"resets": 200, "shipped_pools": 900.0, "built_pools": 100.0, "ratio": 9.0,
            "first_ms_shipped": 50.0, "first_ms_built": 450.0}
    table = bench._cold_table(cold)
    assert "| its next 200 resets, per CPU-second | 900 | 100 | 9.00x |" in table
    assert "| its first reset (imports, the bank registry), CPU ms | 50 | 450 | 9.00x |" in table
    older = {k: v for k, v in cold.items() if not k.startswith("first")}  # an earlier file
    assert "first reset" not in bench._cold_table(older)
    assert bench._cold_table(None) == ""
