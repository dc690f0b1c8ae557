"""The oracle's plan (real tool calls along the gold path), random actions and URL parsing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np

from textgyms.envs.search.browser import Browser, View, results_url

if TYPE_CHECKING:
    from textgyms.envs.search.tasks.generate import SearchTask


class SearchEnv(Protocol):
    """What the oracle reads of a Search env (typed structurally, so this module does not
    import the env, which imports it)."""

    search_only: bool
    browser: Browser
    task: SearchTask

__all__ = ["plan", "random_action", "normalize_target"]


def normalize_target(target: str, view: View | None) -> tuple[str, str | None]:
    """``(url, None)`` for a URL or a link number of ``view``, else ``("", why not)``."""
    t = target.strip().strip("<>\"'`").strip()
    if t.startswith("[") and t.endswith("]"):
        t = t[1:-1].split(":", 1)[0].strip()
    if t.isdigit():  # any script's digits ("²" too): a link number, never a URL
        n = int(t) if t.isascii() and len(t) < 7 else 0
        if view is None or not view.links:
            return "", f"open: there is no link [{t[:20]}] here (no page with links is open)."
        if not 1 <= n <= len(view.links):
            shown = n if n else t[:20]
            return "", f"open: there is no link [{shown}] here; links are 1 to {len(view.links)}."
        return view.links[n - 1], None
    if not t or " " in t or len(t) > 2000:
        return "", "open: give a URL (https://...) or a link number shown on the current page."
    if t.startswith("//"):
        t = "https:" + t
    elif not t.startswith(("http://", "https://")):
        t = "https://" + t
    return t, None


def plan(env: SearchEnv, task: SearchTask) -> list[str]:
    """(clarify,) search the starting point, open every support page in order, answer."""
    out = ["<clarify>Which one do you mean?</clarify>"] if task.intent else []
    gold = task.answers[0]
    if env.search_only:
        titles = [
            env.browser.world.pages[env.browser.world.by_url[u]].title
            for u in task.support
            if u in env.browser.world.by_url
        ]
        queries = titles or [task.start or task.question]
        for q in queries:
            out += [f"<search>{q}</search>"] * _tries(env, task, results_url(q.strip()))
        return out + [f"<answer>{gold}</answer>"]
    query = task.start or task.question
    out += [f"<search>{query}</search>"] * _tries(env, task, results_url(query.strip()))
    for url in task.support:
        out += [f"<open>{url}</open>"] * _tries(env, task, url)
    return out + [f"<answer>{gold}</answer>"]


def _tries(env: SearchEnv, task: SearchTask, url: str) -> int:
    """2 when the first request of ``url`` gets a transient 503/429 (so retry once), else 1.

    Assumes the episode has not requested ``url`` before (true along the oracle's own path,
    except a repeated support URL, whose first request already succeeded or was retried)."""
    return 2 if env.browser.transient(task.task_id, url, 0) else 1


def random_action(env: SearchEnv, rng: np.random.Generator) -> str:
    """A random valid tool call built from the question's words and link numbers."""
    words = [w for w in env.task.question.split() if w.isalpha()] or ["web"]
    word = words[int(rng.integers(len(words)))]
    roll = float(rng.random())
    if env.search_only:
        return f"<answer>{word}</answer>" if roll < 0.1 else f"<search>{word}</search>"
    if roll < 0.35:
        return f"<search>{word} {words[int(rng.integers(len(words)))]}</search>"
    if roll < 0.65:
        return f"<open>{int(rng.integers(1, 6))}</open>"
    if roll < 0.78:
        return f"<find>{word}</find>"
    if roll < 0.9:
        return "<back/>"
    return f"<answer>{word}</answer>"
