"""Every example in README.md and docs/ runs, and the documentation site builds.

The conventions (stated for writers in docs/faq.md, "How are the examples tested?"):

* a ```python block runs on its own, in a fresh namespace (a block that contains
  ``__main__`` runs as a script, in its own process, exactly as a user would run it);
* a ```bash block runs as one bash script (``set -euo pipefail``) in an empty directory, with
  the project's ``textgyms`` and ``python`` first on the PATH;
* a block whose fence reads ```python notest or ```bash notest is shown but never run; the
  sentence before it says why (a GPU, a server, a long run);
* an ```output block right after a ```python or ```bash block is exactly what that block
  prints today (stdout; trailing spaces and blank lines aside), where ``...`` stands for any
  text within a line (a timestamp, a temporary path).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import textwrap
import types
from dataclasses import dataclass
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
RUN = ("python", "bash")


@dataclass(frozen=True)
class Block:
    """A fenced code block to run, and the output block that follows it (if any)."""

    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    source: str
    output: str | None

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The runnable blocks of one Markdown page (CommonMark fences, nested ones included)."""
    fences = [t for t in MarkdownIt("commonmark").parse(path.read_text()) if t.type == "fence"]
    out = []
    for i, tok in enumerate(fences):
        info = tok.info.split()
        if not info or info[0] not in RUN or "notest" in info[1:]:
            continue
        nxt = fences[i + 1] if i + 1 < len(fences) else None
        follows = nxt is not None and nxt.map[0] <= tok.map[1] + 2  # at most one blank line
        output = nxt.content if follows and nxt.info.strip() == "output" else None
        out.append(Block(path, tok.map[0] + 1, info[0], tok.content, output))
    return out


ALL = [b for page in PAGES for b in blocks(page)]


def normalise(text: str) -> str:
    """Output without trailing spaces and trailing blank lines."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def run_python(block: Block, tmp_path: Path) -> str:
    """Run a python block; return what it printed."""
    if "__main__" in block.source:  # a script: its own process, as the user would run it
        proc = run_script(tmp_path, block.source)
        assert proc.returncode == 0, f"{block.name} failed:\n{proc.stderr}"
        return proc.stdout
    buf = io.StringIO()
    cwd = os.getcwd()
    module = types.ModuleType("docs_example")  # a fresh namespace that dataclasses can see
    sys.modules[module.__name__] = module
    os.chdir(tmp_path)  # files an example writes go to a scratch directory
    try:
        with contextlib.redirect_stdout(buf):
            exec(compile(block.source, block.name, "exec"), module.__dict__)
    finally:
        os.chdir(cwd)
        del sys.modules[module.__name__]
    return buf.getvalue()


def run_bash(block: Block, tmp_path: Path) -> str:
    """Run a bash block with the project's executables first on the PATH."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    env = {**os.environ, "PATH": path, "COLUMNS": "100"}  # tables as wide as the pages show
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.source],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 0, f"{block.name} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def matches(printed: str, shown: str) -> bool:
    """True if ``printed`` is what an output block shows; ``...`` there stands for any text
    within a line (a timestamp, a path)."""
    pattern = ".*".join(re.escape(part) for part in normalise(shown).split("..."))
    return re.fullmatch(pattern, normalise(printed)) is not None


@pytest.mark.parametrize("block", ALL, ids=[b.name for b in ALL])
def test_example_runs_and_prints_what_the_page_shows(block, tmp_path):
    printed = (run_python if block.lang == "python" else run_bash)(block, tmp_path)
    if block.output is not None:
        assert matches(printed, block.output), f"{block.name} printed:\n{printed}"


def test_output_blocks_match_exactly_but_for_the_ellipsis():
    assert matches("a  \nb\n\n", "a\nb") and not matches("a\nc", "a\nb")
    assert matches("generated 2026-11-25T09:22:45", "generated ...")
    assert not matches("x\ny", "...")  # a wildcard never spans lines


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_output_block_follows_an_example_that_runs(page):
    fences = [t for t in MarkdownIt("commonmark").parse(page.read_text()) if t.type == "fence"]
    checked = {b.line for b in blocks(page) if b.output is not None}
    for prev, tok in zip([None, *fences], fences):
        if tok.info.strip() == "output":
            assert prev is not None and prev.map[0] + 1 in checked, (
                f"{page.name}:{tok.map[0] + 1}: an output block must follow a python or bash "
                "block that runs (not notest), with at most one blank line between them"
            )


def test_the_readme_stays_short_and_its_links_resolve():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 250  # everything else belongs on the docs site
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert any(link.startswith("docs/envs/") for link in local)
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"


def test_the_pages_have_examples_and_the_harness_sees_them():
    names = {b.name for b in ALL}
    assert any(n.startswith("README.md:") for n in names)
    assert sum(b.output is not None for b in ALL) >= 5  # real-output blocks are compared


def test_docs_site_builds_strictly(tmp_path):
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    assert mkdocs is not None, "mkdocs is not installed: pip install 'textgyms[docs]'"
    proc = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "envs" / "wordle" / "index.html").exists()


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


def test_a_function_called_at_the_unguarded_top_level_is_refused_too(tmp_path):
    body = textwrap.indent(UNGUARDED.format(extra="").replace("import textgyms\n", ""), "    ")
    proc = run_script(tmp_path, f"import textgyms\n\ndef main():\n{body}\n\nmain()\n")
    assert proc.returncode == 1 and "script.py, line 12:" in proc.stderr, proc.stderr  # main()


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
