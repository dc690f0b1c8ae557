"""Every example in README.md and docs/ runs, and the docs site builds.

The conventions (also stated in docs/contributing-docs.md):

* a ```python block runs on its own, in a fresh namespace, as a script would;
* a ```output block right after a ```python block is exactly what that block prints;
* a ```python notest block is shown but not run (the sentence before it says why);
* a ```bash block runs each line that starts with ``textgyms `` or ``python `` when the line
  ends with the comment ``# doctest``; an ```output block after it is what the lines print.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

UNGUARDED = """
import textgyms

vec = textgyms.make_vec("textgyms/Wordle-v0", 2, backend="multiprocessing"{extra})
obs, infos = vec.reset(seed=0)
print("started", len(obs))
vec.close()
"""


def run_script(tmp_path, source: str) -> subprocess.CompletedProcess:
    """Run ``source`` as a top-level script, the way a user runs a copied example."""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source))
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )


def test_an_unguarded_multiprocessing_script_is_told_what_to_add(tmp_path):
    proc = run_script(tmp_path, UNGUARDED.format(extra=""))
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("textgyms.errors.ConfigError:") and "script.py, line 4" in last
    assert 'under `if __name__ == "__main__":`' in last and 'context="fork"' in last
    assert "WorkerDiedError" not in proc.stderr and "started" not in proc.stdout


@pytest.mark.parametrize("fix", ["guard", "fork"])
def test_either_fix_runs(tmp_path, fix):
    if fix == "fork":
        source = UNGUARDED.format(extra=', context="fork"')
    else:
        body = textwrap.indent(UNGUARDED.format(extra="").replace("import textgyms\n", ""), "    ")
        source = f'import textgyms\n\nif __name__ == "__main__":\n{body}'
    proc = run_script(tmp_path, source)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "started 2\n"
