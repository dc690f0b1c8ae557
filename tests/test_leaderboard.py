"""Leaderboard protocol, statistics, rendering, and SIGINT-safe resumable eval."""

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from textgyms.cli import main
from textgyms.errors import ConfigError
from textgyms.evaluate import _SigintGuard, evaluate, load_results
from textgyms.leaderboard import build, find_runs, normalise, render_html, render_markdown
from textgyms.policies.scripted import ScriptedPolicy
from textgyms.protocol import PROTOCOL_VERSION
from textgyms.stats import (
    Z95,
    aggregate_env,
    mean_ci,
    median_ci,
    pass_at_k,
    pass_ks,
    wilson_ci,
)

ID = "textgyms/Wordle-v0"


# --- statistics against hand-computed values ---------------------------------------------------


def test_mean_ci_by_hand():
    mean, half = mean_ci([1, 2, 3, 4])  # s = sqrt(5/3) with ddof=1
    assert mean == 2.5 and half == pytest.approx(Z95 * math.sqrt(5 / 3) / 2)
    assert half == pytest.approx(1.26515, abs=1e-5)
    assert mean_ci([0.7]) == (0.7, 0.0)
    with pytest.raises(ValueError):
        mean_ci([])


def test_wilson_interval_by_hand():
    assert wilson_ci(5, 10) == pytest.approx((0.23659, 0.76341), abs=1e-5)
    low, high = wilson_ci(0, 10)  # high = z^2 / (n + z^2) at zero successes
    assert low == 0.0 and high == pytest.approx(Z95**2 / (10 + Z95**2))
    assert wilson_ci(10, 10) == pytest.approx((1 - high, 1.0))
    with pytest.raises(ValueError):
        wilson_ci(3, 2)


def test_median_interval_from_order_statistics():
    """The ranks of the textbook sign-test intervals: the 2nd and 8th of 9 values, the 40th
    and 61st of 100, the extremes of 6, none for 5 (no interval of 5 reaches 95%)."""
    assert median_ci([9, 1, 8, 2, 7, 3, 6, 4, 5]) == (5.0, 2.0, 8.0)
    assert median_ci(range(1, 101)) == (50.5, 40.0, 61.0)
    assert median_ci([4, 1, 6, 2, 5, 3]) == (3.5, 1.0, 6.0)
    assert median_ci([5, 1, 4, 2, 3]) == (3.0, None, None)
    with pytest.raises(ValueError):
        median_ci([])
    # Coverage: over many samples of 9 draws, the interval holds the true median >= 95%.
    rng = np.random.default_rng(0)
    hits = [lo <= 0.0 <= hi for _m, lo, hi in (median_ci(rng.standard_cauchy(9))
                                               for _ in range(4000))]
    assert np.mean(hits) > 0.95


def test_pass_at_k_unbiased_estimator():
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 - C(3,2)/C(5,2)
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - 21 / 252)  # 1 - C(7,5)/C(10,5)
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)  # pass@1 is the solve rate
    assert pass_at_k(4, 0, 3) == 0.0 and pass_at_k(4, 4, 3) == 1.0
    assert pass_at_k(4, 2, 3) == 1.0  # any 3 of 4 include one of the 2 solves
    for bad in [(2, 1, 3), (3, 4, 1), (3, 1, 0)]:
        with pytest.raises(ValueError):
            pass_at_k(*bad)
    assert pass_ks(1) == [1] and pass_ks(6) == [1, 2, 4, 6] and pass_ks(8) == [1, 2, 4, 8]


def _row(episode, sample, score, solved):
    return {
        "env_id": ID,
        "episode": episode,
        "sample": sample,
        "score": score,
        "solved": solved,
        "turns": 2,
        "invalid": 0,
        "wall_time": 0.1,
        "tokens": {"prompt": 10, "completion": 4},
    }


def test_aggregate_with_samples_by_hand():
    rows = [
        _row(0, 0, 1.0, True),
        _row(0, 1, 0.5, False),
        _row(1, 0, 0.2, False),
        _row(1, 1, 0.2, False),
    ]
    a = aggregate_env(rows)
    assert (a["n"], a["tasks"], a["samples"]) == (4, 2, 2)
    assert a["score"] == pytest.approx(0.475)  # mean of task means 0.75 and 0.2
    assert a["score_ci95"] == pytest.approx(Z95 * math.sqrt(2 * 0.275**2) / math.sqrt(2))
    assert a["solve_rate"] == 0.25 and a["pass_at_k"] == {"1": 0.25, "2": 0.5}
    assert a["solve_ci95"] == pytest.approx(list(wilson_ci(0.5, 2)))
    assert a["prompt_tokens"] == 10 and a["completion_tokens"] == 4


def test_normalise():
    assert normalise(0.5, 0.2, 1.0) == pytest.approx(0.375)
    assert normalise(0.1, 0.2, 1.0) == pytest.approx(-0.125)  # not clipped: worse than random
    assert normalise(0.5, None, 1.0) is None and normalise(0.5, 0.3, 0.3) is None


# --- runs, protocol, rendering -------------------------------------------------------------------


def _eval_argv(out: Path, episodes: int, *extra: str) -> list[str]:
    """``textgyms eval`` of the random policy on ``ID`` into ``out``, plus ``extra`` options."""
    return ["eval", "--policy", "random", "--envs", ID, "--episodes", str(episodes),
            "--out", str(out), "--quiet", *extra]


def _run(out: Path, kind="oracle", policy_seed=0, episodes=6, samples=1, **kw):
    policy = ScriptedPolicy(kind, seed=policy_seed)
    return evaluate(
        policy,
        [ID],
        episodes=episodes,
        samples=samples,
        out=out,
        concurrency=3,
        progress=False,
        **kw,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    _run(root / "a-oracle")
    _run(root / "b-random", "random")
    _run(root / "c-random7", "random", policy_seed=7)
    _run(root / "d-len4", "random", env_kwargs={"length": 4})
    return root


def test_samples_give_distinct_keys_and_pass_at_k(tmp_path):
    agg = _run(tmp_path / "s", "oracle", episodes=3, samples=3)[ID]
    rows = load_results(tmp_path / "s")
    assert sorted((r["episode"], r["sample"]) for r in rows) == [
        (j, s) for j in range(3) for s in range(3)
    ]
    assert all(r["seed"] == r["episode"] for r in rows)  # samples replay the task's seed
    assert agg["pass_at_k"] == {"1": 1.0, "2": 1.0, "3": 1.0} and agg["tasks"] == 3
    meta = json.loads((tmp_path / "s" / "metadata.json").read_text())
    rec = meta["protocol"]["envs"][ID]
    assert meta["protocol_version"] == PROTOCOL_VERSION and len(meta["protocol_id"]) == 12
    assert meta["protocol"]["sampling"] == {"name": "oracle", "type": "scripted", "seed": 0}
    assert rec["samples"] == 3 and rec["episodes"] == 3 and rec["split"] == "test"
    assert rec["max_turns"] == 9 and rec["kwargs"]["max_guesses"] == 6  # defaults resolved
    assert set(rec["data"]["files"]) >= {"data/answers-5.txt"} and len(rec["data_sha256"]) == 64


def test_resume_only_under_the_same_protocol(tmp_path, capsys):
    out = tmp_path / "r"
    _run(out, "random", episodes=4)
    before = load_results(out)
    _run(out, "random", episodes=4)  # same protocol: nothing to replay
    assert load_results(out) == before
    for extra, field in [
        (["--kwargs", '{"hard_mode": true}'], "kwargs"),
        (["--samples", "2"], "samples"),
        (["--seed", "1"], "seed"),
    ]:
        assert main(_eval_argv(out, 4, *extra)) == 2
        err = capsys.readouterr().err
        assert f"different protocol for {ID}" in err and f"{field}:" in err, err


def test_leaderboard_renders_ranked_runs(runs, tmp_path, capsys):
    assert main(["leaderboard", str(runs), "--out", str(tmp_path)]) == 0
    md = (tmp_path / "leaderboard.md").read_text()
    page = (tmp_path / "leaderboard.html").read_text()
    board = build(find_runs([runs]))
    names = [Path(r.name).name for r in board.runs]
    assert names[0] == "a-oracle" and names[-1] == "d-len4"  # n/a normalised ranks last
    by = {Path(r.name).name: r for r in board.runs}
    rnd, orc, r7 = (by[n].aggregates[ID]["score"] for n in ("b-random", "a-oracle", "c-random7"))
    assert by["c-random7"].score == pytest.approx((r7 - rnd) / (orc - rnd))
    assert by["b-random"].score == 0.0 and by["a-oracle"].score == 1.0
    assert f"{ID} [length=4]" in board.columns and by["d-len4"].score is None
    for run in board.runs:
        col = next(iter(run.aggregates))
        score = f"{run.aggregates[col]['score']:.3f} ± {run.aggregates[col]['score_ci95']:.3f}"
        assert run.name in md and score in md and score in page
    assert re.search(r"\| 1 \| \S+a-oracle \| oracle \| 1\.000 \|", md)
    assert "pass@1" in md and "Wordle-v0 [length=4]" in md and "n/a" in md
    assert page.count("<svg") == 1 + len(board.columns) and "<rect" in page
    for external in ("http", "src=", "<script", "url("):
        assert external not in page
    links = re.findall(r'href="([^"]+)"', page)  # each run's name links to its viewer page
    assert links and all((tmp_path / link).is_file() and link.startswith("view/") for link in links)
    assert str(tmp_path / "leaderboard.html") in capsys.readouterr().out
    assert render_markdown(board).count("| ") > 10 and "<table>" in render_html(board)


def test_leaderboard_refuses_different_protocols(runs, tmp_path, capsys):
    _run(tmp_path / "e-short", "oracle", episodes=4)
    assert main(["leaderboard", str(runs), str(tmp_path / "e-short")]) == 2
    err = capsys.readouterr().err
    assert "protocols differ" in err and "e-short" in err and "episodes: 6 != 4" in err
    assert "Traceback" not in err
    old = tmp_path / "old"
    _run(old, "random")
    meta = json.loads((old / "metadata.json").read_text())
    (old / "metadata.json").write_text(json.dumps({**meta, "protocol_version": "0"}))
    with pytest.raises(ConfigError, match="different protocol versions"):
        build(find_runs([runs / "a-oracle", old]))
    del meta["protocol"]
    (old / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(ConfigError, match="no protocol record"):
        find_runs([old])


def test_incomplete_runs_are_not_ranked(runs, tmp_path):
    part = tmp_path / "part"
    _run(part, "random")
    lines = (part / "results.jsonl").read_text().splitlines()
    (part / "results.jsonl").write_text("\n".join(lines[:3]) + "\n")
    board = build(find_runs([runs / "a-oracle", runs / "b-random", part]))
    run = next(r for r in board.runs if r.name == str(part))
    assert run.aggregates == {} and "3 episodes recorded" in run.incomplete[0]
    assert "incomplete" in render_markdown(board)


# --- SIGINT ------------------------------------------------------------------------------------


def test_sigint_is_held_while_a_record_is_written():
    with _SigintGuard() as guard:
        with pytest.raises(KeyboardInterrupt):
            with guard.held():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)  # the handler runs in this block but must not raise here
                reached = True
        assert reached
        with pytest.raises(KeyboardInterrupt):  # outside held(): at once
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)


def _without_wall_time(out):
    rows = [{k: v for k, v in r.items() if k != "wall_time"} for r in load_results(out)]
    return sorted(rows, key=lambda r: (r["episode"], r["sample"]))


def test_sigint_leaves_a_valid_resumable_run(tmp_path):
    out = tmp_path / "int"
    argv = _eval_argv(out, 300, "--concurrency", "2", "--seed", "3")
    proc = subprocess.Popen(
        [sys.executable, "-m", "textgyms.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    results = out / "results.jsonl"
    deadline = time.monotonic() + 120
    while not (results.exists() and results.read_text().count("\n") >= 4):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
    text = results.read_text()
    assert text.endswith("\n") and all(json.loads(line) for line in text.splitlines())
    assert 4 <= len(text.splitlines()) < 300
    assert main(argv) == 0  # resume
    assert main(_eval_argv(tmp_path / "ref", 300, "--concurrency", "2", "--seed", "3")) == 0
    assert _without_wall_time(out) == _without_wall_time(tmp_path / "ref")
    assert len(load_results(out)) == 300
