"""verifiers' own rollout machinery with the textgyms tasksets: the event loop is never blocked
by env work, and the context budget ends an episode before the server would refuse a request.

``tests/vf_rollouts.py`` runs in ``.venv-verifiers`` (verifiers 0.4 pins mcp 2, which this venv
cannot hold): verifiers' ``load_environment`` builds ``TextgymsEnv`` from a ``vf-eval`` config,
``Env.run_slot`` plays each episode, the ``null`` harness's chat program runs in the
``subprocess`` runtime and reaches the model through verifiers' interception server, and a
scripted OpenAI-compatible server (streamed replies, vLLM's context refusal) stands in for vLLM.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support import verifiers_env

from textgyms.errors import ConfigError
from textgyms.integrations.episode import ContextBudget, Episode, TaskRow, message_tokens

ROOT = Path(__file__).resolve().parents[1]
VF_BIN = ROOT / ".venv-verifiers" / "bin"


def _report(scenario: str) -> dict:
    if not (VF_BIN / "python").exists():
        pytest.skip("no .venv-verifiers (run `make test`, which makes it)")
    env = {**verifiers_env(VF_BIN), "OPENAI_API_KEY": "local"}
    done = subprocess.run([str(VF_BIN / "python"), str(ROOT / "tests" / "vf_rollouts.py"),
                           scenario], capture_output=True, text=True, timeout=900, cwd=ROOT,
                          env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def loop() -> dict:
    return _report("loop")


@pytest.fixture(scope="module")
def budget() -> dict:
    return _report("budget")


def _replayed(episode: dict) -> float:
    """The return of the trace's actions replayed on a local env of its task row."""
    local = Episode(TaskRow.from_row(episode["info"]))
    try:
        for action in episode["info"]["actions"]:
            if local.step(action).done:
                break
        return local.reward()
    finally:
        local.close()


def test_a_slow_code_step_does_not_stall_verifiers_rollouts(loop):
    """The Code rollout's run sleeps 2 s in the sandbox after the four Wordle rollouts are under
    way: they all finish first, and the heartbeat on verifiers' loop ticks while the run sleeps.
    With ``Episode.astep`` stepping on the loop, no tick falls inside the run (and the Wordle
    rollouts still on the loop wait for it)."""
    assert loop["finished"][-1] == "code"
    assert sorted(loop["finished"][:-1]) == [f"wordle{i}" for i in range(4)]
    start, end = loop["start"], loop["end"]
    assert end > start > 0  # the run really ran and slept, and its output came back
    assert any(start < tick < end for tick in loop["ticks"])
    code, *wordle = loop["episodes"]
    assert all(e["ok"] and not e["errors"] for e in loop["episodes"])
    assert "time.sleep(2)" in code["info"]["actions"][0]
    assert all(e["turns"] == 3 and e["metrics"]["wordle/turns"] == 3.0 for e in wordle)


def test_without_a_budget_the_server_refuses_the_overlong_request(budget):
    none = budget["none"]
    assert none["refused"] == 1
    assert any("maximum context length" in e for e in none["call_errors"])
    # verifiers' chat program ends its run on the refusal; the episode is paid what it earned
    assert none["metrics"]["context_cut"] == 1.0 and none["metrics"]["finished"] == 0.0
    assert none["reward"] == pytest.approx(_replayed(none))


def test_the_budget_ends_the_episode_before_the_context_overflows(budget):
    cut = budget["budget"]
    assert cut["refused"] == 0 and cut["call_errors"] == [] and cut["errors"] == []
    assert cut["ok"] and cut["stop"] == "context_cut"
    metrics = cut["metrics"]
    assert metrics["context_cut"] == 1.0 and metrics["finished"] == 0.0
    assert metrics["turns"] == cut["turns"] == len(cut["info"]["actions"]) >= 1
    # the score as things stand: the local env after the same guesses pays the same
    assert cut["reward"] == metrics["return"] == pytest.approx(_replayed(cut))
    assert cut["reward"] > 0.0


def test_verifiers_own_token_cap_is_a_context_cut_too(budget):
    cap = budget["cap"]
    assert cap["ok"] and cap["stop"] == "max_total_tokens" and cap["refused"] == 0
    assert cap["metrics"]["context_cut"] == 1.0 and cap["metrics"]["finished"] == 0.0
    assert cap["reward"] == pytest.approx(_replayed(cap))
    assert cap["reward"] > 0.0


def test_context_budget_bounds_the_next_request():
    messages = [{"role": "user", "content": "é" * 10}]
    assert message_tokens(messages) == len(json.dumps(messages, ensure_ascii=False).encode()) + 8
    budget = ContextBudget(100, prompt=40)
    assert budget.room(64) == 60 and not budget.fits(64) and budget.fits(60)
    budget.used(50, messages, [{"role": "user", "content": "ok"}])  # the server counted 50
    assert budget.next_prompt == 50 + message_tokens([{"role": "user", "content": "ok"}]) + 8
    budget.used(None, messages, [])  # no usage from the server: the whole transcript
    assert budget.next_prompt == message_tokens(messages)
    assert ContextBudget(None).fits(10**9) and ContextBudget(None).room(7) == 7
    for bad in (0, -5, 1.5, True):
        with pytest.raises(ConfigError, match="max_context_tokens"):
            ContextBudget(bad)
