"""Search backends behind one protocol: ``index(docs)``, ``search(q, k, offset, site)``,
``get(doc_id)``.

``tantivy`` (default) and ``fts5`` (SQLite, stdlib) build an on-disk index once per world into
the cache directory (``$TEXTGYMS_CACHE_DIR``, default ``~/.cache/textgyms``), under a key that
hashes everything that determines it; a build happens in a temporary directory that is renamed
into place, so parallel workers never see a half-built index, and every worker opens it
read-only. ``elasticsearch`` talks to a cluster. Ranking is BM25 over the title and text; ties
are broken by doc id, so results are deterministic.

The shared types and tokenizer live in ``base``, the results memo and batched searches in
``batch``; both are re-exported here. The backend modules import only those two, so this
package can import them lazily without a circle.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from textgyms.envs.search.backends.base import (
    COMMON_FRACTION,
    DF_CACHE_MAX,
    MAX_QUERY_TERMS,
    Backend,
    Doc,
    Hits,
    query_terms,
)
from textgyms.envs.search.backends.batch import (
    Request,
    cached_search,
    prefetch,
    search_many,
)
from textgyms.errors import ConfigError, IndexCorruptError

__all__ = [
    "Doc",
    "Hits",
    "Backend",
    "BACKENDS",
    "COMMON_FRACTION",
    "DF_CACHE_MAX",
    "MAX_QUERY_TERMS",
    "Request",
    "query_terms",
    "open_backend",
    "build_atomic",
    "replace_atomic",
    "cached_search",
    "index_path",
    "search_many",
    "prefetch",
]

BACKENDS = ("tantivy", "fts5", "elasticsearch")
INDEX_VERSION = "1"

@contextlib.contextmanager
def _builders_lock(final: Path):
    """Hold the lock that builders and replacers of the indexes beside ``final`` take turns on.

    flock locks belong to each open of the directory, so threads of one process take turns too;
    locking the directory leaves no lock files behind."""
    final.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(final.parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _build_into_temp(final: Path, build: Callable[[Path], None]) -> Path:
    """Run ``build`` in a fresh private directory beside ``final`` and mark it complete; a
    build that raises leaves nothing behind."""
    tmp = Path(tempfile.mkdtemp(prefix=final.name + ".tmp-", dir=final.parent))
    try:
        build(tmp)
        (tmp / "COMPLETE").write_text("ok\n")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp


def build_atomic(final: Path, build: Callable[[Path], None]) -> None:
    """Run ``build(tmpdir)`` and rename the result to ``final``, once: builders (the threads
    of a server's sessions, the workers of a vector, other processes) take turns on a lock of
    the directory that holds the indexes, and those that get it after the first find the index
    built and return (before, 256 sessions starting at once built it 256 times). A builder
    that crashed leaves no index, so the next one builds it."""
    with _builders_lock(final):
        if (final / "COMPLETE").exists():
            return
        tmp = _build_into_temp(final, build)
        try:
            os.rename(tmp, final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)  # only left if the rename failed


def replace_atomic(final: Path, build: Callable[[Path], None], sound: Callable[[], bool]) -> bool:
    """Replace the index at ``final`` by a new build unless ``sound()`` says it opens now.

    Files of an index are never rewritten in place: the new index is built in a private
    directory; the old directory is renamed aside, the new one renamed into place, and the old
    one deleted. A process that has the old index open keeps reading its own files (deleted
    files stay valid while mapped) until it reopens. Runs under the builders' lock and checks
    ``sound()`` there, so of several processes that found the index bad only the first
    rebuilds it. Returns whether it replaced the index.
    """
    with _builders_lock(final):
        if sound():
            return False
        tmp = _build_into_temp(final, build)
        aside = Path(tempfile.mkdtemp(prefix=final.name + ".old-", dir=final.parent))
        try:
            if final.exists():
                os.replace(final, aside / "index")  # a rename: no file is rewritten
            os.rename(tmp, final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.rmtree(aside, ignore_errors=True)
        return True


@functools.cache
def _backend_digest(backend: str) -> str:
    """A digest of the backend's source and of the shared types and tokenizer: a changed
    schema or tokenizer gets a new index."""
    module = {"tantivy": "tantivy_backend.py", "fts5": "fts5.py"}.get(backend, "__init__.py")
    digest = hashlib.sha256()
    for name in ("base.py", module):
        digest.update((Path(__file__).parent / name).read_bytes())
    return digest.hexdigest()[:8]


def index_path(root: Path, world_key: str, backend: str) -> Path:
    """Where the index of ``world_key`` for ``backend`` is cached (the key also hashes the
    backend's source and ``INDEX_VERSION``)."""
    return root / f"{world_key}-{backend}-v{INDEX_VERSION}-{_backend_digest(backend)}"


def open_backend(
    name: str, docs: Sequence[Doc] | None, path: Path | None, *, repair: bool = False, **kw: Any
) -> Backend:
    """Open (building first if needed) backend ``name``.

    For on-disk backends ``path`` is the index directory; ``docs`` is used to build it when it
    does not exist (``None`` means it must exist already: a missing index raises
    ``IndexCorruptError``). An index that exists but does not open raises
    ``IndexCorruptError``, or with ``repair=True`` (and ``docs``) is rebuilt and swapped in
    atomically (:func:`replace_atomic`; ``textgyms index build --repair``).
    """
    if name == "elasticsearch":
        from textgyms.envs.search.backends.elastic import ElasticBackend

        return ElasticBackend(docs=docs, **kw)
    cls = _disk_backend(name)
    assert path is not None
    if not (path / "COMPLETE").exists():
        if docs is None:
            raise IndexCorruptError(f"no index at {path}; build it with `textgyms index build`")
        build_atomic(path, lambda tmp: cls.build(tmp, docs))
    if repair and docs is not None:
        replace_atomic(path, lambda tmp: cls.build(tmp, docs), lambda: _opens(cls, path))
    try:
        return cls.open(path)
    except IndexCorruptError as exc:
        raise IndexCorruptError(
            f"{exc}. Indexes are a cache: remove {path} (the next env rebuilds it) or rebuild "
            "it in place with `textgyms index build CORPUS --repair`"
        ) from exc


def _disk_backend(name: str) -> Any:
    """The class of on-disk backend ``name`` (imported lazily: each has its own deps)."""
    if name == "tantivy":
        from textgyms.envs.search.backends.tantivy_backend import TantivyBackend

        return TantivyBackend
    if name == "fts5":
        from textgyms.envs.search.backends.fts5 import FTS5Backend

        return FTS5Backend
    raise ConfigError(f"unknown backend {name!r}; choose one of: {', '.join(BACKENDS)}")


def _opens(cls: Any, path: Path) -> bool:
    """Whether the index at ``path`` is complete, opens and answers a query."""
    if not (path / "COMPLETE").exists():
        return False
    try:
        backend = cls.open(path)
    except IndexCorruptError:
        return False
    try:  # a damaged segment may open and fail on first use
        backend.search_uncached("the", 1)
    except (IndexCorruptError, ValueError, OSError, RuntimeError):
        return False
    finally:
        backend.close()
    return True
