"""The emulated web browser: URLs, HTTP statuses, results pages, page windows and the page stack.

Responses are deterministic: 200 for a page, 301 for an alias URL or ``http://`` (followed, and
shown), 404 for an unknown URL, and with ``noise`` >= 1 a transient 503/429 with ``Retry-After``
on the first request of some URLs, pages and results pages alike (decided by a hash of the task
and the URL, so a seed fixes them; the env has no clock, so the retry, the same call made again,
succeeds). From ``noise`` 2 pages carry navigation and cookie boilerplate lines. Render modes:
``text`` (numbered lines ``L12: ...``, links as numbered anchors ``[3: anchor]``), ``json`` (an
API-like object) and ``http`` (a raw response with HTML).
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import json
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from textgyms.envs.search.world import LINK, World

__all__ = [
    "View",
    "Response",
    "Browser",
    "snippet",
    "results_url",
    "results_args",
    "is_results_url",
    "SEARCH_URL",
    "RENDER_MODES",
    "NOISE_LEVELS",
]

SEARCH_URL = "https://search.example/search"
RENDER_MODES = ("text", "json", "http")
NOISE_LEVELS = (0, 1, 2, 3)
_REASON = {
    200: "OK",
    301: "Moved Permanently",
    404: "Not Found",
    429: "Too Many Requests",
    503: "Service Unavailable",
}
_FAIL_RATE = {0: 0.0, 1: 0.1, 2: 0.15, 3: 0.25}  # share of first requests that fail
BOILERPLATE_LEVEL = 2
_BOILER = (
    "[Skip to content] Home | Random page | Recent changes | Log in",
    "Cookie notice: this site uses cookies to improve your experience. [Accept] [Decline]",
)
_ANCHOR = re.compile(r"\[(\d+): ([^\]]+)\]")
# Results pages rendered in this process, per on-disk index (the backend's path names the world
# and the index), k, query, page and site: an index never changes once built, so the memo is
# exact. Bounded (a page is about 3 KB).
_PAGES: OrderedDict[tuple, View] = OrderedDict()
_PAGES_MAX = 1024
_STOP = frozenset("the and was what which who how many with from that this name".split())


@dataclass
class View:
    """One entry of the page stack: a results page or a web page, and the line shown first."""

    url: str
    title: str
    lines: list[str]
    links: list[str]
    line: int = 0
    results: list[dict[str, Any]] | None = None  # for results pages
    meta: dict[str, Any] = field(default_factory=dict)
    echo: frozenset[int] = frozenset()  # lines that repeat the agent's words: never evidence

    def served(self, indices: Any) -> list[str]:
        """The lines at ``indices`` that the world served (the echo lines left out): the only
        lines of a view that may count as grounding evidence."""
        return [self.lines[i] for i in indices if i not in self.echo]


@dataclass
class Response:
    """What one fetch returned: final status, redirects followed and the view (on 200)."""

    status: int
    url: str
    view: View | None = None
    redirects: list[tuple[str, str]] = field(default_factory=list)  # (from, to), all 301
    retry_after: int = 0


def stems_of(terms: list[str]) -> frozenset[str]:
    """The five-letter prefixes of the query terms that snippets look for."""
    return frozenset(t[:5] for t in terms if len(t) > 2 and t not in _STOP)


def snippet(text: str, terms: list[str], width: int = 200) -> str:
    """About ``width`` characters of ``text`` around the line holding most query terms.

    A term counts when its first five letters occur in the line (a cheap stand-in for the
    stemming the index does); words of two letters or fewer and a few stop words are ignored.
    """
    lines = text.split("\n")[1:] or [text]
    stems = stems_of(terms)
    best = _best_line(text, stems) if stems and len(lines) > 1 else 0
    out = lines[best]
    if len(out) > width:
        low = out.casefold()
        pos = min((p for t in stems if (p := low.find(t)) >= 0), default=0)
        start = max(0, pos - 60)
        start = out.rfind(" ", 0, start) + 1 if start else 0
        out = ("…" if start else "") + out[start : start + width].rsplit(" ", 1)[0] + " …"
    j = best + 1
    while len(out) < width * 0.6 and j < len(lines):
        out, j = f"{out} {lines[j]}", j + 1
    return out[: width + 4]


def _best_line(text: str, stems: frozenset[str]) -> int:
    """The index (among the lines after the title line) of the line where most terms first
    occur; the earliest such line on ties."""
    low = text.casefold()
    first = low.find("\n") + 1
    counts: dict[int, int] = {}
    for stem in stems:
        p = low.find(stem, first)
        if p >= 0:
            line = low.count("\n", first, p)
            counts[line] = counts.get(line, 0) + 1
    return min(counts, key=lambda i: (-counts[i], i)) if counts else 0


def results_url(query: str, page: int = 1, site: str | None = None) -> str:
    """The URL of a results page (also what transient errors of a search are keyed by)."""
    args = {"q": query, "page": page, **({"site": site} if site else {})}
    return f"{SEARCH_URL}?{urlencode(args)}"


def is_results_url(url: str) -> bool:
    """Whether ``url`` (https, normalised) is a results page of the search engine."""
    return url == SEARCH_URL or url.startswith(SEARCH_URL + "?")


def results_args(url: str) -> tuple[str, str, str | None]:
    """The raw ``q``, ``page`` (default ``"1"``) and ``site`` parameters of a results URL: the
    first of each, undecoded beyond percent-decoding; validation is the caller's."""
    qs = parse_qs(urlsplit(url).query)
    return qs.get("q", [""])[0], qs.get("page", ["1"])[0], qs.get("site", [None])[0]


def _status(resp: Response) -> list[str]:
    lines = [f"HTTP/1.1 301 Moved Permanently -> {to}" for _, to in resp.redirects]
    lines.append(f"HTTP/1.1 {resp.status} {_REASON[resp.status]}")
    if resp.retry_after:
        lines.append(f"Retry-After: {resp.retry_after}")
    return lines


class Browser:
    """Serves a world through a backend, with the env's render mode and noise level."""

    def __init__(
        self, world: World, backend, *, k: int, window: int, render: str, noise: int
    ) -> None:
        self.world, self.backend = world, backend
        self.k, self.window, self.render, self.noise = k, window, render, noise
        self._cache: dict[int, tuple[list[str], list[str]]] = {}

    # --- fetching -----------------------------------------------------------------------------
    def transient(self, salt: str, url: str, attempt: int) -> int:
        """503 or 429 when the first request of ``url`` (a page or a results page) fails under
        the noise level, else 0. ``salt`` is the task id, so the seed fixes which ones fail."""
        if not self.noise or attempt > 0:
            return 0
        h = int.from_bytes(hashlib.blake2b(f"{salt}|{url}".encode(), digest_size=8).digest())
        if (h % 10_000) / 10_000 >= _FAIL_RATE[self.noise]:
            return 0
        return 503 if h & 1 else 429

    def results(self, query: str, page: int = 1, site: str | None = None) -> Response:
        """The results page of ``query`` (``page`` is 1-based), rendered once per process for
        an on-disk index (the members of a GRPO group repeat each other's queries)."""
        url = results_url(query, page, site)
        path = getattr(self.backend, "path", None)
        if path is None:  # in-memory or remote index: nothing to key a memo by
            return Response(200, url, self._results_view(query, page, site, url))
        key = (self.backend.name, path, self.k, query, page, site)
        view = _PAGES.get(key)
        if view is None:
            view = _PAGES[key] = self._results_view(query, page, site, url)
            if len(_PAGES) > _PAGES_MAX:
                _PAGES.popitem(last=False)
        else:
            _PAGES.move_to_end(key)
        # a View of its own (the page stack sets its line); the lists are shared, never mutated
        return Response(200, url, dataclasses.replace(view))

    def _results_view(self, query: str, page: int, site: str | None, url: str) -> View:
        from textgyms.envs.search.backends import query_terms

        hits = self.backend.search(query, self.k, (page - 1) * self.k, site)
        terms = query_terms(query)
        rows, lines, links = [], [], []
        for n, doc in enumerate(hits.doc_ids, 1):
            p = self.world.pages[doc]
            snip = snippet(self.world.text(doc), terms)
            rows.append({"n": n, "title": p.title, "host": p.host, "url": p.url, "snippet": snip})
            lines += [f"[{n}: {p.title}]", f"    {p.host} | {p.url}", f"    {snip}"]
            links.append(p.url)
        more = hits.total > page * self.k
        head = f'Search results for "{query}": about {hits.total:,} results (page {page})'
        if not rows:
            lines = ["No results. Try other words, or drop the site filter."]
        echo = frozenset({len(lines)} if more else ())
        if more:
            lines.append(f'Next page: search(query="{query}", page={page + 1})')
        meta = {"query": query, "page": page, "total": hits.total, "next": more}
        return View(url, head, lines, links, 0, rows, meta, echo)

    def results_text(self, query: str) -> str:
        """The first results page of ``query`` as text (what the generation filters check)."""
        return self._text(self.results(query))

    def fetch(self, url: str) -> Response:
        """GET ``url`` (already normalised): follows redirects, returns the final response."""
        redirects: list[tuple[str, str]] = []
        if url.startswith("http://"):
            redirects.append((url, "https://" + url[7:]))
            url = "https://" + url[7:]
        if is_results_url(url):
            query, page, site = results_args(url)
            # The env validates these first (SearchEnv._open); clamp anyway: never raise here.
            number = int(page) if page.isascii() and page.isdigit() and len(page) < 4 else 1
            resp = self.results(query, min(max(number, 1), 100), site)
            resp.redirects = redirects
            return resp
        doc, target = self.world.resolve(url)
        if doc < 0 and target is not None:
            redirects.append((url, target))
            doc, url = self.world.resolve(target)[0], target
        if doc < 0:
            return Response(404, url, None, redirects)
        return Response(200, url, self.page_view(doc), redirects)

    def page_view(self, doc: int) -> View:
        """A web page as numbered lines with numbered link anchors (rendered once per page
        and cached; views share the line and link lists, which are never mutated)."""
        lines, links = self._rendered(doc)
        p = self.world.pages[doc]
        return View(p.url, p.title, lines, links)

    def _rendered(self, doc: int) -> tuple[list[str], list[str]]:
        hit = self._cache.get(doc)
        if hit is not None:
            return hit
        if len(self._cache) >= 8192:
            self._cache.clear()
        p = self.world.pages[doc]
        links: list[str] = []

        def anchor(m: re.Match[str]) -> str:
            links.append(m.group(1))
            return f"[{len(links)}: {m.group(2)}]"

        lines = [LINK.sub(anchor, line) for line in p.body.split("\n")]
        if self.noise >= BOILERPLATE_LEVEL:
            lines = [_BOILER[0], *lines, _BOILER[1]]
        self._cache[doc] = (lines, links)
        return lines, links

    # --- grounding evidence ---------------------------------------------------------------------
    def evidence(
        self,
        tool: str,
        args: Mapping[str, Any],
        obs: str,
        before: View | None,
        after: View | None,
        search_only: bool = False,
    ) -> str:
        """What the *world* showed in a successful tool call, for the grounding gate.

        Observations echo the agent's own words (a results page's ``Search results for
        "QUERY"`` head and next-page hint, the ``URL:`` of a 404 or of a transient error, the
        ``Found ... for "PATTERN"`` head of ``find``), so taking the observation as evidence
        would let a guessed answer pass the gate by being searched, opened or found first.
        ``before``/``after`` are the top of the page stack around the call.
        """
        if tool == "clarify" or (tool == "search" and search_only):
            return obs  # the user's reply and Search-R1 documents repeat nothing the agent said
        if tool == "find":
            if after is None:
                return ""
            pattern = str(args.get("pattern", "")).strip().casefold()
            hits = [i for i, ln in enumerate(after.lines) if pattern in ln.casefold()][:20]
            return "\n".join(after.served(hits))
        if after is None or after is before:
            return ""  # nothing was served (404, 503, 429): the response only echoes the URL
        shown = after.served(range(*self._window(after)))
        if after.results is not None:  # result rows only: the head repeats the query
            return "\n".join(shown)
        links = after.links if self.render == "json" else []  # json lists every link URL
        return "\n".join([after.title, after.url, *shown, *links])

    # --- rendering ----------------------------------------------------------------------------
    def show(self, resp: Response) -> str:
        """Render a response in the env's render mode."""
        if self.render == "json":
            return self._json(resp)
        if self.render == "http":
            return self._http(resp)
        return self._text(resp)

    def _window(self, view: View) -> tuple[int, int]:
        start = min(max(view.line, 0), max(len(view.lines) - 1, 0))
        return start, min(len(view.lines), start + self.window)

    def _text(self, resp: Response) -> str:
        out = _status(resp)
        out.append(f"URL: {resp.url}")
        view = resp.view
        if view is None:
            msg = "No page at this URL." if resp.status == 404 else "Try again later."
            return "\n".join([*out, msg])
        a, b = self._window(view)
        out.append(f"Title: {view.title}")
        out += [f"L{i}: {view.lines[i]}" for i in range(a, b)]
        out.append(f"viewing lines {a}–{max(b - 1, a)} of {len(view.lines)}")
        if b < len(view.lines):
            out.append(f"(more below: open this URL with line={b})")
        return "\n".join(out)

    def _json(self, resp: Response) -> str:
        obj: dict[str, Any] = {"status": resp.status, "url": resp.url}
        if resp.redirects:
            obj["redirects"] = [{"status": 301, "from": f, "to": t} for f, t in resp.redirects]
        if resp.retry_after:
            obj["retry_after"] = resp.retry_after
        view = resp.view
        if view is not None and view.results is not None:
            obj.update(view.meta)
            obj["results"] = view.results
        elif view is not None:
            a, b = self._window(view)
            obj["title"] = view.title
            obj["lines"] = [{"n": i, "text": view.lines[i]} for i in range(a, b)]
            obj["links"] = [{"n": i, "url": u} for i, u in enumerate(view.links, 1)]
            obj["range"], obj["total_lines"] = [a, max(b - 1, a)], len(view.lines)
        return json.dumps(obj, ensure_ascii=False)

    def _http(self, resp: Response) -> str:
        view = resp.view
        if view is None:
            body = f"<html><body><h1>{resp.status} {_REASON[resp.status]}</h1></body></html>"
        else:
            body = self._html(view)
        head = _status(resp)[len(resp.redirects) :]
        head += [
            "Content-Type: text/html; charset=utf-8",
            f"Content-Length: {len(body.encode())}",
            f"Content-Location: {resp.url}",
        ]
        prefix = "".join(
            f"HTTP/1.1 301 Moved Permanently\r\nLocation: {t}\r\n\r\n" for _, t in resp.redirects
        )
        return prefix + "\r\n".join(head) + "\r\n\r\n" + body

    def _html(self, view: View) -> str:
        a, b = self._window(view)

        def link(m: re.Match[str]) -> str:
            url = html.escape(view.links[int(m.group(1)) - 1])
            return f'<a href="{url}">{m.group(2)}</a>'

        paras = [
            f'<p id="L{i}">{_ANCHOR.sub(link, html.escape(view.lines[i], quote=False))}</p>'
            for i in range(a, b)
        ]
        title = html.escape(view.title)
        return f"<html><head><title>{title}</title></head><body>{''.join(paras)}</body></html>"
