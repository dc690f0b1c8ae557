"""Pages and worlds: what the emulated web serves, and where built indexes are cached.

A ``World`` is a fixed list of ``Page`` objects (doc id = position), a URL map, alias URLs that
redirect (301) to canonical ones, and the corpus's own data for task generation (an entity graph
for FictionWeb and GeoWeb, question/answer pairs for a JSONL corpus). Worlds are built
deterministically from their parameters (``corpora.load_world``, which caches them per process),
and pickle as the call that built them (an env never pickles a world or an index).

Page bodies are lines of text in which links are written ``[[URL|anchor]]``; the browser shows
them as numbered anchors and the index sees only the anchor text.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Page", "World", "LINK", "plain_text", "slug", "cache_dir", "world_key"]

LINK = re.compile(r"\[\[([^|\]]+)\|([^\]]+)\]\]")
WORLD_VERSION = "1"  # bump when any generator changes what a world contains


@dataclass(frozen=True, slots=True)
class Page:
    """One web page: canonical https URL, title and marked-up body."""

    url: str
    title: str
    body: str
    kind: str = "wiki"

    @property
    def host(self) -> str:
        """The URL's host (``wiki.example``)."""
        return self.url.split("/", 3)[2]


def plain_text(body: str) -> str:
    """The body with links replaced by their anchor text (what the index and snippets see)."""
    return LINK.sub(r"\2", body)


def slug(name: str) -> str:
    """A wiki-style URL path segment: spaces to underscores, URL-unsafe characters dropped."""
    return re.sub(r"[^\w().,'-]", "", name.replace(" ", "_"), flags=re.UNICODE)


@dataclass
class World:
    """A corpus served as a web: pages, URL lookups and task data."""

    kind: str
    key: str
    pages: list[Page]
    redirects: dict[str, str] = field(default_factory=dict)
    data: Any = None
    params: Mapping[str, Any] = field(default_factory=dict)
    by_url: dict[str, int] = field(init=False)
    _texts: list[str] | None = field(init=False, default=None, repr=False)
    # (function, args) that builds this world again: set by the loader that made it
    rebuild: tuple[Callable, tuple] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.by_url = {p.url: i for i, p in enumerate(self.pages)}
        self._folded = {u.casefold(): u for u in self.by_url}

    def __reduce__(self) -> tuple[Callable, tuple]:
        # A world pickles as the call that made it (its pages are not sent anywhere).
        if self.rebuild is None:
            raise TypeError("only a world made by corpora.load_world can be pickled")
        return self.rebuild

    def text(self, doc_id: int) -> str:
        """The plain text of a page (title line first), computed once for the world."""
        if self._texts is None:
            self._texts = [plain_text(p.body) for p in self.pages]
        return self._texts[doc_id]

    def resolve(self, url: str) -> tuple[int, str | None]:
        """``(doc_id, None)`` for a canonical URL, ``(-1, canonical)`` for an alias that
        redirects, ``(-1, None)`` for an unknown URL."""
        doc = self.by_url.get(url)
        if doc is not None:
            return doc, None
        target = self.redirects.get(url) or self._folded.get(url.casefold())
        if target is None and url.endswith("/"):
            target = self.by_url.get(url.rstrip("/")) is not None and url.rstrip("/") or None
        return -1, target

    def sha256(self) -> str:
        """A digest of every page (recorded with leaderboard runs)."""
        h = hashlib.sha256()
        for p in self.pages:
            h.update(f"{p.url}\x00{p.title}\x00{p.body}\x01".encode())
        return h.hexdigest()


def cache_dir() -> Path:
    """Where built indexes live: ``$TEXTGYMS_CACHE_DIR`` or ``~/.cache/textgyms``."""
    root = os.environ.get("TEXTGYMS_CACHE_DIR") or os.path.join("~", ".cache", "textgyms")
    return Path(root).expanduser() / "search"


_SOURCES = {
    "fictionweb": ("world.py", "fictionweb.py", "fictionpages.py"),
    "geoweb": ("world.py", "geoweb.py"),
    "jsonl": ("world.py", "jsonl.py"),
}


@functools.cache
def _source_digest(kind: str) -> str:
    """A digest of the modules that generate ``kind``'s pages: editing one invalidates its
    cached indexes (and only its own)."""
    here = Path(__file__).parent
    h = hashlib.sha256()
    for name in _SOURCES.get(kind, ("world.py",)):
        h.update((here / name).read_bytes())
    return h.hexdigest()[:12]


def world_key(kind: str, params: Mapping[str, Any]) -> str:
    """A hash of everything that determines a world's pages (its kind, parameters and the
    generator's source)."""
    blob = json.dumps(
        {"kind": kind, "v": WORLD_VERSION, "src": _source_digest(kind), **params},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def support_urls(world: World, doc_ids: Sequence[int]) -> tuple[str, ...]:
    """The URLs of ``doc_ids`` (support pages of a task)."""
    return tuple(world.pages[d].url for d in doc_ids)
