"""Index corruption and replacement under live readers, shared by the tests and the stress loop.

``tests/test_index_replace.py`` runs these a few times in ``make test``;
``scripts/index_replace_stress.py`` runs them hundreds of times in a row. Every check here
corrupts only files that no live reader maps: a copy, or a file renamed over the original (a
new inode), because rewriting a memory-mapped file in place is what kills a reader with SIGBUS.

Run as ``python tests/index_replace.py reader NAME PATH``, this module is the live reader: it
opens the index at PATH and answers its parent's ``ping`` lines with ``ok N`` (N searches done,
every one equal to what the index answered when it opened), ``reopen`` by opening PATH anew and
checking the same answers, ``quit`` by exiting.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from textgyms.envs.search.backends import Doc, index_path, open_backend
from textgyms.envs.search.backends.fts5 import FTS5Backend
from textgyms.envs.search.backends.tantivy_backend import TantivyBackend
from textgyms.errors import IndexCorruptError

CLASSES = {"tantivy": TantivyBackend, "fts5": FTS5Backend}
QUERIES = [f"word{i} topic{i % 7}" for i in range(0, 300, 13)]
# The file an index opens first: replacing it with garbage makes the whole index unreadable.
ENTRY = {"tantivy": "meta.json", "fts5": "index.sqlite3"}


def docs(n: int = 300) -> list[Doc]:
    """A small corpus whose searches have distinct, stable answers."""
    return [Doc(i, "wiki.example", f"T{i}", f"word{i} topic{i % 7} common") for i in range(n)]


def answers(backend) -> list[tuple[list[int], int]]:
    """Every query's results straight from the index (no results memo)."""
    return [tuple(backend.search_uncached(q, 5)) for q in QUERIES]


def corrupt_a_copy(name: str, root: Path) -> str:
    """Build an index, corrupt a copy of it in place (nothing maps the copy) and return the
    ``IndexCorruptError`` message that opening the copy raised."""
    built = index_path(root, "k", name)
    open_backend(name, docs(), built).close()
    copy = root / "copy"
    shutil.copytree(built, copy)
    for f in copy.iterdir():
        if f.name != "COMPLETE":
            f.write_bytes(b"\x00garbage" * 10)
    try:
        backend = open_backend(name, None, copy)
        answers(backend)
    except IndexCorruptError as exc:
        return str(exc)
    finally:
        shutil.rmtree(copy)
    raise AssertionError(f"a corrupt {name} index opened without IndexCorruptError")


def corrupt_by_rename(name: str, path: Path) -> None:
    """Make the index at ``path`` unreadable the way a reader survives: a garbage file renamed
    over its entry file (a live reader keeps the old inode)."""
    tmp = path / (ENTRY[name] + ".garbage")
    tmp.write_bytes(b"\x00garbage" * 100)
    os.replace(tmp, path / ENTRY[name])


class Reader:
    """The live reader, in its own process."""

    def __init__(self, name: str, path: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "reader", name, str(path)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            cwd=Path(__file__).resolve().parents[1],
        )
        assert self.ask("ping").startswith("ok"), "the reader did not start"

    def ask(self, line: str) -> str:
        """Send one command and return the reader's reply ('' if it died)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def close(self) -> int:
        """Ask the reader to quit; its exit code (negative: killed by that signal)."""
        if self.proc.poll() is None:
            self.ask("quit")
        return self.proc.wait(timeout=60)


def replace_under_live_reader(name: str, root: Path, rounds: int) -> list[str]:
    """``rounds`` times: corrupt the index a live reader has open, repair it from this process
    (a new index renamed into place), and ping the reader. Returns the reader's replies; every
    one is ``ok N`` if the reader survived and kept getting its original answers."""
    path = index_path(root, "k", name)
    open_backend(name, docs(), path).close()
    reader, replies = Reader(name, path), []
    try:
        for _ in range(rounds):
            corrupt_by_rename(name, path)
            open_backend(name, docs(), path, repair=True).close()
            replies.append(reader.ask("ping"))
        replies.append(reader.ask("reopen"))
    finally:
        replies.append(f"exit {reader.close()}")
    return replies


def _serve(name: str, path: Path) -> None:
    """The reader's loop (see the module docstring)."""
    backend = CLASSES[name].open(path)
    expected, done = answers(backend), 0
    for line in sys.stdin:
        command = line.strip()
        if command == "quit":
            print("bye", flush=True)
            return
        if command == "reopen":
            backend.close()
            backend = CLASSES[name].open(path)
        ok = all(answers(backend) == expected for _ in range(3))
        done += 3 * len(QUERIES)
        print(f"ok {done}" if ok else "different answers", flush=True)


if __name__ == "__main__":
    _serve(sys.argv[2], Path(sys.argv[3]))
