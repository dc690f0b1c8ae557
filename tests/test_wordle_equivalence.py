"""Wordle's step must not change behaviour when it is made faster.

Many seeded episodes per kwargs variant, stepped with a mix of oracle, random-valid, repeated,
malformed, over-long, Unicode and tool-call actions; every reset and step result (observation,
reward, flags, the whole info dict, the ``ansi`` transcript, pickling of info, and misuse errors)
goes into one sha256 per variant. The digests were recorded from the code before the step
fast paths (commit 9311458), so any difference a speed-up makes to what an agent or trainer sees
fails here, naming the variant.
"""

from __future__ import annotations

import hashlib
import pickle

import gymnasium as gym
import numpy as np
import pytest

import textgyms  # noqa: F401  (registers the ids)
from textgyms.errors import ResetNeeded

EPISODES = 40

# Actions that are not a plain listed guess: each is tried in every variant.
ODD_ACTIONS = (
    "",
    "crane",
    "<guess>crane",
    "<guess></guess>",
    "<guess>   </guess>",
    "<guess> CRANE </guess>",
    "<GUESS>crane</GUESS>",
    "<Guess>slate</guess>",
    "<guess>Crane</guess>",
    "  <guess>slate</guess>\n",
    "<guess>cr4ne</guess>",
    "<guess>xxxxx</guess>",
    "<guess>zzzzzz</guess>",
    "<guess>cranes</guess>",
    "<guess>cra ne</guess>",
    "<guess>cráne</guess>",
    "<guess>ſlate</guess>",
    "<guess>\u212aayak</guess>",
    "<guess>crane\ud800</guess>",
    "\ud83d\ude00<guess>slate</guess>",
    "<guess>{crane}</guess>",
    "<guess>`crane`</guess>",
    "<guess>```\ncrane\n```</guess>",
    '<guess word="crane"/>',
    "<guess/>",
    "<guess>crane</guess><guess>slate</guess>",
    "<think>maybe <guess>about</guess></think> <guess>crane</guess>",
    "<guess>crane</guess> and then <guess>",
    "<guesses>crane</guesses>",
    '{"name": "guess", "arguments": {"word": "crane"}}',
    '<tool_call>{"name": "guess", "arguments": "{\\"word\\": \\"slate\\"}"}</tool_call>',
    '{"name": "guess", "arguments": {"word": 12345}}',
    '{"name": "guess", "arguments": {}}',
    '{"name": "shout", "arguments": {"word": "crane"}}',
    '{"name": "guess", "arguments": {"word": "crane"',
    "<guess>" + "a" * 600 + "</guess>",
    "x" * 5000,
    "<guess>crane</guess>" + " " * 600,
)
# Words with repeated letters, which exercise the two-pass marking.
REPEATS = {
    4: ("book", "eeee", "noon", "tree"),
    5: ("speed", "geese", "llama", "eerie", "abbey", "mamma"),
    6: ("banana", "assess", "coffee", "hummus"),
    7: ("bookkeeper"[:7], "balloon", "coffees", "address"),
}

VARIANTS: dict[str, dict] = {
    "default": {},
    "hard": {"hard_mode": True},
    "len4": {"length": 4},
    "len6-hard": {"length": 6, "hard_mode": True},
    "len7": {"length": 7, "vocab": "easy"},
    "full": {"vocab": "full", "split": "all"},
    "test-split": {"split": "test", "scale_by_guesses": True},
    "short": {"max_guesses": 3, "max_invalid": 2},
    "long": {"max_guesses": 12, "max_invalid": 5, "max_turns": 14},
    "dense": {"reward_mode": "dense", "invalid_penalty": 0.25},
    "dense-hard": {"reward_mode": "dense", "hard_mode": True, "scale_by_guesses": True},
    "turn-cap": {"max_turns": 4, "render_mode": "ansi"},
    "tiny-action": {"max_action_chars": 24, "max_invalid": 4},
}

# sha256 of every variant's transcript, recorded from commit 9311458 (before the fast paths).
DIGESTS = {
    "default": "9b8c4d636fa451172109267ea43bb4c58ec9231bb86f979692d06c513a239b30",
    "dense": "a21857ddf9895490b43028b6c9f2194d93d30bb27bdc6dfd7a0c16741ffe840c",
    "dense-hard": "40282da8e1a02cbed0003970208d4b0567504a539ad72ac7e14661fd456a6111",
    "full": "e6bd32a5655ee9d944689f06c4c45436c3b0bb34190ea831768ab8758087d21b",
    "hard": "9ea0a4e07f6193f0ce1cd47f7ce9a89557fd2955d355be11cfeaea2a306dff29",
    "len4": "de60e8c4c40a77b63003a8eda98b6bc5bb241b52a6ea6d5b36b983c86abe2dd8",
    "len6-hard": "faddca9147b412234a369985f2f1b4d673dd3da6bcb8387ce8ad736828c45427",
    "len7": "aa57f3b95ce10ba050cbb0d8d967cce96fc0e451ba6b32b700142acf2d0d6112",
    "long": "e6829857156a64dfa168f203d6462e8e0da66f937543b7c4937cf269618058aa",
    "short": "1873278f803674c04152c540aa083739e65b3de839ddddc28a29bbeae71d682c",
    "test-split": "4bab8c00dae96e9eae0ba847990391aba8b7b951c1c442ae54eb695ce2ef4597",
    "tiny-action": "e53f9ce3bd1dbb76529a2fb027f637e4c1d43b91d17e7fbdf7a79cd11c05655d",
    "turn-cap": "766057e790ff6c25cede9323e1dc83c8dbeea34cb61afbc57227e19794e90a54",
}


def _action(env, rng: np.random.Generator, played: list[str], length: int):
    """One action of the mix: oracle, random valid, repeat, repeated-letter word or odd text."""
    pick = rng.random()
    if pick < 0.25:
        plan = env.unwrapped.oracle_actions()
        return plan[min(len(played), len(plan) - 1)]
    if pick < 0.5:
        return env.unwrapped.sample_action(rng)
    if pick < 0.58 and played:
        return f"<guess>{played[int(rng.integers(len(played)))]}</guess>"
    if pick < 0.66:
        words = REPEATS[length]
        return f"<guess>{words[int(rng.integers(len(words)))]}</guess>"
    if pick < 0.7:
        word = env.unwrapped.sample_action(rng)[7:-8]
        kind = int(rng.integers(3))
        return [word.encode(), np.str_(f"<guess>{word}</guess>"), word.upper()][kind]
    return ODD_ACTIONS[int(rng.integers(len(ODD_ACTIONS)))]


def _record(hasher, *items) -> None:
    hasher.update(repr(items).encode("utf-8", "backslashreplace"))
    hasher.update(b"\x00")


def transcript_digest(kwargs: dict, episodes: int = EPISODES) -> str:
    """sha256 over every reset and step result of ``episodes`` seeded episodes."""
    env = gym.make("textgyms/Wordle-v0", **kwargs)
    length = kwargs.get("length", 5)
    rng = np.random.default_rng([41, len(kwargs)])
    hasher = hashlib.sha256()
    for episode in range(episodes):
        obs, info = env.reset(seed=1000 + episode)
        _record(hasher, obs, info)
        played: list[str] = []
        done = False
        while not done:
            action = _action(env, rng, played, length)
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            if info["error"] is None and isinstance(action, str) and action.startswith("<guess>"):
                played.append(action[7:-8])
            _record(hasher, action, obs, reward, terminated, truncated, info)
            _record(hasher, pickle.loads(pickle.dumps(info)) == info, type(info).__name__)
        _record(hasher, env.render())
        with pytest.raises(ResetNeeded) as exc:
            env.step("<guess>crane</guess>")
        _record(hasher, str(exc.value))
    return hasher.hexdigest()


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_transcripts_unchanged(name: str) -> None:
    assert transcript_digest(VARIANTS[name]) == DIGESTS[name]
