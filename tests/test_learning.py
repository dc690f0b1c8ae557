"""A fixed-seed learning smoke test: GRPO on a real env measurably raises the reward.

The tiny random model first gets a short SFT warm-up on oracle Wordle games
(``baselines/sft.py``), which half-teaches the ``<guess>word</guess>`` format; GRPO then learns
from the env's reward alone to play well-formed guesses more often, which scores partial credit.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from baselines import grpo, sft  # noqa: E402

ENV_KWARGS = json.dumps({"vocab": "easy", "max_guesses": 3, "max_invalid": 1})
SFT = dict(episodes=60, lr=3e-3, batch_size=1)
GRPO = dict(steps=30, num_groups=8, group_size=4, lr=1e-3, max_new_tokens=12)


def test_grpo_raises_the_reward_of_a_warm_started_tiny_model(tmp_path):
    sft.main(sft.Args(model="tiny-random", env_kwargs=ENV_KWARGS, epochs=1, eval_episodes=0,
                      seed=0, out=str(tmp_path / "sft"), **SFT))
    result = grpo.main(grpo.Args(model=str(tmp_path / "sft" / "final"), env_kwargs=ENV_KWARGS,
                                 stop=("</guess>",), seed=0, out=str(tmp_path / "grpo"), **GRPO))
    rows = [json.loads(x) for x in (tmp_path / "grpo" / "metrics.jsonl").read_text().splitlines()]
    rewards = [r["reward"] for r in rows]
    first, last = sum(rewards[:6]) / 6, sum(rewards[-6:]) / 6
    assert len(rows) == GRPO["steps"]
    assert last > first + 0.03 and last > 2 * first, rewards
    assert result["last_reward"] > result["first_reward"]
