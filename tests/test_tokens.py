"""The token-level contract: ids + loss mask of whole episodes, and drift detection."""

from pathlib import Path

import gymnasium as gym
import pytest

import textgyms
from textgyms.models import tiny_tokenizer
from textgyms.tokens import ContextDriftError, episode_tokens, shared_prefix_len

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tok():
    return tiny_tokenizer()


def _trl_template(name: str) -> str:
    """A real chat template, shipped inside the installed trl package (offline)."""
    trl = pytest.importorskip("trl")
    return (Path(trl.__file__).parent / "chat_templates" / f"{name}.jinja").read_text()


def _oracle_messages(env_id: str, seed: int = 0) -> list[dict]:
    env = gym.make(env_id)
    _, info = env.reset(seed=seed)
    for action in env.unwrapped.oracle_actions():
        *_, info = env.step(action)
    env.close()
    return info["messages"]


def _masked_text(tok, ep) -> str:
    return tok.decode([i for i, m in zip(ep.input_ids, ep.loss_mask) if m])


@pytest.mark.parametrize("env_id", textgyms.env_ids())
def test_oracle_episode_mask_covers_exactly_the_actions(tok, env_id):
    messages = _oracle_messages(env_id)
    ep = episode_tokens(tok, messages)
    assert tok.decode(ep.input_ids) == tok.apply_chat_template(messages, tokenize=False)
    actions = [m["content"] for m in messages if m["role"] == "assistant"]
    assert _masked_text(tok, ep) == "".join(a + tok.eos_token for a in actions)
    assert len(ep.turn_spans) == len(actions) and len(ep.loss_mask) == len(ep.input_ids)
    for (start, end), action in zip(ep.turn_spans, actions):
        assert tok.decode(ep.input_ids[start:end]) == action + tok.eos_token
        assert ep.input_ids[end - 1] == tok.eos_token_id
    assert ep.prompt_length == ep.turn_spans[0][0] > 0


def test_mask_matches_transformers_assistant_mask(tok):
    messages = _oracle_messages("textgyms/Wordle-v0", seed=3)
    ep = episode_tokens(tok, messages)
    ref = tok.apply_chat_template(messages, return_dict=True, return_assistant_tokens_mask=True)
    assert ep.input_ids == list(ref["input_ids"])
    assert ep.loss_mask == list(ref["assistant_masks"])


def test_generated_ids_and_logprobs_are_kept(tok):
    messages = _oracle_messages("textgyms/Wordle-v0", seed=1)
    actions = [m["content"] for m in messages if m["role"] == "assistant"]
    ids = [tok.encode(a, add_special_tokens=False) + [tok.eos_token_id] for a in actions]
    logps = [[-0.5 - k] * len(x) for k, x in enumerate(ids)]
    ep = episode_tokens(tok, messages, completion_ids=ids, completion_logprobs=logps)
    assert ep.input_ids == episode_tokens(tok, messages).input_ids
    for k, (start, end) in enumerate(ep.turn_spans):
        assert ep.input_ids[start:end] == ids[k]
        assert ep.logprobs[start:end] == [-0.5 - k] * len(ids[k])
    off = [lp for lp, m in zip(ep.logprobs, ep.loss_mask) if not m]
    assert off and set(off) == {0.0}


def test_completion_cut_before_eos_leaves_eos_to_the_template(tok):
    messages = [
        {"role": "user", "content": "guess"},
        {"role": "assistant", "content": "<guess>crane</guess>"},
        {"role": "user", "content": "GY___"},
    ]
    ids = [tok.encode("<guess>crane</guess>", add_special_tokens=False)]  # hit max_tokens
    ep = episode_tokens(tok, messages, completion_ids=ids)
    start, end = ep.turn_spans[0]
    assert ep.input_ids[end] == tok.eos_token_id and ep.loss_mask[end] == 0
    assert _masked_text(tok, ep) == "<guess>crane</guess>"


def test_non_canonical_completion_ids_are_drift(tok):
    messages = [
        {"role": "user", "content": "guess"},
        {"role": "assistant", "content": "crane"},
        {"role": "user", "content": "GY___"},
        {"role": "assistant", "content": "slate"},
    ]
    canonical = tok.encode("crane", add_special_tokens=False)
    split = [tok.convert_tokens_to_ids(c) for c in "crane"]  # what a sampler may produce
    assert canonical != split and tok.decode(split) == "crane"
    slate = tok.encode("slate", add_special_tokens=False) + [tok.eos_token_id]
    with pytest.raises(ContextDriftError, match="before policy turn 1"):
        episode_tokens(tok, messages, completion_ids=[split + [tok.eos_token_id], slate])
    ids = [split + [tok.eos_token_id], slate]
    ep = episode_tokens(tok, messages, completion_ids=ids, check=False)
    assert ep.input_ids[ep.turn_spans[0][0] : ep.turn_spans[0][1] - 1] == split


def test_completion_that_is_not_the_message_is_rejected(tok):
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "crane"}]
    with pytest.raises(ContextDriftError, match="assistant message 1"):
        episode_tokens(tok, messages, completion_ids=[tok.encode("slate")])


def test_real_qwen25_template_with_tools():
    tok = tiny_tokenizer()
    tok.chat_template = _trl_template("qwen2_5")
    env = gym.make("textgyms/Wordle-v0")
    _, info = env.reset(seed=5)
    messages = _oracle_messages("textgyms/Wordle-v0", seed=5)
    ep = episode_tokens(tok, messages, tools=info["tools"])
    text = tok.decode(ep.input_ids)
    assert text.startswith("<|im_start|>system\n") and '"name": "guess"' in text
    actions = [m["content"] for m in messages if m["role"] == "assistant"]
    assert _masked_text(tok, ep) == "".join(a + "<|im_end|>" for a in actions)


def test_real_template_that_rewrites_history_is_detected():
    tok = tiny_tokenizer()
    tok.chat_template = _trl_template("qwen3")  # drops the reasoning of earlier turns
    messages = [
        {"role": "user", "content": "Guess a word."},
        {"role": "assistant", "content": "<think>\nstart wide\n</think>\n\n<guess>crane</guess>"},
        {"role": "user", "content": "GY___"},
        {"role": "assistant", "content": "<guess>slate</guess>"},
    ]
    with pytest.raises(ContextDriftError, match="rewrites history at message 3"):
        episode_tokens(tok, messages)


def test_wrong_number_of_completions_is_an_error(tok):
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    with pytest.raises(ValueError, match="1 assistant turns"):
        episode_tokens(tok, messages, completion_ids=[[1], [2]])


def test_shared_prefix_len_stops_at_the_first_difference_or_policy_token():
    import torch

    ids = torch.tensor([[5, 6, 7, 8, 9], [5, 6, 7, 1, 2], [5, 6, 7, 8, 3]])
    mask = torch.tensor([[0, 0, 0, 0, 1], [0, 0, 0, 0, 1], [0, 0, 0, 0, 1]])
    assert shared_prefix_len(ids, mask) == 3  # rows part at position 3
    early = mask.clone()
    early[2] = torch.tensor([0, 0, 1, 1, 1])
    assert shared_prefix_len(ids, early) == 2  # never past any row's first policy token
    same = torch.tensor([[5, 6, 7], [5, 6, 7]])
    assert shared_prefix_len(same, torch.tensor([[0, 0, 1], [0, 0, 1]])) == 2


def test_observation_turn_closes_a_cut_turn_and_refuses_a_template_that_hides_content(tok):
    from textgyms.tokens import observation_turn

    turn = observation_turn(tok, [{"role": "user", "content": "GY___"}])
    assert turn.close == (tok.eos_token_id,)
    assert tok.decode(list(turn.body)) == "\n<|im_start|>user\nGY___<|im_end|>\n<|im_start|>assistant\n"
    ended = tok.encode("crane", add_special_tokens=False) + [tok.eos_token_id]
    assert turn.ids_after(ended) == list(turn.body)
    assert turn.ids_after(ended[:-1]) == [tok.eos_token_id, *turn.body]  # cut by length
    assert turn.ids_after(ended[:-1], stop_ids=[ended[-2]]) == list(turn.body)
    hides = tok.__class__(tokenizer_object=tok.backend_tokenizer, eos_token=tok.eos_token)
    hides.chat_template = "{% for m in messages %}{{ m.role }}: ...\n{% endfor %}"
    with pytest.raises(ContextDriftError, match="does not render assistant content"):
        observation_turn(hides, [{"role": "user", "content": "GY___"}])
