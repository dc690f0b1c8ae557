"""NetConfig's IOS-lite parser alone, old code against new, side by side in one run.

The corpus is every configuration text the generators write (reference, start and fixed
devices of every family and level, a few seeds), made once by this checkout and parsed by
each code version in its own subprocess (``PYTHONPATH`` at a ``git archive`` of the baseline
commit, or at this checkout). Measured in CPU time (``time.process_time``) per pass over the
corpus, median of the passes: *cold* clears every ``functools`` cache of the NetConfig
modules before each pass (as for the fresh addresses of a distinct-seed reset), *warm*
keeps them (a resubmission of texts already seen).

Run: ``python benchmarks/netconfig_parse_speed.py [--baseline COMMIT] [--seeds N]``.
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path

from netconfig_speed import export, in_subprocess  # benchmarks/, next to this script

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "aff25ba"  # main before the parser's fast paths


def corpus(seeds: int) -> list[tuple[str, str]]:
    """(text, device) of every generated device configuration, in a fixed order."""
    import numpy as np

    from textgyms.envs.netconfig.generate import FAMILIES, LEVELS, generate

    out: dict[tuple[str, str], None] = {}
    for family in FAMILIES:
        for level in LEVELS:
            for seed in range(seeds):
                task = generate(np.random.default_rng(seed), family, level)
                for device, text in (*task.reference, *task.start, *task.fixed):
                    if text:
                        out.setdefault((text, device), None)
    return list(out)


def worker(path: str, passes: int) -> dict:
    """Parse the pickled corpus with the ``textgyms`` on ``sys.path`` (run in a subprocess)."""
    import textgyms
    from textgyms.envs.netconfig.parser import parse_config

    texts = pickle.loads(Path(path).read_bytes())
    caches = [obj for name, mod in list(sys.modules.items())
              if name.startswith("textgyms.envs.netconfig") and mod is not None
              for obj in vars(mod).values() if hasattr(obj, "cache_clear")]

    def one(clear: bool) -> float:
        if clear:
            for cache in caches:
                cache.cache_clear()
        t0 = time.process_time()
        for text, device in texts:
            parse_config(text, device)
        return time.process_time() - t0

    one(True)  # imports and first-use work out of the way
    cold = [one(True) for _ in range(passes)]
    warm = [one(False) for _ in range(passes)]
    return {"textgyms": textgyms.__file__, "cold_s": statistics.median(cold),
            "warm_s": statistics.median(warm)}


def _measure(tree: Path, path: Path, passes: int) -> dict:
    return in_subprocess(tree, __file__, ["--worker", str(path), "--passes", str(passes)])


def side_by_side(baseline: str, seeds: int, passes: int) -> dict:
    """The baseline and this checkout on the same corpus, with the ratios (old / new time)."""
    texts = corpus(seeds)
    lines = sum(len(t.splitlines()) for t, _d in texts)
    with tempfile.TemporaryDirectory(prefix="netconfig-parse-") as tmp:
        path = Path(tmp) / "corpus.pkl"
        path.write_bytes(pickle.dumps(texts))
        old = _measure(export(baseline, Path(tmp) / baseline), path, passes)
        new = _measure(ROOT, path, passes)
    return {"texts": len(texts), "lines": lines, "baseline": baseline, "old": old, "new": new,
            "speedup": {k: old[k] / new[k] for k in ("cold_s", "warm_s")}}


def render(res: dict) -> str:
    """A markdown table of :func:`side_by_side`'s result."""
    rows = [f"| parse {res['texts']:,} texts, {res['lines']:,} lines (CPU s, median) | "
            f"{res['baseline']} | new | speedup |", "|---|---|---|---|"]
    for key, name in (("cold_s", "cold caches"), ("warm_s", "warm caches")):
        rows.append(f"| {name} | {res['old'][key]:.3f} | {res['new'][key]:.3f} | "
                    f"{res['speedup'][key]:.2f}x |")
    return "\n".join(rows) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default=BASELINE)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--passes", type=int, default=7)
    ap.add_argument("--worker", metavar="CORPUS", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.passes)))
        return
    res = side_by_side(args.baseline, args.seeds, args.passes)
    print(json.dumps(res, indent=2))
    print(render(res))


if __name__ == "__main__":
    main()
