"""The success-rate curriculum: scripted outcome streams, and curriculum vectors end to end."""

from __future__ import annotations

import numpy as np
import pytest

import textgyms
from textgyms.curriculum import Curriculum, CurriculumVecEnv
from textgyms.errors import ConfigError

pytestmark = pytest.mark.usefixtures("deadline")

# Looked up, not spelled out: an id's version changes whenever its env does.
WORDLE, ISO = (
    next(i for i in textgyms.env_ids() if i.startswith(p))
    for p in ("textgyms/Wordle-", "textgyms/ISO20022-")
)
# A real Wordle ladder: more guesses, the standard game, then hard mode.
LADDER = [{"max_guesses": 8}, {"max_guesses": 6}, {"max_guesses": 6, "hard_mode": True}]
JUNK = "no tool call here"


def _levels_after(cur: Curriculum, name: str, stream: str) -> list[int]:
    """Record ``stream`` ('1' solved, '0' failed) and return the level after each episode."""
    out = []
    for c in stream:
        cur.record(name, c == "1")
        out.append(cur.levels[name])
    return out


def test_level_moves_up_then_down_on_scripted_streams():
    cur = Curriculum({WORDLE: LADDER}, window=4, promote=0.75, demote=0.25)
    # 3/4 solved promotes; the window restarts after a move; the top level is a ceiling.
    assert _levels_after(cur, WORDLE, "1101" + "1111" + "1111") == [0] * 3 + [1] * 4 + [2] * 5
    # The window slides: at the top it keeps 1111, so 0100 reaches 1/4 on its 4th outcome and
    # demotes; after 1010 (2/4 holds) one more failure makes the window 0100: demoted again.
    # The bottom level is a floor.
    stream = "0100" + "1010" + "0000" + "0000" + "0000"
    assert _levels_after(cur, WORDLE, stream) == [2] * 3 + [1] * 5 + [0] * 12
    assert [(name, level) for _, name, level in cur.moves] == [
        (WORDLE, 1),
        (WORDLE, 2),
        (WORDLE, 1),
        (WORDLE, 0),
    ]
    assert cur.metrics() == {f"curriculum/{WORDLE}/level": 0.0, f"curriculum/{WORDLE}/success": 0.0}


def test_envs_move_independently_and_the_same_stream_gives_the_same_moves():
    def run() -> Curriculum:
        cur = Curriculum({WORDLE: LADDER, ISO: [1, 2, 3, 4]}, window=3, start={ISO: 2})
        for t in range(30):
            cur.record(WORDLE, t % 5 != 0)  # 80 % solved: climbs
            cur.record(ISO, t % 6 == 0)  # 17 % solved: falls
            cur.record("textgyms/no-ladder", True)  # an env without a ladder: ignored
        return cur

    cur = run()
    assert cur.levels == {WORDLE: 2, ISO: 0}
    assert cur.ladders[ISO][0] == {"difficulty": 1}  # plain values are difficulty levels
    assert cur.moves == run().moves and cur.episodes == 60


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"ladders": {}}, "non-empty dict"),
        ({"ladders": {WORDLE: []}}, "non-empty list"),
        ({"ladders": {WORDLE: LADDER}, "window": 0}, "window"),
        ({"ladders": {WORDLE: LADDER}, "promote": 0.2, "demote": 0.5}, "demote < promote"),
        ({"ladders": {WORDLE: LADDER}, "start": {WORDLE: 3}}, "0..2"),
        ({"ladders": {WORDLE: LADDER}, "start": {"other": 0}}, "unknown curriculum env"),
        ({"ladders": {WORDLE: LADDER}, "record": "sometimes"}, "auto, manual"),
    ],
)
def test_bad_curricula_raise_config_error(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        Curriculum.parse(kwargs)


def test_parse_reads_json():
    cur = Curriculum.parse(f'{{"ladders": {{"{WORDLE}": [{{}}, {{"hard_mode": true}}]}}}}')
    assert cur.ladders == {WORDLE: ({}, {"hard_mode": True})} and cur.window == 32


def _policy(vec) -> list[str]:
    """Env 0 of each group solves at once; the others fail slowly (3 junk turns), so group
    members start their next episodes at different steps."""
    actions = []
    for i in range(vec.num_envs):
        actions.append(vec.call_env(i, "oracle_actions")[-1] if i % 2 == 0 else JUNK)
    return actions


@pytest.mark.parametrize("backend", ["serial", "multiprocessing"])
def test_group_members_share_task_and_level_while_levels_move(backend):
    # window=1: every solved episode promotes, every failure demotes: levels move all the time.
    cur = Curriculum({WORDLE: LADDER}, window=1, promote=1.0, demote=0.0)
    extra = {} if backend == "serial" else {"num_workers": 2}
    with textgyms.make_vec(
        WORDLE, 4, backend=backend, group_size=2, curriculum=cur, **extra
    ) as vec:
        assert isinstance(vec, CurriculumVecEnv) and vec.autoreset == "same_step"
        _, infos = vec.reset(seed=3)
        started = [[(i["task_id"], i["level"])] for i in infos]
        for _ in range(24):
            batch = vec.step(_policy(vec))
            for i in np.flatnonzero(batch.terminated | batch.truncated):
                info = batch.infos[i]
                assert (info["final_info"]["task_id"], info["final_info"]["level"]) == started[i][
                    -1
                ]
                started[i].append((info["task_id"], info["level"]))
                max_guesses = vec.call_env(int(i), "generate", np.random.default_rng(0)).max_guesses
                assert max_guesses == LADDER[info["level"]]["max_guesses"]  # the level's kwargs
    assert len(cur.moves) >= 4
    for g in (0, 2):
        fast, slow = started[g], started[g + 1]
        assert len(fast) > len(slow) >= 4
        assert slow == fast[: len(slow)]  # same tasks, same levels, however late
    assert {level for _, level in started[0]} >= {0, 1}


def test_curriculum_vector_raises_the_level_of_a_solved_env_only():
    cur = Curriculum({ISO: [1, 2]}, window=2)
    spec = [(ISO, {}, 3.0), {"id": WORDLE, "kwargs": {"max_guesses": 6}}]
    with textgyms.make_vec(spec, 4, curriculum=cur) as vec:
        obs, infos = vec.reset(seed=0)
        iso_levels = []
        for _ in range(12):  # ISO always solved (one turn), Wordle never
            actions = [
                vec.call_env(i, "oracle_actions")[-1] if info["env_id"] == ISO else JUNK
                for i, info in enumerate(infos)
            ]
            obs, _, _, _, infos = vec.step(actions)
            iso_levels += [i["level"] for i in infos if i["env_id"] == ISO]
    assert cur.levels == {ISO: 1} and [m[1:] for m in cur.moves] == [(ISO, 1)]
    assert iso_levels[0] == 0 and iso_levels[-1] == 1


def test_manual_mode_records_nothing_itself_and_resets_apply_levels():
    cur = Curriculum({WORDLE: LADDER}, window=1, record="manual")
    with textgyms.make_vec(WORDLE, 2, group_size=2, curriculum=cur) as vec:
        vec.reset(seed=0)
        for _ in range(4):
            vec.step([JUNK, JUNK])
        assert cur.episodes == 0 and cur.levels[WORDLE] == 0
        cur.record(WORDLE, True)
        _, infos = vec.reset(seed=1)
        assert [i["level"] for i in infos] == [1, 1]
        assert vec.call_env(0, "generate", np.random.default_rng(0)).max_guesses == 6


def test_curriculum_vector_refuses_settings_it_cannot_keep_deterministic():
    cur = Curriculum({WORDLE: LADDER})
    with pytest.raises(ConfigError, match="autoreset"):
        textgyms.make_vec(WORDLE, 2, curriculum=cur, autoreset="next_step")
    with pytest.raises(ConfigError, match="full batches"):
        textgyms.make_vec(WORDLE, 4, backend="multiprocessing", curriculum=cur, batch_size=2)
    with pytest.raises(ConfigError, match="not in the mixture"):
        textgyms.make_vec(ISO, 2, curriculum=cur)


def test_grpo_script_trains_on_a_mixture_with_a_curriculum(tmp_path):
    """``baselines/grpo.py --envs MIX --curriculum JSON`` logs per-env curves and levels."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import json

    from baselines import grpo

    ladder = {WORDLE: [{"max_guesses": 1}, {"max_guesses": 2}]}
    args = grpo.Args(
        envs=f"{WORDLE},{ISO}",
        curriculum=json.dumps({"ladders": ladder, "window": 2}),
        env_kwargs=json.dumps({"max_invalid": 1}),
        num_groups=3,
        group_size=2,
        steps=2,
        max_new_tokens=6,
        out=str(tmp_path / "run"),
    )
    grpo.main(args)
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    played = {k.split("/", 1)[1] for r in rows for k in r if k.startswith("success/")}
    assert played == {WORDLE, ISO}  # seeds 0..5 pick both envs
    for row in rows:
        assert row[f"curriculum/{WORDLE}/level"] == 0.0  # the untrained model solves nothing
        assert all(0.0 <= row[k] <= 1.0 for k in row if k.startswith(("success/", "score/")))
    assert (tmp_path / "run" / "training_envs.png").read_bytes()[:4] == b"\x89PNG"
