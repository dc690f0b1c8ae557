"""The NetConfig verifier: a parse gate, then behavioural checks run on the simulated
candidate network (never a text comparison with the reference).

Every check comes from a stated requirement (reachability over every equal-cost path,
filtering, translation, routing provenance, OSPF areas, adjacencies and router IDs, "static
only", VLANs and trunks) or protects traffic the task did not mention. A submission that
passes them all scores 1.0. Otherwise the score is gated below 0.5: ``0.5 x progress x
kept``, where progress is the weighted share of the checks the *starting* network failed
that now pass (so an unchanged or empty submission earns nothing) and kept the share of
those it already passed that still do. Then x 0.9 per line IOS would reject, x 0.25 if a
locked device was edited, and for repair at most 0.5 x the share kept of the lines a fix
has no reason to touch. Nothing parses -> 0; a device missing from a submission, or
configured twice (several alternatives in one answer) -> 0. ``parts`` carries per-group
pass rates and the progress and kept shares (a dense reward); the feedback lists the broken
requirements and why, never the reference configuration.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache, wraps
from typing import TypeVar

from textgyms.core import Verdict
from textgyms.envs.netconfig import checks
from textgyms.envs.netconfig.bounded import by_identity
from textgyms.envs.netconfig.memo import PARSED, Memo, compiled, key_of, parsed_config, same_config
from textgyms.envs.netconfig.model import DeviceConfig, Issue
from textgyms.envs.netconfig.parser import normalize_ifname, split_devices
from textgyms.envs.netconfig.show import render_config
from textgyms.envs.netconfig.sim import Network
from textgyms.envs.netconfig.task import NetTask

WEIGHTS = checks.WEIGHTS
GATE = 0.5  # the most a submission that breaks any requirement can score
T = TypeVar("T")


# id(task) -> (task, its values); holding the task keeps its id its own while the entry lives
_TASK_VALUES = Memo(256, grows=True)
_MISSING = object()


@lru_cache(maxsize=256)
def _values_of_equal(task: NetTask) -> dict:
    """The derived values of the tasks equal to ``task``, shared (an equal task made
    again: a replay)."""
    return {}


def _values(task: NetTask) -> dict:
    """``task``'s derived values, by the function that derives each: found by the task
    object's identity first (a step asks for a task's derived data some 30 times, and each
    equality lookup hashes all its tuples of texts again, ~4 us), then by equality."""
    hit = _TASK_VALUES._d.get(id(task))
    if hit is not None and hit[0] is task:
        return hit[1]
    values = _values_of_equal(task)
    _TASK_VALUES.put(id(task), (task, values))
    return values


def _per_task(fn: Callable[[NetTask], T]) -> Callable[[NetTask], T]:
    """``fn`` memoized per task (and shared by equal tasks). All of a task's values live in
    one dict: one memo entry per task rather than two per function and task, each an object
    that every garbage collection it lives through scans again."""

    @wraps(fn)
    def get(task: NetTask) -> T:
        values = _values(task)
        value = values.get(fn, _MISSING)
        if value is _MISSING:
            value = values[fn] = fn(task)
        return value

    return get


@_per_task
def _canonical(task: NetTask) -> NetTask:
    """The first task seen that equals ``task``."""
    return task


class _Parsed(Mapping[str, DeviceConfig]):
    """Device -> its parsed config, each parsed on first use: only the ACL equivalence
    checks read the reference's configs, and a submission that is not the reference would
    otherwise parse every reference device for nothing."""

    def __init__(self, texts: tuple[tuple[str, str], ...]) -> None:
        self._texts = dict(texts)

    def __getitem__(self, device: str) -> DeviceConfig:
        return parsed_config(self._texts[device], device)[0]

    def __iter__(self) -> Iterator[str]:
        return iter(self._texts)

    def __len__(self) -> int:
        return len(self._texts)


@_per_task
def _reference(task: NetTask) -> Mapping[str, DeviceConfig]:
    """The reference's parsed configs (read-only, shared)."""
    return _Parsed(task.reference)


@_per_task
def _checks(task: NetTask) -> list[dict]:
    return json.loads(task.checks)


@_per_task
def _fixed(task: NetTask) -> dict[str, DeviceConfig]:
    """The parsed configs of the devices the agent cannot change (never mutated)."""
    return {d: parsed_config(text, d)[0] for d, text in task.fixed}


def network(task: NetTask, configs: Mapping[str, DeviceConfig]) -> Network:
    """The candidate network: the agent's configs plus the fixed devices."""
    fixed = _fixed(task)
    kinds = dict(task.devices)
    devices = {d: (kinds[d], configs.get(d) or fixed.get(d) or DeviceConfig(d)) for d in kinds}
    links = [((a, ai), (b, bi)) for a, ai, b, bi in task.links]
    return Network(devices, links)


@_per_task
def _known(task: NetTask) -> dict[str, tuple[tuple[str, bool], ...]]:
    """Per device, the task's own texts (reference, then start), each with whether it is
    the start."""
    out: dict[str, tuple[tuple[str, bool], ...]] = {}
    for d, text in task.reference:
        out[d] = (*out.get(d, ()), (text, False))
    for d, text in task.start:
        out[d] = (*out.get(d, ()), (text, True))
    return out


def _as_known(task: NetTask, device: str, text: str) -> str:
    """The task's own text of ``device`` (reference or start) that ``text`` parses to an
    identical config of (a resubmission that only adds or drops comments, ``!`` or ``end``
    lines), else ``text``: the network, its check results and derived networks are then
    the ones already compiled and run."""
    known = _known(task).get(device, ())
    for have, _start in known:
        if text is have or text == have:
            return have  # the task's own string: its hash is already computed
    for have, start in known:
        if _padded(text, have) or _padded(have, text):
            return have
        # Comparing configs needs ``have`` parsed. The start is parsed for the baseline
        # anyway; a reference text not parsed yet is in no compiled network, so nothing
        # compiled would be shared, and parsing it only to compare cost a device's parse
        # per submission. (Either text compiles to the same network: this only decides
        # which memo entries are shared, never a result.)
        if (start or (have, device) in PARSED._d) and same_config(text, have, device):
            return have
    return text


def _padded(long: str, short: str) -> bool:
    """Whether ``long`` is ``short`` followed by whole lines the parser skips (blank, ``!``
    comments, ``end``): then both parse to the same config, without parsing or comparing
    them (a submission often adds or drops a closing ``end`` or ``!``)."""
    if len(long) <= len(short) or not long.startswith(short):
        return False
    rest = long[len(short):]
    if short and short[-1] not in "\r\n" and rest[0] not in "\r\n":
        return False  # the two differ inside a line
    if not rest.isascii():  # (the parser checks numbers differently in non-ASCII texts)
        return False
    for line in rest.splitlines():
        line = line.strip()
        if line and line[0] != "!" and line.lower() != "end":
            return False
    return True


def text_network(task: NetTask, texts: Mapping[str, str]) -> Network:
    """:func:`network` of the agent's devices given as configuration texts (the starting
    configs, a submission): compiled once per set of texts and shared (see :mod:`memo`)."""
    fixed, links = _layout(task)
    devices = tuple((d, k, _as_known(task, d, texts[d]) if d in texts else fixed.get(d))
                    for d, k in task.devices)
    return compiled(devices, links)


@_per_task
def _layout(task: NetTask) -> tuple[dict[str, str], tuple]:
    """The fixed devices' texts and the cabling, as :func:`text_network` compiles them."""
    return dict(task.fixed), tuple(((a, ai), (b, bi)) for a, ai, b, bi in task.links)


_RESULTS = Memo(256, grows=True)
# each check's pass and reason in order; reasons None where only the passes were wanted
Outcomes = tuple[tuple[bool, ...], "tuple[str, ...] | None"]


def _results(task: NetTask, net: Network, quiet: bool = False) -> Outcomes:
    """``checks.run`` of the task's checks as (whether each passes, each one's reason, or
    None if ``quiet``: the baseline reads only the passes); memoized for a compiled network
    (the same texts submitted again, or the unchanged candidate, whose results the baseline
    already has: reasons are computed again only where a quiet run left them out)."""
    key = key_of(net)
    if key is None:
        return _outcomes(checks.run(net, _checks(task), _reference(task), quiet=quiet), quiet)
    # Keyed by the identity of the first equal task seen (held in the entry), so equal
    # tasks share results without hashing the task again.
    first = _canonical(task)
    k = (id(first), key)
    hit = _RESULTS._d.get(k)
    if hit is not None and (quiet or hit[1][1] is not None):
        return hit[1]
    out = _outcomes(checks.run(net, _checks(task), _reference(task), quiet=quiet), quiet)
    _RESULTS.put(k, (first, out))
    return out


def _outcomes(results: list[tuple[dict, bool, str]], quiet: bool) -> Outcomes:
    """The flat form :func:`_results` keeps: tuples of plain values, which the garbage
    collector stops tracking, rather than a tuple per check holding its dict (each one an
    object every collection that memoized results live through scans again)."""
    oks = tuple(ok for _c, ok, _m in results)
    return oks, None if quiet else tuple(m for _c, _ok, m in results)


@_per_task
def _baseline(task: NetTask) -> tuple[bool, ...]:
    """Which checks the starting network already passes."""
    return _results(task, text_network(task, dict(task.start)), quiet=True)[0]


def warm(task: NetTask) -> None:
    """Compile ``task``'s starting network and, for the families graded against it, find which
    checks it passes (:func:`_baseline`): pure functions of the task, memoized, that an
    agent's first tool step (it inspects that network) and a wrong submission (its baseline)
    would otherwise compute on the step's critical path."""
    if task.family in ("diagnosis", "analysis"):  # graded on an answer, not on checks
        text_network(task, dict(task.start))
    else:
        _baseline(task)


def run_checks(task: NetTask, net: Network) -> tuple[dict[str, float], list[str]]:
    """Each group's pass rate and the messages of the failing checks."""
    passed: dict[str, list[int]] = {}
    fails: list[str] = []
    for c, ok, msg in checks.run(net, _checks(task), _reference(task)):
        tally = passed.setdefault(c["g"], [0, 0])
        tally[0] += ok
        tally[1] += 1
        if not ok:
            fails.append(f"[{c['g']}] {msg}")
    return {g: p / n for g, (p, n) in passed.items()}, fails


def _gated(task: NetTask, net: Network) -> tuple[float, dict[str, float], list[str]]:
    """(score before line penalties, parts, failure messages)."""
    oks, msgs = _results(task, net)
    if all(oks):
        # Every check passes: progress and kept are then 1.0 whatever the starting network
        # passed, so its compile and checks (the baseline) are not needed to say so.
        base: tuple[bool, ...] = (True,) * len(oks)
    else:
        base = _baseline(task)
    tally: dict[str, list[int]] = {}
    todo = [0.0, 0.0]
    kept = [0.0, 0.0]
    fails = []
    for c, ok, msg, was in zip(_checks(task), oks, msgs, base):
        w = WEIGHTS[c["g"]]
        t = tally.setdefault(c["g"], [0, 0])
        t[0], t[1] = t[0] + ok, t[1] + 1
        acc = kept if was else todo
        acc[0], acc[1] = acc[0] + w * ok, acc[1] + w
        if not ok:
            fails.append(f"[{c['g']}] {msg}")
    parts = {g: p / n for g, (p, n) in tally.items()}
    parts["progress"] = todo[0] / todo[1] if todo[1] else 1.0
    parts["kept"] = kept[0] / kept[1] if kept[1] else 1.0
    parts["requirements_met"] = sum(oks) / max(1, len(oks))
    score = 1.0 if not fails else GATE * parts["progress"] * parts["kept"]
    return score, parts, fails


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


_RENDERED = Memo(512)  # a shared parsed config's rendering and its sectioned lines


def _rendered(cfg: DeviceConfig) -> str:
    """``render_config(cfg)``, once per shared parsed config (a resubmitted or unchanged
    device is not rendered again)."""
    return by_identity(_RENDERED, cfg, "text", lambda: render_config(cfg))


def _rendered_lines(cfg: DeviceConfig) -> frozenset[tuple[str, str]]:
    """:func:`sectioned` of the rendered config, once per shared parsed config."""
    return by_identity(_RENDERED, cfg, "lines", lambda: frozenset(sectioned(_rendered(cfg))))


@_per_task
def locked_lines(task: NetTask) -> dict[str, frozenset[tuple[str, str]]]:
    """Per faulty device, the lines a fix has no reason to touch: those the broken config and
    the reference share (hidden: derived from the reference, shown to nobody)."""
    ref = dict(task.reference)
    out = {}
    for d, text in task.start:
        if d in task.locked:
            continue
        broken = _rendered_lines(parsed_config(text, d)[0])
        good = _rendered_lines(parsed_config(ref[d], d)[0])
        out[d] = frozenset(broken & good)
    return out


def _edited_locked(task: NetTask, configs: Mapping[str, DeviceConfig]) -> list[str]:
    """The locked devices whose configuration renders differently from their start."""
    if not task.locked:
        return []
    start = dict(task.start)
    out = []
    for d in task.locked:
        cfg, was = configs[d], parsed_config(start[d], d)[0]
        # The start's own parsed config (its text resubmitted, or the candidate untouched)
        # renders as itself: a locked device usually is, and rendering it is not needed.
        if cfg is not was and _rendered(cfg) != _rendered(was):
            out.append(d)
    return out


def _locked_lines_kept(task: NetTask, configs: Mapping[str, DeviceConfig]) -> tuple[int, int]:
    kept = total = 0
    for d, lines in locked_lines(task).items():
        have = _rendered_lines(configs[d])
        kept += len(lines & have)
        total += len(lines)
    return kept, total


# --- submissions --------------------------------------------------------------------------


def parse_submission(
    task: NetTask, body: str
) -> tuple[dict[str, DeviceConfig], list[Issue], int, str | None]:
    """Per-device configs of a submission, the rejected lines, the accepted line count and
    a fatal error ("missing", "ambiguous") or None. The configs are shared: read them only."""
    configs, _texts, issues, accepted, fatal = _sections(task, body)
    return configs, issues, accepted, fatal


def _sections(
    task: NetTask, body: str
) -> tuple[dict[str, DeviceConfig], dict[str, str], list[Issue], int, str | None]:
    """:func:`parse_submission`, with each device's configuration text."""
    mine = [d for d, _ in task.start]
    configs: dict[str, DeviceConfig] = {}
    texts: dict[str, str] = {}
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
        cfg, bad, ok = parsed_config(text, name)
        bad = [dataclasses.replace(b, lineno=b.lineno + first - 1) for b in bad]
        if cfg.hostname and cfg.hostname != name:
            bad.append(Issue(name, first, f"hostname {cfg.hostname}", "hostname mismatch"))
        configs[name], texts[name], accepted = cfg, text, accepted + ok
        issues += bad
    dup = sorted(d for d, n in seen.items() if n > 1 and d in mine)
    if dup:
        fatal = f"ambiguous: {', '.join(dup)} configured more than once"
        return configs, texts, issues, accepted, fatal
    missing = [d for d in mine if d not in configs]
    if missing and accepted:
        fatal = f"missing: no configuration for {', '.join(missing)}"
        return configs, texts, issues, accepted, fatal
    return configs, texts, issues, accepted, None


def verify_configs(
    task: NetTask,
    configs: Mapping[str, DeviceConfig],
    issues: list[Issue],
    accepted: int,
    texts: Mapping[str, str] | None = None,
) -> Verdict:
    """Score complete candidate configurations (the parse gate, checks, locked devices).
    ``texts``, when given, are the texts ``configs`` were parsed from (the network is then
    compiled once per set of texts)."""
    if accepted == 0:
        return Verdict(
            0.0, False, "Nothing in the configuration parses as IOS-lite.", {"parse": 0.0}, "format"
        )
    net = network(task, configs) if texts is None else text_network(task, texts)
    score, parts, fails = _gated(task, net)
    frac = {g: f for g, f in parts.items() if g in WEIGHTS}
    parts["parse"] = 0.9 ** len(issues)
    score *= parts["parse"]
    edited = _edited_locked(task, configs)
    if task.locked:
        parts["locked"] = 0.0 if edited else 1.0
        score *= 0.25 if edited else 1.0
    if task.family == "repair":
        kept, total = _locked_lines_kept(task, configs)
        parts["locked_lines"] = kept / total if total else 1.0
        if kept < total:  # a stated requirement of the task: gated like the others
            score = min(score, GATE) * parts["locked_lines"]
            edited.append(f"{total - kept} locked line(s) of the faulty devices")
    lines = [f"{g}: {f:.2f}" for g, f in sorted(frac.items())]
    lines.append(f"requirements met: {parts['requirements_met']:.2f}")
    if issues:
        lines.append(f"{len(issues)} line(s) rejected (as IOS would):")
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
    configs, texts, issues, accepted, fatal = _sections(task, body)
    if fatal is not None:
        return Verdict(
            0.0, False, f"Submission rejected: {fatal}.", {"parse": 0.0}, fatal.split(":")[0]
        )
    return verify_configs(task, configs, issues, accepted, texts)


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
    want = set(json.loads(task.answer))
    have = {checks.normalize_item(x) for x in got if isinstance(x, str)}
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
