"""Seeding: the stream ``reset(seed=s)`` gives an env's ``np_random``.

A seed is hashed (blake2b, 256 bits) into a PCG64 state and increment, so the same seed gives
the same stream in any process and backend, and nearby seeds give unrelated streams.
:func:`seeded_generator` builds such a generator; :class:`Seeder` re-seeds one generator in
place, which is what every ``TextEnv.reset(seed=...)`` does (building a fresh one costs more
than the rest of a Wordle reset).
"""

from __future__ import annotations

import hashlib
import sys
from typing import Any

import numpy as np

from textgyms.errors import ConfigError

__all__ = ["Seeder", "seeded_generator"]


class Seeder:
    """One env's PCG64 and Generator, re-seeded in place by every ``reset(seed=...)``.

    ``seed(s)`` leaves the generator exactly where :func:`seeded_generator` starts. Building a
    PCG64 and a Generator per reset, or even assigning ``PCG64.state`` (a dict parsed into four
    numpy integers), costs more than the rest of a Wordle reset, so where numpy keeps the
    128-bit state and increment in the native little-endian layout, the 32 hash bytes are
    written straight into that state: they already are the little-endian state and increment.
    The layout is checked once against the ``state`` setter when the seeder is built; anywhere
    it differs, the setter is used. A seeder pickles as a new one in the same state (memory
    views do not pickle).
    """

    __slots__ = ("bits", "generator", "_words", "_buffer", "_state")

    def __init__(self) -> None:
        self.bits = np.random.PCG64(0)
        self.generator = np.random.Generator(self.bits)
        inner = {"state": 0, "inc": 1}
        self._state = {"bit_generator": "PCG64", "state": inner, "has_uint32": 0, "uinteger": 0}
        self._words = self._buffer = None
        views = _native_views(self.bits)
        if views is not None and self._writes_like_setter(*views):
            self._words, self._buffer = views

    def __reduce__(self) -> tuple[Any, tuple]:
        return _restored, (self.bits.state,)

    def seed(self, seed: int) -> np.random.Generator:
        """The generator, seeded with ``seed`` (validated as :func:`seeded_generator` does)."""
        digest = _seed_digest(seed)
        words = self._words
        if words is None:
            inner = self._state["state"]
            inner["state"] = int.from_bytes(digest[:16], "little")
            inner["inc"] = int.from_bytes(digest[16:], "little") | 1
            self.bits.state = self._state
        else:
            words[:] = digest
            words[16] |= 1  # the increment is odd (its lowest bit is the first byte's)
            self._buffer[:] = _NO_BUFFERED_UINT32
        return self.generator

    def _writes_like_setter(self, words: memoryview, buffer: memoryview) -> bool:
        """Whether writing into ``words`` and ``buffer`` sets the state the setter sets."""
        digest = _seed_digest(0xC0FFEE)
        expected = seeded_generator(0xC0FFEE).bit_generator.state
        self.bits.state = {**self._state, "has_uint32": 1, "uinteger": 7}
        words[:] = digest
        words[16] |= 1
        buffer[:] = _NO_BUFFERED_UINT32
        return self.bits.state == expected


def _restored(state: dict[str, Any]) -> Seeder:
    """A new seeder whose generator is in ``state`` (unpickling a seeder)."""
    seeder = Seeder()
    seeder.bits.state = state
    return seeder


# has_uint32 = 0 and uinteger = 0: no half-used 64-bit draw is pending.
_NO_BUFFERED_UINT32 = bytes(8)


def _native_views(bits: np.random.PCG64) -> tuple[memoryview, memoryview] | None:
    """Writable views of a PCG64's 32 bytes of state and increment and of the 8 bytes after
    its state pointer (``has_uint32``, ``uinteger``), where numpy's C layout allows; else None.

    numpy's ``pcg64_state`` is ``{pcg64_random_t *pcg_state; int has_uint32; uint32_t
    uinteger;}``; whether the 128-bit words are native integers is what the caller checks.
    """
    if sys.byteorder != "little":
        return None
    try:
        import ctypes

        address = bits.ctypes.state_address
        pointer = ctypes.c_void_p.from_address(address).value
        words = (ctypes.c_ubyte * 32).from_address(pointer)
        buffer = (ctypes.c_ubyte * 8).from_address(address + ctypes.sizeof(ctypes.c_void_p))
        return memoryview(words).cast("B"), memoryview(buffer).cast("B")
    except Exception:  # no ctypes, or a numpy without this interface: use the setter
        return None


def _seed_digest(seed: int) -> bytes:
    """The 256-bit blake2b hash of a validated seed: PCG64's state (first 16 bytes) and
    increment (last 16, lowest bit then set), both little-endian."""
    if type(seed) is not int and (isinstance(seed, bool) or not isinstance(seed, np.integer)):
        raise ConfigError(f"seed must be a non-negative int, got {seed!r}")
    if not 0 <= seed < _SEED_LIMIT:
        raise ConfigError(f"seed must be an int in [0, 2**128), got {seed!r}")
    # A copy of a fresh hasher, then update: the same digest as blake2b(data, digest_size=32)
    # at about half the cost (the constructor parses and sets up its parameter block per call).
    hasher = _BLAKE2B_256.copy()
    hasher.update((seed if type(seed) is int else int(seed)).to_bytes(16, "little"))
    return hasher.digest()


_BLAKE2B_256 = hashlib.blake2b(digest_size=32)  # never updated: only copied
_SEED_LIMIT = 1 << 128  # seeds are 16 bytes


def _seed_words(seed: int) -> tuple[int, int]:
    """PCG64 (state, increment) for ``seed``: the 256-bit blake2b hash of the seed."""
    digest = _seed_digest(seed)
    return int.from_bytes(digest[:16], "little"), int.from_bytes(digest[16:], "little") | 1


def seeded_generator(seed: int) -> np.random.Generator:
    """The stream ``reset(seed=seed)`` gives ``np_random``: PCG64 whose 256 bits of state and
    increment are the blake2b hash of the seed.

    Gymnasium's ``seeding.np_random`` runs a SeedSequence (about 20 µs, most of a reset);
    this is a few µs and, like it, gives the same stream for the same seed in any process.
    """
    state, inc = _seed_words(seed)
    bits = np.random.PCG64(0)
    bits.state = {
        "bit_generator": "PCG64",
        "state": {"state": state, "inc": inc},
        "has_uint32": 0,
        "uinteger": 0,
    }
    return np.random.Generator(bits)
