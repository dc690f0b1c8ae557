"""Bring your own corpus: Search-R1-style JSONL corpora and question/answer files.

Corpus rows are ``{"id", "contents"}`` (``contents`` = a quoted title line, then the text, as
Search-R1 prepares Wikipedia) or ``{"id", "url", "title", "text"}``. QA rows are
``{"question", "answers": [...]}`` (``golden_answers`` is accepted too, as in Search-R1's NQ and
HotpotQA files). Pages without a URL get ``https://wiki.example/doc/<id>``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from textgyms.envs.search.tasks.generate import SearchTask
from textgyms.envs.search.world import Page, World, slug, world_key
from textgyms.errors import ConfigError

__all__ = ["read_corpus", "read_qa", "build_jsonl_world", "file_sha256", "qa_task"]


def file_sha256(path: str | Path) -> str:
    """sha256 of a file's bytes (the cache key of a JSONL world)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _row_page(row: dict, line: int) -> Page:
    if not isinstance(row, dict) or "id" not in row:
        raise ConfigError(f"corpus line {line}: each row needs an 'id'")
    doc = str(row["id"])
    if "contents" in row:
        head, _, text = str(row["contents"]).partition("\n")
        title = head.strip().strip('"') or doc
    elif "text" in row:
        title, text = str(row.get("title") or doc), str(row["text"])
    else:
        raise ConfigError(f"corpus line {line}: a row needs 'contents' or 'text'")
    url = str(row.get("url") or f"https://wiki.example/doc/{slug(doc)}")
    if not url.startswith(("https://", "http://")) or "/" not in url.split("://", 1)[1]:
        raise ConfigError(f"corpus line {line}: url {url[:80]!r} is not an http(s) page URL")
    url = "https://" + url.split("://", 1)[1]  # the emulated web serves https only
    return Page(url, title, f"{title}\n{text.strip()}", "doc")


def read_corpus(path: str | Path) -> list[Page]:
    """The pages of a JSONL corpus file; a malformed row raises ``ConfigError`` with its line."""
    pages, seen = [], set()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path}:{n}: not valid JSON ({exc.msg})") from exc
            page = _row_page(row, n)
            if page.url in seen:
                raise ConfigError(f"{path}:{n}: duplicate id/url {page.url}")
            seen.add(page.url)
            pages.append(page)
    if not pages:
        raise ConfigError(f"{path}: the corpus is empty")
    return pages


def read_qa(path: str | Path) -> list[tuple[str, tuple[str, ...]]]:
    """``(question, answers)`` pairs of a QA JSONL file."""
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                answers = row.get("answers", row.get("golden_answers"))
                if isinstance(answers, str):
                    answers = [answers]
                q = str(row["question"]).strip()
                answers = tuple(str(a) for a in answers if str(a).strip())
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
                raise ConfigError(
                    f'{path}:{n}: a QA row is {{"question", "answers": [...]}}'
                ) from exc
            if q and answers:
                out.append((q, answers))
    if not out:
        raise ConfigError(f"{path}: no questions with answers")
    return out


def build_jsonl_world(corpus: str, qa: str, sha: str) -> World:
    """A world of the pages of ``corpus`` with the questions of ``qa`` (``sha``: the corpus's
    sha256, part of the cache key so an edited file gets a new index)."""
    params = {"corpus": corpus, "qa": qa, "sha": sha}
    pages = read_corpus(corpus)
    return World("jsonl", world_key("jsonl", {"sha": sha}), pages, {}, read_qa(qa), params)


def qa_task(
    rng: np.random.Generator, world: World, difficulty: str, results: Callable[[str], str]
) -> SearchTask:
    """A question drawn uniformly from the QA file (no filters: the file is what it is)."""
    q, answers = world.data[int(rng.integers(len(world.data)))]
    return SearchTask("jsonl", world.key, "qa", difficulty, q, answers, (), False, "", q)
