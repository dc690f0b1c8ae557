"""Wordle's secret draw from PCG64's raw words is numpy's ``Generator.random()`` draw."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from textgyms.envs.wordle import generate
from textgyms.envs.wordle.generate import answer_pool, draw_index, draw_secret
from textgyms.seeding import Seeder, seeded_generator


def test_raw_uniform_is_checked_true_on_this_numpy() -> None:
    # The shortcut is what the benchmark measures; a numpy where it is off would still be
    # correct (the fallback), but the speed claims would not hold: make that visible.
    assert generate.RAW_UNIFORM


@pytest.mark.parametrize("n", [1, 7, 2315, 12_972])
def test_draw_index_equals_generator_random_over_many_seeds(n: int) -> None:
    seeder = Seeder()
    for seed in range(3000):
        ours = seeder.seed(seed)
        index = draw_index(ours, n)
        ref = seeded_generator(seed)
        assert index == int(ref.random() * n)
        # and the generator is left where Generator.random() leaves it
        assert ours.bit_generator.state == ref.bit_generator.state
        assert ours.random() == ref.random()


def test_draw_index_falls_back_for_other_generators() -> None:
    pool = answer_pool(5, "common", "train")
    for seed in range(200):
        mt = np.random.Generator(np.random.MT19937(seed))
        expected = pool[int(np.random.Generator(np.random.MT19937(seed)).random() * len(pool))]
        assert draw_secret(mt, pool) == expected


def test_draw_index_without_the_shortcut_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = [draw_index(seeded_generator(seed), 2315) for seed in range(500)]
    monkeypatch.setattr(generate, "RAW_UNIFORM", False)
    slow = [draw_index(seeded_generator(seed), 2315) for seed in range(500)]
    assert fast == slow


def test_make_task_builds_what_the_dataclass_builds() -> None:
    from textgyms.envs.wordle.generate import WordleTask, make_task

    for fields in [("crane", 5, 6, False, "common"), ("planet", 6, 8, True, "full")]:
        # a fresh one: make_task's cache may hold one with its task_id already cached
        built, ref = make_task.__wrapped__(*fields), WordleTask(*fields)
        assert built == ref and hash(built) == hash(ref) and repr(built) == repr(ref)
        assert built.__dict__ == ref.__dict__ and list(built.__dict__) == list(ref.__dict__)
        assert built.task_id == ref.task_id
        blob = f"WordleTask{fields!r}".encode()  # the task_id recipe, with the constructor
        assert built.task_id == hashlib.blake2b(blob, digest_size=8).hexdigest()
        assert built.to_json() == ref.to_json()
