"""The process-wide memo of results pages and the batched searches of one vector step.

Kept apart from the backends' opening and building: the on-disk backends call
:func:`cached_search` for every search, and the env calls :func:`prefetch` once per step.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from textgyms.cpus import thread_budget
from textgyms.envs.search.backends.base import Hits, query_terms

__all__ = ["Request", "cached_search", "prefetch", "search_many"]

# Results pages already computed in this process, shared by every env (and backend object) on
# the same on-disk index: the members of a GRPO group play one task, so they repeat each other's
# queries, often in the same vector step. An on-disk index never changes once built, so a memo
# keyed by its path is exact. In-memory indexes (tests, benchmarks) are not memoised: an
# object's id can be reused by another index once it is freed. Bounded at 4,096 entries (about
# 1 KB each): a group's repeats come within a step or two, and a 100,000-episode soak of random
# queries with 16,384 entries grew each worker by about 20 MB before the memo was full.
_RESULTS: OrderedDict[tuple, Hits] = OrderedDict()
_RESULTS_MAX = 1 << 12


def cached_search(
    backend: Any, search: Any, query: str, k: int, offset: int, site: str | None
) -> Hits:
    """``search(terms, k, offset, site)`` through the process-wide memo.

    Both on-disk backends rank on ``query_terms(query)`` alone, so the key is the terms (queries
    that differ only in case or punctuation share one entry). The caller gets its own copy.
    """
    if backend.path is None:
        return search(query, k, offset, site)
    key = _memo_key(backend, (query, k, offset, site))
    hits = _RESULTS.get(key)
    if hits is None:
        hits = search(query, k, offset, site)
        _RESULTS[key] = hits
        if len(_RESULTS) > _RESULTS_MAX:
            _RESULTS.popitem(last=False)
    else:
        _RESULTS.move_to_end(key)
    return Hits(list(hits.doc_ids), hits.total)


Request = tuple[str, int, int, str | None]  # (query, k, offset, site)


def _memo_key(backend: Any, request: Request) -> tuple:
    """The memo key of a request: the backend's own path object (every key shares it instead
    of holding a copy of the string) and the query's terms, which are all it ranks on."""
    query, k, offset, site = request
    return (backend.name, backend.path, tuple(query_terms(query)), k, offset, site or None)


_POOL: tuple[int, ThreadPoolExecutor, int] | None = None  # (pid, pool, its threads)
# A batch runs on helper threads only when its distinct requests hold this many query terms in
# all: a search's cost grows with its terms, and handing work to another thread (waking it,
# then passing the GIL back and forth around each search) costs about 0.2 ms. Measured on 94k
# pages, 16 searches: entity names (2-3 terms each) ran 0.97 ms one by one and 1.16 ms on two
# threads; whole questions (about 20 terms) 5.7 ms and 3.6 ms.
_PARALLEL_MIN_TERMS = 64


def _pool() -> tuple[ThreadPoolExecutor, int] | None:
    """This process's helper search threads (its thread budget, less the caller), or None on
    a budget of one. Made again after a fork: a pool's threads do not survive into the child."""
    global _POOL
    helpers = thread_budget() - 1
    if helpers < 1:
        return None
    if _POOL is None or _POOL[0] != os.getpid() or _POOL[2] != helpers:
        pool = ThreadPoolExecutor(helpers, thread_name_prefix="textgyms-search")
        _POOL = (os.getpid(), pool, helpers)
    return _POOL[1], _POOL[2]


def _run_all(backend: Any, requests: list[Request], parallel: bool) -> list[Hits]:
    """``backend.search_uncached`` of each request; with ``parallel``, the requests are split
    into one contiguous share per thread and the caller runs the first share itself (one handoff
    per helper thread, not one per request)."""
    helpers = _pool() if parallel and len(requests) > 1 else None
    if helpers is None:
        return [backend.search_uncached(*r) for r in requests]
    pool, threads = helpers
    size = -(-len(requests) // (threads + 1))
    chunks = [requests[i : i + size] for i in range(0, len(requests), size)]

    def run(chunk: list[Request]) -> list[Hits]:
        return [backend.search_uncached(*r) for r in chunk]

    futures = [pool.submit(run, chunk) for chunk in chunks[1:]]
    out = run(chunks[0])
    for future in futures:
        out += future.result()
    return out


def prefetch(backend: Any, requests: Sequence[Request]) -> int:
    """Put the results of ``requests`` (e.g. every search of one vector step) into the
    process-wide memo, so the searches the envs then make are memo hits; returns how many
    distinct requests ran.

    Requests already memoised, and repeats within the batch, are not run again. A backend that
    releases the GIL while it searches (``threadsafe = True``: tantivy) runs the rest on the
    threads of the budget when they hold enough query terms to be worth the handoff; the
    others run them one after the other. Results are exactly what ``backend.search``
    returns one by one: the memo is keyed as :func:`cached_search` keys it. Backends without a
    memo (in-memory or remote indexes) are left alone.
    """
    if getattr(backend, "path", None) is None:
        return 0
    todo: dict[tuple, Request] = {}
    for request in requests:
        key = _memo_key(backend, request)
        if key not in _RESULTS and key not in todo:
            todo[key] = request
    terms = sum(len(key[2]) for key in todo)
    parallel = getattr(backend, "threadsafe", False) and terms >= _PARALLEL_MIN_TERMS
    found = _run_all(backend, list(todo.values()), parallel)
    for key, hits in zip(todo, found):
        _RESULTS[key] = hits
    while len(_RESULTS) > _RESULTS_MAX:
        _RESULTS.popitem(last=False)
    return len(todo)


def search_many(backend: Any, requests: Sequence[Request]) -> list[Hits]:
    """The results of several ``(query, k, offset, site)`` requests (e.g. the searches of one
    vector step) in one batched call: equal to calling ``backend.search`` one by one.

    A backend with its own batch call (Elasticsearch's ``_msearch``) gets the whole batch; an
    on-disk index runs each distinct request once (see :func:`prefetch`); an in-memory index
    answers each distinct request in turn.
    """
    own = getattr(backend, "search_many", None)
    if own is not None:
        return own(list(requests))
    if getattr(backend, "path", None) is not None and len(requests) <= _RESULTS_MAX:
        prefetch(backend, requests)
        return [backend.search(*r) for r in requests]
    done: dict[tuple, Hits] = {}
    out = []
    for query, k, offset, site in requests:
        key = (tuple(query_terms(query)), k, offset, site or None)
        if key not in done:
            done[key] = backend.search(query, k, offset, site)
        out.append(Hits(list(done[key].doc_ids), done[key].total))
    return out
