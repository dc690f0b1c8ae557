"""baselines/grpo.py: the loss maths, token-in/token-out rollouts, resume, vLLM guard."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import textgyms  # noqa: E402
from baselines import grpo  # noqa: E402
from textgyms.errors import ConfigError  # noqa: E402
from textgyms.models import tiny_random  # noqa: E402
from textgyms.tokens import episode_tokens  # noqa: E402

WORDLE = "textgyms/Wordle-v0"


@pytest.fixture(scope="module")
def tiny():
    return tiny_random(0)


def play(tiny, stop=(), groups=1, size=2, seed=0, **env_kwargs):
    """One real rollout of the tiny random model (it plays noise: invalid actions, many turns)."""
    model, tok = tiny
    args = grpo.Args(num_groups=groups, group_size=size, max_new_tokens=8, stop=stop, seed=seed)
    kwargs = {"max_invalid": 2, **env_kwargs}
    with textgyms.make_vec(WORDLE, groups * size, group_size=size, env_kwargs=kwargs) as vec:
        return grpo.rollout(grpo.HFGenerator(model, tok, args), tok, vec, args, step=0), args


# -- advantages ------------------------------------------------------------------------------


def test_group_advantages_hand_values():
    adv = grpo.group_advantages([1.0, 0.0, 0.5, 0.5], group_size=2)
    assert adv.tolist() == pytest.approx([1.0, -1.0, 0.0, 0.0])
    adv = grpo.group_advantages([3.0, 1.0, 2.0, 2.0], group_size=2, scale=False)  # Dr.GRPO
    assert adv.tolist() == pytest.approx([1.0, -1.0, 0.0, 0.0])
    adv = grpo.group_advantages([0.0, 0.0, 3.0], group_size=3)
    assert adv.tolist() == pytest.approx([-1 / math.sqrt(2), -1 / math.sqrt(2), math.sqrt(2)])


def test_rebn_reward_to_go_normalised_over_the_batch():
    out = grpo.rebn_advantages([[0.0, 1.0], [1.0]], gamma=0.5)
    togo = np.array([0.5, 1.0, 1.0])  # [0 + 0.5 * 1, 1] and [1]
    expect = (togo - togo.mean()) / togo.std()
    assert out[0] == pytest.approx(expect[:2].tolist())
    assert out[1] == pytest.approx(expect[2:].tolist())
    assert grpo.rebn_advantages([[0.2], [0.2]]) == [[0.0], [0.0]]


def test_informative_groups_flags_zero_variance():
    keep = grpo.informative_groups([1.0, 1.0, 0.0, 0.3, 0.5, 0.5], group_size=2)
    assert keep.tolist() == [False, True, False]


# -- the loss ------------------------------------------------------------------------------


def test_normalisers_match_hand_values():
    mask = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0]])
    dapo = grpo.loss_weights(mask, "dapo")
    assert dapo.flatten().tolist() == pytest.approx([0.25, 0.25, 0.25, 0, 0.25, 0, 0, 0])
    dr = grpo.loss_weights(mask, "dr_grpo", norm_tokens=8)
    assert dr.flatten().tolist() == pytest.approx([1 / 16] * 3 + [0, 1 / 16, 0, 0, 0])
    seq = grpo.loss_weights(mask, "grpo")
    assert seq.flatten().tolist() == pytest.approx([1 / 6] * 3 + [0, 0.5, 0, 0, 0])
    token_loss = torch.tensor([[1.0, 2.0, 3.0, 100.0], [4.0, 100.0, 100.0, 100.0]])
    assert float((token_loss * dapo).sum()) == pytest.approx((1 + 2 + 3 + 4) / 4)
    assert float((token_loss * dr).sum()) == pytest.approx((1 + 2 + 3 + 4) / 16)
    assert float((token_loss * seq).sum()) == pytest.approx((2.0 + 4.0) / 2)
    with pytest.raises(ConfigError):
        grpo.loss_weights(mask, "dr_grpo")
    with pytest.raises(ConfigError, match="dapo"):
        grpo.loss_weights(mask, "ppo")


def test_gradient_sign_follows_the_advantage():
    logp = torch.tensor([-1.0, -2.0, -0.5], requires_grad=True)
    adv = torch.tensor([1.0, -1.0, 0.0])
    loss, clipped = grpo.clipped_token_loss(logp, logp.detach(), adv, 0.2, 0.28)
    loss.sum().backward()
    assert not clipped.any()
    assert logp.grad.tolist() == pytest.approx([-1.0, 1.0, 0.0])  # descent raises logp iff A > 0


@pytest.mark.parametrize(
    ("ratio", "adv", "flows"),
    [
        (1.25, 1.0, True),  # inside clip-higher's 1 + 0.28
        (1.35, 1.0, False),  # beyond 1 + eps_high with A > 0: clipped
        (1.35, -1.0, True),  # the pessimistic min keeps the unclipped term
        (0.75, -1.0, False),  # below 1 - eps_low with A < 0: clipped
        (0.85, -1.0, True),
        (0.75, 1.0, True),
    ],
)
def test_clipping_engages_beyond_the_range(ratio, adv, flows):
    old = torch.tensor([-1.0])
    logp = (old + math.log(ratio)).requires_grad_(True)
    loss, clipped = grpo.clipped_token_loss(logp, old, torch.tensor([adv]), 0.2, 0.28)
    loss.sum().backward()
    assert bool(clipped[0]) is not flows
    assert (float(logp.grad[0]) != 0.0) is flows
    # the loss value is the clipped or the unclipped surrogate
    bound = min(max(ratio, 0.8), 1.28)
    assert float(loss.detach()[0]) == pytest.approx(-min(ratio * adv, bound * adv))


def test_kl_k3_is_zero_at_the_reference_and_positive_elsewhere():
    logp = torch.tensor([-1.0, -2.0])
    assert grpo.kl_k3(logp, logp).tolist() == [0.0, 0.0]
    assert (grpo.kl_k3(logp, logp + torch.tensor([0.3, -0.4])) > 0).all()


def batch_loss(model, episodes, args, rows=None):
    """The update's loss on the whole batch (one micro-batch), backpropagated."""
    rows = episodes if rows is None else rows
    ids = grpo.pad_right([e.ids for e in rows], -1, torch.long)
    mask = grpo.pad_right([e.mask for e in rows], 0, torch.long)
    adv = grpo.pad_right(grpo.token_advantages(rows, args), 0.0, torch.float32)
    logp, m, s = grpo.token_logps(model, ids, mask, args.temperature)
    per_token, _ = grpo.clipped_token_loss(logp, logp.detach(), adv[:, s:], 0.2, 0.28)
    loss = (per_token * grpo.loss_weights(mask, args.loss, 64)[:, s:]).sum()
    model.zero_grad(set_to_none=False)
    loss.backward()
    return loss, logp, m


@pytest.mark.parametrize("loss", ["dapo", "dr_grpo", "grpo"])
def test_equal_rewards_in_a_group_give_zero_loss_and_gradient(tiny, loss):
    episodes, args = play(tiny, size=3)
    for e in episodes:
        e.rewards = [0.0] * (len(e.rewards) - 1) + [0.4]
    args.loss = loss
    model = tiny[0]
    value, _, _ = batch_loss(model, episodes, args)
    assert float(value.detach()) == 0.0
    assert all(float(p.grad.abs().max()) == 0.0 for p in model.parameters())


def test_observation_tokens_get_zero_gradient(tiny):
    model, _ = tiny
    episodes, args = play(tiny, size=2)
    episodes[0].rewards[-1], episodes[1].rewards[-1] = 1.0, 0.0
    assert all(e.mask.count(0) > e.mask.index(1) for e in episodes)  # obs after a policy turn
    kept = []

    def keep(module, inputs, output):
        output.retain_grad()
        kept.append(output)

    handle = model.model.norm.register_forward_hook(keep)
    try:
        _, _, m = batch_loss(model, episodes, args)
    finally:
        handle.remove()
    # kept[-1]: the final hidden states of the rows after the shared prompt, from the position
    # that scores token s on: column j scores token s + j. Only policy tokens may get gradient.
    grad = kept[-1].grad[:, :-1].abs().amax(-1)
    assert grad.shape == m.shape
    assert (grad[m == 0] == 0).all()
    assert (grad[m == 1] > 0).all()


def test_shared_prompt_encoding_equals_full_forward(tiny):
    model, _ = tiny
    episodes, args = play(tiny, size=3, seed=2)
    ids = grpo.pad_right([e.ids for e in episodes], -1, torch.long)
    mask = grpo.pad_right([e.mask for e in episodes], 0, torch.long)
    logp, m, s = grpo.token_logps(model, ids, mask, 0.7)
    assert s == episodes[0].mask.index(1) and s > 20  # the whole prompt is shared
    attn = ids.ne(-1).long()
    full = model(input_ids=ids.clamp(min=0), attention_mask=attn).logits[:, s - 1 : -1] / 0.7
    expect = torch.log_softmax(full, -1).gather(-1, ids[:, s:].clamp(min=0)[..., None])[..., 0]
    assert torch.allclose(logp[m == 1], expect[m == 1], atol=1e-5)
    model.zero_grad()
    (logp * m).sum().backward()
    shared = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    (expect * m).sum().backward()
    for a, p in zip(shared, model.parameters()):
        assert torch.allclose(a, p.grad, rtol=1e-3, atol=1e-5)


def test_a_batch_with_a_shared_prefix_samples_as_each_context_alone(tiny):
    model, tok = tiny
    args = grpo.Args(max_new_tokens=6, temperature=0.0)
    gen = grpo.HFGenerator(model, tok, args)
    rules = "<|im_start|>system\nYou play Wordle: guess a five-letter word.<|im_end|>\n"
    a = tok.encode(rules + "<|im_start|>user\nguess a word<|im_end|>\n<|im_start|>assistant\n")
    b = tok.encode(rules + "<|im_start|>user\nplay<|im_end|>\n<|im_start|>assistant\n")
    greedy = gen.generate([a, b, a, a], seed=0)
    assert greedy[0] == greedy[2] == greedy[3] == gen.generate([a], seed=0)[0]
    assert greedy[1] == gen.generate([b], seed=0)[0]


def test_a_step_on_a_positive_advantage_raises_its_log_prob():
    model, tok = tiny_random(0)
    episodes, args = play((model, tok), size=2, seed=3)
    episodes[0].rewards[-1], episodes[1].rewards[-1] = 1.0, 0.0
    args.loss = "grpo"
    _, before, m = batch_loss(model, episodes, args)
    with torch.no_grad():
        for p in model.parameters():
            p -= 0.5 * p.grad
    _, after, _ = batch_loss(model, episodes, args)
    seq = ((after - before).detach() * m).sum(1)
    assert float(seq[0]) > 0 > float(seq[1])


# -- rollouts --------------------------------------------------------------------------------


@pytest.mark.parametrize("stop", [(), ("</guess>", ">")])
def test_rollout_is_token_in_token_out(tiny, stop):
    _, tok = tiny
    episodes, _ = play(tiny, stop=stop, size=2, seed=1)
    for e in episodes:
        assert e.done and len(e.rewards) >= 2 and "score" in e.info
        turns = sorted({k for k in e.turn_of if k >= 0})
        completions = [[t for t, k in zip(e.ids, e.turn_of) if k == turn] for turn in turns]
        ref = episode_tokens(tok, e.info["messages"], completion_ids=completions, check=False)
        final = len(ref.input_ids) - len(ref.loss_mask[ref.turn_spans[-1][1] :])
        assert e.ids == ref.input_ids[:final]  # the final observation is never generated from
        assert e.mask == ref.loss_mask[:final]


def test_invalid_actions_are_counted_per_episode(tiny):
    episodes, _ = play(tiny, size=2, seed=2)  # noise: every action is rejected
    for e in episodes:
        assert e.invalid == 2 == len(e.rewards)  # max_invalid=2 ends the episode
        assert e.info["error"] and not e.info["solved"]
    assert grpo.episode_metrics(episodes)["invalid"] == 2.0


def test_group_members_play_the_same_task(tiny):
    episodes, _ = play(tiny, groups=2, size=2)
    ids = [e.info["task_id"] for e in episodes]
    assert ids[0] == ids[1] and ids[2] == ids[3] and ids[0] != ids[2]


# -- the script ------------------------------------------------------------------------------


def small_args(tmp_path, **kw):
    base = dict(env_kwargs=json.dumps({"max_invalid": 1, "max_guesses": 1}), num_groups=2,
                group_size=2, steps=4, max_new_tokens=6, lr=1e-3, out=str(tmp_path / "run"))
    return grpo.Args(**{**base, **kw})


def test_main_writes_metrics_plot_and_final_model(tmp_path):
    result = grpo.main(small_args(tmp_path, beta=0.1, steps=2))
    out = tmp_path / "run"
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2] and result["step"] == 2
    for key in grpo.PLOTTED:
        assert all(math.isfinite(r[key]) for r in rows)
    assert rows[0]["kl"] == pytest.approx(0.0, abs=1e-6)  # the policy starts as the reference
    assert (out / "training.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "final" / "config.json").exists()


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """A tiny model that half-knows the <guess> format (a short SFT), so rewards vary."""
    from baselines import sft

    out = tmp_path_factory.mktemp("sft")
    sft.main(sft.Args(model="tiny-random", env_kwargs=WARM_KWARGS, episodes=60, lr=3e-3,
                      batch_size=1, eval_episodes=0, seed=0, out=str(out)))
    return str(out / "final")


WARM_KWARGS = json.dumps({"vocab": "easy", "max_guesses": 3, "max_invalid": 1})


def test_resume_continues_to_the_same_result(tmp_path, warm):
    kw = dict(model=warm, env_kwargs=WARM_KWARGS, stop=("</guess>",), max_new_tokens=12,
              num_groups=4, num_iterations=2)
    whole = grpo.main(small_args(tmp_path / "a", steps=4, **kw))
    grpo.main(small_args(tmp_path / "b", steps=2, save_every=2, **kw))
    resumed = grpo.main(small_args(tmp_path / "b", steps=4, save_every=2, resume=True, **kw))
    metrics = (tmp_path / "a" / "run" / "metrics.jsonl").read_text().splitlines()
    steps = [json.loads(r) for r in metrics]
    assert any(r["grad_norm"] > 0 and r["clip_frac"] > 0 for r in steps)  # it really trained
    drop = ("gen_s", "train_s")
    assert {k: v for k, v in resumed.items() if k not in drop} == {
        k: v for k, v in whole.items() if k not in drop
    }
    rows = (tmp_path / "b" / "run" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(r)["step"] for r in rows] == [1, 2, 3, 4]
    a = tiny_random_from(tmp_path / "a" / "run" / "final")
    b = tiny_random_from(tmp_path / "b" / "run" / "final")
    assert all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters()))
    start = tiny_random_from(warm)
    assert not all(torch.equal(x, y) for x, y in zip(a.parameters(), start.parameters()))


def tiny_random_from(path):
    from textgyms.models import load_model

    return load_model(str(path))[0]


def test_dynamic_sampling_skips_groups_without_signal(tmp_path):
    # The random model never plays a valid guess: every return is 0, so no group is kept.
    result = grpo.main(small_args(tmp_path, steps=1, dynamic_sampling=True))
    assert result["groups_kept"] == 0 and result["grad_norm"] == 0.0


def test_cli_parses_the_documented_flags():
    tyro = pytest.importorskip("tyro")
    args = tyro.cli(grpo.Args, args=[
        "--model", "tiny-random", "--env-id", WORDLE, "--env-kwargs", '{"vocab": "easy"}',
        "--num-groups", "3", "--group-size", "5", "--loss", "dr_grpo", "--advantage", "rebn",
        "--beta", "0.04", "--eps-low", "0.1", "--eps-high", "0.3", "--dynamic-sampling",
        "--generator", "hf", "--stop", "</guess>", "--resume", "--save-every", "7",
    ])
    assert (args.num_groups, args.group_size, args.loss, args.advantage) == (3, 5, "dr_grpo", "rebn")
    assert args.dynamic_sampling and args.resume and args.stop == ("</guess>",)
    with pytest.raises(SystemExit):
        tyro.cli(grpo.Args, args=["--loss", "ppo"])


def test_bad_arguments_raise_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="JSON"):
        grpo.main(small_args(tmp_path, env_kwargs="{vocab: easy}"))
    with pytest.raises(ConfigError, match="group-size"):
        grpo.main(small_args(tmp_path, group_size=0))


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only error")
def test_vllm_generator_needs_cuda(tmp_path):
    with pytest.raises(ConfigError, match="CUDA"):
        grpo.main(small_args(tmp_path, generator="vllm"))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="vLLM needs a CUDA GPU")
def test_vllm_generator_trains(tmp_path):
    pytest.importorskip("vllm")
    result = grpo.main(small_args(tmp_path, generator="vllm", steps=2))
    assert result["step"] == 2 and math.isfinite(result["loss"])
