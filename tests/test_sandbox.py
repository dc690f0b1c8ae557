"""The sandbox's machinery: wire formats, value comparison, server life cycle, confinement
policy and limits (the attacks are in test_sandbox_attacks.py)."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textgyms.errors import SandboxError
from textgyms.sandbox import (
    Sandbox,
    SandboxPool,
    bwrap,
    confine,
    protocol,
    release,
    server,
    shared,
    values_equal,
)

json_scalars = st.none() | st.booleans() | st.integers() | st.text() | st.floats(
    allow_nan=False, allow_infinity=False
)
values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    | st.dictionaries(st.integers(), inner, max_size=3),
    max_leaves=20,
)


@pytest.fixture(scope="module")
def box():
    sandbox = Sandbox()
    yield sandbox
    sandbox.close()


@given(values)
@settings(max_examples=100, deadline=None)
def test_encode_decode_round_trip(value):
    import json

    wire = json.loads(json.dumps(protocol.encode_value(value)))
    back = protocol.decode_value(wire)
    assert values_equal(back, value) and type(back) is type(value)


def test_encoder_reduces_subclasses_and_refuses_objects():
    class Rigged(int):
        def __eq__(self, other):
            return True

    assert type(protocol.encode_value(Rigged(3))) is int
    with pytest.raises(TypeError, match="cannot be returned"):
        protocol.encode_value({1, 2})
    with pytest.raises(TypeError):
        protocol.encode_value(object())


def test_numpy_scalars_reduce_to_the_python_values_a_tests_eq_compares():
    """``np.int64(6) == 6`` and ``np.True_ == True`` in the original checks: a correct
    answer computed with numpy passes. Its integer and bool scalars are no ``int`` or
    ``bool`` subclasses, so the encoder refused them before. Arrays stay refused (a test's
    ``assert got == expected`` cannot take their elementwise answer either)."""
    np = pytest.importorskip("numpy")

    class Rigged(np.int64):
        def item(self):
            return RiggedInt(1)

    class RiggedInt(int):
        def __eq__(self, other):
            return True

    wire = json.loads(json.dumps(protocol.encode_value(
        [np.int64(6), np.bool_(True), np.float32(0.5), np.uint8(255), np.str_("a")])))
    back = protocol.decode_value(wire)
    assert back == [6, True, 0.5, 255, "a"]
    assert [type(v) for v in back] == [int, bool, float, int, str]
    assert values_equal(back, [6, True, 0.5, 255, "a"]) and not values_equal(back[1], 1)
    for refused in (np.array([1, 2]), np.complex128(1j), np.datetime64("2020-01-01"),
                    Rigged(3)):
        with pytest.raises(TypeError, match="cannot be returned"):
            protocol.encode_value(refused)


def test_values_equal_checks_types_and_tolerance():
    assert values_equal(0.1 + 0.2, 0.3)
    assert values_equal(2, 2.0) and not values_equal(1, True) and not values_equal(True, 1)
    assert not values_equal([1, 2], (1, 2)) and values_equal((1, [2.0]), (1, [2]))
    assert not values_equal("1", 1) and not values_equal(None, 0)
    assert values_equal(math.nan, math.nan) and not values_equal(1.0, 1.001)
    assert not values_equal({"a": 1}, {"a": 1, "b": 2})
    assert not values_equal(10**20 + 1, 10**20)  # ints compare exactly


def test_message_framing_round_trip():
    r, w = os.pipe()
    protocol.send(w, {"a": [1, "é", None]})
    os.close(w)
    assert protocol.recv(r) == {"a": [1, "é", None]}
    assert protocol.recv(r) is None
    os.close(r)


def test_run_returns_output_and_exit_status(box):
    ex = box.run("import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)")
    assert (ex.status, ex.exit_code, ex.stdout, ex.stderr) == ("error", 3, "out\n", "err\n")
    ex = box.run("def f():\n    return 1 / 0\nf()")
    assert ex.status == "error" and "ZeroDivisionError" in ex.stderr
    assert 'File "<solution>", line 2, in f' in ex.stderr and "return 1 / 0" in ex.stderr
    assert "child.py" not in ex.stderr  # the harness's own frame is not shown
    assert box.run("def f(:\n").stderr.startswith('  File "<solution>", line 1')


def test_call_reports_each_input(box):
    ex = box.call(
        "def f(x):\n    if x == 2:\n        raise KeyError('k')\n    return (x, [x])",
        "f",
        [[1], [2], [3]],
    )
    assert ex.calls[0].value == (1, [1]) and ex.calls[2].value == (3, [3])
    assert not ex.calls[1].ok and ex.calls[1].error == "KeyError: 'k'"
    ex = box.call("def g(a, b=0):\n    return a - b", "g", [{"a": 5, "b": 2}], by_name=True)
    assert ex.calls[0].value == 3
    assert box.call("x = 1", "g", [[1]]).missing_entry


def test_per_call_alarm_fails_only_that_call(box):
    code = "import time\ndef f(x):\n    if x:\n        time.sleep(10)\n    return x"
    ex = box.call(code, "f", [[0], [1], [0]], test_timeout=0.2)
    assert ex.calls[0].value == 0 and ex.calls[2].value == 0
    assert "TimeoutError" in ex.calls[1].error


def test_wall_deadline_kills_code_that_ignores_the_alarm(box):
    code = "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass"
    ex = box.run(code, timeout=0.5)
    assert ex.status == "timeout" and ex.exit_code == -signal.SIGKILL


def test_output_is_truncated_head_and_tail(box):
    ex = box.run("for i in range(20000):\n    print(i)")
    assert ex.status == "ok" and ex.stdout.startswith("0\n1\n") and ex.stdout.endswith("19999\n")
    assert "bytes cut" in ex.stdout and len(ex.stdout) < 70_000


def test_numpy_and_common_modules_are_warm(box):
    ex = box.run("import numpy as np, collections, heapq\nprint(int(np.arange(4).sum()))")
    assert ex.stdout == "6\n"


def test_children_start_without_threading_and_import_it_when_they_need_it(box):
    """The zygotes leave threading out (the hook it registers runs in every forked child); a
    solution that uses threads imports it and runs them."""
    ex = box.run("import sys\nprint('threading' in sys.modules)\n"
                 "import threading, queue\nq = queue.Queue()\n"
                 "t = threading.Thread(target=q.put, args=(7,))\nt.start(); t.join()\n"
                 "print(q.get())")
    assert (ex.status, ex.stdout) == ("ok", "False\n7\n"), ex.stderr


# Names no module: a child lists what it was forked with.
_LOADED_NUMPY = "import sys\nprint(any(m.split('.')[0] == 'nump' + 'y' for m in sys.modules))"


def _zygotes(server_pid: int) -> list[int]:
    return [p for p in (int(q) for q in os.listdir("/proc") if q.isdigit())
            if _ppid(p) == server_pid]


@pytest.mark.parametrize("mode", ["kernel", "bwrap"])
def test_only_code_naming_numpy_runs_in_the_zygote_that_preloaded_it(mode, monkeypatch):
    """Two zygotes: a lean one from the start, and the numpy one from the first request whose
    code names numpy; each request runs in a child of the one its code calls for."""
    if mode == "bwrap" and shutil.which("bwrap") is None:
        pytest.skip("apt-get install bubblewrap")
    monkeypatch.setenv(bwrap.MODE_ENV, mode)
    with Sandbox() as sandbox:
        pid = sandbox.ping()
        assert sandbox.run(_LOADED_NUMPY).stdout == "False\n"
        assert len(_zygotes(pid)) == 1  # the numpy zygote is not started before it is needed
        ex = sandbox.run("import numpy as np\nprint(int(np.arange(5).sum()))\n" + _LOADED_NUMPY)
        assert ex.stdout == "10\nTrue\n"
        assert len(_zygotes(pid)) == 2
        assert sandbox.run(_LOADED_NUMPY).stdout == "False\n"
        assert sandbox.run("# numpy\n" + _LOADED_NUMPY).stdout == "True\n"


def test_which_code_names_numpy():
    assert server.uses_numpy("import numpy as np")
    assert server.uses_numpy("from numpy.linalg import inv")
    assert server.uses_numpy("m = __import__('numpy')")
    assert not server.uses_numpy("import math\nprint('num', 'py')")


def test_hash_seed_is_fixed_so_runs_are_reproducible(box):
    code = "print(list({'apple', 'pear', 'fig', 'kiwi', 'plum'}))"
    with Sandbox() as other:  # a second server: the seed is not an accident of one process
        assert box.run(code).stdout == box.run(code).stdout == other.run(code).stdout


def test_a_sandbox_used_as_a_context_manager_stops_its_server():
    with Sandbox() as other:
        pid = other.ping()
        os.kill(pid, 0)  # running
    assert other.pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_restart_closes_the_dead_servers_pipes():
    with Sandbox() as other, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        for _ in range(2):
            pid = other.ping()
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            assert other.ping() != pid
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]


def test_server_restarts_when_it_dies(box):
    first = box.ping()
    os.kill(first, signal.SIGKILL)
    os.waitpid(first, 0)
    assert box.run("print(1)").stdout == "1\n"
    assert box.pid != first


def test_close_stops_the_server():
    sandbox = Sandbox()
    pid = sandbox.ping()
    sandbox.close()
    assert sandbox.pid is None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # already reaped: it exited


def test_shared_sandbox_is_reference_counted(monkeypatch):
    import textgyms.sandbox.client as client_mod

    monkeypatch.setattr(client_mod, "_shared", {})  # no users left by other tests' envs
    a, b = shared(), shared()
    assert a is b
    a.ping()
    release(a)
    assert b.pid is not None  # one user left
    release(b)
    assert b.pid is None
    assert shared() is not a
    release(shared())


def test_server_that_cannot_start_raises_sandbox_error(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    with pytest.raises(SandboxError, match="could not start"), Sandbox() as box:
        box.ping()


NONE = confine.Support(landlock_abi=0, seccomp=False, root=False)
FULL = confine.Support(landlock_abi=4, seccomp=True, root=False)


def test_refuses_without_confinement_unless_opted_out(monkeypatch):
    monkeypatch.setattr(bwrap, "available", lambda: False)
    monkeypatch.setattr(confine, "probe", lambda: NONE)
    monkeypatch.delenv(bwrap.MODE_ENV, raising=False)
    monkeypatch.delenv(server.UNSAFE_ENV, raising=False)
    srv = server.Server()
    try:
        error = srv.hello()["error"]
        assert "refusing" in error and server.UNSAFE_ENV in error and "bubblewrap" in error
        assert srv.mode is None
    finally:
        srv.close()
    assert server.select_mode("auto", NONE, unsafe=True) == "unsafe"


def test_mode_selection(monkeypatch):
    monkeypatch.setattr(bwrap, "available", lambda: True)
    assert server.select_mode("auto", FULL, unsafe=False) == "kernel"  # the default
    assert server.select_mode("auto", NONE, unsafe=False) == "bwrap"  # the fallback
    assert server.select_mode("auto", replace(FULL, seccomp=False), unsafe=True) == "bwrap"
    assert server.select_mode("bwrap", FULL, unsafe=False) == "bwrap"  # forced
    assert server.select_mode("kernel", FULL, unsafe=False) == "kernel"
    with pytest.raises(SandboxError, match="TEXTGYMS_SANDBOX=kernel, but kernel confinement"):
        server.select_mode("kernel", replace(FULL, landlock_abi=0), unsafe=True)
    with pytest.raises(SandboxError, match="'docker'.*auto, kernel, bwrap"):
        server.select_mode("docker", FULL, unsafe=False)
    monkeypatch.setattr(bwrap, "available", lambda: False)
    with pytest.raises(SandboxError, match="apt-get install bubblewrap"):
        server.select_mode("bwrap", FULL, unsafe=True)
    assert server.select_mode("auto", FULL, unsafe=False) == "kernel"


def test_unknown_mode_is_a_sandbox_error(monkeypatch):
    monkeypatch.setenv(bwrap.MODE_ENV, "off")
    with pytest.raises(SandboxError, match="'off' is not a sandbox mode; use one of auto, kernel"):
        Sandbox().ping()


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="apt-get install bubblewrap")
def test_forced_bubblewrap_reports_its_mode(monkeypatch):
    assert bwrap.available()
    monkeypatch.setenv(bwrap.MODE_ENV, "bwrap")
    sandbox = Sandbox()
    try:
        assert sandbox.confinement == "bwrap" and "bubblewrap alone" in sandbox.hello["describe"]
        code = "import os, numpy\nprint(os.getuid(), os.getpid(), sorted(os.listdir('/dev')))"
        uid, pid, devices = sandbox.run(code).stdout.split(" ", 2)
        assert uid == "65534" and devices == "['null', 'shm', 'urandom']\n"
        assert 1 < int(pid) < 1000  # in its own PID namespace, where the zygote is PID 1
        ex = sandbox.run("open('/dev/shm/x', 'w')")  # shm: just the work root's mount point
        assert "Read-only file system" in ex.stderr
    finally:
        sandbox.close()


def test_bubblewrap_command_mirrors_the_landlock_rules():
    paths = server.allowed_read_paths()
    args = bwrap.command(paths, "/dev/shm/root", ["python"])
    binds = {args[i + 1] for i, a in enumerate(args) if a == "--ro-bind"}
    assert binds == {p for p in paths if not p.startswith("/dev/")}
    assert not any("site-packages" in p and not p.endswith(("/numpy", "/numpy.libs"))
                   for p in binds)  # fmt: skip
    assert args[args.index("--bind") + 1 : args.index("--bind") + 3] == ["/dev/shm/root"] * 2
    for flag in ("--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
                 "--die-with-parent", "--new-session", "--as-pid-1", "--remount-ro"):  # fmt: skip
        assert flag in args
    assert args[args.index("--cap-drop") + 1] == "ALL" and args[-2:] == ["--", "python"]


def test_this_kernel_confines(box):
    box.ping()
    support = box.hello["support"]
    assert support["landlock_abi"] >= 1 and support["seccomp"]
    assert box.confinement == "kernel"  # the default when both are available


def test_seccomp_program_is_well_formed():
    prog = confine._bpf_program()
    assert len(prog) % 8 == 0 and len(prog) // 8 < 256
    # every jump lands inside the program
    import struct

    ins = [struct.unpack("=HBBI", prog[i : i + 8]) for i in range(0, len(prog), 8)]
    for pc, (code, jt, jf, _) in enumerate(ins):
        if code & 0x07 == 0x05:  # BPF_JMP
            assert pc + 1 + max(jt, jf) < len(ins)
    assert ins[-1][0] == 0x06 and ins[-2][0] == 0x06  # ends in returns


def _run_bpf(prog: bytes, nr: int, args: tuple[int, ...] = (0,) * 6) -> int:
    """What the seccomp program returns for syscall ``nr`` (x86_64) with ``args``: a tiny
    interpreter of the instructions confine's assembler emits."""
    import struct

    data = struct.pack("=iI", nr, confine._AUDIT_ARCH_X86_64) + struct.pack("=Q", 0)
    data += b"".join(struct.pack("=Q", a) for a in (list(args) + [0] * 6)[:6])
    ins = [struct.unpack("=HBBI", prog[i : i + 8]) for i in range(0, len(prog), 8)]
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = ins[pc]
        if code == confine._RET_K:
            return k
        if code == confine._LD_W_ABS:
            acc, pc = struct.unpack_from("=I", data, k)[0], pc + 1
            continue
        hit = {confine._JEQ_K: acc == k, confine._JGE_K: acc >= k,
               confine._JSET_K: bool(acc & k)}[code]  # fmt: skip
        pc += 1 + (jt if hit else jf)


def test_seccomp_program_decides_every_syscall_as_the_tables_say():
    prog = confine._bpf_program()
    eperm, allow = confine._RET_ERRNO | confine._EPERM, confine._RET_ALLOW
    denied = set(confine._DENIED_X86_64.values())
    self_only = set(confine._SELF_ONLY_X86_64.values())
    special = denied | self_only | {confine._CLONE, confine._CLONE3, confine._SETPRIORITY,
                                    confine._IOPRIO_SET, confine._SOCKETPAIR}  # fmt: skip
    for nr in range(512):
        want = eperm if nr in denied else allow if nr not in special else None
        if want is not None:
            assert _run_bpf(prog, nr) == want, nr
    for nr in self_only:
        assert _run_bpf(prog, nr, (0,)) == allow and _run_bpf(prog, nr, (1234,)) == eperm
    assert _run_bpf(prog, confine._CLONE3) == confine._RET_ERRNO | confine._ENOSYS
    assert _run_bpf(prog, confine._CLONE, (confine._CLONE_THREAD | 0x100,)) == allow
    assert _run_bpf(prog, confine._CLONE, (0x11,)) == eperm  # SIGCHLD: a fork
    assert _run_bpf(prog, confine._SETPRIORITY, (0, 0)) == allow
    assert _run_bpf(prog, confine._SETPRIORITY, (0, 99)) == eperm
    assert _run_bpf(prog, confine._SETPRIORITY, (2, 0)) == eperm  # PRIO_USER
    assert _run_bpf(prog, confine._IOPRIO_SET, (1, 0)) == allow
    assert _run_bpf(prog, confine._IOPRIO_SET, (2, 0)) == eperm
    assert _run_bpf(prog, 0x40000000 + 1) == eperm  # x32
    pair = confine._SOCKETPAIR
    for kind in (1, 1 | 0x80000, 1 | 0x800 | 0x80000):  # SOCK_STREAM, with CLOEXEC, NONBLOCK
        assert _run_bpf(prog, pair, (1, kind)) == allow
    # (family and type are ints: the kernel reads the low word, as the filter does)
    for family, kind in ((1, 2), (1, 5), (1, 3), (1, 0), (1, 2 | 0x80000), (2, 1), (10, 1),
                         (16, 1), (0x100000002, 1)):  # DGRAM, SEQPACKET, RAW; INET, INET6, ...
        assert _run_bpf(prog, pair, (family, kind)) == eperm, (family, kind)


def test_no_child_outlives_a_killed_server():
    sandbox = Sandbox()
    pid = sandbox.ping()
    sandbox.run("print(1)")  # each zygote keeps a forked child waiting for the next request
    sandbox.run("import numpy")  # and starts the zygote with numpy preloaded
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    zygotes = [p for p in pids if _ppid(p) == pid]
    children = zygotes + [p for p in pids if _ppid(p) in zygotes]
    assert len(zygotes) == 2 and len(children) >= 4, "two zygotes and children kept ready"
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    import time

    for _ in range(100):
        if not any(os.path.exists(f"/proc/{c}") and _state(c) != "Z" for c in children):
            break
        time.sleep(0.05)
    assert not any(os.path.exists(f"/proc/{c}") and _state(c) != "Z" for c in children)
    sandbox.close()


def test_a_killed_run_ends_in_an_error_and_is_never_run_again():
    # kill() is how a closing pool cancels work nobody awaits (a server's SIGTERM past its
    # grace): the run must end, not be retried on a fresh server as if that one had crashed.
    sandbox = Sandbox()
    first = sandbox.ping()
    outcome: dict[str, str] = {}

    def run() -> None:
        try:
            outcome["stdout"] = sandbox.run("import time; time.sleep(20)", timeout=30).stdout
        except SandboxError as exc:
            outcome["error"] = str(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    while not sandbox._lock.locked():  # the request is in progress (it holds the lock)
        time.sleep(0.01)
    time.sleep(0.3)
    sandbox.kill()
    thread.join(60)
    assert "stdout" not in outcome and "killed" in outcome["error"]
    assert sandbox.pid is None  # no fresh server was started to run it again
    assert sandbox.run("print(3)").stdout == "3\n"  # the next run gets a fresh server
    assert sandbox.pid != first
    sandbox.close()


def test_a_server_whose_client_went_away_exits_with_a_note_not_a_traceback():
    from textgyms.sandbox.client import _server_env

    proc = subprocess.Popen(
        [sys.executable, "-m", "textgyms.sandbox.server"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=_server_env(), start_new_session=True,
    )  # fmt: skip
    proc.stdout.close()  # the client is gone before the server says hello
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0
    assert "Traceback" not in err.decode() and "client went away" in err.decode()


def _ppid(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


@pytest.mark.parametrize("numpy", [False, True])
def test_a_dead_zygote_means_a_fresh_server(numpy):
    with Sandbox() as sandbox:
        first = sandbox.ping()
        sandbox.run("import numpy")  # both zygotes up: kill the one the next run needs
        (zygote,) = [p for p in _zygotes(first)
                     if ("numpy" in Path(f"/proc/{p}/maps").read_text()) == numpy]
        os.kill(zygote, signal.SIGKILL)
        code = "import numpy\nprint(2)" if numpy else "print(2)"
        assert sandbox.run(code).stdout == "2\n"  # answered by a restarted server
        assert sandbox.pid != first


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="apt-get install bubblewrap")
def test_no_bubblewrap_process_outlives_a_killed_server(monkeypatch):
    monkeypatch.setenv(bwrap.MODE_ENV, "bwrap")
    sandbox = Sandbox()
    pid = sandbox.ping()
    sandbox.run("print(1)")
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    tree, grew = {pid}, True
    while grew:  # the server's descendants: bwrap, the zygote
        new = {p for p in pids if _ppid(p) in tree} - tree
        tree, grew = tree | new, bool(new)
    assert len(tree) >= 3, "bwrap and the zygote under the server"
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    import time

    for _ in range(100):
        if not any(os.path.exists(f"/proc/{c}") and _state(c) != "Z" for c in tree):
            break
        time.sleep(0.05)
    assert not any(os.path.exists(f"/proc/{c}") and _state(c) != "Z" for c in tree)
    sandbox.close()


@pytest.mark.parametrize("when", ["while it starts", "before it exists"])
def test_a_server_killed_as_it_starts_ends_the_run_as_killed(monkeypatch, when):
    """A pool closed while a run's server is still starting kills that run: it must end as
    killed (not as "could not start"), and a kill that came before the server existed must
    not let the run go ahead on it."""
    box = Sandbox()
    real_read, real_start = box._read, box._start

    def read_after_kill(timeout):  # the hello's read: the server is killed just before it
        box.kill()
        monkeypatch.setattr(box, "_read", real_read)
        return real_read(timeout)

    def start_after_kill():  # kill() finds no server yet, then the server starts
        box.kill()
        real_start()

    if when == "while it starts":
        monkeypatch.setattr(box, "_read", read_after_kill)
    else:
        monkeypatch.setattr(box, "_start", start_after_kill)
    try:
        with pytest.raises(SandboxError, match="killed"):
            box.run("print(1)", timeout=10)
        assert box.pid is None
    finally:
        box.close()


def test_a_closed_pool_refuses_runs_and_wakes_its_waiters():
    """After close(), a pool starts no server: a new run and a run that was waiting for the
    busy server both raise SandboxError (the waiter used to wait forever, a later run to start
    a fresh server behind the closed pool's back)."""
    pool = SandboxPool(1)
    holder_started = threading.Event()
    outcome: dict[str, str] = {}

    def holder() -> None:
        holder_started.set()
        try:
            pool.run("import time; time.sleep(30)", timeout=60)
        except SandboxError as exc:
            outcome["holder"] = str(exc)

    def waiter() -> None:
        try:
            pool.run("print('late')", timeout=60)
            outcome["waiter"] = "ran"
        except SandboxError as exc:
            outcome["waiter"] = str(exc)

    first = threading.Thread(target=holder)
    first.start()
    holder_started.wait(10)
    deadline = time.monotonic() + 60
    while pool.pid is None and time.monotonic() < deadline:
        time.sleep(0.05)
    second = threading.Thread(target=waiter)
    second.start()
    time.sleep(0.5)  # queued behind the holder (a pool of one)
    pool.close()
    first.join(60)
    second.join(60)
    assert not second.is_alive(), "the queued run still waits on a closed pool"
    assert "closed" in outcome["waiter"]
    assert "killed" in outcome["holder"]
    with pytest.raises(SandboxError, match="closed"):
        pool.run("print(1)")
    assert pool.pids == []
