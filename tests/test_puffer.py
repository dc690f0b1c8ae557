"""PufferLib vector envs over every registered env, and a CleanRL-style PPO loop on Wordle."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pufferlib
import pytest
import torch
from torch import nn

import textgyms
from textgyms.errors import ConfigError
from textgyms.wrappers import puffer

ENV_IDS = textgyms.env_ids()
WORDLE = "textgyms/Wordle-v0"  # the PPO run of the PufferLib adapter
MP = {"backend": "Multiprocessing", "overwork": True}  # 2-core test machines


def _plan(env) -> list[str]:
    return env.unwrapped.oracle_actions()


def _tokenized(vec, i: int):
    """The TokenizeText wrapper of env ``i`` of a Serial vector."""
    return vec.envs[i].env.env  # GymnasiumPufferEnv -> PufferInfo -> TokenizeText


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_serial_oracle_and_random_steps(env_id):
    """Oracle actions, as token ids through PufferLib, solve every env; random ids never crash."""
    probe = gym.make(env_id)
    need = max(len(a.encode()) for s in (5, 6) if probe.reset(seed=s) for a in _plan(probe))
    vec = puffer.make(env_id, 2, "Serial", max_obs_tokens=64, max_action_tokens=need)
    obs, infos = vec.reset(seed=5)  # Serial: env i is reset with seed 5 + i
    assert obs.shape == (2, 64) and obs.dtype == np.int32 and (obs <= 256).all()
    plans = [_tokenized(vec, i).unwrapped.oracle_actions() for i in range(2)]
    summaries = []
    for turn in range(max(map(len, plans))):
        actions = np.stack(
            [
                _tokenized(vec, i).encode_action(p[min(turn, len(p) - 1)])
                for i, p in enumerate(plans)
            ]
        )
        obs, rewards, terminals, truncations, infos = vec.step(actions)
        summaries += infos
        assert np.isfinite(rewards).all() and obs.shape == (2, 64)
    assert [s["score"] for s in summaries] == [1.0, 1.0]
    for _ in range(20):
        obs, rewards, *_ = vec.step(vec.action_space.sample())
        assert vec.single_observation_space.contains(obs[0]) and np.isfinite(rewards).all()
    vec.close()


def test_multiprocessing_matches_serial():
    """Two workers with one env each see what Serial sees for the same seed and actions."""
    serial = puffer.make(ENV_IDS[0], 2, "Serial", max_obs_tokens=96, max_action_tokens=8)
    multi = puffer.make(ENV_IDS[0], 2, num_workers=2, max_obs_tokens=96, max_action_tokens=8, **MP)
    try:
        rng = np.random.default_rng(0)
        a_obs, _ = serial.reset(seed=3)
        b_obs, _ = multi.reset(seed=3)
        assert np.array_equal(a_obs, b_obs)
        finished = []
        for _ in range(12):
            actions = rng.integers(0, 257, size=(2, 8)).astype(np.int32)
            a = serial.step(actions)
            b = multi.step(actions)
            for x, y in zip(a[:4], b[:4]):
                assert np.array_equal(x, y)
            assert a[4] == b[4]
            finished += b[4]
        assert finished and all(set(s) >= {"score", "turns", "episode_return"} for s in finished)
    finally:
        serial.close()
        multi.close()


ISO = "textgyms/ISO20022-MT103-v4"  # its prompt shows the whole pacs.008: one task, one prompt


def _task_streams(backend: str, num_envs: int = 4, steps: int = 6, **kwargs) -> list[list[bytes]]:
    """The prompts each env of a PufferLib vector plays (its task stream), zero actions."""
    vec = puffer.make(ISO, num_envs, backend, max_obs_tokens=8192, max_action_tokens=4, **kwargs)
    try:
        streams: list[list[bytes]] = [[] for _ in range(num_envs)]
        obs, _ = vec.reset(seed=0)
        for _ in range(steps):
            for stream, row in zip(streams, obs):
                text = bytes(int(t) for t in row if t < 256)
                if b"<Document" in text and (not stream or stream[-1] != text):
                    stream.append(text)
            obs, *_ = vec.step(np.zeros((num_envs, 4), np.int32))
        return streams
    finally:
        vec.close()


def _assert_distinct(streams: list[list[bytes]]) -> None:
    assert all(len(s) >= 2 for s in streams)  # several episodes each
    flat = [p for s in streams for p in s]
    assert len(set(flat)) == len(flat)


def test_seed_streams_distinct_and_backend_independent():
    """Every env of a Serial or Multiprocessing vector plays its own task stream, the same one
    under both (PufferLib alone gives env 1 and env 2 of 2 workers x 2 envs the same seed)."""
    serial = _task_streams("Serial")
    _assert_distinct(serial)
    multi = _task_streams(num_workers=2, **MP)
    _assert_distinct(multi)
    assert multi == serial


def test_seed_streams_on_ray(ray_cluster):
    """Ray actors no longer all replay the first actor's seeds."""
    streams = _task_streams("Ray", num_workers=2)
    _assert_distinct(streams)
    assert streams == _task_streams("Serial")


@pytest.mark.parametrize("kwargs", [{"backend": "Serial"}, {"num_workers": 2, **MP}])
def test_full_infos_reach_the_caller_and_env_i_plays_seed_s_plus_i(kwargs):
    """infos="full" gives every key (lists as tuples: PufferLib averages lists, which raised on
    the transcript); env i of a 2-worker vector starts with the task of seed s + i."""
    vec = puffer.make(WORDLE, 4, infos="full", max_obs_tokens=64, max_action_tokens=8, **kwargs)
    try:
        _, infos = vec.reset(seed=20)
        expected = [gym.make(WORDLE).reset(seed=20 + i)[1]["task_id"] for i in range(4)]
        assert [info["task_id"] for info in infos] == expected
        assert isinstance(infos[0]["messages"], tuple) and infos[0]["messages"][0]["content"]
        _, _, _, _, infos = vec.step(np.zeros((4, 8), np.int32))
        assert len(infos) == 4 and all(info["error"] for info in infos)  # byte 0 is no guess
    finally:
        vec.close()


def test_a_mixture_through_pufferlib_plays_the_entry_each_seed_picks():
    from textgyms.mixture import Mixture

    spec = f"{WORDLE}*2,{ISO}"
    vec = puffer.make(spec, 4, "Serial", infos="full", max_obs_tokens=64, max_action_tokens=8)
    try:
        _, infos = vec.reset(seed=3)
    finally:
        vec.close()
    mixture = Mixture.parse(spec)
    assert [i["env_name"] for i in infos] == [mixture.names[mixture.pick(3 + i)] for i in range(4)]
    assert {i["env_id"] for i in infos} == {WORDLE, ISO}


def test_seed_shift_undoes_pufferlib_offsets():
    # env j of worker w: PufferLib gives s + w + j (Multiprocessing) or s + j (Ray).
    for backend, given in (("Multiprocessing", lambda w, j: w + j), ("Ray", lambda w, j: j)):
        for epw in (1, 3):
            seeds = [
                given(i // epw, i % epw) + puffer.seed_shift(backend, i, epw) for i in range(6)
            ]
            assert seeds == list(range(6))
    assert [puffer.seed_shift("Serial", i, 2) for i in range(4)] == [0, 0, 0, 0]


def test_async_send_recv_with_partial_batches():
    vec = puffer.make(ENV_IDS[0], 4, num_workers=4, batch_size=2, **MP)
    try:
        vec.async_reset(seed=0)
        seen = set()
        for _ in range(8):
            obs, rewards, terminals, truncations, _, infos, env_ids, masks = vec.recv()
            assert obs.shape == (2, 256) and env_ids.shape == (2,) and masks.all()
            seen |= set(env_ids.tolist())
            vec.send(vec.action_space.sample())
        vec.recv()
        assert seen == {0, 1, 2, 3}
    finally:
        vec.close()


def test_bad_configuration():
    with pytest.raises(ConfigError, match="Serial, Multiprocessing, Ray"):
        puffer.make(ENV_IDS[0], 2, "Threads")
    with pytest.raises(ConfigError, match="episode, full"):
        puffer.make(ENV_IDS[0], 2, infos="some")
    with pytest.raises(ConfigError, match="unknown tokenizer"):
        puffer.make(ENV_IDS[0], 2, tokenizer="words")
    with pytest.raises(pufferlib.APIUsageError, match="divisible"):
        puffer.make(ENV_IDS[0], 3, num_workers=2, **MP)


class TinyPolicy(nn.Module):
    """Embeds token ids, mean-pools the real ones, and heads for value and per-token logits."""

    def __init__(self, vocab: int, pad: int, n_actions: int, hidden: int = 32) -> None:
        super().__init__()
        self.pad, self.n_actions, self.vocab = pad, n_actions, vocab
        self.embed = nn.Embedding(vocab, hidden)
        self.body = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh())
        self.actor = nn.Linear(hidden, n_actions * vocab)
        self.critic = nn.Linear(hidden, 1)

    def forward(self, obs: torch.Tensor) -> tuple[torch.distributions.Categorical, torch.Tensor]:
        real = (obs != self.pad).float().unsqueeze(-1)
        pooled = (self.embed(obs.long()) * real).sum(1) / real.sum(1).clamp(min=1.0)
        h = self.body(pooled)
        logits = self.actor(h).view(-1, self.n_actions, self.vocab)
        return torch.distributions.Categorical(logits=logits), self.critic(h).squeeze(-1)


def test_ppo_loop_on_wordle():
    """A short CleanRL-style PPO run (GAE, clipped objective, value loss) end to end."""
    torch.manual_seed(0)
    num_envs, num_steps, iters, n_tokens = 4, 32, 3, 12
    vec = puffer.make(
        WORDLE, num_envs, "Serial", max_obs_tokens=96, max_action_tokens=n_tokens, history=True
    )
    space = vec.single_action_space
    policy = TinyPolicy(int(space.nvec[0]), int(space.nvec[0]) - 1, n_tokens)
    optim = torch.optim.Adam(policy.parameters(), lr=3e-3)
    before = [p.detach().clone() for p in policy.parameters()]
    obs_np, _ = vec.reset(seed=0)
    obs = torch.as_tensor(obs_np)
    episodes, losses = [], []
    for _ in range(iters):
        buf = {k: [] for k in ("obs", "act", "logp", "val", "rew", "done")}
        for _ in range(num_steps):
            with torch.no_grad():
                dist, value = policy(obs)
                action = dist.sample()
            obs_np, reward, term, trunc, infos = vec.step(action.numpy().astype(np.int32))
            episodes += infos
            for key, x in zip(buf, (obs, action, dist.log_prob(action).sum(-1), value)):
                buf[key].append(x)
            buf["rew"].append(torch.as_tensor(reward))
            buf["done"].append(torch.as_tensor(term | trunc, dtype=torch.float32))
            obs = torch.as_tensor(obs_np)
        roll = {k: torch.stack(v) for k, v in buf.items()}
        assert roll["obs"].shape == (num_steps, num_envs, 96)
        assert roll["act"].shape == (num_steps, num_envs, n_tokens)
        assert roll["logp"].shape == roll["val"].shape == roll["rew"].shape == (num_steps, num_envs)
        with torch.no_grad():
            _, last_value = policy(obs)
        adv = _gae(roll["rew"], roll["val"], roll["done"], last_value)
        losses += _ppo_update(policy, optim, roll, adv)
    vec.close()
    assert all(np.isfinite(x) for x in losses) and len(losses) == iters * 4
    assert any(not torch.equal(a, b) for a, b in zip(before, policy.parameters()))
    assert len(episodes) > 0 and all(0.0 <= e["score"] <= 1.0 for e in episodes)
    assert iters * num_steps * num_envs >= 300  # "a few hundred steps"


def _gae(rew, val, done, last_value, gamma=0.99, lam=0.95) -> torch.Tensor:
    adv = torch.zeros_like(rew)
    running = torch.zeros_like(last_value)
    for t in reversed(range(rew.shape[0])):
        next_value = last_value if t == rew.shape[0] - 1 else val[t + 1]
        nonterminal = 1.0 - done[t]
        delta = rew[t] + gamma * next_value * nonterminal - val[t]
        running = delta + gamma * lam * nonterminal * running
        adv[t] = running
    return adv


def _ppo_update(policy, optim, roll, adv, epochs=2, minibatches=2, clip=0.2) -> list[float]:
    flat = {k: v.flatten(0, 1) for k, v in roll.items()}
    returns = adv.flatten() + flat["val"]
    adv = adv.flatten()
    losses = []
    order = torch.randperm(adv.numel())
    for _ in range(epochs):
        for idx in order.chunk(minibatches):
            dist, value = policy(flat["obs"][idx])
            assert torch.isfinite(value).all()
            ratio = (dist.log_prob(flat["act"][idx]).sum(-1) - flat["logp"][idx]).exp()
            a = (adv[idx] - adv[idx].mean()) / (adv[idx].std() + 1e-8)
            pg = torch.max(-a * ratio, -a * ratio.clamp(1 - clip, 1 + clip)).mean()
            v_loss = 0.5 * (value - returns[idx]).pow(2).mean()
            loss = pg + 0.5 * v_loss - 0.01 * dist.entropy().sum(-1).mean()
            optim.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            optim.step()
            losses.append(float(loss.detach()))
    return losses
