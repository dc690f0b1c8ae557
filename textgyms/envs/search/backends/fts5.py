"""The SQLite FTS5 backend: the zero-dependency fallback (Python's stdlib ``sqlite3``).

Ranked OR queries over a large corpus are slow in FTS5 when a query holds a very common term
(every matching row is scored), so terms that occur in more than ``COMMON_FRACTION`` of the
documents are pruned from the query when rarer terms remain (their IDF is near zero anyway).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textgyms.envs.search.backends.base import (
    COMMON_FRACTION,
    DF_CACHE_MAX,
    Doc,
    Hits,
    query_terms,
)
from textgyms.envs.search.backends.batch import cached_search
from textgyms.errors import IndexCorruptError, SearchBackendError

__all__ = ["FTS5Backend", "COMMON_FRACTION"]

_DB = "index.sqlite3"
_TOKENIZE = "porter unicode61 remove_diacritics 2"


class FTS5Backend:
    """BM25 (FTS5's ``bm25()``) over ``title`` and ``text``; ties broken by rowid."""

    name = "fts5"
    threadsafe = False  # an SQLite connection serves the thread that opened it

    def __init__(self, conn: sqlite3.Connection, path: Path | None) -> None:
        self._conn, self.path = conn, path
        self._n = conn.execute("SELECT count(*) FROM docs").fetchone()[0]
        self._df: dict[str, int] = {}

    @staticmethod
    def _create(conn: sqlite3.Connection, docs: Iterable[Doc]) -> None:
        conn.execute(
            f"CREATE VIRTUAL TABLE docs USING fts5(host UNINDEXED, title, text, "
            f"tokenize='{_TOKENIZE}')"
        )
        conn.execute("CREATE VIRTUAL TABLE vocab USING fts5vocab(docs, row)")
        conn.executemany(
            "INSERT INTO docs(rowid, host, title, text) VALUES (?, ?, ?, ?)",
            ((d.doc_id + 1, d.host, d.title, d.text) for d in docs),
        )
        conn.execute("INSERT INTO docs(docs) VALUES ('optimize')")
        conn.commit()

    @classmethod
    def build(cls, path: Path, docs: Iterable[Doc]) -> None:
        """Write an index of ``docs`` into the empty directory ``path``."""
        conn = sqlite3.connect(path / _DB)
        try:
            cls._create(conn, docs)
        finally:
            conn.close()

    @classmethod
    def open(cls, path: Path) -> FTS5Backend:
        """Open the index at ``path`` read-only; a bad index raises ``IndexCorruptError``."""
        db = path / _DB
        if not db.exists():
            raise IndexCorruptError(f"no FTS5 index at {db}")
        try:
            conn = sqlite3.connect(
                f"file:{db}?mode=ro&immutable=1", uri=True, check_same_thread=False
            )
            return cls(conn, path)
        except sqlite3.DatabaseError as exc:
            raise IndexCorruptError(f"FTS5 index at {db} is unreadable: {exc}") from exc

    @classmethod
    def in_memory(cls, docs: Iterable[Doc]) -> FTS5Backend:
        """An index held in RAM (for tests and benchmarks of small corpora)."""
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        cls._create(conn, docs)
        return cls(conn, None)

    def index(self, docs: Iterable[Doc]) -> None:
        """Not supported on an opened read-only index: build a new one with ``build``."""
        raise SearchBackendError("an FTS5 index is built once with FTS5Backend.build()")

    def _doc_freq(self, term: str) -> int:
        """Documents holding ``term`` (after stemming), cached per term."""
        if term not in self._df:
            if len(self._df) >= DF_CACHE_MAX:
                self._df.clear()
            row = self._conn.execute(
                "SELECT doc FROM vocab WHERE term = ?", (self._stem(term),)
            ).fetchone()
            self._df[term] = row[0] if row else 0
        return self._df[term]

    def _stem(self, term: str) -> str:
        # The vocabulary holds porter-stemmed tokens: let FTS5 itself tokenize the term, in a
        # scratch table of the connection's temp schema (writable even on a read-only file).
        c = self._conn
        if not getattr(self, "_scratch", False):
            c.execute(f"CREATE VIRTUAL TABLE temp.q USING fts5(t, tokenize='{_TOKENIZE}')")
            c.execute("CREATE VIRTUAL TABLE temp.qv USING fts5vocab(temp, q, row)")
            self._scratch = True
        c.execute("INSERT INTO temp.q(rowid, t) VALUES (1, ?)", (term,))
        row = c.execute("SELECT term FROM temp.qv LIMIT 1").fetchone()
        c.execute("DELETE FROM temp.q")
        return row[0] if row else term

    def _match(self, query: str) -> str | None:
        terms = list(dict.fromkeys(query_terms(query)))
        if not terms:
            return None
        rare = [t for t in terms if self._doc_freq(t) <= COMMON_FRACTION * self._n]
        keep = rare or terms
        return " OR ".join('"' + t.replace('"', "") + '"' for t in keep)

    def search(self, query: str, k: int, offset: int = 0, site: str | None = None) -> Hits:
        """The ``k`` best matches after ``offset`` (OR of the query's words); repeated queries
        are served from the process-wide results memo (:func:`cached_search`)."""
        return cached_search(self, self.search_uncached, query, k, offset, site)

    def search_uncached(
        self, query: str, k: int, offset: int = 0, site: str | None = None
    ) -> Hits:
        """``search`` computed by the index itself (no memo)."""
        match = self._match(query)
        if match is None or k <= 0:
            return Hits([], 0)
        where, args = "docs MATCH ?", [match]
        if site:
            where, args = where + " AND host = ?", [match, site]
        try:
            rows = self._conn.execute(
                f"SELECT rowid FROM docs WHERE {where} ORDER BY rank, rowid LIMIT ? OFFSET ?",
                (*args, k, offset),
            ).fetchall()
            total = self._conn.execute(f"SELECT count(*) FROM docs WHERE {where}", args)
            total = total.fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise IndexCorruptError(f"FTS5 index at {self.path} failed a query: {exc}") from exc
        return Hits([r[0] - 1 for r in rows], total)

    def get(self, doc_id: int) -> dict[str, Any]:
        """The stored fields of ``doc_id``."""
        row = self._conn.execute(
            "SELECT host, title, text FROM docs WHERE rowid = ?", (doc_id + 1,)
        ).fetchone()
        if row is None:
            raise KeyError(doc_id)
        return dict(zip(("host", "title", "text"), row, strict=True))

    def close(self) -> None:
        """Close the connection (idempotent)."""
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()
            self._conn = None

    __del__ = close
