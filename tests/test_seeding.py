"""The seed hash behind every ``reset(seed=...)`` stream is blake2b-256 of the seed."""

from __future__ import annotations

import hashlib

import numpy as np

from textgyms.seeding import Seeder, _seed_digest, seeded_generator


def test_seed_digest_is_blake2b_256_of_the_seed_bytes() -> None:
    seeds = [*range(2000), 2**31 - 1, 2**64 + 5, 2**128 - 1, np.int64(77), np.uint32(9)]
    for seed in seeds:
        data = int(seed).to_bytes(16, "little")
        assert _seed_digest(seed) == hashlib.blake2b(data, digest_size=32).digest()


def test_seeded_generator_state_is_the_hash() -> None:
    for seed in (0, 1, 123_456_789):
        digest = hashlib.blake2b(seed.to_bytes(16, "little"), digest_size=32).digest()
        state = seeded_generator(seed).bit_generator.state["state"]
        assert state["state"] == int.from_bytes(digest[:16], "little")
        assert state["inc"] == int.from_bytes(digest[16:], "little") | 1
        assert Seeder().seed(seed).bit_generator.state == seeded_generator(seed).bit_generator.state
