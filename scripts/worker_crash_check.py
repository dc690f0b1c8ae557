#!/usr/bin/env python3
"""Check that a test worker that crashes or hangs ends the suite with a failure, never a hang.

Runs ``pytest -n 2 --dist loadfile`` (how ``make test`` runs) with the project's pytest
settings over ``scripts/crash_probe`` and one real test file, twice: once with a probe test that
kills its own worker with SIGBUS, once with one that blocks forever (ended by the per-test
timeout, shortened here to 10 s). Each run must finish, exit 1, name the probe as the failure
and still pass the other tests. Exits 0 when both behave.

    python scripts/worker_crash_check.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBES = {"crash": "test_worker_dies_with_sigbus", "hang": "test_worker_hangs_forever"}
LIMIT = 300  # seconds for one whole run: far more than it needs, far less than a hang


def run_probe(probe: str) -> list[str]:
    """Run the suite slice with ``probe`` on; the problems seen (empty: it behaved)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadfile",
           "-p", "no:cacheprovider", "-o", "timeout=10",
           "scripts/crash_probe", "tests/test_cpus.py"]
    env = {**os.environ, "TEXTGYMS_PROBE": probe}
    try:
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=LIMIT)
    except subprocess.TimeoutExpired:
        return [f"{probe}: pytest did not finish within {LIMIT} s (the hang this guards against)"]
    tail = done.stdout.strip().splitlines()[-3:]
    problems = []
    if done.returncode != 1:
        problems.append(f"{probe}: exit code {done.returncode}, expected 1 (tests failed)")
    failed = [ln for ln in done.stdout.splitlines() if ln.startswith("FAILED ")]
    if len(failed) != 1 or PROBES[probe] not in failed[0]:
        problems.append(f"{probe}: the failures reported are not just the probe: {failed}")
    if f"crashed while running 'scripts/crash_probe/test_worker_crash.py::{PROBES[probe]}'" \
            not in done.stdout:
        problems.append(f"{probe}: the report does not say the probe's worker crashed")
    if not tail or " passed" not in tail[-1]:
        problems.append(f"{probe}: no other test passed")
    return [p + f"\n  last lines: {tail}" for p in problems]


def main() -> int:
    """Run both probes; print what happened."""
    problems = [p for probe in PROBES for p in run_probe(probe)]
    for p in problems:
        print(p)
    print("worker crash check:", "FAILED" if problems else "ok (crash and hang both end the run)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
