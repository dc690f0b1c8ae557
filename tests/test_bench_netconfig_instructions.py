"""benchmarks/netconfig_instructions.py: each measured operation is called through the toggle
function exactly once, nothing in the env calls it, and a worker under callgrind counts."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import netconfig_instructions as bench  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# per kind, the operations one round on one family's three levels measures
EXPECTED = {"reset": 3, "submit": 3, "wrong": 3, "tool": 9, "edit": 6, "after_edit": 3}


@pytest.mark.parametrize("kind", bench.KINDS)
def test_each_operation_is_measured_once_and_alone(monkeypatch, kind):
    calls, depth = [], [0]

    def measure(fn, *args, **kwargs):
        assert depth[0] == 0, "a measured operation inside another"
        depth[0] += 1
        try:
            out = fn(*args, **kwargs)
        finally:
            depth[0] -= 1
        calls.append(getattr(fn, "__name__", ""))
        return out

    monkeypatch.setattr(bench, "MEASURE", measure)
    res = bench.run_kind("textgyms/NetConfig-v4", kind, 1, ["routing"])
    assert res["ops"] == len(calls) == EXPECTED[kind]
    assert set(calls) == {"reset" if kind == "reset" else "step"}


def test_nothing_in_the_package_calls_the_toggle_function():
    """Collection is switched at every entry into operator.call: a call of it inside an
    operation would switch it off there."""
    pattern = re.compile(r"operator\.call\b|from operator import[^\n]*\bcall\b")
    hits = [p for p in (ROOT / "textgyms").rglob("*.py") if pattern.search(p.read_text())]
    assert hits == []


def test_collected_reads_the_summary_and_says_when_it_is_missing():
    log = "==1== Events    : Ir\n==1== Collected : 1,234,567\n==1==\n==1== I   refs: 9"
    assert bench.collected(log) == 1_234_567
    with pytest.raises(RuntimeError, match="no callgrind summary"):
        bench.collected("==1== error")


def test_render_names_every_kind_with_its_ratio():
    pair = {"old": {"ir": 4_000, "ops": 2, "gc_ir": 400},
            "new": {"ir": 1_000, "ops": 2, "gc_ir": 0}, "ratio": 4.0}
    table = bench.render({"rounds": 1, "baseline": "abc", "kinds": {"wrong": pair}})
    assert "| wrong submission steps | 2,000 | 500 | 4.00x | 10.0% | 0.0% |" in table


@pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("callgrind_annotate")
                    is None or bench.MEASURE is None, reason="needs valgrind, Python 3.11+")
def test_a_worker_under_callgrind_counts_its_operations(tmp_path):
    res = bench.counted(ROOT, "textgyms/NetConfig-v4", "reset", 1, tmp_path, ["routing"])
    assert res["ops"] == EXPECTED["reset"]
    # a reset is some 10^6 instructions: far more than nothing, far less than the process
    assert 100_000 * res["ops"] < res["ir"] < 100_000_000 * res["ops"]
    # a reset ends with a collection of what it kept (bounded.gc_paused): it is found
    assert 0 < res["gc_ir"] < res["ir"] / 2
    assert list(tmp_path.iterdir()) == []  # its output file removed


def test_render_families_orders_by_new_cost_and_sums_every_family():
    def pair(old, new):
        return {"old": {"ir": old, "ops": 2}, "new": {"ir": new, "ops": 2}, "ratio": old / new}

    res = {"rounds": 1, "baseline": "abc", "kind": "wrong",
           "families": {"bgp": pair(4_000, 2_000), "nssa": pair(12_000, 3_000),
                        "vlan": pair(1_000, 1_000)}}
    lines = bench.render_families(res).splitlines()
    assert [ln.split("|")[1].strip() for ln in lines[2:5]] == ["`nssa`", "`bgp`", "`vlan`"]
    assert lines[2] == "| `nssa` | 6,000 | 1,500 | 4.00x | 50% |"
    # the total is the ratio of the sums, not a mean of the ratios
    assert lines[-1] == "| every family (sums) | 8,500 | 3,000 | 2.83x | 100% |"


def test_by_family_needs_exactly_one_kind(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["netconfig_instructions.py", "--by-family",
                                      "--kinds", "wrong,reset"])
    for name in ("by_family", "side_by_side"):  # refused before anything is counted
        monkeypatch.setattr(bench, name, lambda *_a, n=name: pytest.fail(f"{n} ran"))
    with pytest.raises(SystemExit) as exc:
        bench.main()
    assert exc.value.code == 2
    assert "--by-family counts one kind" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["wrong", "tool", "after_edit"])
def test_every_env_plays_its_kind_once_uncounted_before_any_count(monkeypatch, kind):
    """A step's first uses (imports, regular expressions) fall in the warm-up, not in the
    first measured operation."""
    log = []

    def plain(fn, *args, **kwargs):
        log.append("warm")
        return fn(*args, **kwargs)

    def measure(fn, *args, **kwargs):
        log.append("count")
        return fn(*args, **kwargs)

    monkeypatch.setattr(bench, "_plain", plain)
    monkeypatch.setattr(bench, "MEASURE", measure)
    bench.run_kind("textgyms/NetConfig-v4", kind, 1, ["routing"])
    warm = log.index("count")
    assert log[:warm] == ["warm"] * warm and "warm" not in log[warm:]
    assert warm == len(log) - warm  # the warm-up is one round of the same operations
