"""The task type of ``textgyms/Code-v0`` and what the datasets share: test encoding, the
public/hidden split of a test list, train/test splits by id, the on-disk index cache and the
sha256 check of upstream data files.

A test is a pair of JSON strings ``(args, expected)`` in the sandbox's tagged-JSON encoding
(:mod:`textgyms.sandbox.protocol`): ``args`` is the list of positional arguments, or the dict
of keyword arguments when the task calls its entry point by name.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textgyms.core import Task
from textgyms.datafiles import checked_digest
from textgyms.errors import DataError
from textgyms.sandbox.protocol import decode_value, encode_value

__all__ = ["CodeTask", "Test", "encode_test", "split_public", "in_split", "cache_dir",
           "load_cached", "save_cached", "checked_sha256", "SPLITS"]  # fmt: skip

Test = tuple[str, str]
SPLITS = ("train", "test", "all")
DATA_DIR = Path(__file__).with_name("data")
INDEX_VERSION = 3  # bump when the way an index is built changes (3: graded references)


@dataclass(frozen=True)
class CodeTask(Task):
    """One coding problem. ``description`` and ``signature`` are shown to the agent with the
    ``public`` tests; ``hidden`` tests and the ``reference`` solution never are."""

    dataset: str
    source_id: str
    difficulty: str
    entry: str
    by_name: bool
    description: str
    signature: str
    public: tuple[Test, ...]
    hidden: tuple[Test, ...]
    reference: str

    def args(self, test: Test) -> Any:
        """The decoded arguments of a test."""
        return decode_value(json.loads(test[0]))

    def expected(self, test: Test) -> Any:
        """The decoded expected output of a test."""
        return decode_value(json.loads(test[1]))


def encode_test(args: Any, expected: Any) -> Test:
    """A test as its two canonical JSON strings."""
    dump = json.dumps  # sort_keys would reorder dicts, whose order Python compares as equal
    return dump(encode_value(args), separators=(",", ":")), dump(
        encode_value(expected), separators=(",", ":")
    )


def split_public(tests: list[Test], max_hidden: int) -> tuple[tuple[Test, ...], tuple[Test, ...]]:
    """The first 1-3 tests are public, the rest hidden (all of them when only one exists),
    at most ``max_hidden`` of them, spread evenly over the list."""
    n = len(tests)
    k = 1 if n <= 4 else 2 if n <= 7 else 3
    public, hidden = tests[:k], tests[k:] or tests[:1]
    if len(hidden) > max_hidden:
        step = len(hidden) / max_hidden
        hidden = [hidden[int(i * step)] for i in range(max_hidden)]
    return tuple(public), tuple(hidden)


def in_split(key: str, split: str) -> bool:
    """Fixed train/test assignment by id: a fifth of the ids are test."""
    if split == "all":
        return True
    digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
    return (int.from_bytes(digest, "little") % 5 == 0) == (split == "test")


def cache_dir() -> Path:
    """``$TEXTGYMS_CACHE_DIR`` (default ``~/.cache/textgyms``) ``/code``."""
    root = os.environ.get("TEXTGYMS_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "textgyms"
    )
    return Path(root) / "code"


def load_cached(name: str, source_sha: str) -> list[dict[str, Any]] | None:
    """A cached index built from the source file with ``source_sha``, or None."""
    path = cache_dir() / f"{name}-v{INDEX_VERSION}-{source_sha[:16]}.json"
    try:
        with open(path, encoding="utf-8") as f:
            blob = json.load(f)
    except (OSError, ValueError):
        return None
    if blob.get("source_sha256") != source_sha or blob.get("version") != INDEX_VERSION:
        return None
    return blob["items"]


def save_cached(name: str, source_sha: str, items: list[dict[str, Any]]) -> None:
    """Write an index atomically (parallel workers may build it at the same time). A cache
    directory that cannot be written only costs a rebuild in the next process (warned)."""
    folder = cache_dir()
    path = folder / f"{name}-v{INDEX_VERSION}-{source_sha[:16]}.json"
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    blob = {"version": INDEX_VERSION, "source_sha256": source_sha, "items": items}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(blob), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        warnings.warn(f"cannot write the Code-v0 cache {path}: {exc}", RuntimeWarning, 2)


def checked_sha256(path: Path, name: str) -> str:
    """The sha256 of an upstream data file (installed by its own package), checked against
    its entry ``name`` in ``data/SHA256SUMS``."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read the upstream data file {path}: {exc}") from exc
    return checked_digest(data, DATA_DIR, name, f"upstream data file {path}, entry",
                          "install the pinned version of its package")
