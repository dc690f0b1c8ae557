"""NetConfig performance: verification, parsing and packet walks (``make bench``).

Measures, in CPU time (``time.process_time``), medians over repetitions:

* verifying one 10-device episode (5 OSPF routers in a ring with a chord, 5 hosts) with 200
  flow checks plus reachability and routing checks -- target <= 50 ms;
* parsing real-looking device configurations -- target >= 5,000 configs per CPU-second;
* packet walks through the compiled network -- target >= 50,000 per CPU-second.

and, side by side in the same run (``netconfig_speed.py``, each version in its own subprocess on
the same tasks): resets and submission steps per CPU-second of the code at 3ab7aa0
(``NetConfig-v3``) and at 9311458 (``NetConfig-v4`` before the parse, network and task memos)
against this checkout -- target >= 4x; then this checkout's agent episodes with each task drawn
ahead (``pregenerate``, as a vector's reset-ahead does in the wait for the model's turn, which
also compiles and checks the starting network) against resets that draw it.

Peers measured in the same run: for parsing, the floor of tokenising the same text
(``splitlines`` + ``split``, no semantics) and ``hier_config`` when it is installed; for walks,
``networkx.shortest_path`` on the device graph (reachability without any header semantics).
Results go to ``benchmarks/results/netconfig.json`` and ``netconfig.md``.
Run: ``.venv/bin/python benchmarks/bench_netconfig.py [--quick] [--no-speed]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import netconfig_speed  # benchmarks/, next to this script
import networkx as nx
import numpy as np

from textgyms.envs.netconfig.l3tasks import _graph, _ospf_lines
from textgyms.envs.netconfig.parser import parse_config
from textgyms.envs.netconfig.sample import CONFIGS, sample_network
from textgyms.envs.netconfig.scenario import Scenario, flow_check, ip
from textgyms.envs.netconfig.task import freeze
from textgyms.envs.netconfig.topologies import base_config, wan
from textgyms.envs.netconfig.verify import _reference, verify_configs

RESULTS = Path(__file__).resolve().parent / "results"


def _cpu(fn, n: int) -> float:
    """CPU seconds for ``n`` calls of ``fn``."""
    t0 = time.process_time()
    for _ in range(n):
        fn()
    return time.process_time() - t0


def episode_task():
    """A 10-device OSPF network with 200 flow checks between random hosts."""
    rng = np.random.default_rng(42)
    t = wan(rng, 5, 1)
    ref = {}
    for r in t.routers():
        lines, extra = _ospf_lines(t, r, True, {})
        ref[r] = base_config(t, r, extra) + "\n" + "\n".join(lines)
    hosts = sorted(t.hosts)
    checks = []
    for _ in range(200):
        a, b = (str(x) for x in rng.choice(hosts, size=2, replace=False))
        port = int(rng.integers(1, 65535))
        checks.append(flow_check("flows", str(t.hosts[a][0].ip), str(t.hosts[b][0].ip),
                                 "tcp", port))
    for r in t.routers():
        for owner, _i, net in t.lans:
            if owner != r:
                checks.append({"g": "routing", "dev": r, "prefix": str(net), "proto": "O"})
    assert len(_graph(t).nodes) == 5 and len(t.kinds) == 10
    return freeze("routing", "hard", Scenario(t, ref, dict(ref), [], checks))


def bench_verify(reps: int) -> dict:
    task = episode_task()
    configs = _reference(task)
    v = verify_configs(task, configs, [], 1)
    assert v.score == 1.0, v.feedback
    runs = [_cpu(lambda: verify_configs(task, configs, [], 1), 5) / 5 * 1000 for _ in range(reps)]
    return {"devices": len(task.devices), "flow_checks": 200,
            "median_ms": statistics.median(runs), "target_ms": 50}


def bench_parse(reps: int) -> dict:
    texts = [t for _k, t in CONFIGS.values()]
    n = 400

    def ours():
        for text in texts:
            parse_config(text)

    def floor():
        for text in texts:
            [ln.split() for ln in text.splitlines()]

    rate = [n * len(texts) / _cpu(ours, n) for _ in range(reps)]
    tok = [n * len(texts) / _cpu(floor, n) for _ in range(reps)]
    out = {"configs_per_cpu_s": statistics.median(rate), "target": 5000,
           "tokenise_floor_per_cpu_s": statistics.median(tok)}
    try:
        from hier_config import get_hconfig  # type: ignore[import-not-found]
        from hier_config.models import Platform  # type: ignore[import-not-found]

        def peer():
            for text in texts:
                get_hconfig(Platform.CISCO_IOS, text)

        out["hier_config_per_cpu_s"] = statistics.median(
            n * len(texts) / _cpu(peer, n) for _ in range(reps))
    except ImportError as exc:
        out["hier_config_per_cpu_s"] = f"unavailable: {exc}"
    return out


def bench_walk(reps: int) -> dict:
    net = sample_network()
    flows = [(ip("10.10.10.11"), ip("10.20.0.10"), 6, 49152, 80, False),
             (ip("10.10.20.12"), ip("10.20.0.10"), 6, 49152, 22, False),
             (ip("10.10.10.11"), ip("198.51.100.80"), 1, 0, 0, False),
             (ip("10.10.20.12"), ip("10.20.0.10"), 6, 49152, 8080, False)]
    srcs = [net.owner(f[0]) for f in flows]
    n = 5000

    def ours():
        for f, s in zip(flows, srcs):
            net.walk(f, s)

    g = nx.Graph()
    g.add_edges_from((a[0], b[0]) for a, b in net.links)

    def peer():
        for s, d in (("PC1", "SRV1"), ("PC2", "SRV1"), ("PC1", "WEB1"), ("PC2", "SRV1")):
            nx.shortest_path(g, s, d)

    rate = [n * len(flows) / _cpu(ours, n) for _ in range(reps)]
    nxr = [n * 4 / _cpu(peer, n) for _ in range(reps)]
    return {"walks_per_cpu_s": statistics.median(rate), "target": 50000,
            "networkx_shortest_path_per_cpu_s": statistics.median(nxr),
            "ratio_vs_networkx": statistics.median(rate) / statistics.median(nxr)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--no-speed", action="store_true",
                    help="skip the side-by-side run of the old code (the slow part)")
    args = ap.parse_args()
    reps = 3 if args.quick else 9
    res = {"python": platform.python_version(), "machine": platform.machine(),
           "quick": args.quick, "verify": bench_verify(reps), "parse": bench_parse(reps),
           "walk": bench_walk(reps)}
    if not args.no_speed:
        rounds = 2 if args.quick else netconfig_speed.ROUNDS
        res["speed"] = netconfig_speed.side_by_side(rounds)
        res["reset_ahead"] = netconfig_speed.reset_ahead(rounds)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "netconfig.json").write_text(json.dumps(res, indent=2) + "\n")
    (RESULTS / "netconfig.md").write_text(render(res))
    print(render(res))


def render(res: dict) -> str:
    v, p, w = res["verify"], res["parse"], res["walk"]
    peer = p["hier_config_per_cpu_s"]
    peer_txt = f"{peer:,.0f}/s" if isinstance(peer, float) else peer
    return "\n".join([
        "| measure | textgyms | target | peer (same run) |",
        "|---|---|---|---|",
        f"| verify 10-device episode, 200 flows (median CPU) | {v['median_ms']:.1f} ms | "
        f"<= 50 ms | - |",
        f"| parse device configs | {p['configs_per_cpu_s']:,.0f}/s | >= 5,000/s | "
        f"tokenise-only floor {p['tokenise_floor_per_cpu_s']:,.0f}/s; hier_config {peer_txt} |",
        f"| packet walks | {w['walks_per_cpu_s']:,.0f}/s | >= 50,000/s | networkx "
        f"shortest_path {w['networkx_shortest_path_per_cpu_s']:,.0f}/s "
        f"(ratio {w['ratio_vs_networkx']:.2f}) |",
        "",
    ]) + (speed_table(res["speed"]) if "speed" in res else "") + (
        ahead_table(res["reset_ahead"]) if "reset_ahead" in res else "")


def speed_table(speed: dict) -> str:
    """The side-by-side table of resets and submissions, old code against new."""
    return ("\nResets and submission steps, old code against this checkout (same tasks, same "
            "run):\n\n" + netconfig_speed.render(speed))


def ahead_table(ahead: dict) -> str:
    """This checkout's agent episodes with each task drawn, compiled and checked ahead (a
    vector's reset-ahead) against resets that draw it."""
    return ("\nWith reset-ahead (this checkout; a worker draws the next task and compiles and "
            "checks its starting network in the wait for the model's turn), the critical path "
            "of an agent episode:\n\n" + netconfig_speed.render_ahead(ahead))


if __name__ == "__main__":
    main()
