"""The bubblewrap fallback: the zygote and its children in one ``bwrap`` sandbox.

Used when Landlock or seccomp is unavailable (or ``TEXTGYMS_SANDBOX=bwrap`` forces it). The
server stays outside, so nothing inside can reach its memory (earlier requests and replies)
or its descriptors; it starts ``bwrap`` with

* new PID, network, IPC, UTS (and cgroup, where possible) namespaces, a new session, death
  with the server, and all capabilities dropped. Not as root: a user namespace too, where
  the zygote and its children are ``nobody`` (65534), and no further user namespaces. As root:
  no user namespace (in one, ``nobody`` inside would be root outside, which ``RLIMIT_NPROC``
  does not bound); the zygote keeps ``CAP_SETUID``, ``CAP_SETGID`` and ``CAP_KILL`` only, and
  each child drops to ``nobody`` as in the kernel mode (and so loses them). The zygote runs as
  PID 1 (``--as-pid-1``): the kernel drops the signals its children send it, and all of them
  die with it. It is not dumpable: no child can ptrace it or read its memory;
* a read-only root (an empty tmpfs) with read-only binds of exactly the paths Landlock would
  allow (:func:`textgyms.sandbox.server.allowed_read_paths`: the interpreter, its stdlib,
  numpy and system libraries; of site-packages nothing else), ``/dev/null``,
  ``/dev/urandom`` and a user database of root and nobody (:data:`ACCOUNTS`), no ``/proc``,
  ``/tmp`` or ``/dev/shm``; and the server's work root, the only writable path, which holds
  nothing but the running child's fresh working directory.

No file of textgyms is readable inside: the bootstrap gets the sandbox's own modules
(:data:`MODULES`) as source over a pipe and runs :func:`textgyms.sandbox.zygote.boot`.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["ACCOUNTS", "MODE_ENV", "MODES", "available", "command", "spawn"]

MODE_ENV = "TEXTGYMS_SANDBOX"  # "auto" (default), "kernel" or "bwrap"
MODES = ("auto", "kernel", "bwrap")
MODULES = ("protocol", "confine", "child", "reach", "zygote")  # in import order
_HERE = Path(__file__).resolve().parent
_FLAGS = [
    "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
    "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--as-pid-1",
]  # fmt: skip
# Not root: nobody inside, mapped to this user. Root: no user namespace (in one, nobody would be
# root outside, which RLIMIT_NPROC does not limit); the zygote keeps the capabilities to drop
# its children to nobody and to kill them, nothing else.
_AS_USER = ["--unshare-user", "--uid", "65534", "--gid", "65534", "--disable-userns"]
_AS_ROOT = ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_KILL"]
# Builds the package and its modules from the sources on fd argv[1], then boots the zygote
# on the socket argv[2].
_BOOT = """\
import json, os, sys, types
with os.fdopen(int(sys.argv[1]), "rb") as f:
    spec = json.loads(f.read())
for name in ("textgyms", "textgyms.sandbox"):
    sys.modules[name] = types.ModuleType(name)
    sys.modules[name].__path__ = []
for name, source in spec.pop("modules"):
    module = sys.modules[name] = types.ModuleType(name)
    exec(compile(source, name.replace(".", "/") + ".py", "exec"), module.__dict__)
    setattr(sys.modules["textgyms.sandbox"], name.rpartition(".")[2], module)
sys.modules["textgyms.sandbox.zygote"].boot(int(sys.argv[2]), spec)
"""


# The user database inside: root and nobody only, as in a minimal container image, with
# nobody's home "/" as systemd's resolver gives it in kernel mode. The children's own ids
# resolve (``pwd``, ``grp``), and nothing names the host's users.
ACCOUNTS = {
    "/etc/passwd": "root:x:0:0:root:/root:/usr/sbin/nologin\n"
                   "nobody:x:65534:65534:nobody:/:/usr/sbin/nologin\n",
    "/etc/group": "root:x:0:\nnogroup:x:65534:\n",
}


def _interpreter() -> str:
    return os.path.realpath(sys.executable)


def command(read_paths: list[str], workroot: str | None, argv: list[str],
            accounts: dict[str, int] | None = None) -> list[str]:
    """The ``bwrap`` command line that runs ``argv`` in the sandbox described above;
    ``accounts``: path -> a descriptor to read that file's contents from (:data:`ACCOUNTS`)."""
    accounts = accounts or {}
    binds = [p for p in read_paths if not p.startswith("/dev/")]
    targets = [*binds, "/dev/null", "/dev/urandom", *([workroot] if workroot else []),
               *accounts]
    args = ["bwrap", *_FLAGS, *(_AS_ROOT if os.geteuid() == 0 else _AS_USER)]
    # The directories bwrap makes for mount points would be 0700 (root's, as root).
    for parent in sorted({str(a) for t in targets for a in Path(t).parents} - {"/"}):
        args += ["--perms", "0755", "--dir", parent]
    for path in binds:
        args += ["--ro-bind", path, path]
    for dev in ("/dev/null", "/dev/urandom"):
        args += ["--dev-bind", dev, dev]
    if workroot is not None:
        args += ["--bind", workroot, workroot]
    for path, fd in accounts.items():
        args += ["--perms", "0444", "--ro-bind-data", str(fd), path]
    args += ["--remount-ro", "/", "--chdir", "/", "--", *argv]
    return args


@functools.lru_cache(maxsize=1)
def available() -> bool:
    """``bwrap`` is on PATH and can make these namespaces here (user namespaces may be
    disabled, e.g. in some containers); probed once per process."""
    if shutil.which("bwrap") is None:
        return False
    python = _interpreter()
    argv = [python, "-S", "-c", "pass"]
    try:
        done = subprocess.run(
            command([python, *_python_paths()], None, argv),
            stdin=subprocess.DEVNULL, capture_output=True, timeout=30, close_fds=True,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _python_paths() -> list[str]:
    import sysconfig

    base = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_prefix})
    paths = {base["stdlib"], base["platstdlib"], "/usr/lib", "/usr/lib64", "/lib", "/lib64"}
    return sorted(p for p in paths if os.path.exists(p))


def _readable(text: str) -> int:
    """A descriptor to read ``text`` from (a pipe whose writing end is closed; the text is
    far below a pipe's buffer, so the write never blocks)."""
    r, w = os.pipe()
    with os.fdopen(w, "wb") as f:
        f.write(text.encode())
    return r


def spawn(
    sock_fd: int, read_paths: list[str], workroot: str, kernel_layers: bool, env: dict[str, str],
    numpy: bool = False,
) -> subprocess.Popen:
    """Start the zygote in a new sandbox, talking to the server on ``sock_fd``.

    ``kernel_layers``: whether children also apply whichever of Landlock and seccomp the
    kernel offers (the automatic fallback), or bubblewrap alone (``TEXTGYMS_SANDBOX=bwrap``).
    ``numpy``: whether it pre-imports numpy (:data:`textgyms.sandbox.zygote.HEAVY`)."""
    modules = [
        (f"textgyms.sandbox.{name}", (_HERE / f"{name}.py").read_text()) for name in MODULES
    ]
    spec = {"modules": modules, "workroot": workroot, "read_paths": read_paths,
            "kernel_layers": kernel_layers, "numpy": numpy}  # fmt: skip
    # Only the directories holding allowed packages (numpy) are importable inside.
    sites = sorted({os.path.dirname(p) for p in read_paths if "-packages/" in p})
    r, w = os.pipe()
    argv = [_interpreter(), "-S", "-B", "-c", _BOOT, str(r), str(sock_fd)]
    files = {path: _readable(text) for path, text in ACCOUNTS.items()}
    try:
        proc = subprocess.Popen(
            command(read_paths, workroot, argv, files),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            env={**env, "PYTHONPATH": os.pathsep.join(sites)},
            pass_fds=(r, sock_fd, *files.values()), close_fds=True,
        )  # fmt: skip
    finally:
        for fd in (r, *files.values()):
            os.close(fd)
    with os.fdopen(w, "wb") as f:
        f.write(json.dumps(spec).encode())
    return proc
