"""A child imports every stdlib module its interpreter has, even where the interpreter lies
under a directory the child's user cannot enter (textgyms.sandbox.reach)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from textgyms.sandbox import Sandbox, bwrap, reach

# Modules whose import opens windows, prints or needs a display: not about reachability.
_SKIP = {"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo"}
_NAMES = sorted(n for n in sys.stdlib_module_names if not n.startswith("_") and n not in _SKIP)
_PROBE = (
    "import importlib\nbad = []\n"
    f"for name in {_NAMES!r}:\n"
    "    try:\n        importlib.import_module(name)\n"
    "    except BaseException as exc:\n        bad.append(name)\n"
    "print(sorted(bad))\n"
)


@pytest.mark.parametrize("mode", ["kernel", "bwrap"])
def test_a_child_imports_every_stdlib_module_the_interpreter_has(mode, monkeypatch):
    """The same modules fail in a child as in a plain interpreter (those of other systems:
    ``winreg``, ``msvcrt``, ...). As root with pyenv under /root, 111 of 211 failed in
    kernel mode before the children imported through the zygote's open directories."""
    if mode == "bwrap" and shutil.which("bwrap") is None:
        pytest.skip("apt-get install bubblewrap")
    host = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                          check=True).stdout
    monkeypatch.setenv(bwrap.MODE_ENV, mode)
    with Sandbox() as sandbox:
        ex = sandbox.run(_PROBE, timeout=60, memory_mb=2048)
    assert ex.stderr == ""
    assert ex.stdout == host


_TOPO = """
import graphlib, contextvars, asyncio, sqlite3, xml.etree.ElementTree as ET

def order(edges):
    ts = graphlib.TopologicalSorter({b: {a} for a, b in edges})
    return list(ts.static_order())

def parsed(text):
    return [e.tag for e in ET.fromstring(text)]

def rows(n):
    db = sqlite3.connect(":memory:")
    db.execute("create table t (x)")
    db.executemany("insert into t values (?)", [(i,) for i in range(n)])
    return db.execute("select sum(x) from t").fetchone()[0]

def awaited(x):
    async def twice():
        await asyncio.sleep(0)
        return 2 * x
    return asyncio.run(twice())
"""


def test_solutions_using_stdlib_modules_outside_the_zygote_get_their_results():
    """What a correct solution computes with modules no zygote pre-imports (pure Python,
    C extensions, packages, an asyncio event loop) comes back, and a wrong one's differs."""
    with Sandbox() as sandbox:
        got = sandbox.call(_TOPO, "order", [[[["a", "b"], ["b", "c"]]]])
        assert [r.value for r in got.calls] == [["a", "b", "c"]]
        assert [r.value for r in sandbox.call(_TOPO, "parsed", [["<r><a/><b/></r>"]]).calls] \
            == [["a", "b"]]
        assert [r.value for r in sandbox.call(_TOPO, "rows", [[4]]).calls] == [6]
        assert [r.value for r in sandbox.call(_TOPO, "awaited", [[21]]).calls] == [42]
        wrong = sandbox.call(_TOPO.replace("{b: {a}", "{a: {b}"), "order",
                             [[[["a", "b"], ["b", "c"]]]])
        assert [r.value for r in wrong.calls] == [["c", "b", "a"]]


_WHO = """
import getpass, os, pathlib
print(pathlib.Path.home(), os.path.expanduser("~/x"), getpass.getuser())
print(os.environ.get("HOME"), os.environ.get("USER"), os.environ.get("LOGNAME"))
"""
_ACCOUNTS = """
import grp, os, pwd
print(pwd.getpwuid(os.getuid()).pw_name, pwd.getpwuid(os.getuid()).pw_dir,
      grp.getgrgid(os.getgid()).gr_name, sorted(p.pw_name for p in pwd.getpwall()))
"""


@pytest.mark.parametrize("mode", ["kernel", "bwrap"])
def test_a_child_knows_its_home_and_its_name(mode, monkeypatch):
    """``Path.home()``, ``expanduser`` and ``getpass.getuser()`` answer the same in every
    mode, whatever the host's user database: under bubblewrap, which had none, the first
    raised ``RuntimeError`` and the last ``KeyError``, failing correct solutions that call
    them. The environment answers, as a login's does, so that no user database is needed
    (kernel mode's children cannot read the host's, and a host whose resolver does not
    synthesize nobody has none to offer them). Under bubblewrap the children's own ids
    resolve too, and no user of the host is listed."""
    if mode == "bwrap" and shutil.which("bwrap") is None:
        pytest.skip("apt-get install bubblewrap")
    monkeypatch.setenv(bwrap.MODE_ENV, mode)
    with Sandbox() as sandbox:
        who = sandbox.run(_WHO)
        accounts = sandbox.run(_ACCOUNTS)
        uid = sandbox.run("import os; print(os.getuid())").stdout.strip()
    assert (who.stderr, who.stdout) == ("", "/ /x nobody\n/ nobody nobody\n")
    if mode == "bwrap" and uid == "65534":
        assert (accounts.stderr, accounts.stdout) == ("", "nobody / nogroup ['nobody', 'root']\n")
    elif mode == "kernel" and uid == "65534" and _synthesizes_nobody():
        # The host's resolver answers for nobody without /etc/passwd, which the child cannot
        # read: it does so in the child as the zygote loaded it (zygote.load_accounts).
        assert accounts.stdout.split()[:3] == ["nobody", "/", "nogroup"]


def _synthesizes_nobody() -> bool:
    """Whether this host resolves users through systemd's module, which synthesizes nobody."""
    try:
        conf = Path("/etc/nsswitch.conf").read_text()
    except OSError:
        return False
    lines = [ln.split() for ln in conf.splitlines() if ln.startswith("passwd:")]
    return bool(lines) and "systemd" in lines[0] and any(
        Path(d, "libnss_systemd.so.2").exists() for d in ("/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib/aarch64-linux-gnu"))


_ESCAPE = """
import os, sys
finders = [m for m in sys.meta_path if type(m).__name__ == "DirFinder"]
if not finders:
    print("none")
for fd in finders[0].fds if finders else []:
    print("listed", bool(os.listdir(fd)))
    for rel in ["../../../../../.bashrc", "../../../../../../etc/shadow",
                "../../../../../../proc/1/environ", "../../../..", ".."]:
        try:
            os.close(os.open(rel, os.O_RDONLY, dir_fd=fd))
            print("opened", rel)
        except OSError:
            pass
    try:
        os.close(os.open("planted.py", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
        print("wrote")
    except OSError:
        pass
"""


def test_the_open_directories_reach_nothing_else():
    """A child that finds the zygote's open directories (the stdlib's, numpy's) can list them
    (as any user of the interpreter could) but opens nothing above them, not even their
    parent (numpy's: site-packages, which holds textgyms), and writes nothing: Landlock and
    the permissions of the directories above still hold."""
    with Sandbox() as sandbox:
        ex = sandbox.run(_ESCAPE)
    assert ex.stderr == ""
    if ex.stdout == "none\n":
        pytest.skip("every directory of the interpreter is reachable here: nothing opened")
    assert set(ex.stdout.splitlines()) == {"listed True"}


@pytest.fixture
def tmp_path():
    """A fresh directory every user may enter (pytest's own lies under a private one)."""
    path = Path(tempfile.mkdtemp(prefix="reach-"))
    if not reach.reachable(str(path.parent)):
        pytest.skip(f"{path.parent} is not reachable by other users here")
    os.chmod(path, 0o755)
    yield path
    for sub in path.rglob("*"):
        if sub.is_dir():
            os.chmod(sub, 0o755)
    shutil.rmtree(path)


def test_an_allowed_packages_directory_is_served_for_its_submodules(tmp_path):
    """numpy's directory, a read path beneath an unreachable site-packages, is opened too:
    ``import numpy`` leaves ``numpy.random``, ``numpy.fft``, ... to their first use, which
    failed in a child of root whose virtualenv lies under a private directory. Its parent,
    site-packages, is not served (it is no read path)."""
    site = tmp_path / "root" / "venv" / "site-packages"
    pkg = site / "numpy"
    (pkg / "random").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "random" / "__init__.py").write_text("X = 1\n")
    os.chmod(tmp_path / "root", 0o700)
    assert reach.served([str(site)], [str(pkg)]) == [str(pkg)]
    assert reach.served([str(site)], []) == []
    fd = os.open(str(pkg), os.O_RDONLY | os.O_DIRECTORY)
    try:
        finder = reach.DirFinder({str(pkg): fd})
        spec = finder.find_spec("numpy.random", [str(pkg)])
        assert spec is not None and spec.submodule_search_locations == [str(pkg / "random")]
        assert finder.find_spec("numpy.linalg", [str(pkg)]) is None
    finally:
        os.close(fd)


def test_reachable_follows_every_directorys_search_bit(tmp_path):
    lib = tmp_path / "home" / "lib"
    lib.mkdir(parents=True)
    os.chmod(tmp_path / "home", 0o700)
    assert not reach.reachable(str(lib))
    assert reach.unreachable_entries([str(lib), str(tmp_path)], [str(tmp_path / "home")]) \
        == [str(lib)]
    assert reach.unreachable_entries([str(lib)], [str(tmp_path / "other")]) == []
    (lib / "dynload").mkdir()  # served through its outer directory: one descriptor
    assert reach.unreachable_entries([str(lib / "dynload"), str(lib)], [str(tmp_path)]) \
        == [str(lib)]
    os.chmod(tmp_path / "home", 0o711)
    assert reach.reachable(str(lib))
    assert reach.unreachable_entries([str(lib)], [str(tmp_path)]) == []


def test_the_finder_loads_modules_and_packages_through_its_descriptors(tmp_path, monkeypatch):
    lib = tmp_path / "home" / "lib"
    (lib / "pkg_reach_probe").mkdir(parents=True)
    (lib / "mod_reach_probe.py").write_text("VALUE = 41 + 1\n")
    (lib / "pkg_reach_probe" / "__init__.py").write_text("from . import sub\n")
    (lib / "pkg_reach_probe" / "sub.py").write_text("NAME = __name__\n")
    os.chmod(tmp_path / "home", 0o700)
    monkeypatch.setattr(sys, "path", [str(lib)])
    finder = reach.install([str(tmp_path)])
    try:
        assert finder is not None and finder is sys.meta_path[-1] and len(finder.fds) == 1
        spec = finder.find_spec("mod_reach_probe", None)
        assert spec is not None and spec.origin == str(lib / "mod_reach_probe.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        assert mod.VALUE == 42
        spec = finder.find_spec("pkg_reach_probe", None)
        assert spec.submodule_search_locations == [str(lib / "pkg_reach_probe")]
        assert finder.find_spec("pkg_reach_probe.sub", spec.submodule_search_locations)
        assert finder.find_spec("no_such_module_here", None) is None
    finally:
        sys.meta_path.remove(finder)
        for fd in finder.fds:
            os.close(fd)
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert reach.install([str(tmp_path)]) is None  # reachable: nothing opened, nothing added
