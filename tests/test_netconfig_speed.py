"""benchmarks/netconfig_speed.py: an agent episode's timings go to the right kinds (the first
tool step apart from the later ones) and the table names every kind. No timing assertions."""

from __future__ import annotations

import gymnasium as gym
import pytest
from support import load_benchmark


@pytest.fixture(scope="module")
def speed():
    """The benchmark module."""
    yield from load_benchmark("netconfig_speed")


def test_an_agent_episode_splits_its_tool_steps(speed):
    env = gym.make("textgyms/NetConfig-v4", family="routing", difficulty="easy").unwrapped
    out: dict[str, list[float]] = {k: [] for k in speed.KINDS}
    speed._agent(env, 7, out)
    assert len(out["tool"]) == 3 and len(out["agent"]) == 1
    assert out["first_tool"] == out["tool"][:1]  # the step that compiles the network
    assert out["later_tool"] == out["tool"][1:]
    assert out["agent"][0] >= sum(out["tool"])  # the episode includes its tool steps
    assert not any(out[k] for k in ("reset", "submit", "wrong", "group", "episode",
                                    "group_tool", "group_submit", "group_agent"))


@pytest.mark.parametrize("family", ["routing", "acl", "bgp", "addressing"])
def test_an_edit_episode_times_its_edits_and_the_look_after_them(speed, family):
    """Two edits of the first device (a description, then its reference's last section), the
    look after them (the edited candidate compiled), the episode; nothing else."""
    env = gym.make("textgyms/NetConfig-v4", family=family, difficulty="hard").unwrapped
    out: dict[str, list[float]] = {k: [] for k in speed.KINDS}
    speed._edit_agent(env, 7, out)
    assert len(out["edit"]) == 2 and len(out["after_edit"]) == 1 and len(out["edit_agent"]) == 1
    assert out["edit_agent"][0] >= sum(out["edit"]) + out["after_edit"][0]
    assert not any(out[k] for k in speed.KINDS if k not in ("edit", "after_edit", "edit_agent"))
    dev = env.task.start[0][0]
    assert env.state.edited == {dev}  # (the episode ended: its state is the edited one)
    first, last = speed._edits(env.task)
    assert first.startswith(f'<apply_config device="{dev}">interface ')
    section = last.split(">", 1)[1].split("</", 1)[0].splitlines()
    assert section[0] in dict(env.task.reference)[dev].splitlines()
    assert all(line.startswith(" ") for line in section[1:])


@pytest.mark.parametrize("family", ["diagnosis", "analysis"])
def test_an_edit_episode_skips_the_families_graded_on_an_answer(speed, family):
    env = gym.make("textgyms/NetConfig-v4", family=family, difficulty="easy").unwrapped
    out: dict[str, list[float]] = {k: [] for k in speed.KINDS}
    speed._edit_agent(env, 7, out)
    assert speed._edits(env.task) == [] and not any(out.values())


def test_a_group_members_episode_goes_to_the_group_kinds(speed):
    env = gym.make("textgyms/NetConfig-v4", family="routing", difficulty="easy").unwrapped
    out: dict[str, list[float]] = {k: [] for k in speed.KINDS}
    speed._agent(env, 7, out, member=3)
    assert len(out["group_tool"]) == 3 and len(out["group_submit"]) == 1
    assert out["group_agent"][0] >= sum(out["group_tool"]) + out["group_submit"][0]
    assert not any(out[k] for k in ("tool", "first_tool", "later_tool", "agent", "wrong"))


@pytest.mark.parametrize("family", ["routing", "diagnosis"])
def test_each_group_member_submits_its_own_answer(speed, family):
    """Member 0 drops the reference's last line (the lone episode's answer); the members of
    a group submit pairwise different texts, each of them an answer the env scores."""
    env = gym.make("textgyms/NetConfig-v4", family=family, difficulty="easy").unwrapped
    env.reset(seed=11)
    answers = [speed._wrong(env.task, m) for m in range(speed.GROUP)]
    assert answers[0] == speed._wrong(env.task) and len(set(answers)) == speed.GROUP
    if family == "routing":
        (first, text), *_rest = env.task.reference
        assert "\n".join(text.splitlines()[:-1]) in answers[0]
    for answer in answers[:3]:
        env.reset(seed=11)
        _obs, _reward, term, _tr, info = env.step(answer)
        assert term and info["error"] in (None, "wrong") and 0.0 <= info["score"] <= 1.0


def test_the_table_has_a_row_per_kind_and_judges_only_the_steps(speed):
    versions = (*speed.BASELINES, ("new", speed.NEW_ID))
    res = {"versions": {c: {"id": i, "gc_share": 0.25, "tracked": 123_456,
                            **{k: {"per_cpu_s": 100.0} for k in speed.KINDS}}
                        for c, i in versions},
           "ratios": {c: {**{k: 5.0 for k in speed.KINDS}, "tool": 1.0, "pass": False}
                      for c, _i in speed.BASELINES}}
    table = speed.render(res)
    assert len(table.splitlines()) == 2 + len(speed.KINDS) + 2 + 1
    assert "| share of the CPU time in the cyclic garbage collector | 25% | 25% | 25% | | | |" \
        in table
    assert "| objects the collector tracks after a round | 123,456 | 123,456 | 123,456 |" in table
    assert "| first tool steps (both versions compile the starting network) |" in table
    assert "| second and third tool steps |" in table
    assert table.splitlines()[-1].endswith("FAIL | FAIL | |")
    assert all(row.endswith("x |  |") for row in table.splitlines()[2:-3])  # no pairs: empty
    assert set(speed.STEPS) <= set(speed.KINDS) and "first_tool" not in speed.STEPS
    assert {"edit", "after_edit"} <= set(speed.STEPS)  # edits are steps too


def test_a_worker_reports_the_collectors_share_and_heap(speed, monkeypatch):
    """One round on two cases: the collector's share of the round's CPU time (a fraction:
    with the memos warm from earlier tests a round may trigger no collection) and the
    objects it tracks afterwards, and its callback removed."""
    import gc

    from textgyms.envs.netconfig import generate

    monkeypatch.setattr(generate, "FAMILIES", ("routing",))
    monkeypatch.setattr(generate, "LEVELS", ("easy", "medium"))
    callbacks = list(gc.callbacks)
    res = speed.worker("textgyms/NetConfig-v4", 1)
    assert res["cases"] == 2 and len(res["gc_share"]) == 1 and 0.0 <= res["gc_share"][0] < 1.0
    assert res["tracked"] > 10_000 and gc.callbacks == callbacks
    summary = speed._summary([res, res])
    assert summary["gc_share"] == res["gc_share"][0] and summary["tracked"] == res["tracked"]


def test_the_collector_clock_counts_collections_only_while_it_runs(speed):
    import gc

    clock = speed._CollectorClock()
    gc.collect()
    ticked = clock.cpu
    clock.stop()
    gc.collect()
    assert ticked > 0.0 and clock.cpu == ticked


@pytest.mark.parametrize("ahead", [False, True])
def test_a_reset_ahead_episode_times_its_wait_apart(speed, ahead):
    env = gym.make("textgyms/NetConfig-v4", family="routing", difficulty="easy").unwrapped
    out: dict[str, list[float]] = {k: [] for k in speed.AHEAD_KINDS}
    speed._ahead_episode(env, 7, ahead, out)
    assert len(out["tool"]) == 3 and out["first_tool"] == out["tool"][:1]
    assert len(out["submit"]) == len(out["agent"]) == 1
    assert out["agent"][0] >= sum(out["tool"]) + out["submit"][0]
    assert len(out["wait"]) == (1 if ahead else 0)  # the wait is not in the episode's time


def test_the_reset_ahead_table_compares_the_two_ways(speed):
    cold = {"first_tool": 100.0, "tool": 300.0, "submit": 50.0, "agent": 20.0}
    table = speed.render_ahead({"cold": cold, "ahead": {**{k: 2 * v for k, v in cold.items()},
                                                        "wait": 40.0}})
    assert "| first tool steps | 100 | 200 | 2.0x |" in table
    assert "| drawing and warming in the wait, per CPU-second | | 40 | |" in table
    assert len(table.splitlines()) == 2 + 4 + 1


def test_paired_ratios_divide_round_by_round_and_bound_the_median(speed):
    """Each round's ratio is new's rate over old's in that round (drift that slows both in
    one round cancels); the interval is the 2nd and 8th of 9 ratios, none below 6 rounds."""
    def parts(rates):
        return [{k: {"rates": [r]} for k in speed.KINDS} for r in rates]

    old = [100.0, 50.0, 200.0, 100.0, 80.0, 120.0, 60.0, 90.0, 110.0]  # a drifting machine
    factors = [3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0]
    new = [o * f for o, f in zip(old, factors)]
    got = speed.paired_ratios(parts(new), parts(old))
    assert got["wrong"] == pytest.approx([5.0, 3.5, 6.5])
    assert speed._interval(got["wrong"]) == "5.0x (3.5-6.5x)"
    few = speed.paired_ratios(parts(new[:5]), parts(old[:5]))
    assert few["reset"] == [4.0, None, None] and speed._interval(few["reset"]) == "4.0x"
    res = {"versions": {c: {"id": i, "gc_share": 0.1, "tracked": 1,
                            **{k: {"per_cpu_s": 100.0} for k in speed.KINDS}}
                        for c, i in (*speed.BASELINES, ("new", speed.NEW_ID))},
           "ratios": {c: {**{k: 5.0 for k in speed.KINDS}, "pass": True}
                      for c, _i in speed.BASELINES},
           "paired": {speed.BASELINES[0][0]: got}}
    row = next(r for r in speed.render(res).splitlines() if r.startswith("| wrong submission"))
    assert row.endswith("| 5.0x | 5.0x | 5.0x (3.5-6.5x) |")
