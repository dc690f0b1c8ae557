"""textgyms envs under TRL's GRPOTrainer(environment_factory=...), checked with trl's own code."""

import inspect
import json

import gymnasium as gym
import pytest

import textgyms
from textgyms.errors import ConfigError
from textgyms.wrappers.trl import environment_factory, trl_dataset

trl = pytest.importorskip("trl")
from transformers.utils import get_json_schema  # noqa: E402
from trl.chat_template_utils import (  # noqa: E402
    is_chat_template_prefix_preserving,
    supports_tool_calling,
)

WORDLE = "textgyms/Wordle-v0"


def _trl_tools(instance):
    """The methods TRL exposes as tools (the same scan as GRPOTrainer.__init__)."""
    return [
        getattr(instance, name)
        for name, _ in inspect.getmembers(type(instance), predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]


@pytest.mark.parametrize("env_id", textgyms.env_ids())
def test_protocol_and_schemas_match_the_env_tools(env_id):
    cls = environment_factory(env_id)
    instance = cls()
    assert callable(instance.reset) and callable(instance.get_reward)
    tools = _trl_tools(instance)
    schemas = {get_json_schema(t)["function"]["name"]: get_json_schema(t) for t in tools}
    instance.reset(seed=0)
    env_tools = {s["function"]["name"]: s for s in instance.info["tools"]}
    assert schemas.keys() == env_tools.keys()
    for name, schema in schemas.items():
        ours, theirs = schema["function"]["parameters"], env_tools[name]["function"]["parameters"]
        assert ours.get("required", []) == theirs.get("required", [])
        assert ours["properties"].keys() == theirs["properties"].keys()
        for arg, prop in theirs["properties"].items():
            assert ours["properties"][arg]["type"] == prop["type"]
            assert ours["properties"][arg]["description"] == " ".join(prop["description"].split())


@pytest.mark.parametrize("env_id", textgyms.env_ids())
def test_oracle_through_tool_methods_earns_full_reward(env_id):
    cls = environment_factory(env_id)
    instance = cls()
    prompt = instance.reset(seed=4)
    env = gym.make(env_id)
    assert prompt == env.reset(seed=4)[0]
    tools = {t.__name__: t for t in _trl_tools(instance)}
    calls = [c for c in map(_parse_oracle_action(env), env.unwrapped.oracle_actions())]
    for name, arguments in calls:
        tools[name](**arguments)
    assert instance.get_reward() == pytest.approx(1.0)
    assert tools[calls[0][0]](**calls[0][1]).startswith("The episode is over")


def _parse_oracle_action(env):
    from textgyms.actions import parse

    def to_call(action):
        call = parse(action, env.unwrapped.tools)
        return call.name, dict(call.args)

    return to_call


def test_groups_share_a_task_and_rows_without_seed_count_up():
    cls = environment_factory(WORDLE, seed=100)
    a, b = cls(), cls()
    assert a.reset(prompt=[], seed=7) == b.reset(prompt=[], seed=7)
    assert a.info["task_id"] == b.info["task_id"]
    a.reset()
    b.reset()
    assert a.info["task_id"] == gym.make(WORDLE).reset(seed=100)[1]["task_id"]
    assert b.info["task_id"] == gym.make(WORDLE).reset(seed=101)[1]["task_id"]


def test_bad_arguments_are_feedback_and_unfinished_episode_scores_partially():
    cls = environment_factory(WORDLE, hard_mode=True)
    env = cls()
    env.reset(seed=1)
    assert "not" in env.guess(word="zzzzz").lower()  # not a word: feedback
    assert env.info["error"] is not None
    assert env.guess(wrong_name="crane")  # a missing argument is feedback too
    assert 0.0 <= env.get_reward() < 1.0


def test_factory_checks_kwargs_now():
    with pytest.raises(ConfigError, match="valid kwargs"):
        environment_factory(WORDLE, colour="blue")


def test_tiny_model_passes_trls_tool_calling_checks():
    from textgyms.models import tiny_tokenizer

    tok = tiny_tokenizer()
    assert supports_tool_calling(tok) and is_chat_template_prefix_preserving(tok)


def _forced_call_bias(tok, word):
    """``sequence_bias`` that makes the random model emit one guess tool call, then stop: a
    scripted model, through the real generation path."""
    text = f'<tool_call>{{"name": "guess", "arguments": {{"word": "{word}"}}}}</tool_call>'
    ids = tok.encode(text, add_special_tokens=False) + [tok.eos_token_id]
    # The longest matching prefix gets the largest bias, so the call is followed to its end.
    return {tuple(ids[: k + 1]): 50.0 * (k + 1) for k in range(len(ids))}


@pytest.mark.filterwarnings("ignore::FutureWarning")  # trl's own use of deprecated names
def test_grpo_trainer_runs_wordle_with_tool_calls(tmp_path, monkeypatch):
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl import GRPOConfig, GRPOTrainer

    from textgyms.models import tiny_random

    model, tok = tiny_random(seed=0)
    probe = gym.make(WORDLE)
    probe.reset(seed=0)
    secret = probe.unwrapped.task.secret
    bias = _forced_call_bias(tok, secret)
    args = GRPOConfig(
        output_dir=str(tmp_path),
        max_steps=1,
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=64,
        max_tool_calling_iterations=1,
        learning_rate=1e-4,
        logging_steps=1,
        report_to="none",
        use_cpu=True,
        save_strategy="no",
        seed=0,
        generation_kwargs={"sequence_bias": bias},
    )
    cls = environment_factory(WORDLE)
    trainer = GRPOTrainer(
        model=model,
        args=args,
        train_dataset=trl_dataset(1, seed=0),
        processing_class=tok,
        environment_factory=cls,
    )
    trainer.train()
    log = trainer.state.log_history[0]
    assert log[f"rewards/{cls.__name__}/mean"] == pytest.approx(1.0)  # guessed the secret
    assert log["tools/call_frequency"] > 0
    for instance in trainer._environment_pool[None]:
        messages = instance.info["messages"]
        assert json.loads(messages[1]["content"]) == {
            "name": "guess",
            "arguments": {"word": secret},
        }
        assert instance.info["solved"] is True
    assert trainer.state.global_step == 1 and "loss" in log


def test_class_pickles_by_recipe():
    import pickle

    cls = environment_factory(WORDLE, seed=5, hard_mode=True)
    clone = pickle.loads(pickle.dumps(cls))
    assert clone.__name__ == cls.__name__ and clone._env_kwargs == {"hard_mode": True}
    a, b = cls(), clone()
    assert a.reset() == b.reset()  # both start their task counter at seed 5
    assert a.info["task_id"] == b.info["task_id"]
    assert b._env.unwrapped.hard_mode is True


def test_metrics_reward_logs_the_fixed_keys_and_scores_nothing(monkeypatch):
    from textgyms.integrations.episode import metric_keys
    from textgyms.wrappers.trl import metrics_reward

    mixture = "textgyms/Wordle-v0,textgyms/Code-v0"
    reward = metrics_reward(mixture)
    Wordle = environment_factory(WORDLE)
    solved, unplayed = Wordle(), Wordle()
    solved.reset(seed=3)
    env = gym.make(WORDLE)
    env.reset(seed=3)
    for name, arguments in map(_parse_oracle_action(env), env.unwrapped.oracle_actions()):
        getattr(solved, name)(**arguments)
    logged = {}
    out = reward(prompts=["p", "q"], completions=["a", "b"], environments=[solved, unplayed],
                 log_metric=lambda name, value: logged.__setitem__(name, value))
    assert out == [None, None]
    assert tuple(logged) == metric_keys(mixture)  # every key, every call (TRL gathers in order)
    assert logged["wordle/episodes"] == 0.5 and logged["wordle/solved"] == 0.5
    assert logged["code/score"] == 0.0 and logged["solved"] == 0.5
    monkeypatch.setenv("TEXTGYMS_MAX_OBS_TOKENS", "8")
    env = Wordle()
    env.reset(seed=1)
    assert "…[truncated" in env.guess(word="zzzzzzzzzz")
