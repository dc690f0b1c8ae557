"""Mixtures: spec parsing, the seed -> entry rule, MixtureEnv, and mixtures on every backend."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import textgyms
from textgyms.errors import ConfigError, ResetNeeded
from textgyms.mixture import Mixture, MixtureEntry, MixtureEnv

pytestmark = pytest.mark.usefixtures("deadline")

# Looked up, not spelled out: an id's version changes whenever its env does.
WORDLE, ISO = (
    next(i for i in textgyms.env_ids() if i.startswith(p))
    for p in ("textgyms/Wordle-", "textgyms/ISO20022-")
)
# Two ids, and one id twice with different kwargs (told apart by name): three entries.
SPEC = [
    {"id": WORDLE, "weight": 2},
    {"id": WORDLE, "kwargs": {"length": 6}, "name": "wordle-6"},
    (ISO, {"difficulty": 1}, 1.0),
]
JUNK = "no tool call here"


def test_parse_accepts_every_documented_form():
    cli = Mixture.parse(f"{WORDLE}*2, {ISO}")
    assert cli.entries == (MixtureEntry(WORDLE, {}, 2.0), MixtureEntry(ISO))
    assert Mixture.parse(str(cli)) == cli and Mixture.parse(cli) is cli
    as_json = Mixture.parse(f'[{{"id": "{WORDLE}", "weight": 2}}, "{ISO}"]')
    assert as_json == cli
    one = Mixture.parse(f'{{"id": "{WORDLE}", "kwargs": {{"length": 6}}}}')
    assert one.entries == (MixtureEntry(WORDLE, {"length": 6}),)
    mixed = Mixture.parse(SPEC)
    assert mixed.names == [WORDLE, "wordle-6", ISO]
    assert Mixture.parse(str(mixed)) == mixed  # kwargs and names survive the JSON form
    assert mixed.probabilities.tolist() == [0.5, 0.25, 0.25]


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("", "unknown env id"),
        (f"{WORDLE}*zero", "bad weight"),
        (f"{WORDLE}*0", "weight"),
        (f"{WORDLE}*nan", "weight"),
        ([WORDLE, WORDLE], "unique names"),
        ([{"id": WORDLE, "kwarg": {}}], "may have"),
        ([42], "bad mixture item"),
        ("[oops", "not valid JSON"),
        ({"id": WORDLE}, "string or a list"),
        ([], "at least one"),
        (f"textgyms/Nope-v0,{WORDLE}", "unknown env id"),
    ],
)
def test_bad_specs_raise_config_error(spec, match):
    with pytest.raises(ConfigError, match=match):
        Mixture.parse(spec)


def test_pick_is_a_pure_function_of_the_seed_with_the_given_weights():
    mixture = Mixture.parse(SPEC)
    picks = np.array([mixture.pick(s) for s in range(4000)])
    assert picks.tolist() == [mixture.pick(s) for s in range(4000)]
    freq = np.bincount(picks, minlength=3) / len(picks)
    assert np.allclose(freq, [0.5, 0.25, 0.25], atol=0.03)
    assert all(Mixture.parse(WORDLE + "," + ISO + "*1e-9").pick(s) == 0 for s in range(200))


def test_mixture_env_plays_the_picked_entry_exactly_as_the_plain_env():
    env = MixtureEnv(SPEC)
    seen = set()
    for seed in range(12):
        obs, info = env.reset(seed=seed)
        entry = env.mixture.entries[env.mixture.pick(seed)]
        ref_obs, ref_info = gym.make(entry.env_id, **entry.kwargs).reset(seed=seed)
        assert (obs, info["task_id"]) == (ref_obs, ref_info["task_id"])
        assert info["env_id"] == entry.env_id and info["level"] == 0
        assert info["env_name"] == env.mixture.names[env.mixture.pick(seed)]
        assert env.unwrapped.task.task_id == info["task_id"]  # unwrapped: the playing env
        seen.add(info["env_name"])
        *_, step_info = env.step(JUNK)
        assert step_info["env_name"] == info["env_name"] and step_info["task_id"] == info["task_id"]
    assert seen == {WORDLE, "wordle-6", ISO}
    assert env.observation_space.contains(obs) and env.action_space.contains(JUNK)
    env.close()


def test_unseeded_resets_continue_a_reproducible_stream():
    def stream() -> list[str]:
        env = MixtureEnv(SPEC)
        ids = [env.reset(seed=5)[1]["task_id"]]
        return ids + [env.reset()[1]["task_id"] for _ in range(6)]

    first = stream()
    assert first == stream() and len(set(first)) == len(first)


def test_mixture_env_misuse_raises():
    with pytest.raises(ResetNeeded):
        MixtureEnv(WORDLE).step(JUNK)
    with pytest.raises(ConfigError, match="length"):
        MixtureEnv([{"id": WORDLE, "kwargs": {"length": 99}}])  # checked at construction
    with pytest.raises(ConfigError, match="not in the mixture"):
        MixtureEnv(WORDLE, ladders={"other": [{}]})
    with pytest.raises(ConfigError, match="level of"):
        MixtureEnv(WORDLE).reset(seed=0, options={"levels": {WORDLE: 1}})


def _play(vec, steps: int) -> tuple[list, list[list[tuple[str, str]]]]:
    """Step with solving, junk and guessing actions, so episodes end at different times.

    Returns the batches and, per env, the (env name, task id) of every episode it started.
    """
    obs, infos = vec.reset(seed=7)
    started = [[(i["env_name"], i["task_id"])] for i in infos]
    trace = [(obs, infos)]
    for t in range(steps):
        actions = []
        for i in range(vec.num_envs):
            kind = (i + t) % 3
            plan = vec.call_env(i, "oracle_actions") if kind == 0 else None
            actions.append(plan[-1] if plan else JUNK if kind == 1 else "<guess>crane</guess>")
        batch = vec.step(actions)
        trace.append((batch.observations, batch.rewards.tolist(), batch.infos))
        for i in np.flatnonzero(batch.terminated | batch.truncated):
            final = batch.infos[i]["final_info"]
            assert (final["env_name"], final["task_id"]) == started[i][-1]
            started[i].append((batch.infos[i]["env_name"], batch.infos[i]["task_id"]))
    return trace, started


def _check_groups(started: list[list[tuple[str, str]]], group_size: int) -> None:
    """Every member of a group starts the same (env, task) sequence."""
    for g in range(0, len(started), group_size):
        members = started[g : g + group_size]
        shortest = min(map(len, members))
        assert shortest >= 3
        assert all(m[:shortest] == members[0][:shortest] for m in members)


@pytest.mark.parametrize("backend", ["serial", "multiprocessing", "ray"])
def test_mixture_vector_is_deterministic_and_keeps_groups_on_every_backend(backend, request):
    if backend == "ray":
        request.getfixturevalue("ray_cluster")
    extra = {} if backend == "serial" else {"num_workers": 2}
    with textgyms.make_vec(SPEC, 8, backend=backend, group_size=4, **extra) as vec:
        assert vec.mixture == Mixture.parse(SPEC) and vec.spec is None
        trace, started = _play(vec, 14)
    with textgyms.make_vec(SPEC, 8, group_size=4) as ref:
        assert (trace, started) == _play(ref, 14)  # same batches as serial, byte for byte
    _check_groups(started, 4)
    names = {name for episodes in started for name, _ in episodes}
    assert names == {WORDLE, "wordle-6", ISO}  # every entry played


def test_make_vec_kwargs_are_defaults_that_entry_kwargs_override():
    spec = [WORDLE, {"id": WORDLE, "kwargs": {"max_guesses": 4}, "name": "short"}]
    mixture = Mixture.parse(spec)
    seeds = [next(s for s in range(100) if mixture.pick(s) == k) for k in (0, 1)]
    with textgyms.make_vec(spec, 2, max_guesses=8) as vec:
        _, infos = vec.reset(seed=seeds)
        got = {i["env_name"]: env.unwrapped.max_guesses for i, env in zip(infos, vec.envs)}
    assert got == {WORDLE: 8, "short": 4}


@pytest.mark.parametrize("backend", ["serial", "multiprocessing"])
def test_mixture_errors_raise_at_once(backend):
    with pytest.raises(ConfigError, match="length"):
        textgyms.make_vec([ISO, WORDLE], 2, backend=backend, length=99)
    with pytest.raises(ConfigError, match="unique names"):
        textgyms.make_vec(f"{WORDLE},{WORDLE}*3", 2, backend=backend)


def test_mixture_over_remote_servers_gives_serial_s_batches():
    """Each entry's sessions go to the servers serving it; the batches are serial's."""
    pytest.importorskip("openenv", reason="backend='remote' needs textgyms[serve]")
    from textgyms.server.process import ServerProcess

    spec = SPEC[0::2]  # Wordle and ISO at difficulty 1: one server each
    with (
        ServerProcess(WORDLE) as wordle,
        ServerProcess(ISO, {"difficulty": 1}) as iso,
    ):
        urls = {WORDLE: wordle.url, ISO: [iso.url]}
        with textgyms.make_vec(spec, 4, backend="remote", group_size=2, urls=urls) as vec:
            obs, infos = vec.reset(seed=7)
            trace = [(obs, infos)] + [vec.step([JUNK] * 4).infos for _ in range(6)]
        with textgyms.make_vec(spec, 4, group_size=2) as ref:
            obs, infos = ref.reset(seed=7)
            assert trace == [(obs, infos)] + [ref.step([JUNK] * 4).infos for _ in range(6)]
        seen = {i["env_id"] for step in trace[1:] for i in step} | {i["env_id"] for i in infos}
        assert seen == {WORDLE, ISO}
        with pytest.raises(ConfigError, match="urls="):
            textgyms.make_vec(spec, 2, backend="remote", urls=[wordle.url])
        with pytest.raises(ConfigError, match="serves"):  # ISO's server has other kwargs
            textgyms.make_vec(spec[1:], 2, backend="remote", urls={ISO: wordle.url})
