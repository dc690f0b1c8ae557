"""The Elasticsearch/OpenSearch backend, for corpora that outgrow one machine.

Uses the official ``elasticsearch`` client: one pooled HTTP connection per node kept alive
between calls (urllib3's pool; its sockets set ``TCP_NODELAY``, so small requests are not held
back by Nagle's algorithm), explicit request timeouts, and ``_msearch`` to send a batch of
queries (e.g. one per rollout of a vector step) in one round trip. An unreachable cluster raises
``SearchBackendError`` naming the URL at construction, never a hang.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from textgyms.envs.search.backends.base import Doc, Hits, query_terms
from textgyms.errors import SearchBackendError

__all__ = ["ElasticBackend"]

_MAPPINGS = {
    "properties": {
        "id": {"type": "integer"},
        "host": {"type": "keyword"},
        "title": {"type": "text", "analyzer": "english"},
        "text": {"type": "text", "analyzer": "english"},
    }
}


def _client(url: str, timeout: float):
    try:
        from elasticsearch import Elasticsearch
    except ImportError as exc:
        raise SearchBackendError(
            "backend='elasticsearch' needs the elasticsearch client "
            "(pip install 'textgyms[elastic]')"
        ) from exc
    return Elasticsearch(
        url,
        request_timeout=timeout,
        max_retries=0,
        retry_on_timeout=False,
        http_compress=False,
        connections_per_node=4,
    )


class ElasticBackend:
    """BM25 over ``title`` and ``text`` in an Elasticsearch index; ties broken by doc id."""

    name = "elasticsearch"

    def __init__(
        self,
        *,
        url: str = "http://127.0.0.1:9200",
        index: str = "textgyms",
        docs: Sequence[Doc] | None = None,
        timeout: float = 5.0,
    ) -> None:
        self.url, self.index_name = url, index
        self._es = _client(url, timeout)
        try:
            self._es.info()
            exists = bool(self._es.indices.exists(index=index))
        except Exception as exc:  # the client raises several transport error types
            raise SearchBackendError(
                f"Elasticsearch cluster at {url} is unreachable ({type(exc).__name__}: {exc}); "
                "start it, fix es_url, or use backend='tantivy'"
            ) from exc
        if not exists:
            if docs is None:
                raise SearchBackendError(f"index {index!r} does not exist at {url}")
            self.index(docs)

    def index(self, docs: Iterable[Doc]) -> None:
        """Create the index and bulk-load ``docs`` (refreshed, so searchable at once)."""
        from elasticsearch import helpers

        self._es.indices.create(index=self.index_name, mappings=_MAPPINGS)
        actions = (
            {
                "_index": self.index_name,
                "_id": str(d.doc_id),
                "_source": {"id": d.doc_id, "host": d.host, "title": d.title, "text": d.text},
            }
            for d in docs
        )
        helpers.bulk(self._es, actions, chunk_size=2000, refresh=True)

    @staticmethod
    def _body(query: str, k: int, offset: int, site: str | None) -> dict[str, Any]:
        match = {
            "multi_match": {
                "query": " ".join(query_terms(query)),
                "fields": ["title", "text"],
                "type": "most_fields",
            }
        }
        bool_q: dict[str, Any] = {"must": [match]}
        if site:
            bool_q["filter"] = [{"term": {"host": site}}]
        return {
            "query": {"bool": bool_q},
            "size": k,
            "from": offset,
            "_source": ["id"],
            "sort": [{"_score": "desc"}, {"id": "asc"}],
            "track_total_hits": True,
        }

    def search_many(self, queries: Sequence[tuple[str, int, int, str | None]]) -> list[Hits]:
        """Several searches in one ``_msearch`` round trip."""
        if not queries:
            return []
        searches: list[dict[str, Any]] = []
        for q, k, offset, site in queries:
            searches += [{"index": self.index_name}, self._body(q, k, offset, site)]
        try:
            out = self._es.msearch(searches=searches)
        except Exception as exc:
            raise SearchBackendError(f"Elasticsearch at {self.url} failed: {exc}") from exc
        hits = []
        for r in out["responses"]:
            if "error" in r:
                raise SearchBackendError(f"Elasticsearch query failed: {r['error']}")
            ids = [h["_source"]["id"] for h in r["hits"]["hits"]]
            hits.append(Hits(ids, r["hits"]["total"]["value"]))
        return hits

    def search(self, query: str, k: int, offset: int = 0, site: str | None = None) -> Hits:
        """The ``k`` best matches after ``offset``."""
        if not query_terms(query) or k <= 0:
            return Hits([], 0)
        return self.search_many([(query, k, offset, site)])[0]

    def get(self, doc_id: int) -> dict[str, Any]:
        """The stored fields of ``doc_id``."""
        src = self._es.get(index=self.index_name, id=str(doc_id))["_source"]
        return {f: src[f] for f in ("host", "title", "text")}

    def close(self) -> None:
        """Close the client's connections (the cluster's index stays)."""
        self._es.close()
