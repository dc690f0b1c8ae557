"""Hypothesis profiles for the whole suite, chosen with the ``HYPOTHESIS_PROFILE`` env var.

- ``ci`` (default, what ``make test`` runs): a bounded budget and ``derandomize=True``, so a CI
  run explores the same examples every time and a red build reproduces locally.
- ``fuzz`` (``make fuzz``): a long, randomized run (new examples each time; failures are kept
  in Hypothesis' example database and replayed first on the next run).

Tests with their own ``@settings(max_examples=...)`` keep their budget under both profiles; the
profile sets everything else (deadline, derandomization) and the default budget.

Tests marked ``gpu`` (registered in pyproject.toml) need a CUDA GPU and are skipped where torch
sees none; ``pytest -m gpu`` runs only them (scripts/gpu_check.sh, on a GPU machine, where
Hypothesis may be missing: the profiles are then not registered, and only the suites that
fuzz need them).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # a GPU machine with pytest alone runs tests/test_gpu.py, which needs none
    HealthCheck = settings = None

# Env steps run real code (sandboxed Python, index look-ups), so per-example time varies with
# machine load: no deadline, and no health check for slow or large examples (1 MB actions are
# the point of the fuzz suite, not an accident of the strategy).
if settings is not None:
    _SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]
    settings.register_profile(
        "ci", max_examples=30, deadline=None, derandomize=True, suppress_health_check=_SLOW_OK
    )
    settings.register_profile(
        "fuzz", max_examples=1000, deadline=None, derandomize=False,
        suppress_health_check=_SLOW_OK,
    )
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# One intra-op thread per torch process: `make test` already runs two xdist workers on two cores,
# and two torch threads per worker on top of that thrash (the training tests ran ~50x slower
# under contention). Set before any test imports torch; an explicit setting is kept.
os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the ``gpu`` tests where torch sees no CUDA device (torch is imported only when some
    collected test carries the marker)."""
    marked = [item for item in items if item.get_closest_marker("gpu")]
    if not marked:
        return
    try:
        import torch

        cuda = torch.cuda.is_available()
    except ImportError:
        cuda = False
    if not cuda:
        skip = pytest.mark.skip(reason="gpu: needs a CUDA GPU (torch sees none)")
        for item in marked:
            item.add_marker(skip)


@pytest.fixture
def deadline() -> Iterator[None]:
    """Fail (instead of hanging the suite) if a test blocks for more than 120 s: a fault that
    hangs (a dead worker, a stuck sandbox) is what the tests that use this are there to catch."""

    def on_alarm(signum: int, frame: object) -> None:
        raise TimeoutError("test exceeded its 120 s deadline: something hung")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(120)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    """One small local Ray cluster per test module (starting Ray takes seconds)."""
    import ray

    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    if started:
        ray.shutdown()


@pytest.fixture(scope="session")
def model_server() -> Iterator[object]:
    """SmolLM2-135M-Instruct behind ``transformers serve`` on loopback (a real OpenAI-compatible
    HTTP server in its own process), started once per test process; the message-level trainer
    adapters' tests (verifiers, OpenRLHF, ART) and ``--policy openai:`` share it."""
    pytest.importorskip("transformers.cli.serving.server")
    from textgyms.integrations.openai_server import ModelServer

    # One torch thread: the server answers one request at a time while the other test worker
    # and the adapters' own processes keep the CI's two cores busy, and two torch threads on a
    # busy core mostly wait for each other (the long-prompt ids' replies took 3-4x longer).
    with ModelServer(threads=1) as server:
        yield server
