"""Batched and memoised search equal one-by-one index calls, on both on-disk backends."""

import pytest

from textgyms.envs.search import backends as bk
from textgyms.envs.search import corpora
from textgyms.envs.search.backends import open_backend, search_many
from textgyms.envs.search.world import load_world


@pytest.fixture(scope="module")
def world():
    return load_world("fictionweb", (("distractors", False), ("pages", 1500), ("seed", 11)))


@pytest.fixture(scope="module", params=["tantivy", "fts5"])
def index_dir(request, world, tmp_path_factory):
    path = tmp_path_factory.mktemp("idx") / request.param
    open_backend(request.param, corpora.docs_of(world), path)  # builds it
    return request.param, path


def _requests(world):
    """Entity names (as typed and as shouted), pages 1-3, a site filter, junk and empties."""
    ents = [e for e in world.data.entities[::37] if e.name not in world.data.homonyms][:25]
    host = world.pages[0].host
    reqs = []
    for n, e in enumerate(ents):
        reqs.append((e.name, 5, (n % 3) * 5, None))
        reqs.append((f"  {e.name.upper()}!? ", 5, 0, None))
        reqs.append((f"{e.name} {e.attr}", 3, 0, host if n % 4 == 0 else None))
    return reqs + [("", 5, 0, None), ("::\"'", 5, 0, None), ("zzqx qqzv", 5, 0, None)]


def test_memo_and_batch_equal_one_by_one(world, index_dir):
    name, path = index_dir
    fresh = open_backend(name, None, path)
    expected = [fresh.search_uncached(*r) for r in _requests(world)]
    assert any(h.doc_ids for h in expected) and any(not h.doc_ids for h in expected)
    bk._RESULTS.clear()
    # A GRPO-like batch: every request eight times, interleaved, as one vector step sends them.
    batch = _requests(world) * 8
    batched = search_many(open_backend(name, None, path), batch)
    assert batched == expected * 8
    # Other backend objects on the same index now hit the shared memo, with the same answers.
    other = open_backend(name, None, path)
    assert [other.search(*r) for r in _requests(world)] == expected


def test_memo_is_shared_per_index_and_returns_copies(world, index_dir):
    name, path = index_dir
    bk._RESULTS.clear()
    query = world.data.entities[3].name
    first = open_backend(name, None, path).search(query, 5)
    assert first.doc_ids and len(bk._RESULTS) == 1
    first.doc_ids.clear()  # a caller mutating its copy must not change the memo
    again = open_backend(name, None, path).search(query.upper() + "?", 5)
    assert len(bk._RESULTS) == 1  # same terms, same index: one entry
    assert again == open_backend(name, None, path).search_uncached(query, 5)
    assert again.doc_ids


def test_memo_keeps_indexes_apart(world, index_dir, tmp_path):
    """Two indexes of different worlds never share a results page."""
    name, path = index_dir
    other_world = load_world("fictionweb", (("distractors", False), ("pages", 600), ("seed", 12)))
    other_path = tmp_path / name
    small = open_backend(name, corpora.docs_of(other_world), other_path)
    query = world.data.entities[0].name
    big = open_backend(name, None, path)
    assert big.search(query, 5) == big.search_uncached(query, 5)
    assert small.search(query, 5) == small.search_uncached(query, 5)


def test_in_memory_indexes_are_not_memoised(world):
    """An in-memory index's object id can be reused after it is freed: no memo for those."""
    from textgyms.envs.search.backends.tantivy_backend import TantivyBackend

    bk._RESULTS.clear()
    docs = list(corpora.docs_of(world))[:300]
    mem = TantivyBackend.in_memory(docs)
    query = world.pages[5].title
    assert mem.search(query, 5) == mem.search_uncached(query, 5)
    assert mem.search(query, 5).doc_ids and not bk._RESULTS
