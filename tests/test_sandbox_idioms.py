"""Common Python idioms print in a sandbox child what they print in a plain interpreter, in
kernel and in bubblewrap mode: a correct solution that uses them keeps its credit.

Each idiom runs once on the host (a fresh interpreter in a fresh directory) and once in the
sandbox; the two outputs must be equal. What the sandbox answers differently by design is
tested elsewhere: who the child is (``test_sandbox_stdlib``) and the refusal of ``fork``,
``exec`` and sockets (``test_sandbox_attacks``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator

import pytest

from textgyms.sandbox import Sandbox, bwrap

IDIOMS = {
    "deep recursion": (
        "import sys\nsys.setrecursionlimit(10**6)\n"
        "def f(n): return 0 if n == 0 else 1 + f(n - 1)\nprint(f(100000))"
    ),
    "a thread with a large stack": (
        "import sys, threading\nsys.setrecursionlimit(10**6)\nthreading.stack_size(2**26)\n"
        "out = []\ndef f(n): return 0 if n == 0 else 1 + f(n - 1)\n"
        "t = threading.Thread(target=lambda: out.append(f(200000)))\nt.start(); t.join()\n"
        "print(out)"
    ),
    "a thread pool": (
        "from concurrent.futures import ThreadPoolExecutor\n"
        "with ThreadPoolExecutor(8) as ex: print(sum(ex.map(lambda x: x * x, range(100))))"
    ),
    "temporary files": (
        "import os, tempfile\n"
        "with tempfile.NamedTemporaryFile('w', delete=False) as f: f.write('hi')\n"
        "print(open(f.name).read())\n"
        "with tempfile.TemporaryDirectory() as d:\n"
        "    open(os.path.join(d, 'a'), 'w').write('x'); print(os.listdir(d))"
    ),
    "a file in the working directory": (
        "open('out.txt', 'w').write('ok'); print(open('out.txt').read())"
    ),
    "stdin at its end": (
        "import sys\nprint(repr(sys.stdin.read()))\n"
        "try:\n    input()\nexcept EOFError:\n    print('eof')"
    ),
    "text encoding": "import locale; print(locale.getpreferredencoding(), 'é'.upper())",
    "randomness": "import os, secrets; print(len(os.urandom(8)), len(secrets.token_hex(4)))",
    "time zones": (
        "import datetime\nfrom zoneinfo import ZoneInfo\n"
        "print(datetime.datetime(2020, 1, 1, tzinfo=ZoneInfo('Europe/Paris')).utcoffset())"
    ),
    "hashes": (
        "import hashlib; print(hashlib.sha256(b'x').hexdigest()[:8], "
        "hashlib.md5(b'x').hexdigest()[:8])"
    ),
    "200 MB at once": "x = bytearray(200 * 1024 * 1024); print(len(x))",
    "a database file and a shelf": (
        "import shelve, sqlite3\ndb = sqlite3.connect('t.db')\n"
        "db.execute('create table t (x)'); db.execute('insert into t values (7)'); db.commit()\n"
        "print(db.execute('select x from t').fetchone())\n"
        "with shelve.open('sh') as s: s['a'] = [1]\n"
        "with shelve.open('sh') as s: print(s['a'])"
    ),
    "asyncio.gather": (
        "import asyncio\nasync def main():\n"
        "    return sum(await asyncio.gather(*(asyncio.sleep(0, i) for i in range(5))))\n"
        "print(asyncio.run(main()))"
    ),
    "numpy": "import numpy as np; print(np.arange(10).reshape(2, 5).sum(axis=1))",
    # Submodules ``import numpy`` leaves to their first use (found through the zygote's open
    # directory where the virtualenv lies under a private one: see sandbox.reach).
    "numpy's lazy submodules": (
        "import numpy as np\nprint(np.random.default_rng(0).integers(100), "
        "np.fft.fft([1, 0]).real.tolist(), np.polynomial.Polynomial([1, 2])(3), "
        "np.ma.masked_array([1, 2], mask=[0, 1]).sum(), np.linalg.det([[2, 0], [0, 2]]))"
    ),
    "ctypes": "import ctypes; print(ctypes.sizeof(ctypes.c_int), ctypes.c_double(1.5).value)",
    "uuid": "import uuid; print(len(str(uuid.uuid4())))",
    "exit() after the answer": "print(42)\nexit()\nprint('not reached')",
    "quit(0) after the answer": "print(42)\nquit(0)",
    "the builtins site adds": (
        "print(callable(help), type(copyright).__name__, type(credits).__name__, "
        "type(license).__name__)"
    ),
    "a traceback": (
        "import traceback\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n"
        "    print(traceback.format_exc().splitlines()[-1])"
    ),
}


@pytest.fixture(scope="module", params=["kernel", "bwrap"])
def sandbox(request) -> Iterator[Sandbox]:
    """One sandbox per mode for all idioms (bubblewrap's skipped where it is not installed)."""
    if request.param == "bwrap" and shutil.which("bwrap") is None:
        pytest.skip("apt-get install bubblewrap")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(bwrap.MODE_ENV, request.param)
        with Sandbox() as box:
            box.ping()
            yield box


def _on_host(code: str) -> str:
    """What a plain interpreter prints for ``code``, run in a fresh directory."""
    with tempfile.TemporaryDirectory() as cwd:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=cwd, stdin=subprocess.DEVNULL, timeout=120, check=True)
    return done.stdout


@pytest.mark.parametrize("name", list(IDIOMS))
def test_an_idiom_prints_what_it_prints_on_the_host(sandbox, name):
    code = IDIOMS[name]
    ex = sandbox.run(code, timeout=30, memory_mb=1024)
    assert (ex.status, ex.stderr) == ("ok", "")
    assert ex.stdout == _on_host(code)


def test_a_numpy_solutions_scalar_results_come_back_as_python_values(sandbox):
    """``np.sum`` returns ``np.int64`` and a comparison ``np.bool_``: the original checks'
    ``==`` accepts both, and so do ours (an array stays refused, as ``assert`` refuses it)."""
    code = ("import numpy as np\ndef total(xs): return np.sum(np.array(xs))\n"
            "def big(xs): return np.max(xs) > 2\ndef mask(xs): return np.array(xs) > 2\n")
    got = [sandbox.call(code, entry, [[[1, 2, 3]]]).calls[0] for entry in ("total", "big", "mask")]
    assert [(c.ok, c.value) for c in got[:2]] == [(True, 6), (True, True)]
    assert [type(c.value) for c in got[:2]] == [int, bool]
    assert not got[2].ok and "ndarray cannot be returned" in got[2].error
