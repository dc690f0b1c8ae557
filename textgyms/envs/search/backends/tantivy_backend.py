"""The tantivy backend (default): a Rust BM25 index on disk, opened read-only by every worker."""

from __future__ import annotations

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

__all__ = ["TantivyBackend"]

_TIE_SLACK = 8  # extra hits fetched so that equal scores at the cut are ordered by doc id


def _tantivy():
    try:
        import tantivy
    except ImportError as exc:  # an optional dependency: say how to get it
        raise SearchBackendError(
            "backend='tantivy' needs the tantivy package (pip install 'textgyms[search]'); "
            "backend='fts5' needs nothing"
        ) from exc
    return tantivy


def _schema():
    t = _tantivy()
    sb = t.SchemaBuilder()
    sb.add_integer_field("id", stored=True, indexed=True, fast=True)
    sb.add_text_field("host", stored=True, tokenizer_name="raw")
    # One field holding the title line and the text: BM25 over the whole document, as FTS5's
    # bm25() computes it over all columns, so the two backends rank alike.
    sb.add_text_field("all", stored=True, tokenizer_name="en_stem")
    return sb.build()


def _frozen(index: Any) -> Any:
    """``index`` with a reader that never follows the disk.

    tantivy's default reader watches ``meta.json`` from a background thread and reloads the
    segments when it changes; the segment files are memory-mapped, so a reload over files
    rewritten in place touches pages past their new end and the process dies with SIGBUS (no
    Python exception). Our indexes are immutable once built and replaced only by renaming a
    new directory into place (see ``backends.replace_atomic``), so a reader never needs to
    reload: a manual policy drops the watch, and a live reader keeps its own files.
    """
    index.config_reader(reload_policy="Manual", num_warmers=0)
    return index


def _document(t, d: Doc):
    return t.Document(id=d.doc_id, host=d.host, all=f"{d.title}\n{d.text}")


class TantivyBackend:
    """BM25 over title and text with tantivy; ties broken by doc id."""

    name = "tantivy"
    # tantivy releases the GIL while it searches, and a searcher may serve several threads at
    # once: the searches of one vector step can run on every core (see ``prefetch``).
    threadsafe = True

    def __init__(self, index: Any, path: Path | None) -> None:
        self._index, self.path = index, path
        self._searcher = index.searcher()
        self._schema = index.schema
        self._n = self._searcher.num_docs
        self._df: dict[str, int] = {}

    @classmethod
    def build(cls, path: Path, docs: Iterable[Doc]) -> None:
        """Write an index of ``docs`` into the empty directory ``path``."""
        t = _tantivy()
        index = _frozen(t.Index(_schema(), path=str(path)))
        writer = index.writer(heap_size=256_000_000, num_threads=1)
        for d in docs:
            writer.add_document(_document(t, d))
        writer.commit()
        writer.wait_merging_threads()

    @classmethod
    def open(cls, path: Path) -> TantivyBackend:
        """Open the index at ``path`` read-only; a bad index raises ``IndexCorruptError``."""
        t = _tantivy()
        try:
            index = _frozen(t.Index.open(str(path)))
            backend = cls(index, path)
            if backend._searcher.num_docs == 0:
                raise ValueError("the index holds no documents")
        except (ValueError, OSError, RuntimeError) as exc:
            raise IndexCorruptError(f"tantivy index at {path} is unreadable: {exc}") from exc
        return backend

    @classmethod
    def in_memory(cls, docs: Iterable[Doc]) -> TantivyBackend:
        """An index held in RAM (for tests and benchmarks of small corpora)."""
        t = _tantivy()
        index = t.Index(_schema())
        writer = index.writer(heap_size=128_000_000, num_threads=1)
        for d in docs:
            writer.add_document(_document(t, d))
        writer.commit()
        writer.wait_merging_threads()
        index = _frozen(index)  # a new manual reader sees the commit above
        return cls(index, None)

    def index(self, docs: Iterable[Doc]) -> None:
        """Not supported on an opened read-only index: build a new one with ``build``."""
        raise SearchBackendError("a tantivy index is built once with TantivyBackend.build()")

    def search(self, query: str, k: int, offset: int = 0, site: str | None = None) -> Hits:
        """The ``k`` best matches after ``offset`` (OR of the query's words); repeated queries
        are served from the process-wide results memo (:func:`cached_search`)."""
        return cached_search(self, self.search_uncached, query, k, offset, site)

    def search_uncached(
        self, query: str, k: int, offset: int = 0, site: str | None = None
    ) -> Hits:
        """``search`` computed by the index itself (no memo)."""
        terms = query_terms(query)
        if not terms or k <= 0:
            return Hits([], 0)
        t = _tantivy()
        # Common-term pruning, as in the FTS5 backend (same threshold, so they rank alike):
        # a term in most documents adds almost nothing to BM25 but costs a scan of its postings.
        rare = [w for w in dict.fromkeys(terms) if self._doc_freq(w) <= COMMON_FRACTION * self._n]
        q = self._index.parse_query(" ".join(rare or terms), ["all"])
        if site:
            host = t.Query.term_query(self._schema, "host", site)
            q = t.Query.boolean_query([(t.Occur.Must, q), (t.Occur.Must, host)])
        res = self._searcher.search(q, offset + k + _TIE_SLACK, count=True)
        ids = self._searcher.fast_field_values("id", [a for _, a in res.hits])
        ranked = sorted(zip((-s for s, _ in res.hits), ids, strict=True))
        return Hits([i for _, i in ranked[offset : offset + k]], res.count)

    def _doc_freq(self, term: str) -> int:
        """Documents holding ``term`` (after stemming), cached per term."""
        n = self._df.get(term)
        if n is None:
            if len(self._df) >= DF_CACHE_MAX:
                self._df.clear()
            q = self._index.parse_query(term, ["all"])
            n = self._df[term] = self._searcher.search(q, 1, count=True).count
        return n

    def get(self, doc_id: int) -> dict[str, Any]:
        """The stored fields of ``doc_id``."""
        t = _tantivy()
        q = t.Query.term_query(self._schema, "id", doc_id)
        hits = self._searcher.search(q, 1, count=False).hits
        if not hits:
            raise KeyError(doc_id)
        doc = self._searcher.doc(hits[0][1]).to_dict()
        title, _, text = doc["all"][0].partition("\n")
        return {"host": doc["host"][0], "title": title, "text": text}

    def close(self) -> None:
        """Drop the reader, so the index's files are unmapped once nothing else holds them."""
        self._searcher = self._index = None
