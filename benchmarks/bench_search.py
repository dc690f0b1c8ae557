"""Search benchmark: the emulated web's tool calls and build, tantivy vs FTS5 vs rank-bm25 vs bm25s.

On a FictionWeb world (100k pages; ``--quick``: 10k pages) this measures:

* building the world's pages and its tantivy index (wall seconds, in a fresh cache directory),
  and the peak resident memory of the process (``ru_maxrss``);
* a ``search`` tool call including parsing and the rendered results page (``respond`` of the
  env), and ``open`` / ``find`` tool calls: median CPU time per call (``time.process_time`` over
  batches of calls) and calls per CPU-second, for the tantivy and the FTS5 backend;
* top-10 retrieval alone, side by side on the same pages and queries, for tantivy, FTS5,
  ``rank-bm25`` (BM25Okapi) and ``bm25s``: CPU ms per query and ratios against tantivy, for
  entity-name queries (two or three words), whole questions (about 20 words) and all of them;
* the searches of one vector step of 16 envs (every env its own task, or GRPO groups of four):
  wall ms one by one vs as one batch before the step (distinct requests once, one thread per
  core), results checked equal;
* two worker processes sharing one on-disk tantivy index (each opens it read-only): search tool
  calls per wall second in total.

Queries are entity names and question texts of the world (fixed by the seed). Results go to
``benchmarks/results/search.json`` and ``search.md``. Run ``.venv/bin/python
benchmarks/bench_search.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import re
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results"
_WORD = re.compile(r"\w+")


def _tok(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def _batches(fn, items, batch: int = 20) -> list[float]:
    """CPU seconds per call, one value per batch of ``batch`` calls (median-able)."""
    out = []
    for i in range(0, len(items) - batch + 1, batch):
        t = time.process_time()
        for x in items[i : i + batch]:
            fn(x)
        out.append((time.process_time() - t) / batch)
    return out


def _stats(per_call: list[float]) -> dict[str, float]:
    med = statistics.median(per_call)
    return {"median_ms": med * 1e3, "calls_per_cpu_s": 1.0 / med if med else float("inf")}


def build(pages: int) -> dict:
    """World + tantivy index build time in a fresh cache dir; returns the env and timings."""
    import gymnasium as gym

    import textgyms  # noqa: F401

    t = time.perf_counter()
    env = gym.make("textgyms/Search-v1", pages=pages, max_turns=10**6).unwrapped
    world = env.spec_corpus.world()
    t_world = time.perf_counter() - t
    env.browser  # builds the index  # noqa: B018
    t_all = time.perf_counter() - t
    return {"env": env, "world": world, "world_s": t_world, "build_s": t_all}


def queries_of(env, world, n: int) -> list[str]:
    """Half entity names, half generated questions (fixed by the seeds)."""
    rng = np.random.default_rng(0)
    ents = world.data.entities
    names = [ents[int(i)].name for i in rng.integers(0, len(ents), n // 2)]
    questions = []
    for seed in range(n - len(names)):
        env.reset(seed=seed)
        questions.append(env.task.question)
    return names + questions


def tool_calls(env, queries: list[str]) -> dict:
    """search/open/find tool calls through ``respond`` (parse + backend + rendering)."""
    env.reset(seed=0)
    state = env.state
    queries = list(dict.fromkeys(queries))  # first-time queries: none served by the memo
    search = _batches(lambda q: env.respond(state, f"<search>{q}</search>"), queries)
    # The same queries again: what the other members of a GRPO group pay (results memo).
    again = _batches(lambda q: env.respond(state, f"<search>{q}</search>"), queries)
    urls = [env.browser.world.pages[i].url for i in range(0, 8000, 7)][: len(queries)]
    cold = _batches(lambda u: env.respond(state, f"<open>{u}</open>"), urls)  # first views
    warm = _batches(lambda u: env.respond(state, f"<open>{u}</open>"), urls)  # seen before
    find = _batches(lambda w: env.respond(state, f"<find>{w}</find>"), ["born", "in"] * 100)
    return {
        "search": _stats(search),
        "search (query repeated in a GRPO group)": _stats(again),
        "open (first view of a page)": _stats(cold),
        "open (page viewed before)": _stats(warm),
        "find": _stats(find),
    }


def _kinds(fn, queries: list[str]) -> dict[str, float]:
    """CPU ms per query of ``fn``: the median batch of entity-name queries, of whole-question
    queries (the first and second half of ``queries``), and the mean over all of them (the two
    kinds cost very differently, so one median over both would sit between them)."""
    half = len(queries) // 2
    names, questions = _batches(fn, queries[:half]), _batches(fn, queries[half:])
    return {
        "names_ms": statistics.median(names) * 1e3,
        "questions_ms": statistics.median(questions) * 1e3,
        "mean_ms": statistics.mean(names + questions) * 1e3,
    }


def peers(world, queries: list[str], k: int = 10) -> dict:
    """Top-k retrieval alone on the same documents and queries."""
    from textgyms.envs.search import corpora
    from textgyms.envs.search.backends.fts5 import FTS5Backend
    from textgyms.envs.search.backends.tantivy_backend import TantivyBackend

    docs = list(corpora.docs_of(world))
    out: dict[str, dict] = {}
    tv = TantivyBackend.in_memory(docs)
    # search_uncached: the index itself, as the peers have no results memo.
    out["tantivy"] = _kinds(lambda q: tv.search_uncached(q, k), queries)
    fts = FTS5Backend.in_memory(docs)
    out["fts5"] = _kinds(lambda q: fts.search_uncached(q, k), queries)
    corpus = [f"{d.title}\n{d.text}" for d in docs]
    try:
        import bm25s

        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenize(corpus, show_progress=False), show_progress=False)
        out["bm25s"] = _kinds(
            lambda q: retriever.retrieve(
                bm25s.tokenize([q], show_progress=False), k=k, show_progress=False
            ),
            queries,
        )
    except Exception as exc:  # a peer that fails is recorded, the others still measured
        out["bm25s"] = {"error": repr(exc)}
    try:
        from rank_bm25 import BM25Okapi

        okapi = BM25Okapi([_tok(c) for c in corpus])
        # it scores every document per query: a tenth of each kind
        half, tenth = len(queries) // 2, max(10, len(queries) // 20)
        few = queries[:tenth] + queries[half : half + tenth]
        out["rank_bm25"] = _kinds(lambda q: okapi.get_top_n(_tok(q), corpus, n=k), few)
    except Exception as exc:
        out["rank_bm25"] = {"error": repr(exc)}
    base = out["tantivy"]
    for v in out.values():
        if "mean_ms" in v:
            v["x_slower_than_tantivy"] = {m: v[m] / base[m] for m in base if m.endswith("_ms")}
    return out


def vector_steps(env, queries: list[str], envs: int = 16, reps: int = 12) -> dict:
    """The searches of one vector step of ``envs`` Search envs, on the env's on-disk tantivy
    index, from an empty results memo: run one by one, as each env's step makes them, or as
    one batch before the step (``prefetch``: distinct requests once, on helper threads when
    they hold enough query terms). Wall ms per step (the batch may use several cores), medians
    over ``reps`` steps of new queries, taking turns so machine load hits both alike; for
    entity-name and whole-question queries (the two halves of ``queries``), with every env on
    its own task or in GRPO groups of four; results checked equal."""
    from textgyms.envs.search.backends import batch as memo

    backend, k, half = env.browser.backend, env.k, len(queries) // 2
    out = {}
    for kind, pool in (("entity names", queries[:half]), ("whole questions", queries[half:])):
        for group in (1, 4):
            one, batch = [], []
            for r in range(reps):
                distinct = pool[(r * envs) % len(pool) :][: envs // group]
                requests = [(q, k, 0, None) for q in distinct for _ in range(group)]
                results = []
                for mode, times in (("one", one), ("batch", batch)):
                    memo._RESULTS.clear()
                    t = time.perf_counter()
                    if mode == "batch":
                        memo.prefetch(backend, requests)
                    results.append([backend.search(*q) for q in requests])
                    times.append(time.perf_counter() - t)
                assert results[0] == results[1], "batched search differs from one-by-one"
            out[f"{kind}, {envs} envs, groups of {group}"] = {
                "one_by_one_ms": statistics.median(one) * 1e3,
                "batched_ms": statistics.median(batch) * 1e3,
                "speedup": statistics.median(one) / statistics.median(batch),
            }
    return out


def _worker(pages: int, queries: list[str], seconds: float, barrier, out) -> None:
    """Open the shared index, wait for the other worker, then search for ``seconds``."""
    import gymnasium as gym

    import textgyms  # noqa: F401

    env = gym.make("textgyms/Search-v1", pages=pages, max_turns=10**6).unwrapped
    env.reset(seed=0)
    state, n = env.state, 0
    barrier.wait()
    end = time.perf_counter() + seconds
    from textgyms.envs.search import browser
    from textgyms.envs.search.backends import batch as memo

    while time.perf_counter() < end:
        if n % len(queries) == 0:  # every pass runs the index and renders: no memo from the last
            memo._RESULTS.clear()
            browser._PAGES.clear()
        env.respond(state, f"<search>{queries[n % len(queries)]}</search>")
        n += 1
    out.put(n)


def shared_index(pages: int, queries: list[str], seconds: float, workers: int = 2) -> dict:
    """``workers`` processes searching one on-disk index, opened read-only by each."""
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(workers), ctx.Queue()
    procs = [
        ctx.Process(target=_worker, args=(pages, queries, seconds, barrier, out))
        for _ in range(workers)
    ]
    for p in procs:
        p.start()
    counts = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    return {"workers": workers, "calls_per_s_total": sum(counts) / seconds, "calls": counts}


def write(result: dict) -> None:
    """Write search.json and the Markdown table search.md, and print the table."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "search.json").write_text(json.dumps(result, indent=2) + "\n")
    tc, pr = result["tool_calls"], result["retrieval_top10"]
    rows = [
        "| measure | value |",
        "|---|---|",
        f"| pages | {result['pages']:,} |",
        f"| build world (s) | {result['world_s']:.1f} |",
        f"| build world + tantivy index (s) | {result['build_s']:.1f} |",
        f"| peak memory (MB) | {result['peak_rss_mb']:.0f} |",
    ]
    for backend, calls in tc.items():
        for tool, s in calls.items():
            rows.append(
                f"| {backend} `{tool}` tool call: median ms / calls per CPU-s | "
                f"{s['median_ms']:.3f} / {s['calls_per_cpu_s']:,.0f} |"
            )
    one, two = result["single_worker"], result["shared_index"]
    rows.append(f"| 1 worker process: search calls per wall-s | {one['calls_per_s_total']:,.0f} |")
    rows.append(
        "| 2 worker processes sharing one index: search calls per wall-s (total) | "
        f"{two['calls_per_s_total']:,.0f} |"
    )
    rows += [
        "",
        "| top-10 retrieval, CPU ms / query (x tantivy) | entity names | whole questions"
        " | all (mean) |",
        "|---|---|---|---|",
    ]
    for name, s in pr.items():
        if "mean_ms" not in s:
            rows.append(f"| {name} | failed: {s['error']} | | |")
            continue
        x = s["x_slower_than_tantivy"]
        cells = [f"{s[m]:.3f} ({x[m]:.1f})" for m in ("names_ms", "questions_ms", "mean_ms")]
        rows.append(f"| {name} | {' | '.join(cells)} |")
    rows += ["", "| searches of one vector step (wall ms) | one by one | batched | speedup |"]
    rows.append("|---|---|---|---|")
    for name, v in result["vector_steps"].items():
        rows.append(
            f"| {name} | {v['one_by_one_ms']:.2f} | {v['batched_ms']:.2f} | {v['speedup']:.2f}x |"
        )
    (RESULTS / "search.md").write_text("\n".join(rows) + "\n")
    print("\n".join(rows))


def main() -> None:
    """Run every measurement and write the results."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="10k pages, fewer queries")
    ap.add_argument("--pages", type=int, default=None)
    args = ap.parse_args()
    pages = args.pages or (10_000 if args.quick else 100_000)
    n_queries = 100 if args.quick else 400
    os.environ["TEXTGYMS_CACHE_DIR"] = tempfile.mkdtemp(prefix="textgyms-bench-")
    built = build(pages)
    env, world = built["env"], built["world"]
    queries = queries_of(env, world, n_queries)
    calls = {"tantivy": tool_calls(env, queries)}
    import gymnasium as gym

    fts_env = gym.make("textgyms/Search-v1", pages=pages, backend="fts5", max_turns=10**6).unwrapped
    calls["fts5"] = tool_calls(fts_env, queries)
    result = {
        "pages": len(world.pages),
        "world_s": built["world_s"],
        "build_s": built["build_s"],
        "tool_calls": calls,
        "retrieval_top10": peers(world, queries),
        "vector_steps": vector_steps(env, queries),
        "single_worker": shared_index(pages, queries, 2.0 if args.quick else 5.0, 1),
        "shared_index": shared_index(pages, queries, 2.0 if args.quick else 5.0, 2),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "quick": args.quick,
    }
    write(result)


if __name__ == "__main__":
    main()
