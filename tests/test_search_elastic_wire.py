"""The Elasticsearch backend on the wire, against a loopback stub of the ES REST API.

No Elasticsearch or OpenSearch server can run on this machine, so this stub (a few endpoints of
the REST API, answering from the documents it was sent) checks what the backend sends and how it
reads the answers: index creation and bulk loading, one ``_msearch`` round trip for a batch of
queries, the tie-break sort, the host filter, and keep-alive (one TCP connection for many calls).
Ranking quality is not tested here: it is the cluster's own BM25.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from textgyms.envs.search.backends import Doc
from textgyms.envs.search.backends.elastic import ElasticBackend


class _Stub(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    docs: dict[str, dict] = {}
    indexes: set[str] = set()
    log: list[tuple[str, str]] = []
    connections: set[int] = set()

    def _send(self, code: int, obj=None) -> None:
        body = b"" if obj is None else json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("X-Elastic-Product", "Elasticsearch")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def log_message(self, *args) -> None:  # quiet
        pass

    def _route(self) -> None:
        type(self).connections.add(id(self.connection))
        path = self.path.split("?")[0]
        type(self).log.append((self.command, path))
        body = self._body()
        if path == "/":
            return self._send(200, {"version": {"number": "9.0.0"}, "tagline": "stub"})
        if self.command == "HEAD":
            return self._send(200 if path.strip("/") in self.indexes else 404)
        if path.endswith("/_bulk") or path == "/_bulk":
            lines = [json.loads(x) for x in body.splitlines() if x.strip()]
            items = []
            for meta, src in zip(lines[::2], lines[1::2], strict=True):
                self.docs[meta["index"]["_id"]] = src
                items.append({"index": {"_id": meta["index"]["_id"], "status": 201}})
            return self._send(200, {"errors": False, "took": 1, "items": items})
        if path.endswith("/_msearch"):
            lines = [json.loads(x) for x in body.splitlines() if x.strip()]
            return self._send(200, {"responses": [self._search(b) for b in lines[1::2]]})
        if self.command == "PUT":
            self.indexes.add(path.strip("/"))
            return self._send(200, {"acknowledged": True, "index": path.strip("/")})
        return self._send(404, {"error": "unknown endpoint"})

    def _search(self, body: dict) -> dict:
        words = body["query"]["bool"]["must"][0]["multi_match"]["query"].split()
        host = [f["term"]["host"] for f in body["query"]["bool"].get("filter", [])]
        hits = [
            (sum(w in f"{d['title']} {d['text']}".lower() for w in words), d["id"])
            for d in self.docs.values()
            if not host or d["host"] == host[0]
        ]
        hits = sorted((h for h in hits if h[0] > 0), key=lambda h: (-h[0], h[1]))
        page = hits[body["from"] : body["from"] + body["size"]]
        return {
            "hits": {
                "total": {"value": len(hits), "relation": "eq"},
                "hits": [{"_id": str(i), "_score": s, "_source": {"id": i}} for s, i in page],
            }
        }

    do_GET = do_POST = do_PUT = do_HEAD = _route


@pytest.fixture
def stub():
    _Stub.docs, _Stub.indexes, _Stub.log, _Stub.connections = {}, set(), [], set()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


DOCS = [
    Doc(0, "wiki.example", "Zull", "Zull is a city in Trisland."),
    Doc(1, "wiki.example", "Trisland", "Trisland is a country. Capital: Zull."),
    Doc(2, "news.example", "Zull news", "An office opens in Zull."),
    Doc(3, "wiki.example", "Calvik", "Calvik is a city."),
]


def test_builds_the_index_once_and_batches_queries_in_one_msearch(stub):
    backend = ElasticBackend(url=stub, index="tg-test", docs=DOCS, timeout=5.0)
    assert ("PUT", "/tg-test") in _Stub.log and len(_Stub.docs) == 4
    before = len(_Stub.log)
    hits = backend.search_many(
        [("zull", 2, 0, None), ("zull", 2, 2, None), ("zull", 5, 0, "news.example")]
    )
    assert _Stub.log[before:] == [("POST", "/_msearch")]  # one round trip for three queries
    assert [h.doc_ids for h in hits] == [[0, 1], [2], [2]]
    assert [h.total for h in hits] == [3, 3, 1]
    assert backend.search("calvik", 3).doc_ids == [3]
    assert backend.search("", 3).doc_ids == []
    again = ElasticBackend(url=stub, index="tg-test", docs=None)  # exists: no rebuild
    assert again.search("trisland", 1).doc_ids in ([0], [1])
    assert _Stub.log.count(("PUT", "/tg-test")) == 1


def test_keeps_the_connection_alive(stub):
    backend = ElasticBackend(url=stub, index="tg-alive", docs=DOCS)
    for _ in range(20):
        backend.search("city", 2)
    assert len(_Stub.connections) == 1
