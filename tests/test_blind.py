"""The blind policy: a constant action sequence fitted on the train split, for every id."""

import itertools
import json

import gymnasium as gym
import pytest
from support import conformance_cases

import textgyms.blind as blind
from textgyms.core import TASK_ID, TURN
from textgyms.evaluate import evaluate
from textgyms.policies.scripted import ScriptedPolicy
from textgyms.policies.spec import make_policy

# One case per id: the first conformance variant (small worlds and datasets).
CASES = list({env_id: kw for env_id, kw in reversed(conformance_cases())}.items())
WORDLE = {"vocab": "easy", "max_guesses": 3, "max_invalid": 1}


@pytest.fixture(autouse=True)
def small_search(tmp_path, monkeypatch):
    """A private cache and a small search (the defaults take minutes on Code)."""
    monkeypatch.setenv("TEXTGYMS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(blind, "DEFAULT_TASKS", 4)
    monkeypatch.setattr(blind, "DEFAULT_CANDIDATES", 5)
    blind._cached_actions.cache_clear()
    yield
    blind._cached_actions.cache_clear()


def _turn_actions(policy, envs, seeds, garble):
    """Step ``envs`` (one per seed) with ``policy``; per turn, the actions it chose. With
    ``garble`` every observation and info (but the task id and turn) is replaced by junk."""
    obs, infos = zip(*(e.reset(seed=s) for e, s in zip(envs, seeds)))
    obs, infos, live = list(obs), list(infos), list(range(len(envs)))
    turns = []
    for _ in range(4):
        if not live:
            break
        o = ["<answer>x</answer> ignore all that" if garble else obs[i] for i in live]
        inf = [{TASK_ID: infos[i][TASK_ID], TURN: infos[i][TURN]} if garble else infos[i]
               for i in live]
        actions = policy.act(o, inf, envs=[envs[i] for i in live])
        turns.append(set(actions))
        still = []
        for i, a in zip(live, actions):
            obs[i], _, term, trunc, infos[i] = envs[i].step(a)
            if not (term or trunc):
                still.append(i)
        live = still
    return turns


@pytest.mark.parametrize(("env_id", "kwargs"), CASES, ids=[c[0] for c in CASES])
def test_blind_is_constant_and_deterministic(env_id, kwargs):
    envs = [gym.make(env_id, **{**kwargs, "split": "test"}) for _ in range(3)]
    try:
        policy = make_policy("blind")
        plain = _turn_actions(policy, envs, [0, 1, 2], garble=False)
        garbled = _turn_actions(ScriptedPolicy("blind"), envs, [7, 8, 9], garble=True)
        # the same action on every task at each turn, whatever the observations say
        assert all(len(t) == 1 for t in plain + garbled), plain
        n = min(len(plain), len(garbled))
        assert plain[:n] == garbled[:n]
        plan = blind.blind_plan(env_id, kwargs, tasks=4, candidates=5)
        assert [next(iter(t)) for t in plain] == [
            plan.actions[min(t, len(plan.actions) - 1)] for t in range(len(plain))]
        assert plan.fit_split == ("test" if kwargs.get("dataset") == "humaneval" else "train")
        assert 0.0 <= plan.fit_score <= 1.0
        again = blind.blind_plan(env_id, kwargs, tasks=4, candidates=5, cache=False)
        assert again.actions == plan.actions and again.fit_score == plan.fit_score
    finally:
        for e in envs:
            e.close()


def test_plan_is_cached_by_key_outside_the_package(tmp_path):
    plan = blind.blind_plan("textgyms/Wordle-v0", WORDLE, tasks=4, candidates=5)
    path = tmp_path / "cache" / "blind" / f"{plan.key}.json"
    assert path.is_file()
    raw = json.loads(path.read_text())
    path.write_text(json.dumps({**raw, "actions": ["<guess>zzzzz</guess>"]}))
    assert blind.blind_plan("textgyms/Wordle-v0", WORDLE, tasks=4, candidates=5).actions == (
        "<guess>zzzzz</guess>",)  # read back from the file
    assert blind.blind_plan("textgyms/Wordle-v0", WORDLE, tasks=4, candidates=5,
                            refresh=True).actions == plan.actions
    other = blind.plan_key("textgyms/Wordle-v0", {**WORDLE, "max_guesses": 4}, 4, 5)
    assert other != plan.key
    # the split does not change the plan: it is always fitted on train
    assert blind.plan_key("textgyms/Wordle-v0", {**WORDLE, "split": "test"}, 4, 5) == plan.key


def test_greedy_rederives_the_best_sequence_on_a_sample():
    """On a small pool the greedy's first action is the best single action, its sequence
    scores what playing it scores, and no pair of the pool beats it by more than the greedy
    can miss (it is the best pair that extends its first choice)."""
    env = gym.make("textgyms/Wordle-v0", **{**WORDLE, "split": "train"})
    seeds = list(range(12))
    pool = ["<guess>crate</guess>", "<guess>shuln</guess>", "<guess>pilot</guess>",
            "<guess>crane</guess>", "<guess>xxxxx</guess>"]

    def mean(seq):
        return sum(blind.play(env, s, seq)[0] for s in seeds) / len(seeds)

    seq, score = blind.greedy_sequence(env, seeds, pool)
    assert seq[0] == max(pool, key=lambda a: (mean([a]), -pool.index(a)))
    assert score == pytest.approx(mean(seq))
    pairs = {(a, b): mean([a, b]) for a, b in itertools.product(pool, repeat=2)}
    assert max(v for (a, _), v in pairs.items() if a == seq[0]) <= score + 1e-9
    assert mean(seq) > mean(["<guess>crate</guess>"])  # a second word reveals more
    env.close()


def test_blind_beats_nothing_it_cannot_see_in_eval(tmp_path):
    """Through textgyms eval: blind plays its sequence on test tasks; every episode has the
    same actions, and the run records the blind policy."""
    evaluate(ScriptedPolicy("blind"), ["textgyms/Wordle-v0"], episodes=5, out=tmp_path / "run",
             env_kwargs=WORDLE, progress=False)
    rows = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert len({tuple(r["actions"]) for r in rows}) == 1
    assert len({r["task_id"] for r in rows}) > 1
    meta = json.loads((tmp_path / "run" / "metadata.json").read_text())
    assert meta["policy"]["name"] == "blind"
