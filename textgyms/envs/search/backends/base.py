"""What every search backend shares: the page record it indexes (``Doc``), the results page it
returns (``Hits``), the protocol it implements, and the tokenizer that turns agent text into
query terms (so that all backends rank on the same words)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, NamedTuple, Protocol

__all__ = ["Doc", "Hits", "Backend", "query_terms", "COMMON_FRACTION", "DF_CACHE_MAX"]

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

    def close(self) -> None:
        """Release the index's files or connections (the backend is unusable after)."""


def query_terms(query: str) -> list[str]:
    """The lower-cased word tokens of agent text, at most ``MAX_QUERY_TERMS`` (query syntax of
    the engines is never exposed: an agent's quotes or colons cannot make a query fail)."""
    return [w.casefold() for w in _WORD.findall(query)][:MAX_QUERY_TERMS]
