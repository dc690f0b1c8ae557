"""The core of every textgyms environment: ``TextEnv``, ``Task``, ``Verdict``, ``Turn``,
``TextSpace`` and the standard info keys.

``TextEnv`` implements ``reset`` and ``step`` once (seeding, task replay, turn counting, the
invalid-action policy, truncation, rewards, info keys and the ``ansi`` transcript). A family
writes small hooks, most of them pure functions:

=====================================  ==========================================================
``generate(rng) -> Task``               draw a task from ``rng`` (the env's ``np_random``)
``prompt(task) -> str``                 the first observation
``init_state(task) -> state``           the family's per-episode state (default: the task)
``respond(state, action) -> Turn``      one raw agent action -> observation, shaping, done, verdict
``final_verdict(state) -> Verdict``     the verdict as things stand (used when the episode is cut
                                        short by the turn limit or too many invalid actions)
``respond_quick(state, action)``        optional: ``respond`` for the family's most common move,
                                        skipping the Turn (see its docstring)
``solve(task) -> list[str]``            the oracle's actions; stepping them ends with score 1.0
=====================================  ==========================================================

Rewards. ``reward_mode="sparse"`` (default) pays the final score on the last step and 0 before.
``reward_mode="dense"`` pays the family's per-turn shaping (``Turn.reward``) and, on the last
step, the final score minus the shaping already paid, so the rewards of an episode always sum to
its final score. An invalid action additionally costs ``invalid_penalty`` (default 0) and a
family may charge a cost of its own on a step (``Turn.penalty``, e.g. a wrong answer under
``wrong_penalty``), in both modes, so with penalties the sum is the score minus the penalties.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import math
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, NamedTuple

import gymnasium as gym
import numpy as np

from textgyms.actions import ToolSpec, tool_schemas
from textgyms.errors import ConfigError, ResetNeeded, VerifierError
from textgyms.seeding import (
    Seeder,
    seeded_generator,  # noqa: F401  (also importable from here)
)

__all__ = [
    "TextSpace",
    "Task",
    "Verdict",
    "Turn",
    "TextEnv",
    "INFO_KEYS",
    "check_choice",
    "SPLITS",
    "task_in_split",
    "generate_in_split",
    "TASK_ID",
    "TURN",
    "SCORE",
    "SOLVED",
    "PARTS",
    "ERROR",
    "MESSAGES",
    "TOOLS",
    "OBS_KIND",
    "INVALID_ACTIONS",
    "invalid_after",
]

# The standard info keys, defined here only. Families add their own keys next to these and
# document them in their module docstring.
TASK_ID = "task_id"  # str: stable hash of the task (same seed -> same id, in any process)
TURN = "turn"  # int: agent actions taken so far in this episode
SCORE = "score"  # float in [0, 1]: the final score (only when the episode is over)
SOLVED = "solved"  # bool: the task was solved (only when the episode is over)
PARTS = "parts"  # dict[str, float]: named sub-scores of the final verdict
ERROR = "error"  # str | None: the agent mistake of this step ("format", "invalid", ...)
MESSAGES = "messages"  # list[{"role", "content"}]: the transcript so far (read-only, shared)
TOOLS = "tools"  # list[dict]: the env's tools in OpenAI function format (on reset)
OBS_KIND = "obs_kind"  # "prompt" | "tool" | "feedback"
# int: the episode's invalid actions (only when it is over). The last step's ``error`` may be the
# verdict's ("wrong_answer"), which is a valid action that scored 0, so counting errors miscounts.
INVALID_ACTIONS = "invalid_actions"
INFO_KEYS = (TASK_ID, TURN, SCORE, SOLVED, PARTS, ERROR, MESSAGES, TOOLS, OBS_KIND,
             INVALID_ACTIONS)

ObsKind = Literal["prompt", "tool", "feedback"]
REWARD_MODES = ("sparse", "dense")


def check_choice(name: str, value: Any, choices: Sequence[Any]) -> Any:
    """Return ``value`` if it is one of ``choices``, else raise a ConfigError naming them."""
    if value not in choices:
        valid = ", ".join(str(c) for c in choices)
        raise ConfigError(f"unknown {name} {value!r}; choose one of: {valid}")
    return value


def invalid_after(counted: int, info: Mapping[str, Any], done: bool) -> int:
    """An episode's invalid actions after a step: ``counted`` before it, plus one if the step
    had an ``error``; on the last step the env's own count (``INVALID_ACTIONS``) when given,
    since that step's ``error`` may be the final verdict's (a wrong answer is not invalid)."""
    if done and INVALID_ACTIONS in info:
        return int(info[INVALID_ACTIONS])
    return counted + (info.get(ERROR) is not None)


_CHARSET_TABLES: dict[str, dict[str, Any]] = {}  # see TextSpace.__init__


class TextSpace(gym.spaces.Text):
    """Any Unicode string of at most ``max_chars`` characters, the empty string included.

    Gymnasium's ``Text`` only contains strings over its charset (alphanumerics by default), which
    rejects spaces, punctuation, non-ASCII and "". Sampling still draws from a printable ASCII
    charset, which is enough for random agents and ``check_env``.
    """

    def __init__(self, max_chars: int, seed: int | np.random.Generator | None = None) -> None:
        super().__init__(max_length=max_chars, min_length=0, charset=string.printable, seed=seed)
        # Gymnasium builds a frozenset, a tuple, a dict and a string of the charset for each
        # space, about 13 KB: most of an env's memory (two spaces each), and a mixture
        # vector's worker holds an env per entry per slot. Every TextSpace has the same
        # charset, so all share the first one's (read-only) tables.
        tables = {k: v for k, v in vars(self).items() if k.startswith("_char")}
        vars(self).update(_CHARSET_TABLES.setdefault("printable", tables))

    def contains(self, x: Any) -> bool:
        """True for any ``str`` no longer than ``max_length``."""
        return isinstance(x, str) and len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"TextSpace({self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, TextSpace) and other.max_length == self.max_length


# A fresh 64-bit blake2b hasher, only ever copied: a copy updated with a blob gives the digest
# of blake2b(blob, digest_size=8) at a fraction of the constructor's cost (a task_id is
# computed for every new task, in Wordle at a reset).
_BLAKE2B_64 = hashlib.blake2b(digest_size=8)


@dataclass(frozen=True)
class Task:
    """Base class of a family's task: a frozen dataclass of JSON-able fields.

    ``task_id`` is a stable hash of the class name and the fields, identical in every process,
    so it identifies a task in logs, GRPO groups and leaderboard results.
    """

    def to_json(self) -> dict[str, Any]:
        """The task's fields as a JSON-able dict."""
        return dataclasses.asdict(self)

    @property
    def task_id(self) -> str:
        """A 16-hex-digit stable hash of the task, computed once per task object.

        The hash is over the class name and the ``repr`` of the field values, deterministic
        across processes for the JSON-able field types tasks are made of (no sets: their
        iteration order varies by process).
        """
        cached = self.__dict__.get("_task_id")
        if cached is None:
            # __dict__ holds exactly the fields, in definition order, until the cache is added.
            blob = f"{type(self).__name__}{tuple(self.__dict__.values())!r}".encode()
            hasher = _BLAKE2B_64.copy()  # blake2b(blob, digest_size=8), without its set-up
            hasher.update(blob)
            cached = hasher.hexdigest()
            self.__dict__["_task_id"] = cached  # frozen: not a field, just a cache
        return cached


@dataclass(frozen=True, init=False)
class Verdict:
    """The score of an episode: ``score`` in [0, 1], named sub-scores and the agent's mistake."""

    score: float
    solved: bool
    feedback: str = ""
    parts: Mapping[str, float] = field(default_factory=dict)
    error: str | None = None

    def __init__(
        self,
        score: float,
        solved: bool,
        feedback: str = "",
        parts: Mapping[str, float] | None = None,
        error: str | None = None,
    ) -> None:
        # Written out rather than generated: a frozen dataclass's __init__ assigns each field
        # through object.__setattr__, several times the cost of these, and one is built at the
        # end of every episode. A score outside [0, 1] is a verifier bug, not an agent
        # outcome: raise, never clip.
        if not (isinstance(score, (int, float)) and 0.0 <= score <= 1.0):
            raise ValueError(f"Verdict.score must be a number in [0, 1], got {score!r}")
        fields = self.__dict__
        fields["score"] = score
        fields["solved"] = solved
        fields["feedback"] = feedback
        fields["parts"] = {} if parts is None else parts
        fields["error"] = error


class Turn(NamedTuple):
    """What ``respond`` returns for one agent action.

    ``reward`` is the dense per-turn shaping (ignored in sparse mode). ``verdict`` is required
    when ``terminated``. ``error`` names an agent mistake ("format", "invalid", ...) and makes the
    action count toward ``max_invalid``. ``info`` holds family-specific info keys. ``penalty``
    (>= 0) is a cost charged on this step's reward in both reward modes, outside the score (a
    wrong final answer under a family's ``wrong_penalty``, a per-turn cost); the score stays in
    [0, 1]. (A NamedTuple: one is built on every step, and a frozen dataclass costs several times
    more.)
    """

    observation: str
    reward: float = 0.0
    terminated: bool = False
    verdict: Verdict | None = None
    error: str | None = None
    obs_kind: ObsKind = "tool"
    info: Mapping[str, Any] = {}
    penalty: float = 0.0


class _Episode:
    """Book-keeping of the episode in progress (owned by TextEnv, not by families).

    A slotted class with a plain ``__init__`` rather than a dataclass: one is built on every
    reset and its fields are read and written on every step.
    """

    __slots__ = ("task", "state", "messages", "task_id", "turn", "invalid", "paid", "done")

    def __init__(self, task: Task, state: Any, messages: list[dict[str, str]], task_id: str):
        self.task, self.state, self.messages, self.task_id = task, state, messages, task_id
        self.turn = self.invalid = 0  # agent actions / invalid ones so far
        self.paid = 0.0  # dense shaping paid so far
        self.done = False


class TextEnv(gym.Env[str, str]):
    """A text environment: observations and actions are strings.

    Subclasses set ``tools`` and implement the hooks listed in the module docstring. Common
    kwargs (validated here): ``max_turns``, ``max_invalid`` (invalid actions tolerated before the
    episode ends), ``invalid_penalty`` (>= 0, subtracted from that step's reward),
    ``reward_mode`` ("sparse" | "dense"), ``render_mode`` (None | "ansi"), ``max_obs_chars``
    and ``max_action_chars`` (longer actions are invalid, never an exception).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}
    tools: ClassVar[tuple[ToolSpec, ...]] = ()
    # Constructor kwargs the conformance suite runs the whole contract under, one run each
    # (e.g. every corpus or dataset of a family). The default runs it once, on the defaults.
    conformance_variants: ClassVar[tuple[Mapping[str, Any], ...]] = ({},)
    # The verdict parts (``info["parts"]`` keys) trainers log as metrics: a fixed set per
    # family, so every episode reports the same keys. Parts a task may add beyond these (per
    # field or per check group) stay in ``info["parts"]`` only.
    metric_parts: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        *,
        max_turns: int,
        max_invalid: int = 3,
        invalid_penalty: float = 0.0,
        reward_mode: str = "sparse",
        render_mode: str | None = None,
        max_obs_chars: int = 16_384,
        max_action_chars: int = 65_536,
        **unknown: Any,
    ) -> None:
        if unknown:
            raise ConfigError(
                f"unknown kwarg(s) {', '.join(sorted(unknown))} for {type(self).__name__}; "
                f"valid kwargs: {', '.join(valid_kwargs(type(self)))}"
            )
        self.reward_mode = check_choice("reward_mode", reward_mode, REWARD_MODES)
        self.render_mode = check_choice("render_mode", render_mode, (None, "ansi"))
        _check_positive_int("max_turns", max_turns)
        _check_positive_int("max_invalid", max_invalid)
        _check_positive_int("max_obs_chars", max_obs_chars)
        _check_positive_int("max_action_chars", max_action_chars)
        if not (isinstance(invalid_penalty, (int, float)) and 0 <= invalid_penalty < math.inf):
            raise ConfigError(
                f"invalid_penalty must be a finite number >= 0, got {invalid_penalty!r}"
            )
        self.max_turns, self.max_invalid = max_turns, max_invalid
        self.invalid_penalty = float(invalid_penalty)
        self.max_action_chars = max_action_chars
        self.observation_space = TextSpace(max_obs_chars)
        self.action_space = TextSpace(max_action_chars)
        self._ep: _Episode | None = None
        self._seeder: Seeder | None = None  # re-used by every reset(seed=...)
        # pregenerate's (seed, task, seeder left where drawing the task left it), and the
        # seeder it draws with next (the two seeders swap at the reset that takes the task)
        self._ready: tuple[int, Task, Seeder] | None = None
        self._warmed: tuple[int, Task, Seeder] | None = None  # _ready, once warmed
        self._spare_seeder: Seeder | None = None
        self._quick = _serves_quick(type(self))

    # --- hooks ------------------------------------------------------------------------------
    def generate(self, rng: np.random.Generator) -> Task:
        """Draw a task using only ``rng``."""
        raise NotImplementedError

    def prompt(self, task: Task) -> str:
        """The first observation of an episode on ``task``."""
        raise NotImplementedError

    def init_state(self, task: Task) -> Any:
        """The family's per-episode state; the default is the task itself."""
        return task

    def respond(self, state: Any, action: str) -> Turn:
        """Apply one raw agent action (already checked for type and length)."""
        raise NotImplementedError

    def final_verdict(self, state: Any) -> Verdict:
        """The verdict as things stand, when the episode is cut short."""
        raise NotImplementedError

    def respond_quick(
        self, state: Any, action: str
    ) -> tuple[str, Mapping[str, Any]] | Turn | None:
        """Optional fast path of :meth:`respond` for a family's most common action. For a
        valid ``"tool"`` move that neither ends the episode nor earns shaping or a penalty,
        return the plain tuple ``(observation, info keys)``, having applied it to ``state``
        (exactly what ``respond`` would return as ``Turn(obs, 0.0, False, None, None, "tool",
        info)``): ``step`` then skips the Turn and its book-keeping. For another action it
        recognised cheaply, return the Turn ``respond`` would return (so the action is not
        read twice); for the rest, None, with ``state`` untouched, to have ``respond`` take
        the action. Called only on steps the turn limit does not end, and never for a class
        that overrides ``respond`` below the class that wrote ``respond_quick`` (nor for the
        default, which is not overridden)."""
        return None

    def solve(self, task: Task) -> list[str]:
        """The oracle's actions for ``task``; stepping them ends the episode with score 1.0."""
        raise NotImplementedError

    def sample_action(self, rng: np.random.Generator) -> str:
        """A random action for baselines: a random call of a random tool with random text.
        Families override it with a random *valid* action where that is meaningful."""
        tool = self.tools[int(rng.integers(len(self.tools)))]
        if tool.main is None:
            return f"<{tool.name}/>"
        text = "".join(rng.choice(list(string.ascii_lowercase + " "), size=8))
        return f"<{tool.name}>{text}</{tool.name}>"

    def data_sha256(self) -> dict[str, str]:
        """sha256 of every data file the family reads (recorded in leaderboard metadata)."""
        return {}

    @classmethod
    def prefetch(cls, envs: Sequence[TextEnv], actions: Sequence[str]) -> None:
        """Called by the vector backends just before they step ``envs`` (envs of this class
        in one process, two or more) with ``actions``, so that a family can do the slow
        lookups those steps will make in one batched call (Search runs their index searches
        together, on every core). It may only warm caches: the steps' results must be what
        they would be without it. The default does nothing."""

    def pregenerate(self, seed: int) -> None:
        """Draw now the task that ``reset(seed=seed)`` will draw, and keep it for that reset.

        A vector's worker calls this while it waits for the next actions (the model's turn on
        the GPU), for the seed its env's next episode will use, so the coming autoreset only
        looks the task up. ``reset`` then returns exactly what it returns without it: the same
        task, prompt and info, and ``np_random`` left where drawing the task leaves it. One
        task is kept, until the reset that uses it or :meth:`forget_pregenerated`; a reset with
        another seed or with ``options={"task": ...}`` ignores it. This relies on
        :meth:`generate` drawing from ``rng`` alone, given the env's settings (its contract).
        """
        self.forget_pregenerated()  # one kept task; its seeder becomes the spare
        seeder = self._spare_seeder or Seeder()  # never the episode's own generator
        self._spare_seeder = None
        task = self.generate(seeder.seed(seed))  # (seed() validates the seed as reset does)
        self._ready = (seed, task, seeder)

    def warm(self, task: Task) -> None:
        """Compute ahead what episodes on ``task`` will likely need and the task alone fixes
        (NetConfig compiles and checks the starting network). A vector's worker calls it,
        through :meth:`warm_pregenerated`, on the task :meth:`pregenerate` kept, in the wait
        for the model's turn once every env's next task is drawn. It may only fill caches of
        pure functions of the task: an episode's results must be what they would be without
        it. The default does nothing."""

    def warm_pregenerated(self) -> bool:
        """:meth:`warm` the task :meth:`pregenerate` keeps, once; whether there was one to warm
        (a second call, or one without a kept task, does nothing)."""
        ready = self._ready
        if ready is None or self._warmed is ready:
            return False
        self._warmed = ready
        self.warm(ready[1])
        return True

    @property
    def pregenerated(self) -> Task | None:
        """The task :meth:`pregenerate` keeps for the next reset to its seed (None: none)."""
        return None if self._ready is None else self._ready[1]

    def forget_pregenerated(self) -> bool:
        """Drop the task kept by :meth:`pregenerate` (after a change of the env's settings);
        whether there was one."""
        if self._ready is None:
            return False
        self._spare_seeder, self._ready, self._warmed = self._ready[2], None, None
        return True

    # --- public API -------------------------------------------------------------------------
    @property
    def task(self) -> Task:
        """The task of the episode in progress (or just finished)."""
        if self._ep is None:
            raise ResetNeeded("no task yet: call reset() first")
        return self._ep.task

    @property
    def state(self) -> Any:
        """The family's state of the episode in progress."""
        if self._ep is None:
            raise ResetNeeded("no episode yet: call reset() first")
        return self._ep.state

    def oracle_actions(self) -> list[str]:
        """The oracle's actions for the episode in progress (``solve(self.task)``)."""
        return self.solve(self.task)

    def made_as(self) -> tuple[str, dict[str, Any]]:
        """The id and kwargs this env was made with by ``gym.make`` (its spec), so that a
        caller in another process (a vector's worker holds the env) can rebuild or describe it.
        """
        spec = self.spec
        if spec is None:
            raise ConfigError("this env was not made with gym.make(env_id, ...), so it has no "
                              "id and kwargs to report; make it with gym.make")
        return str(spec.id), dict(spec.kwargs or {})

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode: a task drawn from ``np_random``, or ``options={"task": task}``."""
        task = _task_option(options) if options else None
        ready = self._ready
        if seed is None:
            super().reset(seed=seed)
            rng = self.np_random
        elif task is None and ready is not None and ready[0] == seed and (
                type(ready[0]) is type(seed)):  # (so a bool seed is refused below, as ever)
            # Drawn ahead by pregenerate: its generator is already where drawing the task
            # left it. The seeders swap rather than copy a state (a copy costs more than a
            # Wordle reset).
            task, rng, self._ready, self._warmed = ready[1], ready[2].generator, None, None
            self._seeder, self._spare_seeder = ready[2], self._seeder
            self._np_random, self._np_random_seed = rng, seed
        else:  # as seeding.seeded_generator(seed), re-using this env's PCG64 and Generator
            if self._seeder is None:
                self._seeder = Seeder()
            rng = self._seeder.seed(seed)
            self._np_random, self._np_random_seed = rng, seed
        if task is None:
            task = self.generate(rng)
        obs = self.prompt(task)
        if len(obs) > self.observation_space.max_length:
            obs = self._clip(obs)
        message = {"role": "user", "content": obs}
        task_id = task.task_id
        self._ep = _Episode(task, self.init_state(task), [message], task_id)
        # The standard keys (see _info), built inline as literals, as _record does (the values
        # of TASK_ID, TURN, ERROR, OBS_KIND, MESSAGES and TOOLS; tests/test_core.py checks
        # them): this runs on every reset.
        return obs, {"task_id": task_id, "turn": 0, "error": None, "obs_kind": "prompt",
                     "messages": [message], "tools": _schemas(type(self))}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """One agent action. Never raises on agent text; raises ResetNeeded when misused."""
        ep = self._ep
        if ep is None or ep.done:
            raise ResetNeeded(
                "step() called before reset() or after the episode ended; call reset()"
            )
        if type(action) is not str:
            action = _as_text(action)
        if not action.isascii():
            action = _valid_unicode(action)
        ep.turn += 1
        if len(action) > self.max_action_chars:
            turn = Turn(
                f"Your action is {len(action):,} characters long; the limit is "
                f"{self.max_action_chars:,}. Nothing was done.",
                error="too_long",
                obs_kind="feedback",
            )
            action = _clip_text(action, self.max_action_chars)  # the transcript stays in space
        elif self._quick and ep.turn < self.max_turns:  # see respond_quick
            quick = self.respond_quick(ep.state, action)
            if type(quick) is tuple:  # the quick kind (a Turn is a tuple's subclass)
                obs, extra = quick
                if len(obs) > self.observation_space.max_length:
                    obs = self._clip(obs)
                return obs, 0.0, False, False, _record(ep, action, obs, None, "tool", extra)
            turn = self.respond(ep.state, action) if quick is None else quick
        else:
            turn = self.respond(ep.state, action)
        return self._advance(ep, action, turn)

    def render(self) -> str | None:
        """The transcript of the episode so far (``render_mode="ansi"``)."""
        if self.render_mode != "ansi" or self._ep is None:
            return None
        lines = []
        for m in self._ep.messages:
            who = "agent" if m["role"] == "assistant" else "env"
            lines.append(f"[{who}] {m['content']}")
        return "\n".join(lines) + "\n"

    # --- internals --------------------------------------------------------------------------
    def _advance(
        self, ep: _Episode, action: str, turn: Turn
    ) -> tuple[str, float, bool, bool, dict]:
        """Apply the invalid-action policy and the turn limit, then pay the reward."""
        obs, shaping, terminated, verdict, error, kind, extra, penalty = turn  # one unpacking
        if error is not None:
            ep.invalid += 1
            if not terminated and ep.invalid >= self.max_invalid:
                terminated, verdict = True, self.final_verdict(ep.state)
                obs += f"\nToo many invalid actions ({ep.invalid}); the episode is over."
        truncated = not terminated and ep.turn >= self.max_turns
        if truncated:
            verdict = self.final_verdict(ep.state)
            obs += f"\nTurn limit ({self.max_turns}) reached; the episode is over."
        if len(obs) > self.observation_space.max_length:
            obs = self._clip(obs)
        info = _record(ep, action, obs, error, kind, extra)
        if terminated or truncated:
            if verdict is None:
                raise VerifierError(
                    f"{type(self).__name__}.respond ended an episode without a Verdict"
                )
            reward = self._finish(ep, verdict, info)
        elif self.reward_mode == "dense":
            reward = float(shaping)
            ep.paid += reward
        else:
            reward = 0.0
        if error is not None:
            reward -= self.invalid_penalty
        if penalty:
            reward -= penalty
        return obs, reward, terminated, truncated, info

    def _finish(self, ep: _Episode, verdict: Verdict, info: dict[str, Any]) -> float:
        """Close the episode and put the verdict in ``info``; return the final reward, which
        tops the dense shaping already paid up to the final score."""
        ep.done = True
        score = float(verdict.score)
        info[SCORE] = score
        info[SOLVED] = bool(verdict.solved)
        info[PARTS] = {k: float(v) for k, v in verdict.parts.items()}
        info[INVALID_ACTIONS] = ep.invalid
        if info[ERROR] is None:
            info[ERROR] = verdict.error
        info["feedback"] = verdict.feedback
        return score - ep.paid

    def _info(self, error: str | None, kind: ObsKind, extra: Mapping[str, Any] = {}) -> dict:
        """The standard info keys of the current step, plus the family's ``extra`` keys."""
        ep = self._ep
        info = {
            TASK_ID: ep.task_id,
            TURN: ep.turn,
            ERROR: error,
            OBS_KIND: kind,
            # A new list each step, sharing the (never mutated) message dicts: copying them
            # would make every step cost O(turns).
            MESSAGES: list(ep.messages),
        }
        if extra:
            info.update(extra)
        return info

    def _clip(self, text: str) -> str:
        """Keep an emitted observation inside the observation space."""
        return _clip_text(text, self.observation_space.max_length)


def _clip_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, with a marker saying so."""
    if len(text) <= limit:
        return text
    marker = "\n[... truncated]"
    return text[: limit - len(marker)] + marker


def _task_option(options: dict[str, Any]) -> Task | None:
    """The task to replay from reset ``options``; anything else there is API misuse."""
    unknown = set(options) - {"task"}
    if unknown:
        raise ConfigError(f"unknown reset option(s) {sorted(unknown)}; the only option is 'task'")
    task = options.get("task")
    if task is not None and not isinstance(task, Task):
        raise ConfigError(f"options['task'] must be a Task, got {type(task).__name__}")
    return task


def _record(
    ep: _Episode, action: str, obs: str, error: str | None, kind: str,
    extra: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """Append the turn to the transcript and return the step's info: the standard keys (see
    ``_info``), then the family's ``extra``, in one dict display because this runs on every
    step. The keys are written as literals (the values of TASK_ID, TURN, ERROR, OBS_KIND and
    MESSAGES; tests/test_core.py checks them): a dict of constant keys is built in one
    instruction, where names are loaded one by one."""
    messages = ep.messages
    messages += ({"role": "assistant", "content": action}, {"role": "user", "content": obs})
    return {"task_id": ep.task_id, "turn": ep.turn, "error": error, "obs_kind": kind,
            "messages": messages.copy(), **(extra or _NO_KEYS)}


_NO_KEYS: Mapping[str, Any] = {}  # never written to: only read by **


@functools.cache
def _serves_quick(cls: type[TextEnv]) -> bool:
    """Whether ``step`` calls ``cls.respond_quick``: only where one is written, and not by a
    class above the one whose ``respond`` it stands for (a subclass that overrides ``respond``
    alone must not have its parent's quick path bypass it)."""
    def owner(name: str) -> type:
        return next(k for k in cls.__mro__ if name in vars(k))

    quick = owner("respond_quick")
    return quick is not TextEnv and issubclass(quick, owner("respond"))


@functools.cache
def _schemas(cls: type[TextEnv]) -> list[dict[str, Any]]:
    """The tool schemas of an env class, built once (shared: treat ``info["tools"]`` as
    read-only)."""
    return tool_schemas(cls.tools)


SPLITS = ("train", "test", "all")
TEST_SHARE = 5  # a procedurally generated task is in the test split when hash % 5 == 0


def task_in_split(task: Task, split: str) -> bool:
    """Whether ``task`` belongs to ``split``: a fixed hash partition of task ids, so the test
    tasks of a procedural family are never trained on, whatever the seeds."""
    if split == "all":
        return True
    return (int(task.task_id, 16) % TEST_SHARE == 0) == (split == "test")


def generate_in_split(draw: Callable[[], Task], split: str, max_draws: int = 200) -> Task:
    """Call ``draw`` (which consumes the episode's rng) until its task is in ``split``.

    Deterministic for a seed, because every draw comes from the same generator. Raises
    ``VerifierError`` if ``max_draws`` draws all miss (a generator that barely varies).
    """
    for _ in range(max_draws):
        task = draw()
        if task_in_split(task, split):
            return task
    raise VerifierError(f"no task of split {split!r} in {max_draws} draws")



def valid_kwargs(cls: type) -> list[str]:
    """The keyword arguments accepted by ``cls`` and its TextEnv bases, sorted."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if "__init__" in vars(klass) and issubclass(klass, TextEnv):
            for p in inspect.signature(klass.__init__).parameters.values():
                if p.kind is p.KEYWORD_ONLY:
                    names.add(p.name)
    return sorted(names)


def _check_positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name} must be a positive integer, got {value!r}")


_SURROGATES = re.compile("[\ud800-\udfff]")


def _valid_unicode(text: str) -> str:
    """``text`` with its surrogate code points replaced by U+FFFD.

    No tokenizer decodes to a lone surrogate, but a Python caller can pass one, and it cannot be
    encoded as UTF-8: every family's ``encode()`` (hashing, URLs, SQLite, the sandbox) would
    raise, and so would writing the transcript to a file. Replaced once here, the env sees,
    echoes and records valid text.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATES.sub("\ufffd", text)
    return text


def _as_text(action: Any) -> str:
    """Agent text as ``str``: bytes are decoded leniently; anything else is API misuse."""
    if isinstance(action, str):
        return action
    if isinstance(action, (bytes, bytearray)):
        return bytes(action).decode("utf-8", errors="replace")
    if isinstance(action, np.str_):
        return str(action)
    raise TypeError(
        f"an action must be a str (the model's completion), got {type(action).__name__}"
    )
