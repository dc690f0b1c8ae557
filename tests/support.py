"""Helpers shared by test modules (imported as ``support``: pytest puts tests/ on sys.path)."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import gymnasium as gym

import textgyms


def conformance_cases() -> list[tuple[str, dict[str, Any]]]:
    """Every registered id, once per variant its env class declares in
    ``conformance_variants`` (each corpus, dataset, family or level)."""
    cases = []
    for env_id in textgyms.env_ids():
        cls = gym.spec(env_id).entry_point
        if isinstance(cls, str):
            module, _, name = cls.partition(":")
            cls = getattr(importlib.import_module(module), name)
        cases += [(env_id, dict(kw)) for kw in cls.conformance_variants]
    return cases


def started_servers(servers: dict[str, tuple[str, dict[str, Any]]]) -> Iterator[dict[str, Any]]:
    """Start one ``ServerProcess(env_id, **options)`` per entry of ``servers``, together (each
    start imports the server stack), yield them by name and stop them all afterwards: the body
    of a module-scoped ``servers`` fixture."""
    from concurrent.futures import ThreadPoolExecutor

    from textgyms.server.process import ServerProcess

    with ThreadPoolExecutor(len(servers)) as pool:
        futures = {name: pool.submit(ServerProcess, env_id, **options)
                   for name, (env_id, options) in servers.items()}
    started = {name: future.result() for name, future in futures.items()}
    try:
        yield started
    finally:
        # Together too: each stop waits for that server's clean exit (seconds on a busy machine).
        with ThreadPoolExecutor(len(started)) as pool:
            list(pool.map(lambda server: server.stop(), started.values()))


def verifiers_env(vf_bin: Path) -> dict[str, str]:
    """The environment for a command of the verifiers venv (``vf_bin``: its ``bin``): that bin
    first on the PATH (verifiers runs ``uv``), and uv offline. verifiers' agent runtime installs
    its chat program's packages with ``uv sync --script`` before the first rollout; they come
    from the wheelhouse ``make`` fetches when it builds the venv (``scripts/vf_wheelhouse.py``),
    never from an index, in the venv's own Python (the wheels are built for it)."""
    import pytest

    wheels = vf_bin.parent / "wheelhouse"
    if not wheels.is_dir():
        pytest.fail(f"{vf_bin.parent} has no wheelhouse: rebuild it with "
                    f"`make {vf_bin.parent.name}/.textgyms-installed`")
    # verifiers sets UV_OFFLINE=false for that install, and uv has no environment variable for
    # --no-index, so the default index becomes the local wheelhouse folder (which uv reads as an
    # index without contacting anything) and the wheels come from it as find-links.
    return {**os.environ, "PATH": f"{vf_bin}:{os.environ['PATH']}",
            "UV_DEFAULT_INDEX": wheels.as_uri(), "UV_FIND_LINKS": str(wheels),
            "UV_PYTHON": str(vf_bin / "python"), "UV_PYTHON_DOWNLOADS": "never"}


def load_benchmark(name: str) -> Iterator[ModuleType]:
    """``benchmarks/<name>.py`` imported from its file (benchmarks/ is not a package), with
    benchmarks/ on ``sys.path`` (for its sibling imports) while the module is in use; a
    generator for a fixture: ``yield from load_benchmark("bench_node")``."""
    folder = Path(__file__).resolve().parents[1] / "benchmarks"
    sys.path.insert(0, str(folder))
    try:
        spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.path.remove(str(folder))


def netconfig_networks(families: tuple[str, ...], seeds: int) -> Iterator[Any]:
    """The starting and the reference network of hard NetConfig tasks (``seeds`` per
    family), compiled from their texts as a submission would be."""
    from textgyms.envs.netconfig.verify import text_network

    for family in families:
        env = gym.make("textgyms/NetConfig-v4", family=family, difficulty="hard").unwrapped
        for seed in range(seeds):
            env.reset(seed=seed)
            task = env.task
            yield text_network(task, dict(task.start))
            yield text_network(task, dict(task.reference))
