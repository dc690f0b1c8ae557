"""Imports from directories a child may read but not reach by their path.

As root, a child in ``kernel`` mode drops to ``nobody``. Where the interpreter is installed
under a directory ``nobody`` cannot enter (pyenv's ``/root/.pyenv``: ``/root`` is mode 700),
every stdlib module the zygote did not pre-import is then missing: ``import graphlib`` raises
ModuleNotFoundError, and a correct solution fails its tests. Landlock would let the child
read those files; only the way to them is closed. So the zygote, still root, opens each such
directory of ``sys.path`` once (:func:`install`), and its children, as ``nobody``, look
modules up relative to those descriptors (``openat``), which needs search permission only
on the directories below them. Landlock still decides what may be read: a descriptor
reaches nothing beneath it or above it that the ruleset does not allow.

The finder sits last on ``sys.meta_path``: the usual path finder, which fails on these
directories, is asked first, so nothing changes where the paths are reachable.
"""

from __future__ import annotations

import _imp
import fcntl
import os
import stat
import sys
from collections.abc import Iterable, Sequence
from importlib.machinery import (
    EXTENSION_SUFFIXES,
    ExtensionFileLoader,
    ModuleSpec,
    SourceFileLoader,
)
from importlib.util import spec_from_file_location
from types import ModuleType

__all__ = ["DirFinder", "install", "reachable", "served", "unreachable_entries"]

LOW_FD = 10  # the descriptors go above those a child rewires (0-5)


def reachable(path: str) -> bool:
    """Whether a process of another user with no groups (``nobody``) may search every
    directory on the way to ``path`` (the "other" execute bit of each, the path's own
    included)."""
    here = os.path.abspath(path)
    while True:
        try:
            mode = os.stat(here).st_mode
        except OSError:
            return False
        if not mode & stat.S_IXOTH:
            return False
        if here == "/":
            return True
        here = os.path.dirname(here)


def unreachable_entries(entries: Iterable[str], readable: Sequence[str]) -> list[str]:
    """The directories of ``entries`` (``sys.path``) that lie beneath a Landlock read path in
    ``readable`` and that ``nobody`` cannot reach: the ones :class:`DirFinder` serves (one
    beneath another, as ``lib-dynload`` beneath the stdlib, is served through the outer)."""
    found: set[str] = set()
    for entry in entries:
        real = os.path.realpath(entry or ".")
        if os.path.isdir(real) and not reachable(real) and any(_within(real, r) for r in readable):
            found.add(real)
    return sorted(d for d in found if not any(d != o and _within(d, o) for o in found))


def served(entries: Sequence[str], readable: Sequence[str]) -> list[str]:
    """The directories :func:`install` opens: the unreachable ones of ``entries``
    (``sys.path``) beneath ``readable``, and the unreachable directories of ``readable``
    itself (an allowed package's, whose submodules are looked up in it)."""
    return unreachable_entries([*entries, *readable], readable)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class _Roots:
    """Open directories by their real path: which one holds a path, and at what relative
    path beneath it."""

    def __init__(self, fds: dict[str, int]) -> None:
        self.fds = fds

    def locate(self, path: str) -> tuple[int, str] | None:
        for root, fd in self.fds.items():
            if path == root:
                return fd, "."
            if path.startswith(root + "/"):
                return fd, path[len(root) + 1:]
        return None

    def read(self, path: str) -> bytes | None:
        """The bytes of the file at ``path``, read through its root; None if no root holds
        it."""
        where = self.locate(path)
        if where is None:
            return None
        fd = os.open(where[1], os.O_RDONLY | os.O_CLOEXEC, dir_fd=where[0])
        with os.fdopen(fd, "rb") as fh:
            return fh.read()


class _SourceLoader(SourceFileLoader):
    """A source module under an open root: the file and its cached bytecode are read
    through the root's descriptor (``__file__`` stays the real path, for tracebacks)."""

    def __init__(self, fullname: str, path: str, roots: _Roots) -> None:
        super().__init__(fullname, path)
        self.roots = roots

    def get_data(self, path: str) -> bytes:
        data = self.roots.read(path)
        return super().get_data(path) if data is None else data

    def path_stats(self, path: str) -> dict[str, float]:
        where = self.roots.locate(path)
        if where is None:
            return super().path_stats(path)
        st = os.stat(where[1], dir_fd=where[0])
        return {"mtime": st.st_mtime, "size": st.st_size}


class _ExtensionLoader(ExtensionFileLoader):
    """A C extension under an open root, loaded from ``/proc/self/fd``: the dynamic loader
    opens that link to the file itself, not by the path ``nobody`` cannot walk."""

    def __init__(self, fullname: str, path: str, roots: _Roots) -> None:
        super().__init__(fullname, path)
        self.roots = roots

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        where = self.roots.locate(self.path)
        if where is None:
            return super().create_module(spec)
        # Left open: the dynamic loader knows a library by the name it was opened as, and a
        # later extension opened as the same /proc/self/fd/N would be taken for this one.
        fd = os.open(where[1], os.O_RDONLY | os.O_CLOEXEC, dir_fd=where[0])
        return _imp.create_dynamic(ModuleSpec(spec.name, self, origin=f"/proc/self/fd/{fd}"))


class DirFinder:
    """A meta path finder for modules beneath directories opened by their real path (see
    the module docstring)."""

    def __init__(self, fds: dict[str, int]) -> None:
        self.roots = _Roots(fds)

    @property
    def fds(self) -> list[int]:
        """The descriptors a child must keep open."""
        return sorted(self.roots.fds.values())

    def _exists(self, where: tuple[int, str], name: str) -> bool:
        try:
            return stat.S_ISREG(os.stat(os.path.join(where[1], name), dir_fd=where[0]).st_mode)
        except OSError:
            return False

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        """The spec of ``fullname`` in the first directory of ``path`` (``sys.path`` for a
        top-level module) that lies under an open root, or None."""
        name = fullname.rpartition(".")[2]
        for entry in sys.path if path is None else path:
            real = os.path.realpath(entry or ".")
            where = self.roots.locate(real)
            if where is None:
                continue
            if self._exists(where, os.path.join(name, "__init__.py")):
                pkg = os.path.join(real, name)
                init = os.path.join(pkg, "__init__.py")
                return spec_from_file_location(
                    fullname, init, loader=_SourceLoader(fullname, init, self.roots),
                    submodule_search_locations=[pkg])
            if self._exists(where, name + ".py"):
                file = os.path.join(real, name + ".py")
                return spec_from_file_location(
                    fullname, file, loader=_SourceLoader(fullname, file, self.roots))
            for suffix in EXTENSION_SUFFIXES:
                if self._exists(where, name + suffix):
                    file = os.path.join(real, name + suffix)
                    return spec_from_file_location(
                        fullname, file, loader=_ExtensionLoader(fullname, file, self.roots))
        return None

    def invalidate_caches(self) -> None:
        """Nothing is cached (``importlib.invalidate_caches`` calls this)."""


def install(readable: Sequence[str]) -> DirFinder | None:
    """In the zygote, while still root: open the unreachable directories of ``sys.path``
    beneath ``readable`` (the Landlock read paths), and the unreachable read paths that are
    directories themselves (numpy's package: its submodules that ``import numpy`` leaves
    to first use, ``numpy.random``, ``numpy.fft``, ..., are looked up in it), and append a
    :class:`DirFinder` for them to ``sys.meta_path``; None (nothing installed) where every
    directory is reachable."""
    fds: dict[str, int] = {}
    for real in served(sys.path, readable):
        try:
            fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:  # (root refused too: a network file system) nothing to serve it with
            continue
        fds[real] = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, LOW_FD)
        os.close(fd)
    if not fds:
        return None
    finder = DirFinder(fds)
    sys.meta_path.append(finder)
    return finder
