"""Feedback-use metrics: does a policy act on what the env showed it?

A score says how well a policy did; these say whether it *read* its observations, which is
what a constant policy (see :mod:`textgyms.blind`) cannot do. Each is computed from one
episode's record (``env_id``, ``actions``, ``observations``, the prompt first), so it applies
to any run, old ones included; an episode where a metric is undefined (a Wordle game with one
guess has no later guess to check) leaves it out, and a run's value is the mean over the
episodes that define it.

- every env: ``repeats``, the fraction of actions (after the first) equal to the one before.
- Wordle: ``consistent``, the fraction of guesses after the first that could still be the
  secret given every mark shown so far (the board in the observations).
- Search: ``grounded``, 1 when the given answer appears (normalised, as the verifier compares)
  in a results page or page the env showed before it, 0 when it does not; ``looked``, whether
  the agent searched or opened anything before answering.
- Code: ``runs_before_submit`` (run and test calls before the submission) and
  ``changed_after_fail``, the fraction of failing runs/tests followed by a call with
  different code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from textgyms.actions import ParseError, ToolSpec, parse

Metrics = dict[str, float]

_BOARD_LINE = re.compile(r"^\s*(\d+)\.\s+((?:[A-Z] ?)+?)\s{2,}((?:[GY_] ?)+)\s*$", re.M)


def _calls(actions: Sequence[str], tools: Sequence[ToolSpec]) -> list[Any]:
    """Each action parsed with ``tools`` (a :class:`ParseError` where it is not a call)."""
    return [parse(a if isinstance(a, str) else "", tools) for a in actions]


def repeats(actions: Sequence[str]) -> Metrics:
    """``repeats``: the share of actions equal to the action just before (undefined for
    fewer than two actions)."""
    if len(actions) < 2:
        return {}
    same = sum(a == b for a, b in zip(actions, actions[1:]))
    return {"repeats": same / (len(actions) - 1)}


def wordle_board(observations: Sequence[str]) -> list[tuple[str, str]]:
    """The valid guesses and their marks (``"GY__G"``), read from the board lines
    (``3. C R A N E   G Y _ _ G``) of every observation, in order."""
    board: dict[int, tuple[str, str]] = {}
    for obs in observations:
        for m in _BOARD_LINE.finditer(obs if isinstance(obs, str) else ""):
            board[int(m.group(1))] = (m.group(2).replace(" ", "").lower(),
                                      m.group(3).replace(" ", ""))
    return [board[k] for k in sorted(board)]


def wordle_use(actions: Sequence[str], observations: Sequence[str]) -> Metrics:
    """``consistent``: of the guesses after the first, the share that every earlier guess's
    marks allow as the secret."""
    from textgyms.envs.wordle.rules import GRAY, GREEN, YELLOW, feedback

    marks = {GREEN: "G", YELLOW: "Y", GRAY: "_"}
    board = wordle_board(observations[1:])
    if len(board) < 2:
        return {}
    ok = 0
    for i in range(1, len(board)):
        word = board[i][0]
        ok += all(len(g) == len(word) and "".join(marks[v] for v in feedback(g, word)) == m
                  for g, m in board[:i])
    return {"consistent": ok / (len(board) - 1)}


def search_use(actions: Sequence[str], observations: Sequence[str]) -> Metrics:
    """``grounded`` and ``looked`` of the episode's answer (nothing when it never answered)."""
    from textgyms.envs.search.env import TOOLS_BROWSE, TOOLS_SEARCH_ONLY
    from textgyms.envs.search.verify import normalize

    calls = _calls(actions, TOOLS_BROWSE + TOOLS_SEARCH_ONLY[:1])
    answered = [i for i, c in enumerate(calls) if not isinstance(c, ParseError)
                and c.name == "answer"]
    if not answered:
        return {}
    k = answered[0]
    text = normalize(str(calls[k].args.get("text", "")))
    shown = observations[1 : k + 1]  # what the env answered to the actions before it
    grounded = bool(text) and any(f" {text} " in f" {normalize(str(o))} " for o in shown)
    looked = any(not isinstance(c, ParseError) and c.name in ("search", "open", "find")
                 for c in calls[:k])
    return {"grounded": float(grounded), "looked": float(looked)}


def _failed(observation: str) -> bool:
    """A run that did not exit 0, or a test with a failing example."""
    if observation.startswith("Run finished:"):
        return not observation.startswith("Run finished: exit code 0.")
    m = re.match(r"(\d+)/(\d+) examples passed\.", observation)
    return bool(m and m.group(1) != m.group(2)) or "does not define a function" in observation


def code_use(actions: Sequence[str], observations: Sequence[str]) -> Metrics:
    """``runs_before_submit`` and ``changed_after_fail`` (when some run or test failed and
    was followed by another call)."""
    from textgyms.envs.code.env import RUN, SUBMIT, TEST

    calls = _calls(actions, (RUN, TEST, SUBMIT))
    out: Metrics = {}
    submit = next((i for i, c in enumerate(calls) if not isinstance(c, ParseError)
                   and c.name == "submit"), None)
    if submit is not None:
        out["runs_before_submit"] = float(sum(not isinstance(c, ParseError) for c in
                                              calls[:submit]))
    code = [None if isinstance(c, ParseError) else str(c.args.get("code", "")) for c in calls]
    fails = [i for i in range(len(calls) - 1) if code[i] is not None and calls[i].name != "submit"
             and _failed(str(observations[i + 1]))]
    followed = [(i, next((j for j in range(i + 1, len(calls)) if code[j] is not None), None))
                for i in fails]
    pairs = [(i, j) for i, j in followed if j is not None]
    if pairs:
        out["changed_after_fail"] = sum(code[i] != code[j] for i, j in pairs) / len(pairs)
    return out


#: Family metrics by the env id's family name (``textgyms/Wordle-v0`` -> ``Wordle``).
FAMILY: dict[str, Callable[[Sequence[str], Sequence[str]], Metrics]] = {
    "Wordle": wordle_use,
    "Search": search_use,
    "Code": code_use,
}


def family(env_id: str) -> str:
    """``Wordle`` for ``textgyms/Wordle-v0`` (the part between the namespace and ``-vN``)."""
    return re.sub(r"-v\d+$", "", env_id.rpartition("/")[2])


def episode_use(record: dict[str, Any]) -> Metrics:
    """The feedback-use metrics of one episode record (``env_id``, ``actions``,
    ``observations``); a metric that the episode leaves undefined is absent."""
    actions, obs = list(record.get("actions") or []), list(record.get("observations") or [])
    out = repeats(actions)
    fn = FAMILY.get(family(str(record.get("env_id", ""))))
    if fn is not None:
        out.update(fn(actions, obs))
    return out


def use_means(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per metric, the mean over the episodes that define it and their count ``n``."""
    values: dict[str, list[float]] = {}
    for r in rows:
        for k, v in (r.get("use") if r.get("use") is not None else episode_use(r)).items():
            values.setdefault(k, []).append(float(v))
    return {k: {"mean": float(np.mean(v)), "n": len(v)} for k, v in sorted(values.items())}
