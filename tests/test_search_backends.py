"""Search backends: agreement, ties, filters, paging, the cache, and clear infrastructure errors."""

import time

import gymnasium as gym
import pytest
from index_replace import corrupt_a_copy, corrupt_by_rename

import textgyms  # noqa: F401  (registers the ids)
from textgyms.envs.search import corpora
from textgyms.envs.search.backends import Doc, build_atomic, index_path, open_backend
from textgyms.envs.search.backends.elastic import ElasticBackend
from textgyms.envs.search.backends.fts5 import FTS5Backend
from textgyms.envs.search.backends.tantivy_backend import TantivyBackend
from textgyms.envs.search.corpora import load_world
from textgyms.errors import IndexCorruptError, SearchBackendError


@pytest.fixture(scope="module")
def world():
    return load_world("fictionweb", (("distractors", False), ("pages", 3000), ("seed", 5)))


@pytest.fixture(scope="module")
def both(world):
    docs = list(corpora.docs_of(world))
    return TantivyBackend.in_memory(docs), FTS5Backend.in_memory(docs)


def _queries(world):
    ents = world.data.entities
    names = [e.name for e in ents[::23] if e.name not in world.data.homonyms][:80]
    return (
        names
        + [f"{e.name} {e.attr}".strip() for e in ents[5::211] if e.name not in world.data.homonyms][
            :20
        ]
    )


def test_tantivy_and_fts5_agree_on_top1(world, both):
    tv, fts = both
    queries = _queries(world)
    assert len(queries) >= 70
    for q in queries:
        a, b = tv.search(q, 1), fts.search(q, 1)
        assert a.doc_ids == b.doc_ids, q
        assert q.split()[0].casefold() in world.text(a.doc_ids[0]).casefold()


def test_ties_are_broken_by_doc_id():
    docs = [Doc(i, "wiki.example", "Same", "identical words here") for i in range(12)]
    for backend in (TantivyBackend.in_memory(docs), FTS5Backend.in_memory(docs)):
        assert backend.search("identical", 5).doc_ids == [0, 1, 2, 3, 4]
        assert backend.search("identical", 5, offset=5).doc_ids == [5, 6, 7, 8, 9]
        assert backend.search("identical", 5).total == 12


def test_site_filter_and_paging(both):
    for backend in both:
        hits = backend.search("office expansion", 10, site="news.example")
        assert hits.doc_ids and hits.total > 10
        page2 = backend.search("office expansion", 10, offset=10, site="news.example")
        assert not set(hits.doc_ids) & set(page2.doc_ids)
        assert backend.search("office expansion", 10, site="nowhere.example").doc_ids == []


def test_query_syntax_in_agent_text_never_breaks_a_search(both):
    for backend in both:
        for q in ['"unbalanced', "title:(x AND", "NOT OR AND", "*", "-", "a:b:c", "😀"]:
            hits = backend.search(q, 5)
            assert isinstance(hits.doc_ids, list)
        assert backend.search("", 5).doc_ids == []


def test_get_returns_stored_fields(world, both):
    for backend in both:
        doc = backend.get(7)
        assert doc["title"] == world.pages[7].title and doc["host"] == "wiki.example"


@pytest.mark.parametrize("name", ["tantivy", "fts5"])
def test_index_is_built_once_atomically_then_opened_read_only(tmp_path, name):
    docs = [Doc(i, "wiki.example", f"T{i}", f"word{i} common") for i in range(50)]
    path = index_path(tmp_path, "k", name)
    first = open_backend(name, docs, path)
    assert (path / "COMPLETE").exists()
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary dir left
    again = open_backend(name, None, path)  # no docs: must open what is there
    assert again.search("word7", 1).doc_ids == first.search("word7", 1).doc_ids == [7]


def test_builders_starting_at_once_build_an_index_once(tmp_path):
    """Sessions of a server (threads) or workers of a vector starting together on a cold
    cache: one builds, the others wait for it and open its index."""
    import threading

    final, built, start = tmp_path / "idx", [], threading.Barrier(8)

    def build(tmp):
        built.append(tmp)
        (tmp / "data").write_text("x")
        time.sleep(0.05)  # long enough for every other builder to reach the lock

    def builder():
        start.wait()
        build_atomic(final, build)

    threads = [threading.Thread(target=builder) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1
    assert (final / "COMPLETE").exists() and (final / "data").read_text() == "x"
    assert [p.name for p in tmp_path.iterdir()] == ["idx"]


@pytest.mark.parametrize("name", ["tantivy", "fts5"])
def test_missing_index_raises_a_named_error(tmp_path, name):
    with pytest.raises(IndexCorruptError, match="no index"):
        open_backend(name, None, tmp_path / "absent")


@pytest.mark.parametrize("name", ["tantivy", "fts5"])
def test_corrupt_index_raises_a_named_error(tmp_path, name):
    # The copy is corrupted, never the index a live reader maps (tests/index_replace.py).
    assert str(tmp_path / "copy") in corrupt_a_copy(name, tmp_path)


def test_env_with_corrupt_cached_index_raises_a_named_error(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTGYMS_CACHE_DIR", str(tmp_path))
    env = gym.make("textgyms/Search-v1", pages=1000, backend="fts5")
    env.reset(seed=0)
    (path,) = (tmp_path / "search").iterdir()
    corrupt_by_rename("fts5", path)  # a new file: the first env's open connection keeps its own
    fresh = gym.make("textgyms/Search-v1", pages=1000, backend="fts5")
    with pytest.raises(IndexCorruptError):
        fresh.reset(seed=0)


def test_unreachable_elasticsearch_raises_a_clear_error():
    # Port 1 on the loopback interface: nothing listens there, so the connection is refused.
    with pytest.raises(SearchBackendError, match=r"127\.0\.0\.1:1 is unreachable"):
        ElasticBackend(url="http://127.0.0.1:1", docs=[], timeout=2.0)
    env = gym.make(
        "textgyms/Search-v1", pages=1000, backend="elasticsearch", es_url="http://127.0.0.1:1"
    )
    with pytest.raises(SearchBackendError, match="unreachable"):
        env.reset(seed=0)


def test_elasticsearch_request_body_is_a_bm25_query_with_tie_break():
    body = ElasticBackend._body('Zull "city', 10, 20, "wiki.example")
    assert body["query"]["bool"]["must"][0]["multi_match"]["query"] == "zull city"
    assert body["query"]["bool"]["filter"] == [{"term": {"host": "wiki.example"}}]
    assert body["sort"] == [{"_score": "desc"}, {"id": "asc"}]
    assert (body["size"], body["from"]) == (10, 20)


def test_a_world_pickles_as_the_call_that_built_it(world):
    """Pickling a world sends its parameters, not its pages; a world built by hand refuses."""
    import pickle

    from textgyms.envs.search.world import Page, World

    blob = pickle.dumps(world)
    assert len(blob) < 1000 and pickle.loads(blob) is world  # the loader's per-process cache
    loose = World("fictionweb", "k", [Page("https://wiki.example/wiki/A", "A", "A\nbody")])
    with pytest.raises(TypeError, match="load_world"):
        pickle.dumps(loose)
