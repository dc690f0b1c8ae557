"""Batched and memoised search equal one-by-one index calls, on both on-disk backends."""

import os

import pytest

from textgyms.envs.search import corpora
from textgyms.envs.search.backends import batch as bk
from textgyms.envs.search.backends import open_backend, search_many
from textgyms.envs.search.backends.fts5 import FTS5Backend
from textgyms.envs.search.backends.tantivy_backend import TantivyBackend
from textgyms.envs.search.corpora import load_world


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


# --- one vector step's searches, batched ----------------------------------------------------

_KW = {"corpus": "fictionweb", "pages": 1500, "max_turns": 8}


def _scripts(vec_envs) -> list[list[str]]:
    """Per env, three actions: searches that repeat across a group and differ between groups
    (whole questions among them, so that the first batch is worth helper threads), a second
    results page, a site filter, an invalid call, an open and an answer."""
    out = []
    for i, env in enumerate(vec_envs):
        task = env.unwrapped.task
        name = task.question.split("?")[0][-40:]
        out.append(
            [
                f"<search>{task.question} {i % 4}</search>"
                if i % 2
                else f"<search>{name}</search>",
                [f'<search page="2">{name}</search>', "<search></search>", "<open>1</open>"][i % 3],
                f'<search site="wiki.example">{name}</search>' if i % 4 else "<answer>x</answer>",
            ]
        )
    return out


def _play_one_by_one(seeds, scripts, backend):
    """Each env alone (no vector, no prefetch), with every memo empty before each step."""
    import gymnasium as gym

    from textgyms.envs.search import browser

    results = []
    for seed, script in zip(seeds, scripts):
        env = gym.make("textgyms/Search-v1", backend=backend, **_KW)
        rows = [env.reset(seed=seed)[0]]
        for action in script:
            bk._RESULTS.clear()
            browser._PAGES.clear()
            obs, reward, term, trunc, info = env.step(action)
            rows.append((obs, reward, term, trunc, info["status"], info["searches"]))
            if term or trunc:
                break
        results.append(rows)
        env.close()
    return results


@pytest.mark.parametrize("backend", ["tantivy", "fts5"])
def test_vector_step_prefetches_its_searches_with_one_by_one_results(backend, monkeypatch):
    """A serial vector runs the searches of a step in one batch before stepping (no index call
    happens inside a step), and every env sees what it sees when it plays alone."""
    import threading

    import textgyms
    from textgyms.envs.search import browser
    from textgyms.envs.search.env import SearchEnv

    cls = {"tantivy": TantivyBackend, "fts5": FTS5Backend}[backend]
    calls: list[tuple[bool, str]] = []
    inside = threading.local()
    real_search, real_respond = cls.search_uncached, SearchEnv.respond

    def search(self, *a):
        calls.append((getattr(inside, "step", False), threading.current_thread().name))
        return real_search(self, *a)

    def respond(self, state, action):
        inside.step = True
        try:
            return real_respond(self, state, action)
        finally:
            inside.step = False

    vec = textgyms.make_vec(
        "textgyms/Search-v1", 8, group_size=4, env_kwargs={**_KW, "backend": backend}
    )
    first, _ = vec.reset(seed=100)
    seeds = [env.unwrapped.np_random_seed for env in vec.envs]
    assert len(set(seeds)) == 2  # two groups of four
    scripts = _scripts(vec.envs)
    bk._RESULTS.clear()
    browser._PAGES.clear()
    monkeypatch.setattr(cls, "search_uncached", search)
    monkeypatch.setattr(SearchEnv, "respond", respond)
    rows = [[o] for o in first]
    live = [True] * 8
    for t in range(3):
        batch = vec.step([s[t] for s in scripts])
        for i in range(8):
            if live[i]:
                info = batch.infos[i].get("final_info", batch.infos[i])
                obs = batch.infos[i].get("final_obs", batch.observations[i])
                rows[i].append(
                    (
                        obs,
                        batch.rewards[i],
                        bool(batch.terminated[i]),
                        bool(batch.truncated[i]),
                        info["status"],
                        info["searches"],
                    )
                )
                live[i] = not (batch.terminated[i] or batch.truncated[i])
    vec.close()
    monkeypatch.undo()
    assert calls and not any(in_step for in_step, _ in calls)
    if backend == "tantivy" and len(os.sched_getaffinity(0)) > 1:
        assert any(name.startswith("textgyms-search") for _, name in calls)
    assert rows == _play_one_by_one(seeds, scripts, backend)


def test_results_pages_are_rendered_once_and_never_shared_mutably():
    """A GRPO group's repeated query is rendered once per process; each env still gets a View
    of its own (scrolling one never moves another) with the same content as a fresh render."""
    import gymnasium as gym

    from textgyms.envs.search import browser

    a, b = (gym.make("textgyms/Search-v1", **_KW).unwrapped for _ in range(2))
    a.reset(seed=3), b.reset(seed=3)
    browser._PAGES.clear()
    query = a.task.question
    first = a.browser.results(query, 2)
    assert len(browser._PAGES) == 1
    again = b.browser.results(query, 2)
    assert len(browser._PAGES) == 1 and again.view is not first.view
    assert again.view.lines is first.view.lines  # one rendering, shared read-only
    again.view.line = 7
    assert first.view.line == 0
    browser._PAGES.clear()
    fresh = a.browser.results(query, 2)
    assert (fresh.url, fresh.view.title, fresh.view.lines, fresh.view.results) == (
        first.url,
        first.view.title,
        first.view.lines,
        first.view.results,
    )
    assert a.browser.results(query, 1).view.lines != first.view.lines  # the page is in the key


def test_term_statistics_cache_is_bounded(world, index_dir, monkeypatch):
    """Agents write endless new words: the per-term document-frequency cache empties itself at
    its bound instead of growing for ever, and answers stay the same."""
    name, path = index_dir
    backend = open_backend(name, None, path)
    mod = __import__(type(backend).__module__, fromlist=["DF_CACHE_MAX"])
    monkeypatch.setattr(mod, "DF_CACHE_MAX", 5)
    query = world.data.entities[4].name
    expected = backend.search_uncached(query, 5)
    for i in range(40):
        backend.search_uncached(f"zq{i}x novelword{i}", 5)
        assert len(backend._df) <= 5
    assert backend.search_uncached(query, 5) == expected
