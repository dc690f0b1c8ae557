"""Which world and task generator a ``corpus`` kwarg names, and opening its index."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from textgyms.core import generate_in_split
from textgyms.datafiles import checked_bytes, recorded_sums
from textgyms.envs.search.backends import Doc, index_path, open_backend
from textgyms.envs.search.tasks.generate import SearchTask
from textgyms.envs.search.world import World, cache_dir
from textgyms.errors import ConfigError

__all__ = [
    "CorpusSpec",
    "resolve",
    "load_world",
    "open_index",
    "SAMPLE_CORPUS",
    "SAMPLE_QA",
    "docs_of",
]

DATA = Path(__file__).parent / "data"
SAMPLE_CORPUS, SAMPLE_QA = DATA / "sample_corpus.jsonl", DATA / "sample_qa.jsonl"
TEST_SEED_OFFSET = 1_000_003  # test worlds use other seeds than train worlds
CORPORA = ("fictionweb", "geoweb", "sample", "<path to corpus.jsonl>")
DISTRACTOR_LEVEL = 3  # the noise level from which FictionWeb has stale and conflicting pages
_WORLD_LOCK = threading.Lock()  # one world build at a time per process


@functools.lru_cache(maxsize=8)
def load_world(kind: str, params: tuple[tuple[str, Any], ...]) -> World:
    """Build (once per process) the world of ``kind`` with ``params``."""
    kw = dict(params)
    if kind == "fictionweb":
        from textgyms.envs.search.fictionpages import build_fictionweb

        world = build_fictionweb(**kw)
    elif kind == "geoweb":
        from textgyms.envs.search.geoweb import build_geoweb

        world = build_geoweb(**kw)
    elif kind == "jsonl":
        from textgyms.envs.search.jsonl import build_jsonl_world

        world = build_jsonl_world(**kw)
    else:
        raise ValueError(f"unknown world kind {kind!r}")
    world.rebuild = (load_world, (kind, params))
    return world


@dataclass(frozen=True)
class CorpusSpec:
    """A corpus: how to build its world and draw its tasks."""

    kind: str
    params: tuple[tuple[str, Any], ...]
    split: str
    grounded: bool

    def world(self) -> World:
        """The world (built once per process, even when many threads ask at once)."""
        with _WORLD_LOCK:  # lru_cache alone lets every waiting thread build its own copy
            return load_world(self.kind, self.params)

    def task(
        self,
        rng: np.random.Generator,
        world: World,
        difficulty: str,
        results: Callable[[str], str],
        ambiguous_rate: float,
    ) -> SearchTask:
        """A task of this corpus."""
        if self.kind == "fictionweb":
            from textgyms.envs.search.tasks.generate import fiction_task

            return fiction_task(rng, world.data, world.key, difficulty, results, ambiguous_rate)
        if self.kind == "geoweb":
            from textgyms.envs.search.geoweb import geo_task

            return geo_task(rng, world, difficulty, self.split, results)
        from textgyms.envs.search.jsonl import qa_task

        # A task file has no splits of its own: hold out a fixed hash share of its questions.
        return generate_in_split(lambda: qa_task(rng, world, difficulty, results), self.split)

    def data_sha256(self) -> dict[str, str]:
        """sha256 of the data the corpus reads."""
        if self.kind == "jsonl":
            p = dict(self.params)
            from textgyms.envs.search.jsonl import file_sha256

            return {"corpus": p["sha"], "qa": file_sha256(p["qa"])}
        return {self.kind: self.world().sha256()}


@functools.cache
def check_data() -> None:
    """Check the shipped data files against ``data/SHA256SUMS`` (once per process)."""
    for name in recorded_sums(DATA):
        checked_bytes(DATA, name, "Search data file", "reinstall textgyms")


def resolve(
    corpus: str,
    *,
    split: str,
    world_seed: int,
    pages: int,
    min_population: int,
    qa: str | None,
    noise: int = 0,
) -> CorpusSpec:
    """The spec of ``corpus``: fictionweb, geoweb, sample, or a path to a JSONL corpus.

    A FictionWeb world has stale and conflicting distractor pages only at the top noise level
    (another world, so another cache key and index)."""
    if corpus == "fictionweb":
        seed = world_seed + (TEST_SEED_OFFSET if split == "test" else 0)
        params = (("distractors", noise >= DISTRACTOR_LEVEL), ("pages", pages), ("seed", seed))
        return CorpusSpec("fictionweb", params, split, True)
    if corpus in ("geoweb", "sample"):
        check_data()
    if corpus == "geoweb":
        if not isinstance(min_population, int) or min_population < 0:
            raise ConfigError(f"min_population must be an int >= 0, got {min_population!r}")
        return CorpusSpec("geoweb", (("min_population", min_population),), split, True)
    if corpus == "sample":
        corpus, qa = str(SAMPLE_CORPUS), str(SAMPLE_QA)
    if not isinstance(corpus, str) or not corpus.endswith(".jsonl"):
        raise ConfigError(f"unknown corpus {corpus!r}; choose one of: {', '.join(CORPORA)}")
    if not Path(corpus).is_file():
        raise ConfigError(f"corpus file {corpus} does not exist")
    if qa is None or not Path(qa).is_file():
        raise ConfigError(f"corpus={corpus!r} needs qa='path/to/qa.jsonl' (got {qa!r})")
    from textgyms.envs.search.jsonl import file_sha256

    params = (("corpus", corpus), ("qa", qa), ("sha", file_sha256(corpus)))
    return CorpusSpec("jsonl", params, split, False)


def docs_of(world: World):
    """The documents a backend indexes for ``world``."""
    for i, p in enumerate(world.pages):
        yield Doc(i, p.host, p.title, world.text(i))


def open_index(world: World, backend: str, **kw: Any):
    """Open ``world``'s index for ``backend``, building it into the cache the first time."""
    if backend == "elasticsearch":
        return open_backend(
            backend,
            list(docs_of(world)),
            None,
            index=f"textgyms-{world.key}",
            url=kw.get("es_url", "http://127.0.0.1:9200"),
        )
    return open_backend(backend, docs_of(world), index_path(cache_dir(), world.key, backend))
