"""Run directories -> the viewer's data: episodes, transcripts, references and diffs.

Everything here is plain data for the page's script (see :mod:`textgyms.view.page`). Long texts
are clipped to a character budget (:func:`clip_cap`) so a 10,000-episode run stays a file of a
few MB; the full text stays in the run's ``results.jsonl``.
"""

from __future__ import annotations

import bisect
import json
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

from textgyms.actions import ParseError, ToolSpec, parse_all
from textgyms.errors import ConfigError
from textgyms.evaluate import METADATA, load_results, protocol_rows, run_dirs
from textgyms.feedback_use import episode_use, use_means
from textgyms.protocol import PROTOCOL_VERSION, protocol_diff, resolved_kwargs

#: Characters of text (all kept observations and actions) a page holds before clipping.
TEXT_BUDGET = 6_000_000
#: No text is clipped below this many characters, whatever the budget (the page then grows).
MIN_CAP = 60
#: ISO episodes whose reference MT103 is regenerated (0.03 s each) for the side-by-side view.
MAX_REFERENCES = 300
ISO_PREFIX = "textgyms/ISO20022-MT103-"


@dataclass
class ViewRun:
    """One run directory: its name, metadata and the episode rows its protocol covers."""

    name: str
    meta: dict[str, Any]
    rows: list[dict[str, Any]]

    @property
    def policy(self) -> str:
        """The policy's name (``oracle``, ``random``, ``hf:...``)."""
        return str(self.meta.get("policy", {}).get("name", "?"))

    def make_kwargs(self, env_id: str) -> dict[str, Any]:
        """The kwargs to make ``env_id`` as the run did: the split and the recorded kwargs that
        differ from the env's defaults (the record holds every kwarg resolved, and an env does
        not take all of them back, e.g. a ``max_obs_chars`` it derives itself)."""
        rec = self.env_records[env_id]
        try:
            defaults = resolved_kwargs(env_id, {})
        except (gym.error.Error, ImportError):  # not registered here: the env is not rebuilt
            defaults = {}
        custom = {k: v for k, v in rec["kwargs"].items() if defaults.get(k, v) != v}
        return {**custom, "split": rec["split"]}

    @property
    def env_records(self) -> dict[str, dict[str, Any]]:
        """Per env id, the protocol record the run was played under."""
        return self.meta["protocol"]["envs"]


def load_view_runs(paths: Iterable[Path]) -> list[ViewRun]:
    """Each run directory in ``paths`` (or below them), with its protocol's episodes."""
    runs = []
    for path in run_dirs(paths):
        meta = json.loads((path / METADATA).read_text())
        if "protocol" not in meta:
            raise ConfigError(
                f"{path} was written before protocol version {PROTOCOL_VERSION} (no protocol "
                "record); run its textgyms eval command again in a new directory"
            )
        rows = protocol_rows(load_results(path), meta["protocol"]["envs"])
        rows.sort(key=lambda r: (r["env_id"], r["episode"], r.get("sample", 0)))
        runs.append(ViewRun(str(path), meta, rows))
    return runs


# --- clipping --------------------------------------------------------------------------------


def clip_cap(lengths: list[int], budget: int = TEXT_BUDGET) -> int | None:
    """The largest per-text cap whose clipped total fits ``budget`` (None: nothing to clip).

    Water-filling: texts shorter than the cap are kept whole, longer ones are cut to the cap.
    """
    if sum(lengths) <= budget:
        return None
    ordered = sorted(lengths)
    prefix = [0]
    for n in ordered:
        prefix.append(prefix[-1] + n)
    lo, hi = MIN_CAP, ordered[-1]
    while lo < hi:  # the largest cap c with total(c) <= budget
        mid = (lo + hi + 1) // 2
        k = bisect.bisect_left(ordered, mid)
        if prefix[k] + mid * (len(ordered) - k) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def clip(text: str, cap: int | None) -> str:
    """``text``, or its head and tail around a note saying how much was cut."""
    if cap is None or len(text) <= cap:
        return text
    head = cap * 3 // 4
    tail = cap - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n… [{cut:,} characters cut; see results.jsonl] …\n{text[-tail:]}"


class Strings:
    """A table of distinct strings (prompts repeat across runs and samples)."""

    def __init__(self, cap: int | None) -> None:
        self.cap = cap
        self.items: list[str] = []
        self.index: dict[str, int] = {}

    def add(self, text: Any) -> int:
        """The id of ``text`` (clipped), adding it on first sight."""
        text = clip(text if isinstance(text, str) else json.dumps(text), self.cap)
        sid = self.index.get(text)
        if sid is None:
            sid = self.index[text] = len(self.items)
            self.items.append(text)
        return sid


# --- per-env helpers -------------------------------------------------------------------------


class EnvCache:
    """One env per (id, kwargs): its tools (to parse actions) and its tasks (ISO references)."""

    def __init__(self) -> None:
        self.envs: dict[str, gym.Env] = {}
        self.references = 0

    def env(self, env_id: str, kwargs: dict[str, Any]) -> gym.Env | None:
        """The env of this id and kwargs, built once; None if this install cannot build it
        (a run of an env version since replaced, or of an env whose extra is missing)."""
        key = json.dumps([env_id, kwargs], sort_keys=True)
        if key not in self.envs:
            try:
                with warnings.catch_warnings():  # gymnasium warns before refusing an old version
                    warnings.simplefilter("ignore", DeprecationWarning)
                    self.envs[key] = gym.make(env_id, **kwargs)
            except (gym.error.Error, ImportError):
                self.envs[key] = None
        return self.envs[key]

    def tools(self, env_id: str, kwargs: dict[str, Any]) -> tuple[ToolSpec, ...] | None:
        """The env's tool specs (None: the env cannot be built, actions are shown raw)."""
        env = self.env(env_id, kwargs)
        return None if env is None else tuple(env.unwrapped.tools)

    def reference(self, row: dict[str, Any], kwargs: dict[str, Any]) -> str | None:
        """The reference MT103 of an ISO episode, regenerated from its seed (None past the cap
        or when the regenerated task is not the recorded one, e.g. another env version)."""
        if self.references >= MAX_REFERENCES:
            return None
        self.references += 1
        env = self.env(row["env_id"], kwargs)
        if env is None:
            return None
        _, info = env.reset(seed=row["seed"])
        if info["task_id"] != row["task_id"]:
            return None
        return str(env.unwrapped.task.reference)

    def close(self) -> None:
        """Close every env."""
        for env in self.envs.values():
            if env is not None:
                env.close()


def tool_call(action: str, tools: tuple[ToolSpec, ...]) -> list[Any]:
    """``[name, args]`` of the call the env acts on (the last), or ``[None, why]``."""
    calls = parse_all(action, tools)
    if isinstance(calls, ParseError):
        return [None, calls.message]
    call = calls[-1]
    return [call.name, {k: v if isinstance(v, str | int | float) else str(v)
                        for k, v in call.args.items()}]


def mt_rows(answer: str, reference: str, parts: dict[str, float]) -> list[list[Any]]:
    """Side-by-side rows ``[field, agent value, reference value, part score or None]`` of an
    MT103 answer and its reference: headers, UETR, then block-4 fields by option group."""
    from textgyms.envs.iso20022 import mt103  # only pages with ISO episodes need the ISO env

    got, ref = mt103.parse(answer), mt103.parse(reference)
    if ref is None:
        return []
    rows: list[list[Any]] = []
    g_parties = mt103.parties(got) if got else (None, None)
    r_parties = mt103.parties(ref)
    for i, name in enumerate(("sender", "receiver")):
        rows.append([name, g_parties[i] or "", r_parties[i] or "", parts.get(name)])
    rows.append(["121 (UETR)", (mt103.uetr(got) if got else None) or "", mt103.uetr(ref) or "",
                 parts.get("121")])
    groups: dict[str, list[list[str]]] = {}
    for which, msg in ((1, ref), (0, got)):
        for tag, value in msg.fields if msg else ():
            cell = groups.setdefault(mt103.base_tag(tag), [[], []])
            cell[which].append(f":{tag}:{value}")
    for base, (agent, refs) in groups.items():
        rows.append([base, "\n".join(agent), "\n".join(refs), parts.get(base)])
    return rows


# --- the page's data -------------------------------------------------------------------------


def _calls(row: dict[str, Any], tools: tuple[ToolSpec, ...] | None) -> list[list[Any]]:
    if tools is None:
        return [[None, None] for _ in row["actions"]]  # not parsed: shown as raw text
    return [tool_call(a if isinstance(a, str) else json.dumps(a), tools) for a in row["actions"]]


def _mt(row: dict[str, Any], calls: list[list[Any]], ref: str | None) -> dict[str, Any] | None:
    """The side-by-side view of an ISO episode's last answer, if it has one and a reference."""
    turns = [k for k, (name, _) in enumerate(calls) if name == "answer"]
    if ref is None or not turns:
        return None
    answer = str(calls[turns[-1]][1].get("mt", ""))
    rows = [[clip(c, 2_000) if isinstance(c, str) else c for c in r]
            for r in mt_rows(answer, ref, row.get("parts") or {})]
    return {"turn": turns[-1], "rows": rows}


def _texts(row: dict[str, Any], calls: list[list[Any]]) -> Iterable[Any]:
    yield from row["observations"]
    yield from row["actions"]
    for _, args in calls:
        if isinstance(args, dict):
            yield from (v for v in args.values() if isinstance(v, str))


def _episode(ri: int, ei: int, row: dict[str, Any], calls: list[list[Any]],
             mt: dict[str, Any] | None, strings: Strings) -> dict[str, Any]:
    """One episode as the page stores it: texts as ids into the string table."""
    def ids(args: Any) -> Any:
        return {k: strings.add(v) for k, v in args.items()}  # non-strings as JSON text

    return {
        "run": ri, "env": ei, "episode": row["episode"], "sample": row.get("sample", 0),
        "seed": row["seed"], "task": row["task_id"], "score": row["score"],
        "solved": row["solved"], "turns": row["turns"], "invalid": row.get("invalid", 0),
        "truncated": row.get("truncated", False), "parts": row.get("parts") or {},
        "feedback": row.get("feedback"), "error": row.get("error"),
        "use": row["use"] if row.get("use") is not None else episode_use(row),
        "obs": [strings.add(o) for o in row["observations"]],
        "act": [strings.add(a) for a in row["actions"]],
        "calls": [[n, ids(a) if isinstance(a, dict) else a] for n, a in calls],
        "mt": mt,
    }


@dataclass
class Prepared:
    """Runs with each episode's parsed tool calls and MT103 view: the costly part of a page,
    done once whatever text budget the page ends up with."""

    runs: list[ViewRun]
    envs: list[str]
    items: list[tuple[int, dict[str, Any], list[list[Any]], dict[str, Any] | None]]


def prepare(runs: list[ViewRun]) -> Prepared:
    """Parse every action with its env's tools; regenerate ISO references."""
    envs = sorted({r["env_id"] for run in runs for r in run.rows})
    cache = EnvCache()
    items = []
    try:
        for ri, run in enumerate(runs):
            for row in run.rows:
                kwargs = run.make_kwargs(row["env_id"])
                calls = _calls(row, cache.tools(row["env_id"], kwargs))
                ref = None
                if row["env_id"].startswith(ISO_PREFIX) and any(n == "answer" for n, _ in calls):
                    ref = cache.reference(row, kwargs)
                items.append((ri, row, calls, _mt(row, calls, ref)))
    finally:
        cache.close()
    return Prepared(runs, envs, items)


def assemble(prep: Prepared, budget: int = TEXT_BUDGET) -> dict[str, Any]:
    """The page's data, its texts clipped to ``budget`` characters in all: runs, envs,
    episodes, the string table and the diffs between runs."""
    cap = clip_cap([len(t) for _, row, calls, _ in prep.items for t in _texts(row, calls)], budget)
    strings = Strings(cap)
    episodes = [_episode(ri, prep.envs.index(row["env_id"]), row, calls, mt, strings)
                for ri, row, calls, mt in prep.items]
    return {
        "runs": [_run_summary(run, label)
                 for run, label in zip(prep.runs, labels([r.name for r in prep.runs]))],
        "envs": prep.envs,
        "episodes": episodes,
        "strings": strings.items,
        "cap": cap,
        "diffs": diffs(prep.runs, prep.envs, episodes),
    }


def build_payload(runs: list[ViewRun], budget: int = TEXT_BUDGET) -> dict[str, Any]:
    """:func:`assemble` of :func:`prepare`."""
    return assemble(prepare(runs), budget)


def labels(names: list[str]) -> list[str]:
    """The shortest trailing parts of the run paths that still tell the runs apart
    (``runs/a/oracle``, ``runs/b/oracle`` -> ``a/oracle``, ``b/oracle``)."""
    parts = [Path(n).parts or (n,) for n in names]
    for k in range(1, max(map(len, parts)) + 1):
        short = ["/".join(p[-k:]) for p in parts]
        if len(set(short)) == len(short):
            return short
    return names


def _run_summary(run: ViewRun, label: str) -> dict[str, Any]:
    scores = [r["score"] for r in run.rows]
    return {
        "name": run.name, "label": label, "policy": run.policy,
        "created": run.meta.get("created", ""),
        "protocol_id": run.meta.get("protocol_id", ""), "episodes": len(run.rows),
        "score": sum(scores) / len(scores) if scores else None,
        "use": {k: v["mean"] for k, v in use_means(run.rows).items()},
    }


#: At most this many pairs of runs get a diff (every pair of the first runs given).
MAX_DIFFS = 15


def diffs(runs: list[ViewRun], envs: list[str], episodes: list[dict[str, Any]]) -> list[dict]:
    """For each pair of runs, per task of the envs they played under the same protocol: the
    mean score over samples in each run (tasks of other envs are listed as ``skipped``)."""
    by_run: dict[int, dict[tuple[int, int], list[int]]] = {}
    for i, ep in enumerate(episodes):
        by_run.setdefault(ep["run"], {}).setdefault((ep["env"], ep["episode"]), []).append(i)
    out = []
    pairs = [(a, b) for b in range(len(runs)) for a in range(b)][:MAX_DIFFS]
    for a, b in pairs:
        shared, skipped = [], []
        for env_id in envs:
            ra, rb = runs[a].env_records.get(env_id), runs[b].env_records.get(env_id)
            if ra is None or rb is None:
                continue
            why = protocol_diff(ra, rb, ignore=("samples",))
            if why:
                skipped.append(f"{env_id}: {'; '.join(why)}")
            else:
                shared.append(env_id)
        tasks = []
        for key, ia in sorted(by_run.get(a, {}).items()):
            ib = by_run.get(b, {}).get(key)
            if ib is None or envs[key[0]] not in shared:
                continue
            mean_a = sum(episodes[i]["score"] for i in ia) / len(ia)
            mean_b = sum(episodes[i]["score"] for i in ib) / len(ib)
            tasks.append([key[0], key[1], episodes[ia[0]]["seed"], mean_a, mean_b, ia[0], ib[0]])
        out.append({"a": a, "b": b, "tasks": tasks, "skipped": skipped})
    return out
