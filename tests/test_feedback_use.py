"""Feedback-use metrics on hand-made transcripts, and through a real eval run."""

import json

import gymnasium as gym
import pytest

from textgyms.envs.wordle.rules import feedback
from textgyms.evaluate import evaluate
from textgyms.feedback_use import episode_use, use_means, wordle_board
from textgyms.policies.scripted import ScriptedPolicy
from textgyms.stats import aggregate

PROMPT = "rules..."


def board(*lines):
    return "".join(f"{i}. {' '.join(w.upper())}   {' '.join(m)}\n" for i, (w, m) in
                   enumerate(lines, 1)) + "Letters not in the word: -. Guesses left: 1."


def wordle(actions, observations):
    return {"env_id": "textgyms/Wordle-v0", "actions": actions,
            "observations": [PROMPT, *observations]}


def test_wordle_consistency_by_hand():
    # secret "slate": crate -> _ _ G G G; "plate" fits those marks, "shuln" does not
    b1 = board(("crate", "__GGG"))
    b2 = board(("crate", "__GGG"), ("plate", "_GGGG"))
    b3 = board(("crate", "__GGG"), ("plate", "_GGGG"), ("shuln", "G_Y__"))
    rec = wordle(["<guess>crate</guess>", "<guess>plate</guess>", "<guess>shuln</guess>"],
                 [b1, b2, b3])
    assert wordle_board(rec["observations"]) == [("crate", "__GGG"), ("plate", "_GGGG"),
                                                 ("shuln", "G_Y__")]
    use = episode_use(rec)
    assert use["consistent"] == pytest.approx(0.5)  # plate yes, shuln no
    assert use["repeats"] == 0.0
    # an invalid reply in between shows no board and changes nothing
    rec2 = wordle(["<guess>crate</guess>", "<guess>zz</guess>", "<guess>plate</guess>"],
                  [b1, "Invalid guess: 'zz' is not a 5-letter word.", b2])
    assert episode_use(rec2)["consistent"] == 1.0
    assert "consistent" not in episode_use(wordle(["<guess>crate</guess>"], [b1]))


def test_repeats_count_a_constant_policy():
    rec = wordle(["<guess>crate</guess>"] * 3, [board(("crate", "__GGG"))] * 3)
    assert episode_use(rec)["repeats"] == 1.0


def search(actions, observations):
    return {"env_id": "textgyms/Search-v1", "actions": actions,
            "observations": ["Question: where was Ann Lee born?", *observations]}


def test_search_grounded_by_hand():
    page = "Ann Lee (born 1901 in Port Velmar) is a painter."
    seen = search(["<search>Ann Lee</search>", "<open>1</open>", "<answer>port velmar</answer>"],
                  ["1. Ann Lee - wiki.example/ann", page, "Correct."])
    assert episode_use(seen) == {"repeats": 0.0, "grounded": 1.0, "looked": 1.0}
    guessed = search(["<answer>Paris</answer>"], ["Wrong."])
    assert episode_use(guessed) == {"grounded": 0.0, "looked": 0.0}
    # an answer that appears only in the env's reply to the answer itself is not grounded
    late = search(["<search>x</search>", "<answer>Port Velmar</answer>"],
                  ["no results", "The answer was Port Velmar."])
    assert episode_use(late)["grounded"] == 0.0 and episode_use(late)["looked"] == 1.0
    assert "grounded" not in episode_use(search(["<search>x</search>"], ["no results"]))


def code(actions, observations):
    return {"env_id": "textgyms/Code-v0", "actions": actions,
            "observations": ["Write f", *observations]}


def test_code_runs_and_changes_by_hand():
    fail = "1/2 examples passed.\nExample 2: FAIL  f(2): expected 4, got 3"
    rec = code(["<test>def f(x): return x+1</test>", "<test>def f(x): return 2*x</test>",
                "<submit>def f(x): return 2*x</submit>"],
               [fail, "2/2 examples passed.", "Score 1.0"])
    use = episode_use(rec)
    assert use["runs_before_submit"] == 2.0 and use["changed_after_fail"] == 1.0
    stubborn = code(["<run>print(1/0)</run>", "<submit>print(1/0)</submit>"],
                    ["Run finished: exit code 1.\n--- stderr ---\nZeroDivisionError", "Score 0"])
    use = episode_use(stubborn)
    assert use["runs_before_submit"] == 1.0 and use["changed_after_fail"] == 0.0
    ok = code(["<run>print(1)</run>", "<submit>def f(x): return x</submit>"],
              ["Run finished: exit code 0.\n--- stdout ---\n1", "Score 0.5"])
    assert "changed_after_fail" not in episode_use(ok)


def test_means_skip_undefined_episodes():
    rows = [{"env_id": "textgyms/Search-v1", "use": {"grounded": 1.0}},
            {"env_id": "textgyms/Search-v1", "use": {"grounded": 0.0}},
            {"env_id": "textgyms/Search-v1", "use": {}}]
    assert use_means(rows) == {"grounded": {"mean": 0.5, "n": 2}}


def test_eval_records_and_aggregates_use(tmp_path):
    kwargs = {"vocab": "easy", "max_guesses": 3, "max_invalid": 1}
    agg = evaluate(ScriptedPolicy("oracle"), ["textgyms/Wordle-v0"], episodes=6,
                   out=tmp_path, env_kwargs=kwargs, progress=False)
    rows = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert all("use" in r for r in rows)
    # recomputed from the secret: guess i is consistent when every earlier guess's marks
    # against it are the marks that guess got against the secret
    env = gym.make("textgyms/Wordle-v0", **{**kwargs, "split": "test"})
    expected = []
    for r in rows:
        env.reset(seed=r["seed"])
        secret = env.unwrapped.task.secret
        words = [a.removeprefix("<guess>").removesuffix("</guess>") for a in r["actions"]]
        ok = [all(feedback(g, w) == feedback(g, secret) for g in words[:i])
              for i, w in enumerate(words) if i]
        assert r["use"].get("consistent") == (sum(ok) / len(ok) if ok else None)
        expected += [sum(ok) / len(ok)] if ok else []
    env.close()
    use = agg["textgyms/Wordle-v0"]["use"]["consistent"]
    assert use == {"mean": pytest.approx(sum(expected) / len(expected)), "n": len(expected)}
    assert aggregate(rows)["textgyms/Wordle-v0"]["use"] == agg["textgyms/Wordle-v0"]["use"]
