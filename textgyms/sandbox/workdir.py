"""The server's work root: a size-bounded tmpfs where it can mount one, and removal of the file
trees agent code leaves in it.

Agent code decides the shape of what it leaves behind (a hundred thousand nested directories,
a million empty files, directories it took the permissions off), so removal here never
recurses, keeps one directory descriptor open at a time (plus one while descending), and
works below ``PATH_MAX``-deep trees by walking with ``*at`` calls relative to that descriptor.
The child that made the tree has exited (and, in ``kernel`` mode, could not fork), so nothing
changes the tree while it is removed; the walk still refuses symlinks and checks each ascent.

The bound (:func:`mount_bounded`): the server moves itself into a private mount namespace
(as root directly; otherwise inside a user namespace that maps only its own uid) and mounts a
tmpfs of ``disk_mb`` MiB and ``inodes`` inodes, ``nosuid,nodev,noexec``, over its work root.
Files a run writes then cost at most that much RAM, a run that writes past it gets ``ENOSPC``
(reported as the ``disk_limit`` outcome, :func:`is_full`), and the mount disappears with the
server's namespace: a server killed with ``SIGKILL`` leaves only an empty directory behind.
"""

from __future__ import annotations

import ctypes
import os
import stat

__all__ = ["remove_tree", "clear_dir", "mount_bounded", "unmount", "is_full", "DISK_ENV"]

DISK_ENV = "TEXTGYMS_SANDBOX_DISK_MB"  # the work root's size bound in MiB (default 64)
DEFAULT_DISK_MB = 64
_libc = ctypes.CDLL(None, use_errno=True)
_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
_MNT_DETACH = 2
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path: str) -> None:
    """Delete ``path`` (a directory, a file or a symlink) and everything beneath it; see the
    module docstring. Raises OSError if something cannot be removed."""
    parent, name = os.path.split(os.path.abspath(path))
    pfd = os.open(parent, _DIR_FLAGS)
    try:
        st = os.stat(name, dir_fd=pfd, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            _clear(pfd, name, st)
            os.rmdir(name, dir_fd=pfd)
        else:
            os.unlink(name, dir_fd=pfd)
    finally:
        os.close(pfd)


def clear_dir(path: str) -> None:
    """Delete everything beneath directory ``path``, keeping ``path`` itself."""
    parent, name = os.path.split(os.path.abspath(path))
    pfd = os.open(parent, _DIR_FLAGS)
    try:
        _clear(pfd, name, os.stat(name, dir_fd=pfd, follow_symlinks=False))
    finally:
        os.close(pfd)


def _open_dir(pfd: int, name: str, st: os.stat_result) -> int:
    """Open subdirectory ``name`` of ``pfd`` for the walk, giving its owner full rights back
    first if the agent took them away (needed when the server is not root)."""
    if stat.S_IMODE(st.st_mode) & 0o700 != 0o700:
        os.chmod(name, 0o700, dir_fd=pfd)  # a directory (lstat above), not a symlink
    fd = os.open(name, _DIR_FLAGS, dir_fd=pfd)
    got = os.fstat(fd)
    if (got.st_dev, got.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        raise OSError(f"sandbox work tree changed while being removed: {name!r}")
    return fd


def _clear(pfd: int, name: str, st: os.stat_result) -> None:
    """Empty directory ``name`` of ``pfd`` without recursion: each level lists its entries
    once, unlinks the non-directories and keeps the subdirectory names still to visit."""
    fd = _open_dir(pfd, name, st)
    # One frame per level below the top: (dev, ino) of the directory, its name in its parent
    # and the subdirectories it still has to visit. The top frame's name is never used.
    stack = [((st.st_dev, st.st_ino), name, _unlink_files(fd))]
    try:
        while stack:
            ident, own_name, todo = stack[-1]
            if todo:
                sub = todo.pop()
                sub_st = os.stat(sub, dir_fd=fd, follow_symlinks=False)
                child = _open_dir(fd, sub, sub_st)
                os.close(fd)
                fd = child
                stack.append(((sub_st.st_dev, sub_st.st_ino), sub, _unlink_files(fd)))
                continue
            stack.pop()
            if not stack:
                break
            up = os.open("..", _DIR_FLAGS, dir_fd=fd)
            got = os.fstat(up)
            if (got.st_dev, got.st_ino) != stack[-1][0]:
                os.close(up)
                raise OSError(f"sandbox work tree changed while being removed: {own_name!r}")
            os.close(fd)
            fd = up
            os.rmdir(own_name, dir_fd=fd)
    finally:
        os.close(fd)


def _unlink_files(fd: int) -> list[str]:
    """Unlink every entry of directory ``fd`` that is not a directory; return the names of
    its subdirectories."""
    dirs = []
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                dirs.append(entry.name)
            else:
                os.unlink(entry.name, dir_fd=fd)
    return dirs


def disk_bound_mb() -> int:
    """The work root's size bound: ``$TEXTGYMS_SANDBOX_DISK_MB`` or 64."""
    raw = os.environ.get(DISK_ENV, "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else DEFAULT_DISK_MB


def mount_bounded(path: str, disk_mb: int, inodes: int) -> bool:
    """Mount a tmpfs of ``disk_mb`` MiB and ``inodes`` inodes over directory ``path`` in a
    private mount namespace of this (single-threaded) process; False if this kernel or these
    privileges allow neither way described in the module docstring."""
    if not _private_namespace():
        return False
    opts = f"size={disk_mb}m,nr_inodes={inodes},mode=0711".encode()
    flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    return _libc.mount(b"textgyms-sandbox", path.encode(), b"tmpfs", flags, opts) == 0


def _private_namespace() -> bool:
    if os.geteuid() == 0:
        if _libc.unshare(_CLONE_NEWNS) != 0:
            return False
    else:
        uid, gid = os.geteuid(), os.getegid()
        if _libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS) != 0:
            return False
        try:  # only our own ids: this process keeps its uid, files keep their owner
            for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                               ("gid_map", f"{gid} {gid} 1")):  # fmt: skip
                with open(f"/proc/self/{name}", "w") as f:
                    f.write(text)
        except OSError:
            return False
    # Mounts made here must not propagate back to the host's namespace.
    return _libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) == 0


def unmount(path: str) -> None:
    """Detach the tmpfs mounted over ``path`` (ignored if there is none)."""
    _libc.umount2(path.encode(), _MNT_DETACH)


def is_full(path: str) -> bool:
    """True when the file system of ``path`` has no free block or no free inode left: the
    run that just ended wrote up to the bound."""
    st = os.statvfs(path)
    return st.f_bavail == 0 or st.f_favail == 0
