"""The zygote: the process that forks the sandbox children, and what a child does before the
agent's code runs.

A child inherits the memory of the process that forks it. The server has seen earlier requests
(their inputs and code) and replies (their outputs): freed or not, those bytes are in its heap,
and Python frames and ctypes can reach them. So children are forked by a zygote that never
receives anything but one-byte commands (``S``: hand a child over; ``K<pid>``: kill one). It
hands each child's pipes to the server with ``SCM_RIGHTS`` and reports exit statuses
(``X<pid>,<status>``).

Two ways to run it (see :mod:`textgyms.sandbox.server`):

* ``kernel`` (and ``unsafe``): a fresh interpreter the server starts at start-up, before any
  request, in the server's namespaces (:func:`start`; not a fork of the server: a smaller
  footprint makes every fork and every child's exit cheaper); it keeps one child forked ahead,
  and each child confines itself with :func:`textgyms.sandbox.confine.confine`.
* ``bwrap``: started by :mod:`textgyms.sandbox.bwrap` as PID 1 of its own bubblewrap sandbox
  (:func:`boot`), where the kernel ignores the signals its children send it, and not dumpable
  (no child may ptrace it or read its memory). Without seccomp a child can fork and signal, so
  the zygote forks a child only when asked, never one ahead (no idle child for the running one
  to tamper with), and when a child exits it kills every other process of the sandbox and
  reaps them before it reports the exit: nothing of a run survives into the next.

This module runs inside the bubblewrap sandbox, where it is loaded from source sent over a pipe:
it may import only the standard library and the sandbox's ``child``, ``confine`` and
``protocol`` modules.
"""

from __future__ import annotations

import gc
import importlib
import os
import select
import signal
import socket
import sys
import types
from typing import Any, NamedTuple

from textgyms.sandbox import child, confine, protocol, reach

# Imported once so that every child starts with them loaded (no file access, no compile).
# The stdlib list follows what the CodeI/O reference solutions import. Left out: threading
# and what imports it (queue, concurrent.futures, subprocess, multiprocessing). Importing
# threading registers a hook that runs in every forked child, and its first writes to the
# zygote's heap cost each child about a hundred copy-on-write page faults, some 5% of a
# scored submission's CPU. Few solutions import these modules: 19 of the 3,002 CodeI/O
# references do. A child that does imports them itself (about 4 ms for threading and queue).
# Under seccomp, subprocess and multiprocessing cannot start a process anyway.
PREIMPORT = (
    "abc array ast base64 binascii bisect calendar cmath collections collections.abc "
    "contextlib copy csv dataclasses datetime decimal difflib enum fnmatch fractions "
    "functools glob hashlib heapq inspect io itertools json math numbers operator os pathlib "
    "pickle pprint random re secrets shutil statistics string struct sys tempfile textwrap "
    "time traceback types typing unicodedata uuid warnings weakref zlib numpy mmap runpy"
).split()


# Pre-imported only by the zygote that serves code naming numpy (the server starts that one
# at its first such request): numpy is a third of the zygote's anonymous memory, which every
# fork copies the page tables of and every child's exit tears down. Code that does not name
# it gets a child forked from a zygote without it (see ``server.uses_numpy``).
HEAVY = ("numpy",)


class Forked(NamedTuple):
    """A forked child waiting for its request: its pid, the read ends of its stdout, stderr,
    result and setup pipes, and the write end of its request pipe."""

    pid: int
    fds: list[int]
    request_fd: int


def preimport(heavy: bool = True) -> None:
    """Import :data:`PREIMPORT` (whatever of it is installed), without :data:`HEAVY` unless
    ``heavy``."""
    for name in PREIMPORT:
        if name in HEAVY and not heavy:
            continue
        try:
            importlib.import_module(name)
        except ImportError:
            pass


def site_builtins() -> None:
    """Add the builtins ``site`` adds at startup (``exit``, ``quit``, ``help``, ``copyright``,
    ``credits``, ``license``) to an interpreter started without it (``-S``, as bubblewrap's
    zygote is): solutions often end with ``exit()``."""
    import site

    site.setquit()
    site.setcopyright()
    site.sethelper()


def load_accounts() -> None:
    """Have the C library read its user-database configuration and load its modules now,
    while they are readable: a confined child, which cannot read ``/etc``, then still
    resolves its own ids (``pwd.getpwuid(os.getuid())``) where a module answers without
    reading a file (systemd's synthesizes root and nobody)."""
    import grp
    import pwd

    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(confine.NOBODY)
        except KeyError:
            pass


def kill(pid: int) -> None:
    """SIGKILL a child's process group and the child itself (with seccomp it can neither leave
    the group nor fork; under bubblewrap the zygote kills the rest when the child exits)."""
    for target, fn in ((pid, os.killpg), (pid, os.kill)):
        try:
            fn(target, signal.SIGKILL)
        except ProcessLookupError:
            pass


def zygote_main(sock: socket.socket, setup: Any, isolated: bool) -> None:
    """Serve commands and report exits until the server goes away. ``setup`` has the
    ``prepared`` and ``support`` the children confine themselves with; ``isolated``: the
    bubblewrap mode described in the module docstring."""
    try:
        confine.die_with_parent()
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        children: dict[int, int] = {}  # pidfd -> pid
        spare = None
        while True:
            if spare is None and not isolated:
                spare = _track(_fork_child(setup), children, poller)
            for fd, _ in poller.poll():
                if fd != sock.fileno():
                    pid = children.pop(fd)
                    poller.unregister(fd)
                    os.close(fd)
                    status = _reap_all(pid) if isolated else os.waitpid(pid, 0)[1]
                    sock.send(b"X%d,%d" % (pid, status))
                    continue
                msg = sock.recv(16)
                if msg.startswith(b"K"):
                    kill(int(msg[1:]))
                elif msg:  # "S": hand a child over
                    if spare is None:
                        spare = _track(_fork_child(setup), children, poller)
                    socket.send_fds(sock, [b"P%d" % spare.pid], [*spare.fds, spare.request_fd])
                    for own in [*spare.fds, spare.request_fd]:
                        os.close(own)
                    spare = None
                else:  # the server is gone
                    for pid in children.values():
                        kill(pid)
                    os._exit(0)
    finally:
        os._exit(1)


def _track(spare: Forked, children: dict[int, int], poller: select.poll) -> Forked:
    fd = os.pidfd_open(spare.pid)
    children[fd] = spare.pid
    poller.register(fd, select.POLLIN)
    return spare


def _reap_all(pid: int) -> int:
    """As PID 1 of a bubblewrap sandbox: SIGKILL every other process in it (orphans included,
    whatever process group or session they moved to) and reap them all; return ``pid``'s wait
    status. A fork racing with the kill fails, so the loop ends once no child is left."""
    status = 0
    while True:
        try:
            os.kill(-1, signal.SIGKILL)  # every process of this PID namespace but PID 1
        except ProcessLookupError:
            pass
        try:
            got, wstatus = os.waitpid(-1, 0)
        except ChildProcessError:
            return status
        if got == pid:
            status = wstatus


def _fork_child(setup: Any) -> Forked:
    """Fork a child that waits for its request (see :func:`_child_main`)."""
    pipes = [os.pipe() for _ in range(5)]  # stdout, stderr, results, setup, request
    pid = os.fork()
    if pid == 0:  # the child: never returns
        _child_main(pipes, setup)
    for _, w in pipes[:4]:
        os.close(w)
    os.close(pipes[4][0])
    try:
        os.setpgid(pid, pid)
    except OSError:  # the child already did it (or already exited)
        pass
    return Forked(pid, [r for r, _ in pipes[:4]], pipes[4][1])


def _close_from(low: int, keep: list[int]) -> None:
    """Close every descriptor from ``low`` up except those in ``keep`` (sorted)."""
    for fd in keep:
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)


def _child_main(pipes: list, conf: Any) -> None:
    """Set up descriptors, wait for the request, confine, run. Any failure before the agent's
    code runs is reported on the setup pipe, which is closed before that code runs."""
    status = 70
    try:
        os.setpgid(0, 0)
        devnull = os.open(os.devnull, os.O_RDONLY)
        (_, out), (_, err), (_, res), (_, setup), (req, req_w) = pipes
        for fd, target in ((devnull, 0), (out, 1), (err, 2), (res, 3), (setup, 4), (req, 5)):
            os.dup2(fd, target)
        os.close(req_w)  # so that a server that dies leaves this child an end of file
        confine.die_with_parent()
        child.prepare()
        request = protocol.recv(5)
        if request is None:  # the server discarded this child
            os._exit(0)
        # The environment is the server's, which the client scrubbed: nothing to clear (and
        # every page a child writes is a copy-on-write fault, the main cost of a child).
        limits = confine.Limits(**request.get("limits", {}))
        # Every layer the kernel offers (all of them unless the user opted out loudly).
        confine.confine(conf.prepared, limits, conf.support)
        # As nobody: root without CAP_DAC_READ_SEARCH (under bubblewrap) may not enter it.
        os.chdir(request["workdir"])
        _close_from(5, conf.keep)  # every inherited descriptor, the request pipes included
        os.write(4, b"K")
        os.close(4)
        status = child.run(request, 3)
    except BaseException as exc:  # noqa: BLE001 - report, then exit without unwinding
        try:
            os.write(4, f"E{type(exc).__name__}: {exc}".encode()[:4000])
        except BaseException:  # noqa: BLE001 - the setup pipe is gone: agent code raised
            pass
    finally:
        os._exit(status if isinstance(status, int) and 0 <= status < 256 else 1)




def start(sock_fd: int, spec_json: str) -> None:
    """The zygote's start in ``kernel`` and ``unsafe`` mode: a fresh interpreter started by the
    server before any request, talking to it on ``sock_fd``; never returns. ``spec_json``: the
    work root, the Landlock read paths, the :class:`confine.Support` the server probed and
    whether to pre-import :data:`HEAVY` (``numpy``)."""
    import json

    spec = json.loads(spec_json)
    preimport(spec["numpy"])
    load_accounts()
    support = confine.Support(**spec["support"])
    prepared = confine.Prepared(spec["workroot"], spec["read_paths"], support)
    # Root's children run as nobody: what of the stdlib nobody cannot reach by path, they
    # import through directories opened here (see textgyms.sandbox.reach).
    finder = reach.install(spec["read_paths"]) if support.root else None
    gc.collect()
    gc.freeze()  # children share the warm heap copy-on-write
    setup = types.SimpleNamespace(prepared=prepared, support=support,
                                  keep=finder.fds if finder is not None else [])
    zygote_main(socket.socket(fileno=sock_fd), setup, isolated=False)


def boot(sock_fd: int, spec: dict[str, Any]) -> None:
    """The zygote's start inside a bubblewrap sandbox (called by the bootstrap of
    :mod:`textgyms.sandbox.bwrap`); never returns."""
    # As PID 1 it gets only the signals it handles: handle none (Python handles SIGINT).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    confine.set_dumpable(False)  # no child may read its memory or ptrace it (or its siblings)
    site_builtins()
    preimport(spec["numpy"])
    support = confine.probe() if spec["kernel_layers"] else confine.Support(0, False, False)
    # Root (with CAP_SETUID/SETGID only): children drop to nobody. Otherwise already nobody.
    support = confine.Support(support.landlock_abi, support.seccomp, os.geteuid() == 0, "bwrap")
    prepared = confine.Prepared(spec["workroot"], spec["read_paths"], support)
    gc.freeze()  # children share the warm heap copy-on-write
    setup = types.SimpleNamespace(prepared=prepared, support=support, keep=[])
    zygote_main(socket.socket(fileno=sock_fd), setup, isolated=True)
    sys.exit(1)  # unreachable: zygote_main exits the process
