"""Aggregates of evaluation episodes: means with 95% CIs, Wilson intervals, unbiased pass@k.

Pure functions over the per-episode rows of ``results.jsonl`` (see :mod:`textgyms.evaluate`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from textgyms.feedback_use import use_means

Z95 = 1.959963984540054  # two-sided 95% quantile of the standard normal


def mean_ci(values: Iterable[float]) -> tuple[float, float]:
    """Mean and 95% CI half-width ``z * s / sqrt(n)`` (normal approximation, ``s`` with
    ``ddof=1``); the half-width is 0 for fewer than two values."""
    x = np.asarray(list(values), dtype=float)
    if x.size == 0:
        raise ValueError("mean_ci of no values")
    half = Z95 * x.std(ddof=1) / math.sqrt(x.size) if x.size > 1 else 0.0
    return float(x.mean()), float(half)


def wilson_ci(successes: float, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval ``(low, high)`` of a proportion ``successes / n``.

    Unlike the normal approximation it stays inside [0, 1] and is not empty at 0 or n successes,
    which matters for solve rates of strong or weak policies on small test sets. ``successes``
    may be fractional (a sum of per-task solve rates, see :func:`aggregate_env`).
    """
    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(f"wilson_ci needs 0 <= successes <= n and n > 0, got {successes}/{n}")
    p, z2 = successes / n, Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def median_ci(values: Iterable[float]) -> tuple[float, float | None, float | None]:
    """The median and a distribution-free 95% interval for it: ``(median, low, high)``.

    The interval is ``(x_(k), x_(n+1-k))`` of the sorted values, with ``k`` the largest
    rank whose binomial tail ``P(Bin(n, 1/2) <= k - 1)`` is at most 2.5%: it covers the
    true median with probability at least 95% whatever the distribution (for 9 values,
    the 2nd and 8th, 96.1%). It assumes nothing of the values but independence, which
    suits ratios of noisy timings. Fewer than 6 values cannot give 95%: low and high are
    then None."""
    x = sorted(float(v) for v in values)
    n = len(x)
    if n == 0:
        raise ValueError("median_ci of no values")
    median = (x[(n - 1) // 2] + x[n // 2]) / 2
    k, tail = 0, 0.0
    while True:  # tail: P(Bin(n, 1/2) <= k), one term more per rank
        tail += math.comb(n, k) / 2**n
        if tail > 0.025:
            break
        k += 1
    if k == 0:
        return median, None, None
    return median, x[k - 1], x[n - k]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one task: ``1 - C(n-c, k) / C(n, k)`` for ``c`` of ``n`` solved.

    The probability that at least one of ``k`` samples drawn without replacement from the ``n``
    is a solve (Chen et al., 2021). Needs ``1 <= k <= n``.
    """
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@{k} needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}")
    if n - c < k:
        return 1.0  # every k-subset holds a solve
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_ks(samples: int) -> list[int]:
    """The k reported for ``samples`` plays per task: powers of two up to it, and itself."""
    ks = [1 << i for i in range(samples.bit_length()) if 1 << i <= samples]
    return sorted({*ks, samples})


def aggregate_env(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The aggregates of one env's episodes (see :func:`aggregate`)."""
    tasks: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        tasks.setdefault(int(r["episode"]), []).append(r)
    per_task = list(tasks.values())
    # Samples of one task are not independent: CIs are over per-task means when K > 1.
    score, score_ci = mean_ci(np.mean([r["score"] for r in t]) for t in per_task)
    solved = [sum(bool(r["solved"]) for r in t) for t in per_task]
    # Each task counts as one trial with its solve rate as outcome (with K = 1 the plain Wilson
    # interval), a conservative choice: K samples of a task are far from K independent trials.
    low, high = wilson_ci(sum(s / len(t) for s, t in zip(solved, per_task)), len(per_task))
    k_max = min(len(t) for t in per_task)
    out: dict[str, Any] = {
        "n": len(rows),
        "tasks": len(per_task),
        "samples": k_max,
        "score": score,
        "score_ci95": score_ci,
        "solve_rate": float(np.mean([r["solved"] for r in rows])),
        "solve_ci95": [low, high],
        "pass_at_k": {
            str(k): float(np.mean([pass_at_k(len(t), s, k) for t, s in zip(per_task, solved)]))
            for k in pass_ks(k_max)
        },
        "turns": float(np.mean([r["turns"] for r in rows])),
        "invalid": float(np.mean([r["invalid"] for r in rows])),
        "wall_time": float(np.mean([r["wall_time"] for r in rows])),
    }
    out.update(_token_means(rows))
    out["use"] = use_means(rows)  # feedback-use metrics: mean and count per metric
    return out


def _token_means(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    """Mean prompt/completion tokens per episode over the episodes that report tokens."""
    counted = [r["tokens"] for r in rows if r.get("tokens")]
    if not counted:
        return {"prompt_tokens": None, "completion_tokens": None}
    return {
        "prompt_tokens": float(np.mean([t["prompt"] for t in counted])),
        "completion_tokens": float(np.mean([t["completion"] for t in counted])),
    }


def aggregate(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per env id: ``n`` episodes, ``tasks``, ``samples`` (plays per task), ``score`` (mean) and
    ``score_ci95`` (95% CI half-width over tasks), ``solve_rate`` and ``solve_ci95`` (Wilson
    interval ``[low, high]`` over tasks, each weighing its solve rate), ``pass_at_k``
    (``{"1": ..., "2": ..., "K": ...}``, unbiased estimator averaged over tasks; pass@1 equals
    the solve rate), mean ``turns``, ``invalid`` actions and ``wall_time`` per episode, and mean
    ``prompt_tokens``/``completion_tokens`` per episode (None when the policy reports none)."""
    return {
        env_id: aggregate_env([r for r in rows if r["env_id"] == env_id])
        for env_id in sorted({r["env_id"] for r in rows})
    }
