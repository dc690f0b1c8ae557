"""The NetConfig verifier: a parse gate, then weighted semantic checks run on the simulated
candidate network (never a text comparison with the reference).

Score = (weighted mean of the check groups) x 0.9 ** (invalid lines) x (0.25 if a locked
device was edited) x (repair: the fraction kept of the faulty devices' locked lines, those
the fix has no reason to touch). Nothing parses -> 0; a device missing from a submission, or
a device configured twice (several alternatives in one answer) -> 0. Feedback lists failing checks
with a counterexample packet where there is one; it never shows the reference config.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
from collections.abc import Mapping
from functools import lru_cache

from textgyms.core import Verdict
from textgyms.envs.netconfig.acl import difference, evaluate, format_packet
from textgyms.envs.netconfig.generate import NetTask
from textgyms.envs.netconfig.model import DeviceConfig, Issue
from textgyms.envs.netconfig.parser import normalize_ifname, parse_config, split_devices
from textgyms.envs.netconfig.routing import ospf_area
from textgyms.envs.netconfig.scenario import ip, run_flow
from textgyms.envs.netconfig.show import render_config
from textgyms.envs.netconfig.sim import Network

WEIGHTS = {
    "addressing": 2,
    "reach": 2,
    "flows": 2,
    "boundary": 1,
    "collateral": 1,
    "acl_equiv": 2,
    "routing": 2,
    "passive": 1,
    "waypoint": 1,
    "vlan": 1,
    "trunk": 1,
    "isolation": 1,
    "nat": 2,
}
A = ipaddress.IPv4Address
MAX_ACL_ENTRIES = 300  # the policies have a handful; equivalence cost grows with entries


@lru_cache(maxsize=256)
def _reference(task: NetTask) -> dict[str, DeviceConfig]:
    return {d: parse_config(text, d)[0] for d, text in task.reference}


@lru_cache(maxsize=256)
def _checks(task: NetTask) -> list[dict]:
    return json.loads(task.checks)


@lru_cache(maxsize=256)
def _fixed(task: NetTask) -> dict[str, DeviceConfig]:
    """The parsed configs of the devices the agent cannot change (never mutated)."""
    return {d: parse_config(text, d)[0] for d, text in task.fixed}


def network(task: NetTask, configs: Mapping[str, DeviceConfig]) -> Network:
    """The candidate network: the agent's configs plus the fixed devices."""
    fixed = _fixed(task)
    kinds = dict(task.devices)
    devices = {d: (kinds[d], configs.get(d) or fixed.get(d) or DeviceConfig(d)) for d in kinds}
    links = [((a, ai), (b, bi)) for a, ai, b, bi in task.links]
    return Network(devices, links)


# --- the checks ---------------------------------------------------------------------------


def _addressing(net: Network, c: dict, task) -> tuple[bool, str]:
    itf = net.config(c["dev"]).interfaces.get(c["if"])
    have = itf.ip if itf is not None else None
    status = net.status.get((c["dev"], c["if"]), ("down", "down"))
    ok = have == ipaddress.IPv4Interface(c["ip"]) and status == ("up", "up")
    return ok, f"{c['dev']} {c['if']}: address {have or 'unassigned'}, {status[0]}/{status[1]}"


def _reach(net: Network, c: dict, task) -> tuple[bool, str]:
    there, back = net.ping(c["src"], ip(c["dst"]))
    ok = there.status == "delivered" and back is not None and back.status == "delivered"
    why = there.reason if there.status != "delivered" else (back.reason if back else "")
    return ok, f"ping {c['src']} -> {c['dst']} fails ({why or there.status})"


def _flow(net: Network, c: dict, task) -> tuple[bool, str]:
    w = run_flow(net, c)
    got = w.status if w is not None else "unreachable"
    pkt = (
        ip(c["src"]),
        ip(c["dst"]),
        {"tcp": 6, "udp": 17, "icmp": 1, "ip": 0}[c["proto"]],
        49152,
        int(c["dport"]),
        c["est"],
    )
    label = "unmentioned flow changed" if c["g"] == "collateral" else "flow"
    return got == c["expect"], (
        f"{label} {format_packet(pkt)}: expected {c['expect']}, got {got}"
        + (f" ({w.reason})" if w is not None and w.reason else "")
    )


def _acl_equiv(net: Network, c: dict, task) -> tuple[bool, str]:
    def applied(cfg: DeviceConfig):
        itf = cfg.interfaces.get(c["if"])
        name = getattr(itf, f"acl_{c['dir']}") if itf is not None else None
        return None if name is None else cfg.acls.get(name)

    mine, ref = applied(net.config(c["dev"])), applied(_reference(task)[c["dev"]])
    if mine is not None and len(mine.entries) > MAX_ACL_ENTRIES:  # bounds verification time
        return False, f"the ACL on {c['dev']} {c['if']} has over {MAX_ACL_ENTRIES} entries"
    pkt = difference(mine, ref)
    if pkt is None:
        return True, ""
    want = "permit" if evaluate(ref, pkt)[0] else "deny"
    return False, (
        f"the ACL applied {c['dir']} on {c['dev']} {c['if']} differs from the "
        f"policy: {format_packet(pkt)} should {want}"
    )


def _routing(net: Network, c: dict, task) -> tuple[bool, str]:
    pfx = ipaddress.IPv4Network(c["prefix"])
    got = [
        r.proto
        for r in net.rib.get(c["dev"], ())
        if (r.net, r.plen) == (int(pfx.network_address), pfx.prefixlen)
    ]
    name = {"O": "OSPF", "S": "static"}[c["proto"]]
    return c["proto"] in got, (
        f"{c['dev']} has no {name} route to {pfx}"
        + (f" (it has: {', '.join(sorted(set(got)))})" if got else "")
    )


def _passive(net: Network, c: dict, task) -> tuple[bool, str]:
    cfg = net.config(c["dev"])
    itf = cfg.interfaces.get(c["if"])
    ok = (
        cfg.ospf is not None
        and c["if"] in cfg.ospf.passive
        and itf is not None
        and itf.ip is not None
        and ospf_area(cfg, int(itf.ip.ip)) is not None
    )
    return ok, f"{c['dev']} {c['if']} is not a passive, advertised OSPF interface"


def _waypoint(net: Network, c: dict, task) -> tuple[bool, str]:
    dev = c["src"]
    src = net.source_ip(dev, ip(c["dst"]))
    w = net.walk((src or 0, ip(c["dst"]), 1, 0, 0, False), dev)
    path = [h[0] for h in w.hops]
    ok = w.status == "delivered" and c["via"] in path
    return ok, f"traffic {c['src']} -> {c['dst']} takes {' -> '.join(path)}, not via {c['via']}"


def _vlan(net: Network, c: dict, task) -> tuple[bool, str]:
    have = net.config(c["dev"]).vlans.get(c["vlan"])
    return have == c["name"], f"{c['dev']} VLAN {c['vlan']} is {have or 'missing'}"


def _trunk(net: Network, c: dict, task) -> tuple[bool, str]:
    itf = net.config(c["dev"]).interfaces.get(c["if"])
    mode = itf.mode if itf is not None else None
    allowed = itf.trunk_allowed if itf is not None else None
    ok = mode == "trunk" and allowed is not None and set(allowed) == set(c["vlans"])
    shown = "all" if allowed is None else ",".join(str(v) for v in sorted(allowed))
    return ok, f"{c['dev']} {c['if']}: mode {mode}, allowed VLANs {shown}"


def _isolation(net: Network, c: dict, task) -> tuple[bool, str]:
    da = net.domain.get((c["a"], "Ethernet0"))
    db = net.domain.get((c["b"], "Ethernet0"))
    return da is None or da != db, f"{c['a']} and {c['b']} share a broadcast domain"


def _nat(net: Network, c: dict, task) -> tuple[bool, str]:
    there, back = net.ping(c["src"], ip(c["dst"]))
    ok = there.status == "delivered" and back is not None and back.status == "delivered"
    if ok and "seen" in c:
        ok = there.packet[0] == ip(c["seen"])
        why = f"{c['dst']} sees source {A(there.packet[0])}, expected {c['seen']}"
    elif ok and "at" in c:
        ok = there.at == c["at"]
        why = f"traffic to {c['dst']} reaches {there.at}, expected {c['at']}"
    else:
        why = f"ping {c['src']} -> {c['dst']} fails ({there.reason or (back and back.reason)})"
    return ok, why


CHECKS = {
    "addressing": _addressing,
    "reach": _reach,
    "flows": _flow,
    "boundary": _flow,
    "collateral": _flow,
    "acl_equiv": _acl_equiv,
    "routing": _routing,
    "passive": _passive,
    "waypoint": _waypoint,
    "vlan": _vlan,
    "trunk": _trunk,
    "isolation": _isolation,
    "nat": _nat,
}


def run_checks(task: NetTask, net: Network) -> tuple[dict[str, float], list[str]]:
    """Each group's pass rate and the messages of the failing checks."""
    passed: dict[str, list[int]] = {}
    fails: list[str] = []
    for c in _checks(task):
        ok, msg = CHECKS[c["g"]](net, c, task)
        tally = passed.setdefault(c["g"], [0, 0])
        tally[0] += ok
        tally[1] += 1
        if not ok:
            fails.append(f"[{c['g']}] {msg}")
    return {g: p / n for g, (p, n) in passed.items()}, fails


# --- locked lines (repair) ---------------------------------------------------------------


def sectioned(text: str) -> set[tuple[str, str]]:
    """The lines of a rendered config, each with the header of its section."""
    out: set[tuple[str, str]] = set()
    header = ""
    for ln in text.splitlines():
        if ln.strip() in ("", "!", "end"):
            continue
        if ln.startswith(" "):
            out.add((header, ln.strip()))
        else:
            header = ln
            out.add(("", ln))
    return out


@lru_cache(maxsize=256)
def locked_lines(task: NetTask) -> dict[str, frozenset[tuple[str, str]]]:
    """Per faulty device, the lines a fix has no reason to touch: those the broken config and
    the reference share (hidden: derived from the reference, shown to nobody)."""
    ref = dict(task.reference)
    out = {}
    for d, text in task.start:
        if d in task.locked:
            continue
        broken = sectioned(render_config(parse_config(text, d)[0]))
        good = sectioned(render_config(parse_config(ref[d], d)[0]))
        out[d] = frozenset(broken & good)
    return out


def _locked_lines_kept(task: NetTask, configs: Mapping[str, DeviceConfig]) -> tuple[int, int]:
    kept = total = 0
    for d, lines in locked_lines(task).items():
        have = sectioned(render_config(configs[d]))
        kept += len(lines & have)
        total += len(lines)
    return kept, total


# --- submissions --------------------------------------------------------------------------


def parse_submission(
    task: NetTask, body: str
) -> tuple[dict[str, DeviceConfig], list[Issue], int, str | None]:
    """Per-device configs of a submission, the rejected lines, the accepted line count and
    a fatal error ("missing", "ambiguous") or None."""
    mine = [d for d, _ in task.start]
    configs: dict[str, DeviceConfig] = {}
    issues: list[Issue] = []
    accepted = 0
    seen: dict[str, int] = {}
    for name, text, first in split_devices(body):
        if name == "" and not any(
            ln.strip() and not ln.strip().startswith("!") for ln in text.splitlines()
        ):
            continue
        seen[name] = seen.get(name, 0) + 1
        if name not in mine:
            why = "text outside any device section" if not name else f"{name} is not yours"
            issues += [
                Issue(name or "?", first + k, ln, why)
                for k, ln in enumerate(text.splitlines())
                if ln.strip()
            ]
            continue
        cfg, bad, ok = parse_config(text, name)
        bad = [dataclasses.replace(b, lineno=b.lineno + first - 1) for b in bad]
        if cfg.hostname and cfg.hostname != name:
            bad.append(Issue(name, first, f"hostname {cfg.hostname}", "hostname mismatch"))
        configs[name], accepted = cfg, accepted + ok
        issues += bad
    dup = sorted(d for d, n in seen.items() if n > 1 and d in mine)
    if dup:
        return configs, issues, accepted, f"ambiguous: {', '.join(dup)} configured more than once"
    missing = [d for d in mine if d not in configs]
    if missing and accepted:
        return configs, issues, accepted, f"missing: no configuration for {', '.join(missing)}"
    return configs, issues, accepted, None


def verify_configs(
    task: NetTask, configs: Mapping[str, DeviceConfig], issues: list[Issue], accepted: int
) -> Verdict:
    """Score complete candidate configurations (the parse gate, checks, locked devices)."""
    if accepted == 0:
        return Verdict(
            0.0, False, "Nothing in the configuration parses as IOS-lite.", {"parse": 0.0}, "format"
        )
    frac, fails = run_checks(task, network(task, configs))
    total = sum(WEIGHTS[g] for g in frac)
    score = sum(WEIGHTS[g] * f for g, f in frac.items()) / total if total else 1.0
    parts = dict(frac)
    parts["parse"] = 0.9 ** len(issues)
    score *= parts["parse"]
    start = dict(task.start)
    edited = [
        d
        for d in task.locked
        if render_config(configs[d]) != render_config(parse_config(start[d], d)[0])
    ]
    if task.locked:
        parts["locked"] = 0.0 if edited else 1.0
        score *= 0.25 if edited else 1.0
    if task.family == "repair":
        kept, total = _locked_lines_kept(task, configs)
        parts["locked_lines"] = kept / total if total else 1.0
        score *= parts["locked_lines"]
        if kept < total:
            edited.append(f"{total - kept} locked line(s) of the faulty devices")
    lines = [f"{g}: {f:.2f}" for g, f in sorted(frac.items())]
    if issues:
        lines.append(f"{len(issues)} line(s) rejected by the parser:")
        lines += [f"  {i}" for i in issues[:8]]
    if edited:
        lines.append(f"Locked configuration changed: {', '.join(edited)}")
    lines += fails[:10]
    solved = score >= 1.0 - 1e-12
    return Verdict(
        1.0 if solved else score, solved, "\n".join(lines), parts, None if solved else "wrong"
    )


def verify_submission(task: NetTask, body: str) -> Verdict:
    """Verify a ``submit`` body: device configurations or, for diagnosis and analysis, a
    JSON answer."""
    if task.family == "diagnosis":
        return verify_diagnosis(task, body)
    if task.family == "analysis":
        return verify_analysis(task, body)
    configs, issues, accepted, fatal = parse_submission(task, body)
    if fatal is not None:
        return Verdict(
            0.0, False, f"Submission rejected: {fatal}.", {"parse": 0.0}, fatal.split(":")[0]
        )
    return verify_configs(task, configs, issues, accepted)


def _json_answer(body: str):
    text = body.strip()
    if text.startswith("```"):
        text = text.strip("`").partition("\n")[2]
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None


def verify_diagnosis(task: NetTask, body: str) -> Verdict:
    """Credit for the device, the component and the cause (a third each)."""
    got = _json_answer(body)
    if not isinstance(got, dict):
        return Verdict(
            0.0,
            False,
            'Answer with JSON: {"device": ..., "component": ..., "cause": ...}.',
            {"device": 0.0, "component": 0.0, "cause": 0.0},
            "format",
        )
    want = json.loads(task.answer)
    comp = str(got.get("component", "")).strip()
    comp = normalize_ifname(comp) or comp.lower()
    parts = {
        "device": float(str(got.get("device", "")).strip().upper() == want["device"].upper()),
        "component": float(comp in [normalize_ifname(c) or c.lower() for c in want["components"]]),
        "cause": float(str(got.get("cause", "")).strip().lower() == want["cause"]),
    }
    score = sum(parts.values()) / 3
    wrong = [k for k, v in parts.items() if not v]
    feedback = "Correct diagnosis." if not wrong else f"Wrong: {', '.join(wrong)}."
    return Verdict(score, score == 1.0, feedback, parts, None if score == 1.0 else "wrong")


def verify_analysis(task: NetTask, body: str) -> Verdict:
    """Set F1 between the answered items and the true ones."""
    got = _json_answer(body)
    if isinstance(got, dict):
        got = got.get("items")
    if not isinstance(got, list):
        return Verdict(0.0, False, "Answer with a JSON list of items.", {"f1": 0.0}, "format")
    from textgyms.envs.netconfig.analysis import normalize_item

    want = set(json.loads(task.answer))
    have = {normalize_item(x) for x in got if isinstance(x, str)}
    tp = len(want & have)
    if not want and not have:
        f1 = 1.0
    else:
        f1 = 2 * tp / (len(want) + len(have)) if (want or have) else 0.0
    return Verdict(
        f1,
        f1 == 1.0,
        f"F1 {f1:.2f} ({tp} of {len(want)} found, {len(have) - tp} wrong).",
        {"f1": f1},
        None if f1 == 1.0 else "wrong",
    )
