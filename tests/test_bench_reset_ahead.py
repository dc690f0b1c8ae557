"""benchmarks/bench_reset_ahead.py: the schema of a small run's JSON and Markdown, and that its
off, on and serial digests agree. No timing assertions (speed belongs to benchmarks)."""

from __future__ import annotations

import json

import pytest
from support import load_benchmark


@pytest.fixture(scope="module")
def bench():
    """The benchmark module."""
    yield from load_benchmark("bench_reset_ahead")


def test_small_run_writes_the_schema_and_equal_digests(bench, tmp_path):
    out = tmp_path / "ahead.json"
    argv = ["--only", "Wordle", "--envs", "4", "--workers", "2", "--steps", "2",
            "--gaps", "10", "--pairs", "1", "--resets", "3", "--out", str(out)]
    assert bench.main(argv) == 0
    res = json.loads(out.read_text())
    assert set(res) == {"machine", "settings", "rows", "reset_costs"}
    assert res["settings"]["envs"] == 4 and res["settings"]["workers"] == 2
    assert res["settings"]["backend"] == "multiprocessing"  # --backend ray: Ray actors
    assert res["settings"]["gaps_ms"] == [10.0]
    [row] = res["rows"]
    assert (row["family"], row["env_id"]) == ("Wordle", "textgyms/Wordle-v0")
    assert (row["gap_ms"], row["envs"], row["workers"], row["steps"]) == (10.0, 4, 2, 2)
    assert row["step_ms_off"] > 0 and row["step_ms_on"] > 0
    assert row["ratio_off_on"] == pytest.approx(row["step_ms_off"] / row["step_ms_on"],
                                                rel=1e-2)
    assert len(row["run_medians_ms_off"]) == len(row["run_medians_ms_on"]) == 1
    assert row["digests_equal"] is True
    assert row["digest_off"] == row["digest_on"] == [row["digest_serial"]]
    assert len(row["digest_serial"]) == 64
    costs = res["reset_costs"]["Wordle"]
    assert costs["n"] == 3
    assert min(costs[k] for k in bench.COSTS) > 0
    md = out.with_suffix(".md").read_text()
    assert "| Wordle | 10 |" in md and "| yes |" in md


def test_digest_sees_every_field(bench):
    base = (["a", "b"], [{"task_id": "1"}, {"task_id": "2"}], [0.0, 1.0], [False, True],
            [False, False])
    variants = [
        (["a", "c"], *base[1:]),
        (base[0], [{"task_id": "1"}, {"task_id": "3"}], *base[2:]),
        (*base[:2], [0.0, 0.5], *base[3:]),
        (*base[:3], [True, True], base[4]),
        (*base[:4], [False, True]),
    ]
    digests = set()
    for args in [base, *variants]:
        d = bench.Digest()
        d.add(*args)
        digests.add(d.hexdigest())
    assert len(digests) == 1 + len(variants)


@pytest.mark.parametrize("argv", [["--steps", "0"], ["--gaps", "-1"], ["--workers", "0"],
                                  ["--resets", "0"], ["--only", "Chess"], ["--backend", "serial"]])
def test_bad_arguments_are_refused(bench, argv):
    with pytest.raises(SystemExit) as exc:
        bench.parse_args(argv)
    assert exc.value.code == 2
