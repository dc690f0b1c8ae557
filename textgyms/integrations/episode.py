"""The pieces every trainer adapter shares: a task row and an episode played turn by turn.

A **task row** names one episode: ``env_id``, ``env_kwargs`` (a JSON object, or its text as
Arrow stores it), ``seed`` and ``split`` (the env's own ``split`` kwarg), plus ``task_id`` for
reference. ``textgyms export tasks`` writes these keys as top-level columns and repeats them in
``extra_info`` (the column verl and SkyRL hand to their plug-ins), so :meth:`TaskRow.from_row`
reads either place.

An :class:`Episode` is the env side of one rollout, the same for every adapter: reset on the
row's seed, step with the model's raw completion, add the rewards up, and report the metrics
trainers log (:func:`metric_keys`: a fixed key set per env id, the union over a mixture).

What every adapter shares besides: async adapters run env work off their event loop
(:meth:`Episode.aopen`, :meth:`Episode.astep`, :meth:`Episode.aclose` on a dedicated thread
pool), the Code sandbox pool is sized to the usable CPUs (``$TEXTGYMS_SANDBOX_WORKERS``
overrides) when an adapter makes its first env, and observations are cut to the token budget
(:func:`cut_observation`, ``$TEXTGYMS_MAX_OBS_TOKENS``); an adapter that talks to an inference
server ends an episode before its next request could overflow the model's context
(:class:`ContextBudget`) instead of sending a request the server refuses.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

import gymnasium as gym

from textgyms.core import ERROR, MESSAGES, PARTS, SCORE, SOLVED, TOOLS, TURN, invalid_after
from textgyms.cpus import sandbox_workers
from textgyms.errors import ConfigError

__all__ = ["COMMON_METRICS", "MAX_OBS_TOKENS_ENV", "PER_ENV_METRICS", "ROW_KEYS", "ContextBudget",
           "Episode", "StepResult", "TaskRow", "cut_observation", "env_name", "message_tokens",
           "metric_keys", "obs_token_limit", "off_loop", "size_sandbox_pool"]

ROW_KEYS = ("env_id", "env_kwargs", "seed", "split", "task_id", "metric_keys")
# Logged for every episode whatever its env (the means over a mixture).
COMMON_METRICS = ("score", "solved", "turns", "return", "finished", "invalid_actions",
                  "context_cut")
# Logged per env as ``<env>/<key>`` (``episodes`` is 1: its mean is the env's share).
PER_ENV_METRICS = ("episodes", "score", "solved", "turns", "return", "finished",
                   "invalid_actions")
MAX_OBS_TOKENS_ENV = "TEXTGYMS_MAX_OBS_TOKENS"
T = TypeVar("T")


def env_name(env_id: str) -> str:
    """The metric prefix of an env id: no namespace, no version, lower case
    (``textgyms/Wordle-v0`` -> ``wordle``)."""
    return re.sub(r"-v\d+$", "", env_id.rpartition(":")[2].rpartition("/")[2]).lower()


@functools.cache
def _metric_parts(env_id: str) -> tuple[str, ...]:
    """The verdict parts the env class declares as metrics (``TextEnv.metric_parts``)."""
    from gymnasium.envs.registration import load_env_creator

    from textgyms.mixture import resolve_spec

    entry = resolve_spec(env_id).entry_point
    creator = load_env_creator(entry) if isinstance(entry, str) else entry
    return tuple(getattr(creator, "metric_parts", ()))


def metric_keys(envs: Any) -> tuple[str, ...]:
    """The fixed metric keys of an env id, a mixture (any form :meth:`Mixture.parse` takes) or
    a list of ids: :data:`COMMON_METRICS`, then per env ``<name>/<key>`` for
    :data:`PER_ENV_METRICS` and ``<name>/parts/<part>`` for its declared parts (the union over
    the mixture). Two ids with the same name (e.g. two versions) are refused."""
    import textgyms  # noqa: F401  (registers the ids)
    from textgyms.mixture import Mixture

    if isinstance(envs, (list, tuple)) and all(isinstance(e, str) for e in envs):
        ids = list(dict.fromkeys(envs))
    else:
        ids = list(dict.fromkeys(e.env_id for e in Mixture.parse(envs).entries))
    keys, owners = list(COMMON_METRICS), {}
    for env_id in ids:
        name = env_name(env_id)
        if owners.setdefault(name, env_id) != env_id:
            raise ConfigError(f"{env_id} and {owners[name]} both log metrics as {name!r}; "
                              "train one version of an env at a time")
        keys += [f"{name}/{k}" for k in PER_ENV_METRICS]
        keys += [f"{name}/parts/{p}" for p in _metric_parts(env_id)]
    return tuple(keys)


def obs_token_limit(value: int | None = None) -> int | None:
    """The observation budget in tokens: ``value`` if given, else ``$TEXTGYMS_MAX_OBS_TOKENS``,
    else None (no limit)."""
    if value is None:
        raw = os.environ.get(MAX_OBS_TOKENS_ENV, "").strip()
        if not raw:
            return None
        if not raw.isdigit():
            raise ConfigError(f"{MAX_OBS_TOKENS_ENV} must be a whole number >= 1, got {raw!r}")
        value = int(raw)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"max_obs_tokens must be a whole number >= 1, got {value!r}")
    return value


def cut_observation(text: str, max_tokens: int | None, tokenizer: Any = None) -> str:
    """``text`` cut to ``max_tokens`` tokens of ``tokenizer`` with a visible marker
    (``…[truncated N tokens]``); without a tokenizer, to ``max_tokens`` UTF-8 bytes
    (``…[truncated N bytes]``: a byte-level tokenizer never needs more tokens than bytes)."""
    if max_tokens is None:
        return text
    if tokenizer is not None:
        ids = tokenizer.encode(text, add_special_tokens=False)
        if len(ids) <= max_tokens:
            return text
        kept = tokenizer.decode(ids[:max_tokens], skip_special_tokens=False)
        return f"{kept}\n…[truncated {len(ids) - max_tokens} tokens]"
    raw = text.encode("utf-8")
    if len(raw) <= max_tokens:
        return text
    kept = raw[:max_tokens].decode("utf-8", errors="ignore")
    return f"{kept}\n…[truncated {len(raw) - max_tokens} bytes]"


def message_tokens(messages: Any, tools: Any = None) -> int:
    """An upper bound on the tokens of chat ``messages`` (and ``tools``): their JSON's UTF-8
    bytes plus 8 per message for the template's headers (a byte-level tokenizer never needs
    more tokens than bytes)."""
    text = json.dumps(messages, ensure_ascii=False, default=str)
    text += json.dumps(tools, ensure_ascii=False) if tools else ""
    return len(text.encode("utf-8")) + 8 * len(messages)


class ContextBudget:
    """The context an episode may still use with an inference server: the server's own count
    of the last request and its reply plus an upper bound (:func:`message_tokens`) on the
    messages added since. The adapters that send whole transcripts (ART, verifiers) end an
    episode whose next request would not fit, as truncated (``Episode.context_cut``), rather
    than send it and get a server error."""

    def __init__(self, limit: int | None, prompt: int = 0) -> None:
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                  or limit < 1):
            raise ConfigError(f"max_context_tokens must be a whole number >= 1, got {limit!r}")
        self.limit, self.next_prompt = limit, prompt

    def room(self, max_tokens: int) -> int:
        """Tokens the next reply may take (< 1: the request would not fit)."""
        if self.limit is None:
            return max_tokens
        return min(max_tokens, self.limit - self.next_prompt)

    def fits(self, max_tokens: int | None) -> bool:
        """Whether the next request fits with its reply of ``max_tokens`` (None: one token),
        for a client that cannot lower ``max_tokens`` per request."""
        want = max(1, max_tokens or 1)
        return self.room(want) >= want

    def used(self, counted: int | None, messages: Any, added: Any) -> None:
        """Account for a reply and the ``added`` answer: ``counted`` is the server's count of
        the last request plus its reply (its ``usage``); without one, bound the whole
        transcript ``messages``."""
        if counted is not None:
            self.next_prompt = counted + message_tokens(added) + 8
        else:
            self.next_prompt = message_tokens(messages)


_pool_lock = threading.Lock()
_pool_state: dict[str, Any] = {"sized": None, "executor": None, "pid": None}


def size_sandbox_pool() -> int:
    """Size this process's Code sandbox pool to :func:`~textgyms.cpus.sandbox_workers` (once
    per process; trainers step many Code envs at once). Returns the size."""
    with _pool_lock:
        if _pool_state["sized"] is None or _pool_state["pid"] != os.getpid():
            from textgyms.sandbox import set_pool_size

            _pool_state.update(sized=sandbox_workers(), executor=None, pid=os.getpid())
            set_pool_size(_pool_state["sized"])
        return int(_pool_state["sized"])


def _executor() -> ThreadPoolExecutor:
    """The threads env work runs on (one pool per process, a forked child makes its own):
    enough for every sandbox server to be busy, and at least verl's 32 env threads."""
    size = size_sandbox_pool()
    with _pool_lock:
        if _pool_state["executor"] is None:
            _pool_state["executor"] = ThreadPoolExecutor(max(32, 2 * size),
                                                         thread_name_prefix="textgyms-env")
        return _pool_state["executor"]


async def off_loop(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` on the env threads, awaited: the event loop keeps serving other
    rollouts while an env steps (a Code run, a search) or is built."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_executor(), functools.partial(fn, *args, **kwargs))


def _as_mapping(value: Any, what: str) -> dict[str, Any]:
    """A dict from a dict or its JSON text (Arrow and parquet store kwargs as strings)."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{what} is not valid JSON: {exc}") from exc
    if not isinstance(value, Mapping):
        raise ConfigError(f"{what} must be a JSON object, got {type(value).__name__}")
    return dict(value)


@dataclass(frozen=True)
class TaskRow:
    """One episode to play: which env, how configured, which seed."""

    env_id: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    split: str = "train"
    task_id: str = ""
    metric_keys: tuple[str, ...] = ()
    """The metric keys every episode of the dataset reports (:func:`metric_keys` of its
    mixture, written by ``textgyms export tasks``); empty: this row's env's own keys."""

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> TaskRow:
        """Read a row of any adapter: the keys at top level, or inside ``extra_info``.

        A row's ``split`` becomes the env's ``split`` kwarg when the kwargs do not set it; a
        row whose two splits disagree is refused (it would train on test tasks).
        """
        extra = _as_mapping(row.get("extra_info"), "extra_info")
        merged = {**extra, **{k: row[k] for k in ROW_KEYS if row.get(k) is not None}}
        if not merged.get("env_id"):
            raise ConfigError(
                f"task row has no env_id (keys: {', '.join(sorted(row))}); write rows with "
                "`textgyms export tasks`"
            )
        kwargs = _as_mapping(merged.get("env_kwargs"), "env_kwargs")
        split = str(merged.get("split") or kwargs.get("split") or "train")
        if kwargs.setdefault("split", split) != split:
            raise ConfigError(
                f"task row split {split!r} disagrees with env_kwargs split {kwargs['split']!r}"
            )
        return cls(str(merged["env_id"]), kwargs, int(merged.get("seed") or 0), split,
                   str(merged.get("task_id") or ""), _key_list(merged.get("metric_keys")))

    def columns(self) -> dict[str, Any]:
        """The row's keys as dataset columns (kwargs as JSON text, one Arrow type for all)."""
        out = {"env_id": self.env_id, "env_kwargs": json.dumps(self.env_kwargs, sort_keys=True),
               "seed": self.seed, "split": self.split, "task_id": self.task_id}
        if self.metric_keys:
            out["metric_keys"] = list(self.metric_keys)
        return out

    def keys(self) -> tuple[str, ...]:
        """The metric keys this row's episode reports: the dataset's, else its env's own."""
        return self.metric_keys or metric_keys(self.env_id)

    def make(self) -> gym.Env:
        """A new env for this row (``ConfigError`` names a bad id or kwarg at once)."""
        import textgyms  # noqa: F401  (registers the ids)

        size_sandbox_pool()
        return gym.make(self.env_id, **self.env_kwargs)


def _key_list(value: Any) -> tuple[str, ...]:
    """Metric keys from a row: a list (or an Arrow array) of names, or its JSON text."""
    if value is None or (isinstance(value, str) and not value):
        return ()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"metric_keys is not valid JSON: {exc}") from exc
    keys = [str(k) for k in value]
    return tuple(keys)


class StepResult(NamedTuple):
    """What one agent turn gave: the env's answer and whether the episode is over."""

    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]

    @property
    def done(self) -> bool:
        """The episode ended (solved, failed or cut at the env's turn limit)."""
        return self.terminated or self.truncated


class Episode:
    """One episode of a task row, played by an adapter with the model's raw completions."""

    def __init__(self, row: TaskRow, env: gym.Env | None = None) -> None:
        self.row = row
        self.env = env if env is not None else row.make()
        self.prompt, self.info = self.env.reset(seed=row.seed)
        self.total_reward = 0.0
        self.penalties = 0.0
        self.invalid = 0
        self.done = False
        self.context_cut = False
        """The trainer's token budget ended the episode (set by the adapter that cut it)."""

    @classmethod
    async def aopen(cls, row: TaskRow) -> Episode:
        """:class:`Episode` built off the event loop (making an env may load an index or
        start a sandbox)."""
        return await off_loop(cls, row)

    async def astep(self, completion: str) -> StepResult:
        """:meth:`step` off the event loop (a Code step runs agent code for seconds)."""
        return await off_loop(self.step, completion)

    async def aclose(self) -> None:
        """:meth:`close` off the event loop."""
        await off_loop(self.close)

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The env's tools in OpenAI function format (from the reset info)."""
        return list(self.info.get(TOOLS) or [])

    @property
    def messages(self) -> list[dict[str, str]]:
        """The transcript so far as chat messages (prompt first)."""
        return [dict(m) for m in self.info.get(MESSAGES, [])]

    def step(self, completion: str) -> StepResult:
        """Play one completion; raises ``ResetNeeded`` after the episode ended."""
        obs, reward, terminated, truncated, self.info = self.env.step(completion)
        self.total_reward += float(reward)
        if self.info.get(ERROR) is not None:
            self.penalties += self.env.unwrapped.invalid_penalty
        self.done = bool(terminated or truncated)
        self.invalid = invalid_after(self.invalid, self.info, self.done)
        return StepResult(obs, float(reward), bool(terminated), bool(truncated), self.info)

    def _verdict_parts(self) -> tuple[float, dict[str, float]]:
        """The score and parts: the env's final ones, or for an episode the trainer cut short
        (its own turn or length limit), the verdict as things stand, as at the env's limit."""
        if self.done:
            return float(self.info.get(SCORE, 0.0)), dict(self.info.get(PARTS) or {})
        env = self.env.unwrapped
        verdict = env.final_verdict(env.state)
        return float(verdict.score), {k: float(v) for k, v in (verdict.parts or {}).items()}

    def score(self) -> float:
        """The final score; for an episode the trainer cut short, the score as things stand."""
        return self._verdict_parts()[0]

    def reward(self) -> float:
        """The episode's return: the rewards summed, or for an episode cut short the score as
        things stand less any invalid-action penalties (what the env's last step would pay)."""
        if self.done:
            return self.total_reward
        return self.score() - self.penalties

    def metrics(self, keys: tuple[str, ...] | None = None, fill: float | None = 0.0,
                ) -> dict[str, float | None]:
        """The episode's numbers under ``keys`` (default :meth:`TaskRow.keys`): the
        :data:`COMMON_METRICS`, and this env's ``<name>/...`` keys; keys of other envs of the
        mixture, and parts this verdict lacks, get ``fill`` (each adapter picks what its
        trainer averages correctly: 0.0, NaN or None)."""
        score, parts = self._verdict_parts()
        solved = bool(self.info.get(SOLVED, False)) if self.done else False
        own = {"score": score, "solved": float(solved), "turns": float(self.info.get(TURN, 0)),
               "return": self.reward(), "finished": float(self.done),
               "invalid_actions": float(self.invalid),
               "context_cut": float(self.context_cut), "episodes": 1.0}
        name = env_name(self.row.env_id)
        values: dict[str, float] = {k: v for k, v in own.items() if k in COMMON_METRICS}
        values.update({f"{name}/{k}": v for k, v in own.items() if k in PER_ENV_METRICS})
        values.update({f"{name}/parts/{k}": float(v) for k, v in parts.items()})
        keys = self.row.keys() if keys is None else keys
        return {k: values.get(k, fill) for k in keys}

    def close(self) -> None:
        """Close the env (sandboxes, index handles)."""
        self.env.close()
