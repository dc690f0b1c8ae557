"""NetConfig's ``warm``: once a vector's worker has drawn a task ahead (``pregenerate``,
reset-ahead), it compiles and checks the task's starting network (``warm_pregenerated``), so an
agent's first tool step and a wrong submission's baseline find them done, and every result is
what it is without it."""

from __future__ import annotations

import gc

import gymnasium as gym
import pytest

from textgyms.envs.netconfig import bounded, checks, memo, ospf, sim, verify
from textgyms.envs.netconfig import env as netconfig_env
from textgyms.envs.netconfig.generate import FAMILIES

ENV_ID = "textgyms/NetConfig-v4"
ANSWERED = ("diagnosis", "analysis")  # graded on a JSON answer, not on checks
FAULTED = ("repair", "diagnosis")  # generation compiles the faulted starting network


def _clear() -> None:
    """Forget every compiled network and check result (a cold process, as far as a step sees)."""
    for cache in (memo.NETWORKS, memo.DERIVED, verify._RESULTS, verify._TASK_VALUES,
                  netconfig_env._TASKS):
        cache.clear()
    verify._values_of_equal.cache_clear()  # a task's derived values (its baseline among them)


def _wrong(task) -> str:
    """The reference with its first device's config cut to its first line, or a wrong answer."""
    if task.family in ANSWERED:
        return '<submit>{"device": "R9", "component": "x", "cause": "y"}</submit>'
    (first, text), *rest = task.reference
    sections = [(first, text.splitlines()[0]), *rest]
    return "<submit>\n" + "\n".join(f"! device {d}\n{t}" for d, t in sections) + "\n</submit>"


def _episode(env, seed: int, counts: dict[str, int]) -> tuple[list, list[dict[str, int]]]:
    """Reset, one tool step, a wrong submission: everything each returns, and the compiles
    and check runs (``counts``) of the tool step and of the submission."""
    out, seen = [env.reset(seed=seed)], []
    first = env.unwrapped.task.start[0][0]
    for action in (f'<show_ip_route device="{first}"/>', _wrong(env.unwrapped.task)):
        counts.clear()
        out.append(env.step(action))
        seen.append(dict(counts))
    return out, seen


@pytest.mark.parametrize("family", FAMILIES)
def test_a_task_drawn_ahead_is_compiled_and_checked_ahead_with_the_same_results(
        family, monkeypatch):
    counts: dict[str, int] = {}
    compile_, run = memo._compile, checks.run

    def counting_compile(*args, **kwargs):
        counts["compiles"] = counts.get("compiles", 0) + 1
        return compile_(*args, **kwargs)

    def counting_run(*args, **kwargs):
        counts["checks"] = counts.get("checks", 0) + 1
        return run(*args, **kwargs)

    monkeypatch.setattr(memo, "_compile", counting_compile)
    monkeypatch.setattr(checks, "run", counting_run)
    seed = 23
    _clear()
    expected, cold = _episode(gym.make(ENV_ID, family=family, difficulty="hard"), seed, counts)
    _clear()
    ahead = gym.make(ENV_ID, family=family, difficulty="hard")
    ahead.unwrapped.pregenerate(seed)
    assert ahead.unwrapped.warm_pregenerated()
    got, warm = _episode(ahead, seed, counts)
    assert got == expected
    # Cold, the first tool step compiles the starting network (unless generating a fault
    # did); drawn ahead, it was ready.
    assert cold[0] == ({} if family in FAULTED else {"compiles": 1}) and warm[0] == {}
    if family not in ANSWERED:
        assert expected[-1][-2] < 1.0  # a wrong answer (an answer that needs the baseline)
        # Cold, the submission checks the candidate and the starting network (its baseline);
        # drawn ahead, the candidate only.
        assert (cold[1], warm[1]) == ({"compiles": 1, "checks": 2}, {"compiles": 1, "checks": 1})


def first_looks_compiled_again(n_envs: int, episodes: int = 3) -> tuple[int, int]:
    """A worker's ``n_envs`` NetConfig envs (the families in turn) playing agent episodes in
    lockstep, as a vector steps them: each takes its first look, the worker draws every env's
    next task in the wait and then warms each, each submits a wrong answer, each resets to its
    drawn task and looks again. Returns (first looks that compiled their network again, first looks): the
    warmed networks a memo evicted before their episode began."""
    compile_ = memo._compile
    compiles = [0]

    def counting(*args, **kwargs):
        compiles[0] += 1
        return compile_(*args, **kwargs)

    envs = [gym.make(ENV_ID, family=FAMILIES[i % len(FAMILIES)], difficulty="medium").unwrapped
            for i in range(n_envs)]
    memo._compile = counting
    try:
        again = 0
        for i, env in enumerate(envs):
            env.reset(seed=1_000 * n_envs + i)
        for episode in range(1, episodes + 1):
            seeds = [1_000 * n_envs + i + 100_000 * episode for i in range(n_envs)]
            for env in envs:
                env.step(f'<show_ip_route device="{env.task.start[0][0]}"/>')
            for env, seed in zip(envs, seeds):
                env.pregenerate(seed)
            for env in envs:
                env.warm_pregenerated()
            for env in envs:
                env.step(_wrong(env.task))
            for env, seed in zip(envs, seeds):
                env.reset(seed=seed)
                compiles[0] = 0
                env.step(f'<show_ip_route device="{env.task.start[0][0]}"/>')
                again += compiles[0] > 0
    finally:
        memo._compile = compile_
    return again, n_envs * episodes


def test_a_worker_of_32_envs_keeps_every_warmed_network_until_its_episode():
    """The memos hold a worker's next episodes' starting networks while it runs 32 envs
    (up to about 40: docs/envs/netconfig.md); none is compiled twice."""
    _clear()
    assert first_looks_compiled_again(32) == (0, 96)


def test_a_worker_of_64_envs_keeps_every_warmed_network_too():
    """Past 64 distinct tasks in flight (32 envs' current and next) the memos grow with them
    (bounded.MemoShare): at fixed sizes 64 envs compiled 76 of 192 first looks again."""
    _clear()
    assert first_looks_compiled_again(64) == (0, 192)


def _sizes(in_flight: int) -> int:
    """The networks memo's size for ``in_flight`` distinct tasks."""
    return max(128, -(-128 * in_flight // bounded.TASKS_AT_BASE))


def test_the_memos_grow_with_the_distinct_tasks_in_flight_and_shrink_back():
    """Each env names the tasks it holds (its episode's, the one drawn ahead); the growing
    memos are sized for the
    distinct tasks all live envs name, until an env is closed or collected. A memo made
    without ``grows`` keeps its size."""
    n0 = bounded.tasks_in_flight()
    fixed = bounded.Memo(3)
    envs = [gym.make(ENV_ID, family="vlan", difficulty="easy").unwrapped for _ in range(96)]
    for i, env in enumerate(envs):
        env.reset(seed=9_000 + i)
    for i, env in enumerate(envs):
        env.pregenerate(19_000 + i)  # drawn ahead: each env names two tasks
    assert bounded.tasks_in_flight() == n0 + 192 <= bounded.sized_for()
    assert memo.NETWORKS.size == _sizes(bounded.sized_for()) >= 384 and fixed.size == 3
    # a compile's intermediate caches keep their sizes (grown, they cost the collector)
    assert ospf._SPF.size == 256 and memo.DERIVED.size == 128 and sim._FACTS.size == 512
    assert memo.PARSED.size == bounded._SHARED.size  # the parse memo and its registry in step
    for env in envs[:48]:
        env.close()
        env.close()  # a second close releases nothing more
    assert bounded.tasks_in_flight() == n0 + 96
    envs[0].reset(seed=59_000)  # an env used after its close names nothing
    assert bounded.tasks_in_flight() == n0 + 96
    del envs[:]
    gc.collect()  # the 48 envs never closed end their share when collected
    assert bounded.tasks_in_flight() == n0
    assert memo.NETWORKS.size == _sizes(n0)


def test_grpo_groups_on_one_seed_count_one_task():
    """128 envs in groups of 8 on one seed name 16 tasks: the memos keep their base sizes
    (sized per env, they would hold old tasks nobody asks for again)."""
    n0, before = bounded.tasks_in_flight(), bounded.sized_for()
    envs = [gym.make(ENV_ID, family="vlan", difficulty="easy").unwrapped for _ in range(128)]
    for i, env in enumerate(envs):
        env.reset(seed=29_000 + i // 8)
    assert bounded.tasks_in_flight() == n0 + 16
    for i, env in enumerate(envs):
        env.reset(seed=29_000 + i // 8)  # the same task again on each env: still 16
    assert bounded.tasks_in_flight() == n0 + 16
    assert bounded.sized_for() <= max(before, n0 + 16)  # not one per env
    assert memo.NETWORKS.size == _sizes(bounded.sized_for())
    for env in envs:
        env.close()
    assert bounded.tasks_in_flight() == n0


def test_an_env_names_only_the_tasks_it_holds():
    """Without reset-ahead an env holds its episode's task alone (lone episodes in a row do
    not grow the memos); a reset onto the task drawn ahead leaves that one task."""
    n0 = bounded.tasks_in_flight()
    envs = [gym.make(ENV_ID, family="vlan", difficulty="easy").unwrapped for _ in range(40)]
    for round_ in range(3):
        for i, env in enumerate(envs):
            env.reset(seed=89_000 + 100 * round_ + i)
    assert bounded.tasks_in_flight() == n0 + 40
    for i, env in enumerate(envs):
        env.pregenerate(99_000 + i)
    assert bounded.tasks_in_flight() == n0 + 80
    for i, env in enumerate(envs):
        env.reset(seed=99_000 + i)  # the kept task becomes the episode's
    assert bounded.tasks_in_flight() == n0 + 40
    # the memos stay sized for the most held at once until an env releases its share (they
    # would otherwise shrink at every reset and grow back at every pregenerate)
    assert bounded.sized_for() >= n0 + 80
    for env in envs:
        env.close()
    assert bounded.tasks_in_flight() == n0 == bounded.sized_for()


def test_a_memo_past_its_new_smaller_size_evicts_down_to_it():
    """When the tasks go, a grown memo sheds its oldest entries at its next store."""
    grown = bounded.Memo(4, grows=True)
    envs = [gym.make(ENV_ID, family="vlan", difficulty="easy").unwrapped
            for _ in range(bounded.TASKS_AT_BASE)]
    for i, env in enumerate(envs):
        env.reset(seed=39_000 + i)
        env.pregenerate(49_000 + i)
    big = grown.size
    assert big >= 8
    for k in range(big):
        grown.put(k, k)
    for env in envs:
        env.close()
    grown.put("new", 0)
    assert len(grown) == grown.size < big and grown._d.get("new") == 0


def test_a_pickled_env_holds_its_own_share_of_the_memos():
    """An unpickled copy names its own tasks (a finalizer does not travel with it)."""
    import pickle

    env = gym.make(ENV_ID).unwrapped
    env.reset(seed=987_653)
    n = bounded.tasks_in_flight()
    clone = pickle.loads(pickle.dumps(env))
    assert bounded.tasks_in_flight() == n  # the same task as its original
    clone.reset(seed=987_654)
    assert bounded.tasks_in_flight() == n + 1
    assert clone.step(f'<show_ip_route device="{clone.task.start[0][0]}"/>')[4]["error"] is None
    clone.close()
    env.close()
    assert bounded.tasks_in_flight() == n - 1


def test_set_tasks_at_base_resizes_every_growing_memo_at_once():
    """A process may keep its memos at their base sizes (a large number) or grow them
    sooner; the change applies now, and a count below 1 is refused."""
    envs = [gym.make(ENV_ID, family="vlan", difficulty="easy").unwrapped for _ in range(40)]
    for i, env in enumerate(envs):
        env.reset(seed=69_000 + i)
        env.pregenerate(79_000 + i)
    old = bounded.set_tasks_at_base(10**9)
    try:
        assert memo.NETWORKS.size == 128 and memo.PARSED.size == 2048
        bounded.set_tasks_at_base(8)
        assert memo.NETWORKS.size >= 128 * 80 // 8
        with pytest.raises(ValueError, match="at least 1"):
            bounded.set_tasks_at_base(0)
    finally:
        bounded.set_tasks_at_base(old)
        for env in envs:
            env.close()
    assert old == 64 and memo.NETWORKS.size == _sizes(bounded.tasks_in_flight())
