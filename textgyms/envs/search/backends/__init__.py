"""Search backends behind one protocol: ``index(docs)``, ``search(q, k, offset, site)``,
``get(doc_id)``.

``tantivy`` (default) and ``fts5`` (SQLite, stdlib) build an on-disk index once per world into
the cache directory (``$TEXTGYMS_CACHE_DIR``, default ``~/.cache/textgyms``), under a key that
hashes everything that determines it; a build happens in a temporary directory that is renamed
into place, so parallel workers never see a half-built index, and every worker opens it
read-only. ``elasticsearch`` talks to a cluster. Ranking is BM25 over the title and text; ties
are broken by doc id, so results are deterministic.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import re
import shutil
import tempfile
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from textgyms.cpus import thread_budget
from textgyms.errors import ConfigError, IndexCorruptError

__all__ = [
    "Doc",
    "Hits",
    "Backend",
    "BACKENDS",
    "query_terms",
    "open_backend",
    "build_atomic",
    "cached_search",
    "search_many",
    "prefetch",
]

BACKENDS = ("tantivy", "fts5", "elasticsearch")
INDEX_VERSION = "1"
_WORD = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_TERMS = 32
# Query terms in more than this fraction of the documents are dropped from ranked OR queries
# when rarer terms remain (both on-disk backends, so they rank alike).
COMMON_FRACTION = 0.3
# Document frequencies a backend remembers per term. Agents write any words (typos, other
# languages), so the cache is emptied when it reaches this size instead of growing for ever.
DF_CACHE_MAX = 1 << 16


class Doc(NamedTuple):
    """What a backend indexes for one page."""

    doc_id: int
    host: str
    title: str
    text: str


class Hits(NamedTuple):
    """Doc ids of one results page, best first, and the total number of matches."""

    doc_ids: list[int]
    total: int


class Backend(Protocol):
    """The protocol every backend implements."""

    name: str

    def index(self, docs: Iterable[Doc]) -> None:
        """Index ``docs`` (doc ids are 0..n-1)."""

    def search(self, query: str, k: int, offset: int = 0, site: str | None = None) -> Hits:
        """The ``k`` best matches of ``query`` after ``offset``, optionally on one host."""

    def get(self, doc_id: int) -> dict[str, Any]:
        """The stored fields of a document (``host``, ``title``, ``text``)."""


def query_terms(query: str) -> list[str]:
    """The lower-cased word tokens of agent text, at most ``MAX_QUERY_TERMS`` (query syntax of
    the engines is never exposed: an agent's quotes or colons cannot make a query fail)."""
    return [w.casefold() for w in _WORD.findall(query)][:MAX_QUERY_TERMS]


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


def build_atomic(final: Path, build) -> None:
    """Run ``build(tmpdir)`` and rename the result to ``final``, once: builders (the threads
    of a server's sessions, the workers of a vector, other processes) take turns on a lock of
    the directory that holds the indexes, and those that get it after the first find the index
    built and return (before, 256 sessions starting at once built it 256 times). A builder
    that crashed leaves no index, so the next one builds it."""
    final.parent.mkdir(parents=True, exist_ok=True)
    # flock locks belong to each open of the directory, so threads of one process take turns
    # too; locking the directory leaves no lock files behind
    fd = os.open(final.parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if (final / "COMPLETE").exists():
            return
        tmp = Path(tempfile.mkdtemp(prefix=final.name + ".tmp-", dir=final.parent))
        try:
            build(tmp)
            (tmp / "COMPLETE").write_text("ok\n")
            os.rename(tmp, final)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    finally:
        os.close(fd)  # releases the lock


@functools.cache
def _backend_digest(backend: str) -> str:
    """A digest of the backend's source: a changed schema or tokenizer gets a new index."""
    module = {"tantivy": "tantivy_backend.py", "fts5": "fts5.py"}.get(backend, "__init__.py")
    return hashlib.sha256((Path(__file__).parent / module).read_bytes()).hexdigest()[:8]


def index_path(root: Path, world_key: str, backend: str) -> Path:
    """Where the index of ``world_key`` for ``backend`` is cached (the key also hashes the
    backend's source and ``INDEX_VERSION``)."""
    return root / f"{world_key}-{backend}-v{INDEX_VERSION}-{_backend_digest(backend)}"


def open_backend(name: str, docs: Sequence[Doc] | None, path: Path | None, **kw: Any) -> Backend:
    """Open (building first if needed) backend ``name``.

    For on-disk backends ``path`` is the index directory; ``docs`` is used to build it when it
    does not exist (``None`` means it must exist already: a missing index raises
    ``IndexCorruptError``).
    """
    if name == "tantivy":
        from textgyms.envs.search.backends.tantivy_backend import TantivyBackend as cls
    elif name == "fts5":
        from textgyms.envs.search.backends.fts5 import FTS5Backend as cls
    elif name == "elasticsearch":
        from textgyms.envs.search.backends.elastic import ElasticBackend

        return ElasticBackend(docs=docs, **kw)
    else:
        raise ConfigError(f"unknown backend {name!r}; choose one of: {', '.join(BACKENDS)}")
    assert path is not None
    if not (path / "COMPLETE").exists():
        if docs is None:
            raise IndexCorruptError(f"no index at {path}; build it with `textgyms index build`")
        build_atomic(path, lambda tmp: cls.build(tmp, docs))
    return cls.open(path)
