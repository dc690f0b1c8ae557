"""The repository's layout: the root holds what the README's layout table names, and the
verifiers taskset modules live in ``tasksets/`` while installing as top-level modules."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TASKSETS = {"textgyms_env", "textgyms_wordle", "textgyms_search", "textgyms_code",
            "textgyms_netconfig", "textgyms_iso20022"}


def _readme_layout() -> set[str]:
    """The paths the README's layout item names (``* Layout: `textgyms/` ...``)."""
    text = (ROOT / "README.md").read_text()
    item = text.split("\n* Layout:", 1)[1].split("\n\n", 1)[0].split("\n* ", 1)[0]
    return {name.rstrip("/") for name in re.findall(r"`([^`]+)`", item)}


def test_the_root_holds_only_what_the_readme_layout_names():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    top = {path.split("/")[0] for path in tracked} - {"README.md", "SECURITY.md", ".gitignore"}
    assert top - _readme_layout() == set()


def test_taskset_modules_live_in_tasksets_and_install_at_top_level():
    assert {p.stem for p in (ROOT / "tasksets").glob("*.py")} == TASKSETS
    assert not any((ROOT / f"{name}.py").exists() for name in TASKSETS)
    text = (ROOT / "pyproject.toml").read_text()
    (modules,) = re.findall(r"^py-modules = \[([^\]]*)\]", text, re.MULTILINE)
    assert set(re.findall(r'"(\w+)"', modules)) == TASKSETS
    assert 'package-dir = { "" = "tasksets", "textgyms" = "textgyms" }' in text
