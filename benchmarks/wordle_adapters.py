"""One adapter per Wordle implementation, so the benchmark loop is the same for every library.

Each adapter drives a library through its *standard* entry point and its own action format:

* textgyms  -- ``gymnasium.make("textgyms/Wordle-v0")`` after ``import textgyms``;
  action ``<guess>crane</guess>``; ``env.reset(seed=s)``; Gymnasium 5-tuple ``step``.
* TextArena -- ``textarena.make("Wordle-v0")`` (with its default wrappers); action ``[crane]``;
  ``env.reset(num_players=1, seed=s)``; one step = ``env.get_observation()`` + ``env.step(a)``
  (TextArena's ``step`` returns no observation, so reading it is part of a step), and the step
  that ends the game also calls ``env.close()`` (which returns the rewards). ``reset`` also
  clears the observation history that TextArena's default wrapper keeps across games.
* GEM       -- ``gem.make("game:Wordle-v0-hard", max_turns=6)``: GEM's 5-letter Wordle id, with
  the six-guess limit of the other two (GEM's default is 25); action ``\\boxed{crane}``;
  ``env.reset(seed=s)``; Gymnasium-style 5-tuple ``step``.

:func:`install_offline_guards` must run before a peer is imported: it replaces
``nltk.download`` with a no-op that returns ``True`` (both peers call it unconditionally, which
would try the network) and makes any outbound TCP/UDP ``connect`` fail fast, counting attempts.
"""

from __future__ import annotations

import importlib.metadata
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

#: Where run.sh builds the offline NLTK data (see build_nltk_data.py).
DEFAULT_NLTK_DATA = Path(__file__).resolve().parent / ".cache" / "nltk_data"

#: Counters filled by the offline guards, reported in the results JSON.
GUARD_COUNTS: dict[str, int] = {"nltk_download_calls": 0, "network_connect_attempts": 0}


class PeerUnavailable(RuntimeError):
    """A library cannot be imported or made; the message says why."""


def _blocked_connect(original: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``socket.socket.connect`` so that IPv4/IPv6 connects fail fast and are counted."""

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            GUARD_COUNTS["network_connect_attempts"] += 1
            raise OSError(f"network disabled by the textgyms benchmark harness: {address!r}")
        return original(self, address)

    return connect


def _fake_download(*args: Any, **kwargs: Any) -> bool:
    """Stand-in for ``nltk.download``: count the call, download nothing, report success."""
    GUARD_COUNTS["nltk_download_calls"] += 1
    return True


def install_offline_guards(need_nltk: bool = True) -> None:
    """Point NLTK at the private data, neutralise ``nltk.download`` and block the network."""
    os.environ.setdefault("NLTK_DATA", str(DEFAULT_NLTK_DATA))
    data = Path(os.environ["NLTK_DATA"])
    if need_nltk and not (data / "corpora" / "words" / "en").is_file():
        raise PeerUnavailable(
            f"no offline NLTK data at {data}; run: python benchmarks/build_nltk_data.py {data}"
        )
    socket.socket.connect = _blocked_connect(socket.socket.connect)  # type: ignore[method-assign]
    try:
        import nltk
        import nltk.downloader
    except ImportError:
        return  # textgyms alone does not need nltk
    nltk.data.path.insert(0, str(data))
    nltk.download = _fake_download  # type: ignore[assignment]
    nltk.downloader.download = _fake_download  # type: ignore[assignment]


def dist_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or None."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _innermost(env: Any) -> Any:
    """Strip wrappers that keep the inner env in ``.env`` (TextArena's wrappers do)."""
    while hasattr(env, "env"):
        env = env.env
    return env


class TextgymsAdapter:
    """textgyms' own Wordle through Gymnasium."""

    name = "textgyms"
    env_id = "textgyms/Wordle-v0"
    action_format = "<guess>{word}</guess>"
    distributions = ("textgyms", "gymnasium", "numpy")

    def import_library(self) -> None:
        """Import textgyms (registers the ids) and Gymnasium."""
        import gymnasium

        import textgyms  # noqa: F401

        self._gym = gymnasium

    def make(self) -> Any:
        """``gymnasium.make("textgyms/Wordle-v0")``."""
        return self._gym.make(self.env_id)

    def fmt(self, word: str) -> str:
        """Format one guess as an action string."""
        return f"<guess>{word}</guess>"

    def reset(self, env: Any, seed: int) -> None:
        """Start a new episode."""
        env.reset(seed=seed)

    def play(self, env: Any, actions: list[str]) -> tuple[int, bool]:
        """Step until the episode ends; return (steps, solved)."""
        steps = 0
        for action in actions:
            _obs, _reward, terminated, truncated, info = env.step(action)
            steps += 1
            if terminated or truncated:
                return steps, bool(info.get("solved"))
        raise RuntimeError(f"textgyms episode still running after {steps} steps")

    def count_invalid(self, env: Any, actions: list[str]) -> int:
        """Play one (untimed) episode and count the steps the env rejected."""
        invalid = 0
        for action in actions:
            _obs, _reward, terminated, truncated, info = env.step(action)
            invalid += info.get("error") is not None
            if terminated or truncated:
                return invalid
        raise RuntimeError("textgyms episode did not end")

    def is_valid(self, env: Any, word: str) -> bool:
        """A guess is valid if stepping it reports no error."""
        env.reset(seed=0)
        *_, info = env.step(self.fmt(word))
        return info.get("error") is None


class TextArenaAdapter:
    """TextArena's Wordle-v0 (default wrappers)."""

    name = "textarena"
    env_id = "Wordle-v0"
    action_format = "[{word}]"
    distributions = ("textarena", "nltk")

    def import_library(self) -> None:
        """Import TextArena (offline guards must already be installed)."""
        import textarena

        self._ta = textarena

    def make(self) -> Any:
        """``textarena.make("Wordle-v0")``."""
        return self._ta.make(self.env_id)

    def fmt(self, word: str) -> str:
        """Format one guess as an action string."""
        return f"[{word}]"

    def reset(self, env: Any, seed: int) -> None:
        """Start a new single-player episode on a clean observation history.

        TextArena's default ``LLMObservationWrapper`` appends every observation to
        ``full_observations`` and never clears it on ``reset``, so a reused env re-renders
        all past games on every step and gets slower game after game. Clearing it here makes
        every game cost what a game on a freshly made env costs (in TextArena's favour).
        """
        layer = env
        while layer is not None:
            history = getattr(layer, "full_observations", None)
            if history is not None:
                history.clear()
            layer = getattr(layer, "env", None)
        env.reset(num_players=1, seed=seed)

    def play(self, env: Any, actions: list[str]) -> tuple[int, bool]:
        """Observe + step until done, then close; return (steps, solved)."""
        steps = 0
        for action in actions:
            env.get_observation()
            done, _info = env.step(action)
            steps += 1
            if done:
                rewards, _game_info = env.close()
                return steps, rewards[0] == 1
        raise RuntimeError(f"TextArena episode still running after {steps} steps")

    def count_invalid(self, env: Any, actions: list[str]) -> int:
        """Play one (untimed) episode and count the steps the env rejected."""
        inner = _innermost(env)
        invalid = 0
        for action in actions:
            env.get_observation()
            done, _info = env.step(action)
            state = inner.state
            invalid += state.error_count > 0 or bool(state.game_info[0].get("invalid_move"))
            if done:
                env.close()
                return invalid
        raise RuntimeError("TextArena episode did not end")

    def is_valid(self, env: Any, word: str) -> bool:
        """TextArena's own dictionary check (the one its ``step`` uses)."""
        return len(word) == 5 and _innermost(env)._check_word(word)


class GemAdapter:
    """GEM's 5-letter Wordle (``game:Wordle-v0-hard``) limited to six guesses."""

    name = "gem"
    env_id = "game:Wordle-v0-hard"
    make_kwargs: ClassVar[dict[str, int]] = {"max_turns": 6}
    action_format = "\\boxed{{{word}}}"
    distributions = ("gem-llm", "nltk", "reasoning-gym")

    def import_library(self) -> None:
        """Import GEM (offline guards must already be installed)."""
        import gem

        self._gem = gem

    def make(self) -> Any:
        """``gem.make("game:Wordle-v0-hard", max_turns=6)``."""
        return self._gem.make(self.env_id, **self.make_kwargs)

    def fmt(self, word: str) -> str:
        """Format one guess as an action string."""
        return f"\\boxed{{{word}}}"

    def reset(self, env: Any, seed: int) -> None:
        """Start a new episode."""
        env.reset(seed=seed)

    def play(self, env: Any, actions: list[str]) -> tuple[int, bool]:
        """Step until the episode ends; return (steps, solved)."""
        steps = 0
        for action in actions:
            _obs, _reward, terminated, truncated, _info = env.step(action)
            steps += 1
            if terminated or truncated:
                return steps, not truncated
        raise RuntimeError(f"GEM episode still running after {steps} steps")

    def count_invalid(self, env: Any, actions: list[str]) -> int:
        """Play one (untimed) episode and count the steps the env rejected."""
        invalid = 0
        for action in actions:
            obs, _reward, terminated, truncated, _info = env.step(action)
            invalid += "did not provide a valid guess" in obs or "already guessed" in obs
            if terminated or truncated:
                return invalid
        raise RuntimeError("GEM episode did not end")

    def is_valid(self, env: Any, word: str) -> bool:
        """GEM checks only the length (and repeats), not a dictionary."""
        return len(word) == _innermost(env).word_length and word.isalpha()


ADAPTERS: dict[str, type] = {a.name: a for a in (TextgymsAdapter, TextArenaAdapter, GemAdapter)}
LABELS = {"textgyms": "textgyms", "textarena": "TextArena", "gem": "GEM"}
