"""The Search demo pipeline on CPU: honest SFT data, SFT, then GRPO on the env's reward.

A smoke test of the plumbing (tiny-random model, a few steps), not of the score: the SFT data
answers only from what was shown, the losses are finite, and every episode's return is the
env's own score, so GRPO's advantages come from the env's verifier.
"""

from __future__ import annotations

import json
import math

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from baselines import demo, grpo  # noqa: E402
from textgyms.envs.search.verify import normalize  # noqa: E402


def test_honest_search_records_answer_only_what_was_shown():
    records = list(demo.honest_records(demo.SEARCH_ID, demo.SEARCH_VARIANT, 6))
    assert len(records) == 6 and len({r["task_id"] for r in records}) == 6
    for r in records:
        msgs = r["messages"]
        acts = [m["content"] for m in msgs if m["role"] == "assistant"]
        assert acts[-1].startswith("<answer>") and r["score"] == 1.0
        gold = normalize(acts[-1].removeprefix("<answer>").removesuffix("</answer>"))
        shown = [m["content"] for m in msgs[1:-1] if m["role"] == "user"]
        assert any(f" {gold} " in f" {normalize(s)} " for s in shown)
        # nothing searched after the answer was on screen: the last observation before the
        # answer is the first one that shows it
        assert f" {gold} " not in " ".join(f" {normalize(s)} " for s in shown[:-1])
        assert len(acts) <= demo.SEARCH_VARIANT["max_turns"]


def test_honest_wordle_records_never_guess_an_unsupported_secret():
    records = list(demo.honest_records(demo.WORDLE_ID, demo.WORDLE_VARIANT, 40))
    env = gym.make(demo.WORDLE_ID, **demo.WORDLE_VARIANT, split="train")
    from textgyms.envs.wordle import solver

    for r in records:
        env.reset(seed=r["seed"])
        secret = env.unwrapped.task.secret
        guesses = [m["content"][7:-8] for m in r["messages"] if m["role"] == "assistant"]
        honest = solver.solve(secret, vocab="easy", max_guesses=3, oracle=False)
        assert guesses == honest
    env.close()


class ScriptedTokens:
    """A generator that emits, through the tokenizer, the honest actions on even rows and a
    wrong answer on odd rows (their first turn, which ends them): the env must pay 1 and 0."""

    def __init__(self, tok, plans):
        self.tok, self.plans, self.turn = tok, plans, 0

    def generate(self, contexts, seed):
        out = []
        for row in range(len(contexts)):
            wrong = self.turn == 0 and row % 2  # later turns only see the even rows
            text = ("<answer>nobody at all</answer>" if wrong
                    else self.plans[min(self.turn, len(self.plans) - 1)])
            out.append(self.tok.encode(text, add_special_tokens=False) + [self.tok.eos_token_id])
        self.turn += 1
        return out

    def before_update(self):
        pass

    def after_update(self, model):
        pass


def test_grpo_returns_are_the_env_scores_and_drive_the_loss(tmp_path):
    import textgyms
    from textgyms.models import load_model

    model, tok = load_model("tiny-random", seed=0)
    args = grpo.Args(env_id=demo.SEARCH_ID, env_kwargs=json.dumps(demo.SEARCH_VARIANT),
                     num_groups=1, group_size=4, max_new_tokens=32, out=str(tmp_path))
    env = gym.make(demo.SEARCH_ID, **demo.SEARCH_VARIANT)
    env.reset(seed=args.seed)  # the seed rollout step 0 plays
    plans = demo.honest_actions(env)
    with textgyms.make_vec(demo.SEARCH_ID, 4, group_size=4, env_kwargs=demo.SEARCH_VARIANT) as vec:
        episodes = grpo.rollout(ScriptedTokens(tok, plans), tok, vec, args, step=0)
    returns = [sum(e.rewards) for e in episodes]
    assert returns == [1.0, 0.0, 1.0, 0.0]
    assert [e.info["score"] for e in episodes] == returns
    adv = grpo.group_advantages(returns, 4)
    assert np.allclose(adv, [1, -1, 1, -1])
    opt = __import__("torch").optim.AdamW(model.parameters(), lr=1e-3)
    stats = grpo.update(model, None, opt, episodes, args, norm_tokens=96)
    assert math.isfinite(stats["loss"]) and stats["grad_norm"] > 0
    env.close()


def test_search_pipeline_smoke(tmp_path):
    summary = demo.main(demo.Args(demo="search", model="tiny-random", sft_episodes=8, steps=2,
                                  num_groups=1, group_size=4, max_new_tokens=8, train_layers=0,
                                  micro_batch=0, out=str(tmp_path)))
    assert summary["sft_games"] == 8 == summary["sft_games_solved"]
    sft_rows = [json.loads(x) for x in
                (tmp_path / "sft" / "metrics.jsonl").read_text().splitlines()]
    losses = [r["train/loss"] for r in sft_rows if "train/loss" in r]
    assert len(losses) == 1 and all(math.isfinite(v) and v > 0 for v in losses)
    rows = [json.loads(x) for x in (tmp_path / "grpo" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2]
    for r in rows:
        assert math.isfinite(r["loss"]) and 1 <= r["turns"] <= 3
        assert r["reward"] == pytest.approx(r["score"])  # sparse: the return is the score
    assert (tmp_path / "grpo" / "final" / "config.json").is_file()
    assert (tmp_path / "curves.png").is_file()


def test_lookup_difficulty_is_one_hop_chains():
    env = gym.make(demo.SEARCH_ID, difficulty="lookup", split="test")
    for seed in range(8):
        env.reset(seed=seed)
        task = env.unwrapped.task
        assert (task.family, task.difficulty, len(task.support)) == ("chain", "lookup", 2)
        assert task.question.startswith("What is the name of the ")
    env.close()
    from textgyms.errors import ConfigError

    with pytest.raises(ConfigError, match="lookup"):
        gym.make(demo.SEARCH_ID, corpus="geoweb", difficulty="lookup")


def test_demo_table_reads_runs_and_checks_orderings(tmp_path, monkeypatch):
    import textgyms.blind as blind
    from baselines import demo_table

    monkeypatch.setenv("TEXTGYMS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(blind, "DEFAULT_TASKS", 4)  # a small fit: the test checks the table
    monkeypatch.setattr(blind, "DEFAULT_CANDIDATES", 4)
    blind._cached_actions.cache_clear()
    from textgyms.evaluate import evaluate
    from textgyms.policies.scripted import ScriptedPolicy

    for name in ("oracle", "blind"):
        evaluate(ScriptedPolicy(name), [demo.SEARCH_ID], episodes=3, out=tmp_path / "runs" / f"s-{name}",
                 env_kwargs=demo.SEARCH_VARIANT, progress=False)
    text = demo_table.main(demo_table.parse([str(tmp_path / "runs"), "--prefix", "s-"]))
    blind._cached_actions.cache_clear()
    lines = text.splitlines()
    assert lines[2].startswith("| oracle | 3 | 1.000 ± 0.000") and "grounded 1.00" in lines[2]
    assert lines[3].startswith("| blind (best constant sequence) | 3 | 0.000")
    assert "grpo > sft: not measured" in text
    assert "[agent] <search>" not in text  # no grpo run: no transcript
