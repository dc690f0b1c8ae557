"""Project rules that a linter would miss: no global RNG, no import-time side effects."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "textgyms"
SOURCES = sorted(PACKAGE.rglob("*.py"))
ALLOWED_NP_RANDOM = {"default_rng", "Generator", "SeedSequence", "PCG64", "BitGenerator"}


def global_rng_uses(tree: ast.AST) -> list[str]:
    """`import random`, `np.random.<fn>` other than generator constructors."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            found += [f"import {n}" for n in names if n == "random"]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            inner = node.value
            if inner.attr == "random" and getattr(inner.value, "id", "") in ("np", "numpy"):
                if node.attr not in ALLOWED_NP_RANDOM:
                    found.append(f"np.random.{node.attr}")
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_global_rng(path):
    assert global_rng_uses(ast.parse(path.read_text())) == []


def test_the_rule_catches_offenders():
    bad = "import random\nimport numpy as np\nnp.random.seed(0)\nx = np.random.randint(3)\nnp.random.default_rng(1)"
    assert global_rng_uses(ast.parse(bad)) == [
        "import random",
        "np.random.seed",
        "np.random.randint",
    ]


def test_import_has_no_side_effects():
    code = (
        "import sys, io; buf = io.StringIO(); sys.stdout = buf\n"
        "import numpy as np; before = np.random.get_state()[1][:4].tolist()\n"
        "import textgyms, gymnasium as gym\n"
        "assert np.random.get_state()[1][:4].tolist() == before, 'global RNG touched'\n"
        "heavy = [m for m in ('textgyms.envs.wordle.env', 'textgyms.vector', 'torch', 'tqdm') if m in sys.modules]\n"
        "sys.stdout = sys.__stdout__; print(repr(buf.getvalue()), heavy, 'textgyms/Wordle-v0' in gym.registry)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "'' [] True"
