"""``textgyms/Search-v1``: an emulated web for training search agents.

Tools: ``search(query, page=1, site=None)``, ``open(target, line=0)`` (a URL, or the number of a
link or result on the current page), ``find(pattern)``, ``back()``, ``answer(text, urls=[])``,
and with ``clarify=True`` also ``clarify(question)`` (a simulated user answers from the task's
hidden intent). ``search_only=True`` is the Search-R1 convention: ``<search>q</search>`` returns
``<information>Doc i(Title: t) text</information>`` and ``<answer>`` ends the episode.

Noise levels (``noise``, a curriculum knob; each level adds to the one below):

- ``0``: a clean web: no transient errors, no boilerplate, and FictionWeb has no stale or
  conflicting pages (its news pages are neutral).
- ``1``: transient ``503 Service Unavailable`` (``Retry-After: 1``) and ``429 Too Many Requests``
  (``Retry-After: 2``) on 10% of first requests, on ``search`` and ``open`` alike. Which requests
  fail is a hash of the task id and the URL (a results page has its own URL), so a seed fixes
  them. The env has no clock: the retry is the same call made again, and it always succeeds.
- ``2``: 15% transient errors, and pages carry navigation and cookie-notice boilerplate lines.
- ``3``: 25% transient errors, boilerplate, and a FictionWeb world with distractors: stale news
  (an older value of a mayor, headquarters or employer, dated and titled ``Archived YEAR: ...``)
  and forum threads that contradict the wiki on a birthplace. This is another world (other
  cache key and index); entity, list and disambiguation pages are the same as at level 0.
  GeoWeb and your own corpora have no distractor pages to add, so level 3 is level 2 for them.

Family info keys: ``url`` (the page shown, if any), ``status`` (its HTTP status), ``searches``
(search calls so far).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from textgyms.actions import Param, ParseError, ToolCall, ToolSpec, parse, tool_schemas
from textgyms.core import TOOLS, TextEnv, Turn, Verdict, check_choice
from textgyms.envs.search import corpora
from textgyms.envs.search.backends import Request
from textgyms.envs.search.backends import prefetch as prefetch_searches
from textgyms.envs.search.browser import (
    NOISE_LEVELS,
    RENDER_MODES,
    Browser,
    Response,
    View,
    is_results_url,
    results_args,
    results_url,
)
from textgyms.envs.search.tasks.generate import DIFFICULTIES, SearchTask
from textgyms.envs.search.verify import answer_penalty, grade, normalize
from textgyms.errors import ConfigError

__all__ = ["SearchEnv", "SearchState", "TOOLS_BROWSE", "TOOLS_SEARCH_ONLY", "CLARIFY"]

_SEARCH = ToolSpec(
    "search",
    "Search the web; returns a results page.",
    (
        Param("query", "string", "the search query"),
        Param("page", "integer", "results page, 1-based", False, 1),
        Param("site", "string", "only results from this host, e.g. wiki.example", False, None),
    ),
)
_OPEN = ToolSpec(
    "open",
    "Open a URL, or link/result number N on the current page.",
    (
        Param("target", "string", "a URL or a link/result number on the current page"),
        Param("line", "integer", "first line to show (scrolling)", False, 0),
    ),
)
_FIND = ToolSpec(
    "find",
    "Find a text in the current page; returns matching lines.",
    (Param("pattern", "string", "text to look for (case-insensitive)"),),
)
_BACK = ToolSpec("back", "Go back to the previous page.")
_ANSWER = ToolSpec(
    "answer",
    "Give the final answer; ends the episode.",
    (
        Param("text", "string", "the answer, as short as possible"),
        Param("urls", "array", "URLs of pages supporting the answer", False, []),
    ),
)
CLARIFY = ToolSpec(
    "clarify",
    "Ask the user a clarifying question about the task.",
    (Param("question", "string", "your question to the user"),),
)
_SEARCH_R1 = ToolSpec(
    "search", "Search; returns the top documents.", (Param("query", "string", "the search query"),)
)
_ANSWER_R1 = ToolSpec(
    "answer", "Give the final answer; ends the episode.", (Param("text", "string", "the answer"),)
)
TOOLS_BROWSE = (_SEARCH, _OPEN, _FIND, _BACK, _ANSWER)
TOOLS_SEARCH_ONLY = (_SEARCH_R1, _ANSWER_R1)
SPLITS = ("train", "test")
_RETRY_AFTER = {503: 1, 429: 2}  # seconds, as a server would say (the env has no clock)


def search_problem(query: str, page: Any) -> str | None:
    """What is wrong with the arguments of a search (the ``search`` tool's, or the ``q`` and
    ``page`` of a results URL given to ``open``), or None."""
    if not query or len(query) > 500:
        return "give a query of 1 to 500 characters."
    if isinstance(page, bool) or not isinstance(page, int) or not 1 <= page <= 100:
        return "page must be an integer from 1 to 100."
    return None


def _search_args(call: ToolCall) -> tuple[str, Any, str | None, str | None]:
    """A ``search`` call's query, page and site (a blank site is none), and what is wrong
    with them (or None)."""
    args = call.args
    query, page, site = str(args["query"]).strip(), args.get("page", 1), args.get("site")
    site = str(site).strip() or None if site else None
    return query, page, site, search_problem(query, page)


def _check_ints(**values: tuple[Any, int]) -> None:
    """Raise ConfigError unless each ``name=(value, minimum)`` is an int >= its minimum."""
    for name, (v, low) in values.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise ConfigError(f"{name} must be an integer >= {low}, got {v!r}")


@dataclass
class SearchState:
    """One episode: the task, the page stack, fetch attempts and what the env has shown."""

    task: SearchTask
    stack: list[View] = field(default_factory=list)
    attempts: dict[str, int] = field(default_factory=dict)
    seen: list[str] = field(default_factory=list)  # what the world served (grounding gate)
    read: set[str] = field(default_factory=set)  # URLs of the pages served (support gate)
    searches: int = 0
    clarified: bool = False


class SearchEnv(TextEnv):
    """Search over an emulated web (FictionWeb, GeoWeb or your own JSONL corpus)."""

    metric_parts = ("em", "f1", "grounded", "cited", "clarified")

    tools = TOOLS_BROWSE + (CLARIFY,)  # the full set (schemas per instance: see reset)
    conformance_variants = (
        {"corpus": "fictionweb", "pages": 1500},
        {"corpus": "fictionweb", "pages": 1500, "backend": "fts5", "render": "json", "noise": 3},
        {"corpus": "geoweb", "min_population": 2_000_000},
        {"corpus": "sample", "search_only": True},
    )

    def __init__(
        self,
        *,
        corpus: str = "fictionweb",
        backend: str = "tantivy",
        difficulty: str = "medium",
        split: str = "train",
        world_seed: int = 0,
        pages: int = 10_000,
        min_population: int = 100_000,
        qa: str | None = None,
        k: int | None = None,
        window: int = 40,
        render: str = "text",
        noise: int = 0,
        search_only: bool = False,
        clarify: bool = False,
        grounding: bool | None = None,
        wrong_penalty: float = 0.0,
        cite_credit: bool = False,
        es_url: str = "http://127.0.0.1:9200",
        max_turns: int = 50,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("max_obs_chars", 32_768)  # a results page is about 3,000 characters
        super().__init__(max_turns=max_turns, **kwargs)
        self.difficulty = check_choice("difficulty", difficulty, DIFFICULTIES)
        self.split = check_choice("split", split, SPLITS)
        self.render_as = check_choice("render", render, RENDER_MODES)
        self.noise = check_choice("noise", noise, NOISE_LEVELS)
        self.backend_name = check_choice("backend", backend, ("tantivy", "fts5", "elasticsearch"))
        _check_ints(
            pages=(pages, 100),
            window=(window, 1),
            world_seed=(world_seed, 0),
            k=(1 if k is None else k, 1),
        )
        if not (isinstance(wrong_penalty, (int, float)) and 0 <= wrong_penalty < float("inf")):
            raise ConfigError(f"wrong_penalty must be a finite number >= 0, got {wrong_penalty!r}")
        self.search_only, self.clarify = bool(search_only), bool(clarify)
        self.wrong_penalty, self.cite_credit = float(wrong_penalty), bool(cite_credit)
        self.k = k if k is not None else (3 if search_only else 10)
        self.window, self.es_url = window, es_url
        self.spec_corpus = corpora.resolve(
            corpus,
            split=split,
            world_seed=world_seed,
            pages=pages,
            min_population=min_population,
            qa=qa,
            noise=self.noise,
        )
        if self.difficulty == "lookup" and corpus == "geoweb":
            raise ConfigError("difficulty 'lookup' is FictionWeb's (one-hop chains); GeoWeb "
                              "has easy, medium and hard")
        self.grounding = self.spec_corpus.grounded if grounding is None else bool(grounding)
        tools = TOOLS_SEARCH_ONLY if self.search_only else TOOLS_BROWSE
        self.active_tools = tools + ((CLARIFY,) if self.clarify else ())
        self._schemas = tool_schemas(self.active_tools)
        self._browser: Browser | None = None
        self._browser_pid = 0

    # --- lazily opened resources (never pickled) ------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_browser"] = None
        return state

    @property
    def browser(self) -> Browser:
        """The browser over this env's world and index (opened on first use)."""
        # Reopened in a forked child too: an SQLite connection must not cross a fork.
        if self._browser is None or self._browser_pid != os.getpid():
            self._browser_pid = os.getpid()
            world = self.spec_corpus.world()
            backend = corpora.open_index(world, self.backend_name, es_url=self.es_url)
            self._browser = Browser(
                world,
                backend,
                k=self.k,
                window=self.window,
                render=self.render_as,
                noise=self.noise,
            )
        return self._browser

    # --- hooks -------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """As ``TextEnv.reset``; ``info["tools"]`` lists this instance's tools."""
        obs, info = super().reset(seed=seed, options=options)
        info[TOOLS] = self._schemas
        return obs, info

    def generate(self, rng: np.random.Generator) -> SearchTask:
        """A question that passes the generation-time filters on this env's backend."""
        b = self.browser
        return self.spec_corpus.task(
            rng, b.world, self.difficulty, b.results_text, 0.3 if self.clarify else 0.0
        )

    def prompt(self, task: SearchTask) -> str:
        """The question and the tools."""
        from textgyms.envs.search.prompts import prompt

        return prompt(task.question, self.search_only, self.clarify, self.k)

    def init_state(self, task: SearchTask) -> SearchState:
        """An empty page stack for ``task``."""
        return SearchState(task)

    def respond(self, state: SearchState, action: str) -> Turn:
        """Run one tool call."""
        call = parse(action, self.active_tools)
        if isinstance(call, ParseError):
            return Turn(
                call.message, error=call.error, obs_kind="feedback", info=self._extra(state)
            )
        if call.name == "answer":
            return self._answer(state, call)
        handler = {
            "search": self._search,
            "open": self._open,
            "find": self._find,
            "back": self._back,
            "clarify": self._clarify,
        }[call.name]
        top = state.stack[-1] if state.stack else None
        obs, error, status = handler(state, call)
        if error is None:  # the world's text only, never the agent's echoed words (see evidence)
            after = state.stack[-1] if state.stack else None
            if after is not None and after is not top and after.results is None:
                state.read.add(after.url)
            state.seen.append(
                self.browser.evidence(call.name, call.args, obs, top, after, self.search_only)
            )
        kind = "feedback" if error else "tool"
        return Turn(obs, error=error, obs_kind=kind, info=self._extra(state, status))

    def final_verdict(self, state: SearchState) -> Verdict:
        """No answer was given: score 0."""
        return Verdict(0.0, False, "No answer was given: score 0.", {"em": 0.0}, "no_answer")

    def solve(self, task: SearchTask) -> list[str]:
        """The gold path as tool calls: (clarify,) search, open each support page, answer."""
        from textgyms.envs.search.oracle import plan

        return plan(self, task)

    def sample_action(self, rng: np.random.Generator) -> str:
        """A random valid tool call (answers rarely, so episodes explore)."""
        from textgyms.envs.search.oracle import random_action

        return random_action(self, rng)

    def data_sha256(self) -> dict[str, str]:
        """sha256 of the corpus's pages or files."""
        return self.spec_corpus.data_sha256()

    # --- tools -------------------------------------------------------------------------------
    def _extra(self, state: SearchState, status: int | None = None) -> dict[str, Any]:
        url = state.stack[-1].url if state.stack else None
        return {"url": url, "status": status, "searches": state.searches}

    def _push(self, state: SearchState, resp: Response) -> str:
        if resp.view is not None:
            state.stack.append(resp.view)
        return self.browser.show(resp)

    def _search(self, state: SearchState, call: ToolCall) -> tuple[str, str | None, int | None]:
        query, page, site, problem = _search_args(call)
        if problem:
            return f"search: {problem}", "invalid", None
        state.searches += 1
        url = results_url(query, page, site)
        failed = self._transient(state, url)
        if self.search_only:
            from textgyms.envs.search.prompts import information, unavailable

            if failed:
                return unavailable(failed, _RETRY_AFTER[failed]), None, failed
            return information(self.browser, query), None, 200
        if failed:
            return (
                self.browser.show(Response(failed, url, retry_after=_RETRY_AFTER[failed])),
                None,
                failed,
            )
        resp = self.browser.results(query, page, site)
        return self._push(state, resp), None, 200

    def _search_request(self, action: str) -> Request | None:
        """The index request ``step(action)`` would make now: a valid ``search`` call that
        does not hit a transient error, or None."""
        ep = self._ep
        if ep is None or ep.done or type(action) is not str or len(action) > self.max_action_chars:
            return None
        call = parse(action, self.active_tools)
        if isinstance(call, ParseError) or call.name != "search":
            return None
        query, page, site, problem = _search_args(call)
        if problem:
            return None
        state, url = ep.state, results_url(query, page, site)
        if self.browser.transient(state.task.task_id, url, state.attempts.get(url, 0)):
            return None
        if self.search_only:  # the Search-R1 tool: the top k, no pages, no site
            return (query, self.k, 0, None)
        return (query, self.k, (page - 1) * self.k, site)

    @classmethod
    def prefetch(cls, envs: Sequence[TextEnv], actions: Sequence[str]) -> None:
        """Run the index searches the coming steps of ``envs`` will make in one batch per
        index (on several threads with tantivy), so that the steps find them in the results
        memo; repeated queries of a GRPO group run once."""
        batches: dict[tuple, tuple[Any, list[Request]]] = {}
        for env, action in zip(envs, actions):
            request = env._search_request(action)  # type: ignore[attr-defined]
            if request is not None:
                backend = env.browser.backend  # type: ignore[attr-defined]
                key = (backend.name, getattr(backend, "path", None))
                batches.setdefault(key, (backend, []))[1].append(request)
        for backend, requests in batches.values():
            prefetch_searches(backend, requests)

    def _transient(self, state: SearchState, url: str) -> int:
        """The transient status (503/429) of this request of ``url``, or 0; counts attempts."""
        attempt = state.attempts.get(url, 0)
        state.attempts[url] = attempt + 1
        return self.browser.transient(state.task.task_id, url, attempt)

    def _open(self, state: SearchState, call: ToolCall) -> tuple[str, str | None, int | None]:
        from textgyms.envs.search.oracle import normalize_target

        target, line = str(call.args["target"]).strip(), call.args["line"]
        if not isinstance(line, int) or line < 0:
            return "open: line must be an integer >= 0.", "invalid", None
        url, problem = normalize_target(target, state.stack[-1] if state.stack else None)
        if not problem and is_results_url(url.replace("http://", "https://", 1)):
            query, page, _ = results_args(url)
            number = int(page) if page.isascii() and page.isdigit() and len(page) < 4 else 0
            problem = search_problem(query.strip(), number)
            problem = problem and f"open: bad results URL: {problem} Or use the search tool."
        if problem:
            return problem, "invalid", None
        failed = self._transient(state, url)
        if failed:
            resp = Response(failed, url, retry_after=_RETRY_AFTER[failed])
            return self.browser.show(resp), None, failed
        resp = self.browser.fetch(url)
        if resp.view is not None:
            resp.view.line = line
        return self._push(state, resp), None, resp.status

    def _find(self, state: SearchState, call: ToolCall) -> tuple[str, str | None, int | None]:
        pattern = str(call.args["pattern"]).strip().casefold()
        if not state.stack:
            return "find: no page is open; search or open a URL first.", "invalid", None
        if not pattern:
            return "find: give a non-empty pattern.", "invalid", None
        view = state.stack[-1]
        hits = [i for i, line in enumerate(view.lines) if pattern in line.casefold()]
        head = f'Found {len(hits)} match(es) for "{call.args["pattern"][:100]}" in {view.url}'
        rows = [f"L{i}: {view.lines[i]}" for i in hits[:20]]
        return "\n".join([head, *rows]), None, None

    def _back(self, state: SearchState, call: ToolCall) -> tuple[str, str | None, int | None]:
        if len(state.stack) < 2:
            return "back: there is no previous page.", "invalid", None
        state.stack.pop()
        view = state.stack[-1]
        return self.browser.show(Response(200, view.url, view)), None, 200

    def _clarify(self, state: SearchState, call: ToolCall) -> tuple[str, str | None, int | None]:
        state.clarified = True
        intent = state.task.intent or "The question is complete as asked; there is nothing to add."
        return f"User: {intent}", None, None

    def _read_support(self, state: SearchState) -> bool:
        """Whether a support page was served: opened (browse), or returned as a document
        (``search_only``, where documents are whole page texts, found by their title)."""
        if any(u in state.read for u in state.task.support):
            return True
        if not self.search_only:
            return False
        world = self.browser.world
        titles = [world.pages[world.by_url[u]].title for u in state.task.support
                  if u in world.by_url]
        return any(f"(Title: {t})" in o for t in titles for o in state.seen)

    def _answer(self, state: SearchState, call: ToolCall) -> Turn:
        task = state.task
        urls = call.args.get("urls") or []
        urls = [str(u) for u in urls] if isinstance(urls, list) else [str(urls)]
        seen = None
        if self.grounding and task.grounded:
            seen = "".join(f" {normalize(o)} " for o in state.seen)
        elif self.grounding and task.support and not self._read_support(state):
            seen = ""  # an answer no page states (a count) needs the page it is counted on
        verdict = grade(
            str(call.args["text"]),
            task.answers,
            seen=seen,
            urls=urls,
            support=task.support,
            cite_credit=self.cite_credit,
        )
        if self.clarify:
            verdict.parts["clarified"] = float(state.clarified)  # type: ignore[index]
        penalty = answer_penalty(verdict, self.wrong_penalty)
        return Turn(
            verdict.feedback,
            terminated=True,
            verdict=verdict,
            info=self._extra(state),
            penalty=penalty,
        )
