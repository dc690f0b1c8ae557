"""Benchmark of the ISO 20022 family in both directions (``textgyms/ISO20022-MT103-v4`` and
``textgyms/MT103ToISO20022-v3``).

Measures, in operations per CPU-second (``time.process_time``: the machine is shared and noisy),
the median over repeats of:

* generation of a pacs.008 (payment draw + XML), translation to MT103, verification
  (``score``), and the MT103 parser + validator, against the target of 1,000/CPU-s;
* a full env episode (reset: generation, translation and prompt; then the oracle answer, scored);
* the other direction: ``translate_mt`` (MT103 -> pacs.008.001.08), ``score_mx`` (XSD gate and
  element-path scoring) of an exact and a near-miss answer, and its env episode;
* XSD validation of generated messages, lxml (used by the tests) against xmlschema (peer);
* the floor of any translator: ``xml.etree.ElementTree.fromstring`` of the same messages;
* a fresh process's first reset (the imports and the bank registry) and its next resets, with
  the bank data shipped in ``data/`` (the registry's banks and their IBAN pools) and with it
  computed by schwifty as before (the files ignored), each in its own subprocess, alternated:
  every worker process of a vector starts this way.

Usage: ``.venv/bin/python benchmarks/bench_iso20022.py [--quick] [--out DIR]``; writes
``iso20022.json`` and ``.md`` to ``DIR`` (default ``benchmarks/results``; a smoke run can
write elsewhere and leave the recorded results alone). The table shows the number each
operation had in the results file it replaces ("today's number" before a change) and says
which run that was: its kind (full or quick), size, date and the code it measured, recorded
in each results file as ``run``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from pathlib import Path

from textgyms.envs.iso20022 import score, score_mx, translate, translate_mt, xsd
from textgyms.envs.iso20022.env import Iso20022Env, Mt103ToIsoEnv
from textgyms.envs.iso20022.generate import draw_payment, to_xml
from textgyms.envs.iso20022.mt103 import validate_text
from textgyms.seeding import seeded_generator

RESULTS = Path(__file__).resolve().parent / "results"
TARGET = 1000.0
# The operations with a 1,000/CPU-s target.
TARGETED = ("generate", "translate", "score (exact)", "score (near miss)",
            "translate_mt (MT103 -> pacs.008)", "score_mx (exact)", "score_mx (near miss)")


def rate(fn: Callable[[object], object], items: Sequence, repeats: int) -> float:
    """Median operations per CPU-second of ``fn`` over ``items``, ``repeats`` times."""
    rates = []
    for _ in range(repeats):
        start = time.process_time()
        for item in items:
            fn(item)
        spent = time.process_time() - start
        rates.append(len(items) / max(spent, 1e-9))
    return statistics.median(rates)


def near_miss(mt: str) -> str:
    """The reference with its 32A amount changed (a realistic wrong answer)."""
    return mt.replace(",", "9,", 1)


def near_miss_mx(xml: str) -> str:
    """The reference pacs.008 with its settlement amount changed."""
    return re.sub(r'(<IntrBkSttlmAmt Ccy="\w+">)(\d)', lambda m: m.group(1) + str(
        (int(m.group(2)) + 1) % 10), xml, count=1)


def run(quick: bool) -> dict:
    n, repeats = (200, 3) if quick else (1000, 5)
    seeds = [(s, 1 + s % 4) for s in range(n)]
    draw_payment(seeded_generator(0), 1)  # load schwifty's registry outside the timings
    xmls = [to_xml(draw_payment(seeded_generator(s), lvl)) for s, lvl in seeds]
    mts = [translate(x) for x in xmls]
    pairs = list(zip(mts, [near_miss(m) for m in mts]))
    env, mx_env = Iso20022Env(difficulty=3), Mt103ToIsoEnv(difficulty=3)
    mxs = [translate_mt(m) for m in mts]
    mx_pairs = list(zip(mxs, [near_miss_mx(x) for x in mxs]))

    def episode(seed: int, which=env) -> None:
        which.reset(seed=seed)
        which.step(which.solve(which.task)[0])

    import xmlschema

    peer = xmlschema.XMLSchema(str(Path(xsd.__file__).parent / "xsd" / xsd.XSD_NAME))
    # The peer validates against the .08 schema: give it the bare .08 Documents only.
    docs = [x.split("?>", 1)[1] for x in xmls if "<Envelope>" not in x and
            'xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"' in x]
    xsd.schema()
    ops = {
        "generate": rate(lambda sl: to_xml(draw_payment(seeded_generator(sl[0]), sl[1])),
                         seeds, repeats),
        "translate": rate(translate, xmls, repeats),
        "score (exact)": rate(lambda m: score(m, m), mts, repeats),
        "score (near miss)": rate(lambda p: score(*p), pairs, repeats),
        "parse + validate MT103": rate(validate_text, mts, repeats),
        "env episode (reset + answer)": rate(episode, range(n), repeats),
        "translate_mt (MT103 -> pacs.008)": rate(translate_mt, mts, repeats),
        "score_mx (exact)": rate(lambda x: score_mx(x, x), mxs, repeats),
        "score_mx (near miss)": rate(lambda p: score_mx(*p), mx_pairs, repeats),
        "MX env episode (reset + answer)": rate(lambda s: episode(s, mx_env), range(n), repeats),
        "ElementTree.fromstring (floor)": rate(ET.fromstring, xmls, repeats),
        "XSD validation, lxml": rate(xsd.validate_xml, xmls, repeats),
        "XSD validation, xmlschema (peer)": rate(peer.is_valid, docs[: max(20, n // 10)], 1),
    }
    run_info = {"date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
                "code": code_version()}
    cold = cold_resets(100 if quick else 200, repeats)
    return {"n": n, "repeats": repeats, "ops_per_cpu_second": ops, "cold_resets": cold,
            "python": platform.python_version(), "quick": quick, "run": run_info}


# A fresh process's first resets, timed in CPU seconds: its first one (imports, the bank
# registry) and the next ones; argv: "shipped" or "built", count.
_COLD = """
import sys, time
from textgyms.envs.iso20022 import bankdata
if sys.argv[1] == "built":  # no schwifty version matches: banks picked, pools built, as before
    bankdata._installed_schwifty = lambda: None
from textgyms.envs.iso20022.env import Iso20022Env
env = Iso20022Env()
start = time.process_time()
env.reset(seed=10**6)
first = time.process_time() - start
start = time.process_time()
for seed in range(int(sys.argv[2])):
    env.reset(seed=seed)
print(first, time.process_time() - start)
"""


def cold_resets(n: int, repeats: int) -> dict[str, float]:
    """A fresh process's first reset (CPU ms) and its next ``n`` resets (per CPU-second),
    with the shipped bank data and with it computed by schwifty as before (median of
    ``repeats`` processes each, the two alternated), and the ratios."""
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": root}
    runs: dict[str, list[tuple[float, float]]] = {"shipped": [], "built": []}
    for _ in range(repeats):
        for how in runs:
            out = subprocess.run([sys.executable, "-c", _COLD, how, str(n)], env=env,
                                 cwd=root, check=True, capture_output=True, text=True)
            first, rest = out.stdout.strip().splitlines()[-1].split()
            runs[how].append((float(first) * 1e3, n / float(rest)))
    first = {k: statistics.median(r[0] for r in v) for k, v in runs.items()}
    rate = {k: statistics.median(r[1] for r in v) for k, v in runs.items()}
    return {"resets": n, "shipped_pools": rate["shipped"], "built_pools": rate["built"],
            "ratio": rate["shipped"] / rate["built"], "first_ms_shipped": first["shipped"],
            "first_ms_built": first["built"]}


def code_version() -> str:
    """The commit the run measures ("HEAD 1a2b3c4", "+ uncommitted changes" when the work
    tree differs), or "unknown" outside a git checkout."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, check=True,
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=root, check=True, capture_output=True, text=True,
                               timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"HEAD {head}" + (" + uncommitted changes" if dirty else "")


def run_label(res: dict | None) -> str:
    """Which run a results dict is: kind, size, date and code (what is recorded of it)."""
    if not res or not res.get("ops_per_cpu_second"):
        return "none (no earlier results file)"
    kind = "quick" if res.get("quick") else "full"
    run_info = res.get("run") or {}
    when = run_info.get("date", "date not recorded")
    code = run_info.get("code", "code not recorded")
    return f"the {kind} run of {res.get('n', '?')} messages of {when}, code {code}"


def markdown(res: dict, previous: dict | None = None) -> str:
    """The results table; the "previous run" column is ``previous``'s (named under it)."""
    ops = res["ops_per_cpu_second"]
    before = (previous or {}).get("ops_per_cpu_second", {})
    lines = ["| operation | ops per CPU-second (median) | previous run | vs target 1,000/s "
             "| vs peer |", "|---|---:|---:|---:|---:|"]
    peer_of = {"translate": "ElementTree.fromstring (floor)",
               "XSD validation, lxml": "XSD validation, xmlschema (peer)"}
    for name, value in ops.items():
        peer = peer_of.get(name)
        vs_peer = f"{value / ops[peer]:.2f}x {peer}" if peer else ""
        vs_target = f"{value / TARGET:.2f}x" if name in TARGETED else ""
        old = f"{before[name]:,.0f}" if name in before else "new"
        lines.append(f"| {name} | {value:,.0f} | {old} | {vs_target} | {vs_peer} |")
    kind = "quick" if res["quick"] else "full"
    return (f"### ISO 20022 benchmark ({kind}: {res['n']} messages, levels 1-4, median of "
            f"{res['repeats']})\n\nThis run: {run_label(res)}.\n"
            f"Previous run (the column next to it): {run_label(previous)}.\n\n"
            + "\n".join(lines) + "\n" + _cold_table(res.get("cold_resets")))


def _cold_table(cold: dict | None) -> str:
    """The fresh-process resets' table (empty for a results file without them)."""
    if not cold:
        return ""
    first = ""
    if "first_ms_shipped" in cold:
        first = (f"| its first reset (imports, the bank registry), CPU ms | "
                 f"{cold['first_ms_shipped']:,.0f} | {cold['first_ms_built']:,.0f} | "
                 f"{cold['first_ms_built'] / cold['first_ms_shipped']:.2f}x |\n")
    return ("\nA fresh process (every worker of a vector starts this way), median of "
            "processes, with the bank data shipped in `data/` and computed by schwifty in "
            "the process (before):\n\n"
            "| | shipped | computed (before) | ratio |\n|---|---:|---:|---:|\n" + first
            + f"| its next {cold['resets']} resets, per CPU-second | "
            f"{cold['shipped_pools']:,.0f} | {cold['built_pools']:,.0f} | "
            f"{cold['ratio']:.2f}x |\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer messages and repeats")
    parser.add_argument("--out", type=Path, default=RESULTS,
                        help="directory for iso20022.json/.md (default: benchmarks/results)")
    args = parser.parse_args()
    res = run(args.quick)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "iso20022.json"
    previous = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    # The replaced run is kept whole enough to name it (kind, size, date, code) next to its
    # numbers, so the comparison column always says what it compares with.
    res["previous"] = {k: (previous or {}).get(k) for k in ("n", "quick", "run")}
    res["previous"]["ops_per_cpu_second"] = (previous or {}).get("ops_per_cpu_second", {})
    path.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    text = markdown(res, previous)
    (args.out / "iso20022.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
