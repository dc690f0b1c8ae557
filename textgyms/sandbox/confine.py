"""Kernel confinement of a sandbox child, with ctypes only: rlimits, dropped privileges,
no-new-privs, Landlock and seccomp-BPF.

Everything here runs in a freshly forked child, in this order (:func:`confine`):

1. resource limits (address space, CPU seconds, file size, open files, no core dumps);
2. as root: drop to ``nobody`` (65534) with no supplementary groups, so a confined child
   is not root even for the files Landlock lets it see;
3. ``PR_SET_NO_NEW_PRIVS`` (required by Landlock and seccomp for unprivileged use);
4. Landlock: read-only access beneath the allowed paths (interpreter, stdlib, numpy, system
   libraries), full access beneath the server's work root only (which holds nothing but the
   running child's fresh working directory), no TCP bind/connect (ABI >= 4), and no signals
   or abstract Unix sockets outside the child (ABI >= 6);
5. seccomp: a deny-list filter (``EPERM``) on sockets, process creation (``clone`` is allowed
   only for threads), exec, ptrace and cross-process memory access, signals to other
   processes, mount and namespace calls, kernel modules, keyrings, bpf, io_uring, and System V
   IPC and POSIX message queues (they outlive a run); and the calls that change another
   process (``prlimit64``, ``setpriority``, ``sched_setaffinity``, ``ioprio_set``, ...) are
   allowed on the caller itself only.

:func:`probe` reports what the running kernel supports, and :class:`Prepared` builds the
ruleset and the filter, once, in the server (or, under bubblewrap, in the zygote, which then
applies only the layers the kernel has, or none when bubblewrap is forced; there, a child
that is not root still gets ``RLIMIT_NPROC``).
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import platform
import resource
import signal
import struct
from dataclasses import dataclass

__all__ = [
    "Limits", "Support", "Prepared", "probe", "confine", "set_dumpable", "NOBODY", "UNSAFE_ENV"
]

NOBODY = 65534
UNSAFE_ENV = "TEXTGYMS_SANDBOX_UNSAFE"  # "1": run without full confinement (loud warning)
_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long

# --- Landlock (include/uapi/linux/landlock.h) -------------------------------------------------
_SYS_CREATE, _SYS_ADD_RULE, _SYS_RESTRICT = 444, 445, 446  # the same on every architecture
_CREATE_VERSION = 1
_RULE_PATH_BENEATH = 1
_FS_EXECUTE, _FS_WRITE_FILE, _FS_READ_FILE, _FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_ALL_V1 = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
_FS_REFER, _FS_TRUNCATE, _FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_READ_ONLY = _FS_EXECUTE | _FS_READ_FILE | _FS_READ_DIR
_FILE_RIGHTS = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV

# --- seccomp (include/uapi/linux/seccomp.h, filter.h, audit.h) --------------------------------
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _PR_GET_SECCOMP, _PR_SET_PDEATHSIG = 38, 22, 21, 1
_PR_SET_DUMPABLE = 4
_SECCOMP_MODE_FILTER = 2
_AUDIT_ARCH_X86_64 = 0xC000003E
_RET_ALLOW, _RET_KILL, _RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
_EPERM, _ENOSYS = 1, 38
_CLONE_THREAD = 0x00010000
_LD_W_ABS, _JEQ_K, _JSET_K, _JGE_K, _RET_K = 0x20, 0x15, 0x45, 0x35, 0x06

# x86_64 syscall numbers denied with EPERM (asm/unistd_64.h). clone is filtered on its flags
# and clone3 answers ENOSYS, which makes glibc fall back to clone for threads.
_DENIED_X86_64 = {
    "socket": 41, "connect": 42, "accept": 43, "bind": 49, "listen": 50,
    "accept4": 288, "fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "kill": 62,
    "tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297,
    "pidfd_open": 434, "pidfd_send_signal": 424, "pidfd_getfd": 438, "ptrace": 101,
    "process_vm_readv": 310, "process_vm_writev": 311, "process_madvise": 440,
    "setpgid": 109, "setsid": 112, "setuid": 105, "setgid": 106, "setreuid": 113,
    "setregid": 114, "setgroups": 116, "setresuid": 117, "setresgid": 119, "setfsuid": 122,
    "setfsgid": 123, "capset": 126, "personality": 135, "mknod": 133, "mknodat": 259,
    "chroot": 161, "pivot_root": 155, "mount": 165, "umount2": 166, "open_tree": 428,
    "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "mount_setattr": 442, "unshare": 272, "setns": 308, "swapon": 167, "swapoff": 168,
    "reboot": 169, "sethostname": 170, "setdomainname": 171, "iopl": 172, "ioperm": 173,
    "init_module": 175, "finit_module": 313, "delete_module": 176, "kexec_load": 246,
    "kexec_file_load": 320, "quotactl": 179, "acct": 163, "settimeofday": 164,
    "clock_settime": 227, "syslog": 103, "vhangup": 153, "lookup_dcookie": 212,
    "add_key": 248, "request_key": 249, "keyctl": 250, "bpf": 321, "perf_event_open": 298,
    "userfaultfd": 323, "name_to_handle_at": 303, "open_by_handle_at": 304,
    "kcmp": 312, "process_mrelease": 448,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    # System V IPC and POSIX message queues outlive the process that made them, so one run
    # could leave state for a later run (of any episode) to read.
    "shmget": 29, "shmat": 30, "shmctl": 31, "semget": 64, "semop": 65, "semctl": 66,
    "shmdt": 67, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "semtimedop": 220,
    "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243,
    "mq_notify": 244, "mq_getsetattr": 245,
}  # fmt: skip
_CLONE, _CLONE3 = 56, 435
# Calls whose first argument names the process they change: allowed on the caller only
# (pid 0), so that no child can lower another's limits, renice it, pin it to a CPU, change
# its scheduling or move its memory (children of concurrent sandboxes share the uid nobody).
_SELF_ONLY_X86_64 = {
    "prlimit64": 302, "sched_setaffinity": 203, "sched_setscheduler": 144,
    "sched_setparam": 142, "sched_setattr": 314, "migrate_pages": 256, "move_pages": 279,
}  # fmt: skip
_SETPRIORITY, _IOPRIO_SET = 141, 251
# socketpair(AF_UNIX, SOCK_STREAM, ...) only: two connected ends within the process, which
# reach nothing else (a stream end refuses a destination address, and no other socket can be
# made, bound or connected). asyncio's event loop wakes itself through one.
_SOCKETPAIR, _AF_UNIX, _SOCK_STREAM = 53, 1, 1
_SOCK_TYPE_BITS = 0xF  # the type proper, below SOCK_NONBLOCK and SOCK_CLOEXEC


@dataclass(frozen=True)
class Limits:
    """Per-execution resource limits."""

    memory_mb: int = 1024  # RLIMIT_AS
    cpu_seconds: int = 10  # RLIMIT_CPU (the wall-clock deadline is enforced by the server)
    file_mb: int = 16  # RLIMIT_FSIZE: the largest file the child may write
    open_files: int = 64  # RLIMIT_NOFILE
    threads: int = 64  # RLIMIT_NPROC, applied only once dropped to nobody (it is per user)


@dataclass(frozen=True)
class Support:
    """What the running kernel offers, probed once by the server."""

    landlock_abi: int  # 0 when Landlock is unavailable (or not applied)
    seccomp: bool
    root: bool
    mode: str = "kernel"  # "kernel", "bwrap" or "unsafe": see textgyms.sandbox.server

    @property
    def confined(self) -> bool:
        """Landlock and seccomp both usable: the sandbox holds without outside help."""
        return self.landlock_abi >= 1 and self.seccomp

    def describe(self) -> str:
        """One line for logs and error messages."""
        ll = f"Landlock ABI {self.landlock_abi}" if self.landlock_abi else "no Landlock"
        sc = "seccomp-BPF" if self.seccomp else "no seccomp-BPF"
        who = "root (drops to nobody)" if self.root else "unprivileged"
        return f"{ll}, {sc}, {who}" + (", inside bubblewrap" if self.mode == "bwrap" else "")


def probe() -> Support:
    """Probe Landlock's ABI version and seccomp-BPF support of this kernel and architecture."""
    abi = _syscall(_SYS_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_VERSION))
    prctl_ok = _prctl(_PR_GET_SECCOMP, 0) >= 0
    seccomp = prctl_ok and platform.machine() == "x86_64"
    return Support(max(int(abi), 0), seccomp, os.geteuid() == 0)


class Prepared:
    """What the server builds once and every child applies: the Landlock ruleset (as a
    descriptor, inherited over fork) and the seccomp program. Building them per child would
    cost a dozen path lookups and the BPF assembly on every execution."""

    def __init__(self, workroot: str, read_paths: list[str], support: Support) -> None:
        self.ruleset_fd = -1
        if support.landlock_abi:
            fd = _ruleset(workroot, read_paths, support.landlock_abi)
            # Above the descriptors a child rewires (0-4), closed in children after use.
            self.ruleset_fd = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
            os.close(fd)
        prog = _bpf_program()
        self._filter = ctypes.create_string_buffer(prog, len(prog))
        fprog = struct.pack("=HxxxxxxQ", len(prog) // 8, ctypes.addressof(self._filter))
        self._fprog = ctypes.create_string_buffer(fprog, len(fprog))
        self.fprog_address = ctypes.addressof(self._fprog)


def confine(prepared: Prepared, limits: Limits, support: Support) -> None:
    """Confine the calling (single-threaded, freshly forked) process; raise OSError if a
    layer that ``support`` says is available cannot be applied."""
    _set_rlimits(limits)
    if support.root:
        _drop_privileges(limits)
    elif support.mode == "bwrap":  # nobody in its own user namespace: the count is the sandbox's
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.threads,) * 2)
    if _prctl(_PR_SET_NO_NEW_PRIVS, 1) != 0:
        _raise("prctl(PR_SET_NO_NEW_PRIVS)")
    if support.landlock_abi:
        rfd = prepared.ruleset_fd
        if _syscall(_SYS_RESTRICT, ctypes.c_int(rfd), ctypes.c_uint32(0)) != 0:
            _raise("landlock_restrict_self")
    if support.seccomp:
        if _prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, prepared.fprog_address) != 0:
            _raise("prctl(PR_SET_SECCOMP)")


def die_with_parent() -> None:
    """SIGKILL this process when the server that forked it dies."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def set_dumpable(flag: bool) -> None:
    """PR_SET_DUMPABLE: a process that is not dumpable (nor its forks) cannot be ptraced, nor
    its /proc files read, by another process of the same user without CAP_SYS_PTRACE."""
    if _prctl(_PR_SET_DUMPABLE, int(flag)) != 0:
        _raise("prctl(PR_SET_DUMPABLE)")


def _set_rlimits(limits: Limits) -> None:
    mb = 1 << 20
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_mb * mb,) * 2)
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_mb * mb,) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files,) * 2)


def _drop_privileges(limits: Limits) -> None:
    """Root -> nobody:nogroup with no supplementary groups (and so no capabilities)."""
    os.setgroups([])
    os.setresgid(NOBODY, NOBODY, NOBODY)
    os.setresuid(NOBODY, NOBODY, NOBODY)
    # Counted per user: as nobody it bounds the child's threads, not the machine's processes.
    resource.setrlimit(resource.RLIMIT_NPROC, (limits.threads,) * 2)


def _ruleset(workroot: str, read_paths: list[str], abi: int) -> int:
    """A Landlock ruleset: read-only beneath ``read_paths``, everything beneath ``workroot``
    (which only ever holds the running child's fresh working directory), no TCP, and no
    signals or abstract sockets beyond the sandboxed process (ABI >= 6)."""
    fs = _FS_ALL_V1
    fs |= _FS_REFER if abi >= 2 else 0
    fs |= _FS_TRUNCATE if abi >= 3 else 0
    fs |= _FS_IOCTL_DEV if abi >= 5 else 0
    net = _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0
    scoped = _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL if abi >= 6 else 0
    attr = struct.pack("=QQQ", fs, net, scoped)[: 8 if abi < 4 else 16 if abi < 6 else 24]
    buf = ctypes.create_string_buffer(attr, len(attr))
    rfd = _syscall(_SYS_CREATE, buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if rfd < 0:
        _raise("landlock_create_ruleset")
    try:
        for path in read_paths:
            _allow(rfd, path, _READ_ONLY & fs)
        _allow(rfd, workroot, fs)
    except OSError:
        os.close(rfd)
        raise
    return rfd


def _allow(rfd: int, path: str, access: int) -> None:
    """Add a path-beneath rule; a missing path is skipped (it grants nothing)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            access &= _FILE_RIGHTS
        rule = ctypes.create_string_buffer(struct.pack("=Qi", access, fd), 12)
        if _syscall(_SYS_ADD_RULE, ctypes.c_int(rfd), ctypes.c_int(_RULE_PATH_BENEATH), rule,
                    ctypes.c_uint32(0)) != 0:  # fmt: skip
            _raise(f"landlock_add_rule({path})")
    finally:
        os.close(fd)


def _bpf_program() -> bytes:
    """The seccomp-BPF program (x86_64): deny-list with EPERM, threads-only clone, and the
    calls that can act on another process allowed only on the caller itself (pid 0)."""
    prog = _Program()
    prog.load(4)  # the architecture
    prog.jeq(_AUDIT_ARCH_X86_64, None, "kill")
    prog.load(0)  # the syscall number
    prog.jge(0x40000000, "eperm")  # the x32 ABI
    _dispatch(prog, sorted(_special_calls().items()))
    prog.label("clone")
    prog.load(16)  # the flags: low word of args[0]
    prog.jset(_CLONE_THREAD, "allow", "eperm")
    prog.label("self")  # pid (args[0], an int: the kernel reads its low word) must be 0
    prog.load(16)
    prog.jeq(0, "allow", "eperm")
    prog.label("priority")  # setpriority(PRIO_PROCESS, 0, n) only: not a group or a user
    prog.load(16)
    prog.jeq(0, None, "eperm")
    prog.load(24)
    prog.jeq(0, "allow", "eperm")
    prog.label("ioprio")  # ioprio_set(IOPRIO_WHO_PROCESS, 0, n) only
    prog.load(16)
    prog.jeq(1, None, "eperm")
    prog.load(24)
    prog.jeq(0, "allow", "eperm")
    prog.label("pair")  # socketpair(AF_UNIX, SOCK_STREAM | flags, ...) only
    prog.load(16)
    prog.jeq(_AF_UNIX, None, "eperm")
    prog.load(24)
    prog.jset(_SOCK_TYPE_BITS & ~_SOCK_STREAM, "eperm")
    prog.jset(_SOCK_STREAM, "allow", "eperm")
    for name, value in (("allow", _RET_ALLOW), ("eperm", _RET_ERRNO | _EPERM),
                        ("enosys", _RET_ERRNO | _ENOSYS), ("kill", _RET_KILL)):  # fmt: skip
        prog.label(name)
        prog.ret(value)
    return prog.assemble()


def _special_calls() -> dict[int, str]:
    """Every syscall number the filter does not simply allow, with the label handling it."""
    calls = {nr: "eperm" for nr in _DENIED_X86_64.values()}
    calls.update({nr: "self" for nr in _SELF_ONLY_X86_64.values()})
    calls.update({_CLONE3: "enosys", _CLONE: "clone", _SETPRIORITY: "priority",
                  _IOPRIO_SET: "ioprio", _SOCKETPAIR: "pair"})  # fmt: skip
    return calls


def _dispatch(prog: _Program, calls: list[tuple[int, str]], leaf: int = 4) -> None:
    """Jump to the label of the syscall number in the accumulator, or to ``allow``: a binary
    search over ``calls`` (sorted), not a linear scan. The kernel runs the program once per
    syscall number when the filter is attached (to cache the always-allowed ones), so a scan
    of ~100 comparisons cost every child ~130 us there, and every uncached call later."""
    if len(calls) <= leaf:
        for i, (nr, label) in enumerate(calls):
            prog.jeq(nr, label, "allow" if i == len(calls) - 1 else None)
        return
    mid = len(calls) // 2
    upper = prog.fresh_label()
    prog.jge(calls[mid][0], upper)
    _dispatch(prog, calls[:mid], leaf)
    prog.label(upper)
    _dispatch(prog, calls[mid:], leaf)


class _Program:
    """A tiny BPF assembler: conditional jumps name labels (None: fall through), resolved to
    the relative offsets BPF wants by :meth:`assemble`."""

    def __init__(self) -> None:
        self.ins: list[tuple[int, object, object, int]] = []
        self.labels: dict[str, int] = {}
        self.fresh = 0

    def label(self, name: str) -> None:
        self.labels[name] = len(self.ins)

    def fresh_label(self) -> str:
        """A label name not used yet (for the branches of :func:`_dispatch`)."""
        self.fresh += 1
        return f"_branch{self.fresh}"

    def load(self, offset: int) -> None:
        self.ins.append((_LD_W_ABS, None, None, offset))

    def ret(self, value: int) -> None:
        self.ins.append((_RET_K, None, None, value))

    def jeq(self, k: int, true: str | None, false: str | None = None) -> None:
        self.ins.append((_JEQ_K, true, false, k))

    def jge(self, k: int, true: str | None, false: str | None = None) -> None:
        self.ins.append((_JGE_K, true, false, k))

    def jset(self, k: int, true: str | None, false: str | None = None) -> None:
        self.ins.append((_JSET_K, true, false, k))

    def assemble(self) -> bytes:
        out = []
        for pc, (code, true, false, k) in enumerate(self.ins):
            jt, jf = (0 if t is None else self.labels[t] - pc - 1 for t in (true, false))
            if not (0 <= jt < 256 and 0 <= jf < 256):
                raise ValueError("seccomp program: a jump is out of range")
            out.append(struct.pack("=HBBI", code, jt, jf, k))
        return b"".join(out)


def _prctl(option: int, arg2: int = 0, arg3: int = 0) -> int:
    """prctl with every argument passed as a full unsigned long (unused ones zero)."""
    ul = ctypes.c_ulong
    return _libc.prctl(ctypes.c_int(option), ul(arg2), ul(arg3), ul(0), ul(0))


def _raise(what: str) -> None:
    err = ctypes.get_errno()
    raise OSError(err, f"{what} failed: {os.strerror(err)}")
