"""Hardening found needed by an adversarial review: one submission must not hurt the parent,
other episodes or later runs.

Each class of defect has several variants here, and the sandbox tests run under both
confinement modes (the ``mode`` fixture of the attack suite: Landlock and seccomp, then
bubblewrap alone):

1. agent-made trees (deep, wide, locked, symlinked) are removed without recursion, by every
   sweep and by ``close``, and a stale work root from a crashed server never blocks a new one;
2. and 3. adversarial result records (colliding hashes, deep nesting, millions of tiny
   containers, huge strings) become an agent outcome, with the parent's memory measured;
4. a child attacking every pid it can see leaves a concurrent sandbox's honest run untouched;
5. a run that writes past the size-bounded work dir gets the ``disk_limit`` outcome (as root,
   and as an unprivileged server in a user namespace);

and the outcome of a run names the limit that stopped it (``memory_limit``, ``timeout``).

The Search classes (6 and 7) are tested in ``test_reward_hacking.py`` (grounding probes through
every tool path) and ``test_search_env.py`` (URL parameter fuzzing of ``open``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import tracemalloc
from pathlib import Path

import gymnasium as gym
import pytest
from test_sandbox_attacks import box, mode  # noqa: F401 - fixtures: both confinement modes

import textgyms  # noqa: F401 - registers the ids
from textgyms.sandbox import Sandbox, protocol, server, workdir

_DIR = os.O_RDONLY | os.O_DIRECTORY


@pytest.fixture
def shm_base():
    """A work base that nobody can traverse (pytest's tmp_path is private to root)."""
    base = Path(tempfile.mkdtemp(prefix="textgyms-test-", dir="/dev/shm"))
    base.chmod(0o755)
    yield base
    workdir.remove_tree(str(base))


# --- 1. agent-made trees ------------------------------------------------------------------------


def _deep(root: Path, depth: int) -> None:
    """``depth`` nested directories under ``root`` (made relative to a descriptor: the path is
    far longer than PATH_MAX), with a file at the bottom."""
    fd = os.open(root, _DIR)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", _DIR, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(os.open("f", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
    os.close(fd)


def _wide(root: Path, files: int, dirs: int) -> None:
    for i in range(files):
        (root / f"f{i}").touch()
    for i in range(dirs):
        (root / f"d{i}").mkdir()
        (root / f"d{i}" / "x").touch()


def _locked(root: Path) -> None:
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "a" / "b" / "c" / "f").write_text("x")
    os.mkfifo(root / "a" / "fifo")
    os.chmod(root / "a" / "b" / "c", 0)
    os.chmod(root / "a" / "b", 0o500)
    os.chmod(root / "a", 0)


SHAPES = {
    "deep": lambda root: _deep(root, 6_000),
    "wide": lambda root: _wide(root, 20_000, 500),
    "locked": _locked,
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_remove_tree_without_recursion(shm_base, shape):
    root = shm_base / "root"
    root.mkdir()
    SHAPES[shape](root)
    workdir.remove_tree(str(root))
    assert not root.exists()


def test_remove_tree_never_follows_symlinks(shm_base):
    outside = shm_base / "outside"
    outside.mkdir()
    (outside / "keep").write_text("precious")
    root = shm_base / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "link").symlink_to(outside, target_is_directory=True)
    (root / "file_link").symlink_to(outside / "keep")
    workdir.clear_dir(str(root))
    assert root.is_dir() and not any(root.iterdir())
    assert (outside / "keep").read_text() == "precious"


_AGENT_TREES = {
    "deep": "for _ in range(1500):\n    os.mkdir('d'); os.chdir('d')\nopen('f', 'w').close()",
    "wide": "for i in range(4000):\n    open(f'f{i}', 'w').close()\n"
            "for i in range(300):\n    os.makedirs(f'd{i}/e')",
    "locked": "os.makedirs('a/b/c'); open('a/b/c/f', 'w').close(); os.mkfifo('a/p')\n"
              "os.chmod('a/b/c', 0); os.chmod('a/b', 0o500); os.chmod('a', 0)\n"
              "os.makedirs('../beside/x')  # beside the work dir, in the work root",
}  # fmt: skip


@pytest.mark.parametrize("shape", sorted(_AGENT_TREES))
def test_agent_made_trees_never_break_the_sandbox(box, shape):  # noqa: F811
    """The tree is swept after the run (a sweep that raised would surface as SandboxError on
    this and every later call), and the next run starts with an empty, fresh directory."""
    code = f"import os\n{_AGENT_TREES[shape]}\nprint('made')"
    for _ in range(2):
        ex = box.run(code, timeout=10)
        assert ex.status in ("ok", "error", "disk_limit"), ex.stderr
    after = box.run("import os\nprint(sorted(os.listdir('.')), os.statvfs('.').f_ffree)")
    assert after.status == "ok" and after.stdout.startswith("[] "), after.stdout


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_stale_root_from_a_crashed_server_never_blocks_a_new_one(shm_base, monkeypatch, mode):  # noqa: F811
    base = shm_base
    stale = base / f"textgyms-sandbox-{_dead_pid()}-crashed"
    stale.mkdir()
    _deep(stale, 6_000)
    _locked(stale)
    (base / f"textgyms-sandbox-{_dead_pid()}-file").write_text("a root that is a file")
    monkeypatch.setenv("TEXTGYMS_SANDBOX_TMP", str(base))
    sandbox = Sandbox()
    try:
        assert sandbox.run("print(1)").stdout == "1\n"
        names = [p.name for p in base.iterdir()]
        assert names == [f"textgyms-sandbox-{sandbox.pid}-{names[0].rsplit('-', 1)[1]}"]
    finally:
        sandbox.close()
    assert not any(base.iterdir()), "close() removes its own root"


def test_stale_root_cleanup_failures_are_ignored(tmp_path, monkeypatch):
    (tmp_path / f"textgyms-sandbox-{_dead_pid()}-x").mkdir()

    def fail(path: str) -> None:
        raise PermissionError(f"cannot remove {path}")

    monkeypatch.setattr(workdir, "remove_tree", fail)
    server._remove_stale_workroots(str(tmp_path))  # no exception: the new root is a new name


# --- 2. and 3. child-controlled data decoded in the parent -------------------------------------

_P = 2**61 - 1  # hash(k * _P) == 0 for every int k

_RESULTS = {
    # name: (bytes expression for the "out" value, expected status, what the call must give)
    "colliding_int_keys": (
        '("{\\"__dict__\\":[" + ",".join(f"[{k * (2**61 - 1)},0]" for k in range(1, 20_000))'
        ' + "]}").encode()', "ok", "unreadable"),
    "colliding_tuple_keys": (
        '("{\\"__dict__\\":[" + ",".join(f"[{{\\"__tuple__\\":[0,{k * (2**61 - 1)}]}},0]"'
        ' for k in range(1, 20_000)) + "]}").encode()', "ok", "unreadable"),
    "deep_nesting": ('b"[" * 100_000 + b"]" * 100_000', "ok", "ignored"),
    "millions_of_empty_lists": ('b"[" + b"[]," * 6_000_000 + b"0]"', "output_limit", "none"),
    "millions_of_empty_dicts": ('b"[" + b"{}," * 6_000_000 + b"0]"', "output_limit", "none"),
    "many_empty_lists_within_budget": ('b"[" + b"[]," * 100_000 + b"0]"', "ok", "lists"),
    "huge_string": ('b\'"\' + b"x" * 12_000_000 + b\'"\'', "ok", "string"),
    "huge_non_ascii_string": ('b\'"\' + "\\u00e9".encode() * 6_000_000 + b\'"\'',
                              "output_limit", "none"),
    "over_the_byte_cap": ('b\'"\' + b"x" * 20_000_000 + b\'"\'', "output_limit", "none"),
}  # fmt: skip


def _vm_hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


@pytest.mark.parametrize("name", list(_RESULTS))
def test_adversarial_results_cost_bounded_memory(box, name):  # noqa: F811
    """The child forges its own result line; the server cuts the stream off once its decoding
    cost passes the budget, and the client refuses colliding keys. Measured: the client's
    Python allocations during the call and the server's peak RSS stay bounded (without the
    bounds the empty-list line alone cost 1.6 GB)."""
    expr, status, want = _RESULTS[name]
    code = f"import os\nb = {expr}\ndef f(x):\n    return 0\n"
    code += "os.write(3, b'{\"i\":0,\"ok\":true,\"out\":' + b + b'}\\n')\n"
    tracemalloc.start()
    try:
        ex = box.call(code, "f", [[1]], timeout=20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ex.status == status, (ex.status, ex.stderr[-500:])
    call = ex.calls[0]
    if want == "none":
        assert call is None
    elif want == "ignored":  # the forged line is unreadable: the call's own line counts
        assert call is not None and call.ok and call.value == 0
    elif want == "unreadable":
        assert call is not None and call.error == "unreadable return value"
    elif want == "lists":
        assert call.ok and len(call.value) == 100_001 and call.value[0] == []
    else:
        assert call.ok and len(call.value) == 12_000_000
    assert peak < 160 << 20, f"client allocated {peak >> 20} MB"
    assert _vm_hwm_mb(box.pid) < 400, "server peak RSS"


@pytest.mark.parametrize("make_key", [lambda k: k * _P, lambda k: [0, k * _P],
                                      lambda k: [[k * _P], "x"]])  # fmt: skip
def test_colliding_dict_keys_are_refused(make_key):
    pairs = [[make_key(k), k] for k in range(1, 20_000)]
    with pytest.raises(ValueError, match="colliding"):
        protocol.decode_value({"__dict__": pairs})
    few = protocol.decode_value({"__dict__": [[make_key(k), k] for k in range(1, 8)]})
    assert len(few) == 7  # a handful of equal hashes is fine
    assert protocol.decode_value({"__dict__": [[1, "a"], [[1, 2], "b"]]}) == {1: "a", (1, 2): "b"}


# --- 4. concurrent sandboxes ---------------------------------------------------------------------

_ATTACK = """
import os, resource, time
me, hits, refused = os.getpid(), [], []
calls = (
    ("prlimit", lambda pid: resource.prlimit(pid, resource.RLIMIT_AS, (50 << 20, 50 << 20))),
    ("nice", lambda pid: os.setpriority(os.PRIO_PROCESS, pid, 19)),
    ("affinity", lambda pid: os.sched_setaffinity(pid, {0})),
    ("scheduler", lambda pid: os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))),
)
end = time.monotonic() + 2.5
while time.monotonic() < end:
    for pid in range(1, PID_MAX + 1):
        if pid != me:
            for name, fn in calls:
                try:
                    fn(pid)
                    hits.append((name, pid))
                except OSError:
                    pass
for which, who in ((os.PRIO_USER, 0), (os.PRIO_USER, 65534), (os.PRIO_PGRP, 1)):
    try:
        os.setpriority(which, who, 19)
    except OSError:
        refused.append(which)
print(sorted(set(hits))[:20], len(refused))
"""

_HONEST = """
import os, resource, time
time.sleep(0.8)
data = bytearray(300 << 20)
print(resource.getrlimit(resource.RLIMIT_AS)[0] >> 20, os.getpriority(os.PRIO_PROCESS, 0),
      sorted(os.sched_getaffinity(0)), os.sched_getscheduler(0), len(data) >> 20)
"""


def test_a_child_cannot_touch_a_concurrent_sandbox(box, mode):  # noqa: F811
    pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
    other = Sandbox()
    mine = (os.getpriority(os.PRIO_PROCESS, 0), os.sched_getaffinity(0))
    try:
        other.ping()
        got: dict[str, object] = {}
        attacker = threading.Thread(target=lambda: got.setdefault(
            "attack", box.run(_ATTACK.replace("PID_MAX", str(pid_max)), timeout=10)))
        attacker.start()
        honest = other.run(_HONEST, timeout=10, memory_mb=1024)
        attacker.join()
    finally:
        other.close()
    cpus = sorted(os.sched_getaffinity(0))
    assert honest.status == "ok", honest.stderr
    # The honest child keeps the niceness it inherited from this process (19 under `nice`).
    assert honest.stdout.split("\n")[0] == f"1024 {mine[0]} {cpus} {os.SCHED_OTHER} 300"
    attack = got["attack"]
    assert attack.status == "ok", attack.stderr
    assert attack.stdout.startswith("[] "), attack.stdout  # no other pid was changed
    if mode == "kernel":  # under bubblewrap these reach only the attacker's own namespace
        assert attack.stdout.strip().endswith(" 3"), attack.stdout
    assert (os.getpriority(os.PRIO_PROCESS, 0), os.sched_getaffinity(0)) == mine


# --- 5. the work dir's size bound ---------------------------------------------------------------

_FILL = {
    "bytes": "for k in range(100):\n"
             "    with open(f'b{k}', 'wb') as f:\n"
             "        for _ in range(15):\n"
             "            f.write(b'x' * (1 << 20)); n += 1 << 20",
    "inodes": "for k in range(10**6):\n    open(f'f{k}', 'w').close(); n += 1",
    "directories": "for k in range(10**6):\n    os.mkdir(f'd{k}'); n += 1",
}  # fmt: skip


@pytest.mark.parametrize("how", sorted(_FILL))
def test_writing_past_the_work_dir_bound_is_a_disk_limit(box, how):  # noqa: F811
    bound = box.hello["disk_mb"]
    assert bound == workdir.DEFAULT_DISK_MB
    body = _FILL[how].replace("\n", "\n    ")
    code = f"import os\nn = 0\ntry:\n    {body}\nexcept OSError as exc:\n    print(n, exc.errno)\n"
    code += "st = os.statvfs('.')\nprint(st.f_blocks * st.f_frsize >> 20)"
    ex = box.run(code, timeout=20)
    assert ex.status == "disk_limit", (ex.status, ex.stderr[-500:])
    written, errno = map(int, ex.stdout.split("\n")[0].split())
    assert errno == 28 and ex.stdout.split("\n")[1] == str(bound)  # ENOSPC at the bound
    if how == "bytes":
        assert written <= bound << 20
    fresh = box.run("import os\nst = os.statvfs('.')\nprint(st.f_bfree > 0.99 * st.f_blocks)")
    assert (fresh.status, fresh.stdout) == ("ok", "True\n")


def test_small_writes_are_not_a_disk_limit(box):  # noqa: F811
    ex = box.run("open('f', 'wb').write(b'x' * (4 << 20))\nprint('ok')")
    assert (ex.status, ex.stdout) == ("ok", "ok\n")


def test_code_env_reports_the_disk_limit(mode):  # noqa: F811
    env = gym.make("textgyms/Code-v0", run_timeout=10.0)
    try:
        env.reset(seed=0)
        code = "for k in range(100):\n    open(f'b{k}', 'wb').write(b'x' * (15 << 20))"
        obs, *_ = env.step(f"<run>\n{code}\n</run>")
    finally:
        env.close()
    assert "Run finished: disk limit exceeded" in obs, obs



# --- outcomes are labelled by what stopped the run -------------------------------------------

_STOPPED = {
    "memory_limit": "x = bytearray(2 << 30)",
    "timeout": "while True:\n    pass",
    "error": "raise ValueError('wrong')",
}


@pytest.mark.parametrize("status", sorted(_STOPPED))
def test_outcomes_name_the_limit_that_stopped_the_run(box, status):  # noqa: F811
    ex = box.run(_STOPPED[status], timeout=1.0, memory_mb=256)
    assert ex.status == status, ex.stderr[-300:]
    call_code = f"def f(n):\n    if n:\n        {_STOPPED[status].replace(chr(10), chr(10) + '        ')}\n"
    call_code += "    return n"
    ex = box.call(call_code, "f", [[0], [1]], test_timeout=0.5, timeout=3.0, memory_mb=256)
    want = "ok" if status == "error" else status  # a call's exception fails that call only
    assert ex.status == want and ex.calls[0].value == 0 and ex.calls[1] is not None


_AS_NOBODY = """
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("workdir", sys.argv[1])
workdir = importlib.util.module_from_spec(spec)
spec.loader.exec_module(workdir)
root = sys.argv[2]
print(workdir.mount_bounded(root, 4, 64), os.geteuid())
n = 0
try:
    with open(os.path.join(root, "f"), "wb") as f:
        for _ in range(100):
            f.write(b"x" * (1 << 20)); f.flush(); n += 1
except OSError as exc:
    print(n, exc.errno, workdir.is_full(root))
"""


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv")
                    or not Path("/usr/bin/python3").exists(),
                    reason="needs root to become nobody (setpriv) and a system python3")  # fmt: skip
def test_unprivileged_server_bounds_its_work_dir_in_a_user_namespace(shm_base):
    """Not root: the bound comes from a user namespace that maps only the server's own uid
    (run as nobody with the system interpreter; the project's may be under /root)."""
    shm_base.chmod(0o777)
    root = shm_base / "root"
    root.mkdir(mode=0o777)
    root.chmod(0o777)
    # nobody may not be able to read the checkout (e.g. a clone in a 0700 temporary dir)
    module = shm_base / "workdir.py"
    module.write_bytes(Path(workdir.__file__).read_bytes())
    module.chmod(0o644)
    done = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3",
         "-c", _AS_NOBODY, str(module), str(root)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    if done.stdout.startswith("False"):
        pytest.skip("user namespaces are disabled here: the work dir is unbounded (documented)")
    assert done.stdout.split("\n")[:2] == ["True 65534", "4 28 True"], done.stdout + done.stderr
    assert not any(root.iterdir()), "the mount lived only in the server's namespace"
