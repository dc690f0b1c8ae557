"""``textgyms index build``: build a Search index into the cache ahead of training.

Examples::

    textgyms index build corpus.jsonl --backend tantivy      # a Search-R1-style JSONL corpus
    textgyms index build fictionweb --pages 100000           # a FictionWeb world
    textgyms index build geoweb --backend fts5

Envs made later with the same corpus find the index in the cache (``$TEXTGYMS_CACHE_DIR``,
default ``~/.cache/textgyms``) and open it read-only.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from textgyms.envs.search.backends import Doc, index_path, open_backend
from textgyms.envs.search.world import cache_dir, world_key

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``index`` (with its ``build`` action) to the textgyms CLI's subparsers."""
    p = subparsers.add_parser("index", help="build search indexes for textgyms/Search-v1")
    sub = p.add_subparsers(dest="index_command", required=True)
    b = sub.add_parser("build", help="build the index of a corpus into the cache")
    b.add_argument("corpus", help="fictionweb, geoweb, sample, or a path to corpus.jsonl")
    b.add_argument("--backend", default="tantivy", choices=("tantivy", "fts5"))
    b.add_argument("--pages", type=int, default=10_000, help="FictionWeb size")
    b.add_argument("--world-seed", type=int, default=0, help="FictionWeb seed")
    b.add_argument("--split", default="train", choices=("train", "test"))
    b.add_argument("--min-population", type=int, default=100_000, help="GeoWeb city cutoff")
    b.add_argument(
        "--repair", action="store_true",
        help="if a cached index exists but does not open, rebuild it and swap it in atomically "
        "(processes that have the old one open keep reading their own files)",
    )
    return p


def _jsonl_docs(path: str) -> tuple[str, list[Doc]]:
    from textgyms.envs.search.jsonl import file_sha256, read_corpus
    from textgyms.envs.search.world import plain_text

    key = world_key("jsonl", {"sha": file_sha256(path)})
    pages = read_corpus(path)
    return key, [Doc(i, p.host, p.title, plain_text(p.body)) for i, p in enumerate(pages)]


def run(args: argparse.Namespace) -> int:
    """Run ``textgyms index build``; returns the exit code."""
    from textgyms.envs.search import corpora
    from textgyms.errors import ConfigError

    start = time.perf_counter()
    try:
        if args.corpus.endswith(".jsonl"):
            key, docs = _jsonl_docs(args.corpus)
        else:
            spec = corpora.resolve(
                args.corpus,
                split=args.split,
                world_seed=args.world_seed,
                pages=args.pages,
                min_population=args.min_population,
                qa=None if args.corpus != "sample" else str(corpora.SAMPLE_QA),
            )
            world = spec.world()
            key, docs = world.key, list(corpora.docs_of(world))
    except (ConfigError, OSError) as exc:
        print(f"textgyms index build: {exc}", file=sys.stderr)
        return 2
    path = index_path(cache_dir(), key, args.backend)
    backend = open_backend(args.backend, docs, path, repair=args.repair)
    hits = backend.search(docs[0].title, 1)
    secs = time.perf_counter() - start
    print(
        f"{args.backend} index of {len(docs):,} documents at {path} ({secs:.1f} s); "
        f"top hit for the first title: doc {hits.doc_ids[0] if hits.doc_ids else None}"
    )
    return 0
