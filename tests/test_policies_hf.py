"""HFPolicy on the offline tiny-random model, and VLLMPolicy's GPU-only path."""

import importlib.util

import gymnasium as gym
import pytest

import textgyms
from textgyms.errors import BackendError
from textgyms.policies import HFPolicy, VLLMPolicy, make_policy
from textgyms.tokens import episode_tokens

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def policy():
    return HFPolicy("tiny-random", max_new_tokens=10, batch_size=2, return_tokens=True, seed=1)


def _resets(seed=0):
    envs = [gym.make(i) for i in textgyms.env_ids()]
    return envs, [env.reset(seed=seed + k) for k, env in enumerate(envs)]


def test_batched_actions_step_every_env(policy):
    envs, resets = _resets()
    actions = policy.act([o for o, _ in resets], [i for _, i in resets])
    assert len(actions) == len(envs) == len(policy.last)
    for env, action, gen in zip(envs, actions, policy.last):
        assert isinstance(action, str) and action == gen.text
        *_, info = env.step(action)  # random text never crashes an env
        assert info["turn"] == 1
        assert gen.finish_reason in ("stop", "length")
        assert gen.usage["completion_tokens"] == len(gen.completion_ids) <= 10


def test_token_ids_and_logprobs_are_the_models(policy):
    # Transcripts of different lengths, so the batch is left-padded.
    resets = []
    for turns in (0, 1, 2):
        env = gym.make("textgyms/Wordle-v0")
        obs, info = env.reset(seed=turns)
        tools = info["tools"]
        for action in env.unwrapped.oracle_actions()[:turns]:
            obs, *_, info = env.step(action)
        resets.append((obs, {**info, "tools": tools}))
    policy.act([o for o, _ in resets], [i for _, i in resets])
    tok, model = policy.tokenizer, policy.model
    assert len({len(g.prompt_ids) for g in policy.last}) == 3
    for (_, info), gen in zip(resets, policy.last):
        expected_prompt = tok.apply_chat_template(
            info["messages"], tools=info["tools"], add_generation_prompt=True, return_dict=False
        )
        assert gen.prompt_ids == list(expected_prompt)  # left padding stripped
        assert tok.decode(gen.completion_ids, skip_special_tokens=True) == gen.text
        # Teacher-forced, unpadded forward pass: the same log-probs as batched generation.
        ids = torch.tensor([gen.prompt_ids + gen.completion_ids])
        with torch.no_grad():
            logits = model(ids).logits[0, len(gen.prompt_ids) - 1 : -1].float()
        ref = torch.log_softmax(logits, -1).gather(-1, ids[0, len(gen.prompt_ids) :, None])
        assert torch.allclose(torch.tensor(gen.logprobs), ref.squeeze(-1), atol=1e-4)
        assert all(lp <= 0 for lp in gen.logprobs)


def test_sampling_is_reproducible_and_seeded():
    obs, info = gym.make("textgyms/Wordle-v0").reset(seed=0)
    runs = [HFPolicy("tiny-random", max_new_tokens=8, seed=s).act([obs], [info]) for s in (5, 5, 6)]
    assert runs[0] == runs[1] != runs[2]


def test_greedy_multi_turn_episode_feeds_the_token_contract():
    policy = HFPolicy("tiny-random", max_new_tokens=6, temperature=0.0, return_tokens=True)
    env = gym.make("textgyms/Wordle-v0")
    obs, info = env.reset(seed=2)
    tools, completions = info["tools"], []
    for _ in range(3):
        (action,) = policy.act([obs], [info])
        completions.append(policy.last[0].completion_ids)
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    ep = episode_tokens(
        policy.tokenizer, info["messages"], completion_ids=completions, tools=tools, check=False
    )
    assert [ep.input_ids[a:b] for a, b in ep.turn_spans] == completions
    assert sum(ep.loss_mask) == sum(len(c) for c in completions)
    # What the policy was actually prompted with at its last turn is the sequence so far.
    assert ep.input_ids[: ep.turn_spans[-1][0]] == policy.last[0].prompt_ids


def test_make_policy_hf_spec():
    policy = make_policy("hf:tiny-random?max_new_tokens=3&temperature=0", seed=4)
    assert isinstance(policy, HFPolicy) and policy.sampling["max_new_tokens"] == 3
    assert policy.spec()["name"] == "hf:tiny-random" and policy.seed == 4


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed")
def test_vllm_policy_without_vllm_names_the_fix():
    with pytest.raises(BackendError, match="vllm package and a CUDA GPU"):
        VLLMPolicy("tiny")
    with pytest.raises(BackendError, match="HFPolicy"):
        make_policy("vllm:some/model")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="vLLM needs a CUDA GPU")
def test_vllm_policy_on_gpu(tmp_path):
    pytest.importorskip("vllm")
    from textgyms.models import save_tiny_random

    path = save_tiny_random(tmp_path / "tiny")
    policy = VLLMPolicy(str(path), max_tokens=8, return_tokens=True, gpu_memory_utilization=0.2)
    envs, resets = _resets()
    actions = policy.act([o for o, _ in resets], [i for _, i in resets])
    assert len(actions) == len(envs)
    assert all(len(g.logprobs) == len(g.completion_ids) <= 8 for g in policy.last)
