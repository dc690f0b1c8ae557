"""``textgyms/NetConfig-v4``: network configuration and troubleshooting agents.

The agent gets a topology, the configurations of the devices it manages and requirements,
inspects and tests its *candidate* network with emulated IOS tools, and submits. The
verifier simulates the network (L2 domains, OSPF, static routes, FIB, ACLs, NAT, IPv6
with OSPFv3) and scores
it semantically; see :mod:`textgyms.envs.netconfig.verify`.

Kwargs: ``family`` (addressing, acl, routing, vlan, nat, repair, diagnosis, analysis,
ospf_areas, fhrp, bgp, redistribution, ipv6, ibgp, bgp_ospf, vrrp, nssa; default
"routing"), ``difficulty`` (easy, medium, hard; easy also shows the requirements as JSON),
``split`` ("train" default, "test": the one task in five held out by a hash of the task, "all"),
``max_turns`` (default 30), plus the common TextEnv kwargs.

Tools (tags or JSON tool calls; the last call of a reply counts): ``show_run``,
``show_ip_route``, ``show_ip_int_brief``, ``show_ip_ospf_neighbor``, ``show_access_lists``,
``show_vlan_brief``, ``show_standby_brief``, ``show_ip_bgp_summary``, ``show_ipv6_route``,
``show_ipv6_int_brief``, ``show_ipv6_ospf_neighbor``, ``get_logs`` (attribute or content: the
device),
``ping`` and ``traceroute`` (target, ``source`` device), ``test_flow`` (src, dst, proto, port),
``apply_config`` (config lines, ``device``) and ``submit``. ``submit`` ends the episode:
with a body of ``! device NAME`` sections (every managed device exactly once) it replaces
the candidate; ``<submit/>`` submits the candidate as edited; for diagnosis and analysis the
body is the JSON answer. An episode cut short is scored on the candidate at half weight.

Family info keys: ``family`` and ``difficulty``.
"""

from __future__ import annotations

import ipaddress
import json
from typing import Any

import numpy as np

from textgyms.actions import Param, ParseError, ToolSpec, parse
from textgyms.core import SPLITS, TextEnv, Turn, Verdict, check_choice, generate_in_split
from textgyms.envs.netconfig.bounded import MemoShare, gc_paused
from textgyms.envs.netconfig.generate import FAMILIES, LEVELS, NetTask, generate
from textgyms.envs.netconfig.memo import Memo, parsed_config
from textgyms.envs.netconfig.model import DeviceConfig
from textgyms.envs.netconfig.prompt import render_prompt
from textgyms.envs.netconfig.sim import Network
from textgyms.envs.netconfig.tools import SHOW_CMDS, run_tool
from textgyms.envs.netconfig.verify import (
    network,
    text_network,
    verify_configs,
    verify_submission,
    warm,
)

# (family, difficulty, split, the generator's state) -> (task, the generator's state after):
# a task is a pure function of these, and a GRPO group resets one seed G times.
_TASKS = Memo(256, grows=True)


def _dev(desc: str = "device name, e.g. R1") -> Param:
    return Param("device", "string", desc)


TOOLS = (
    *(
        ToolSpec(name, f"Run `{cmd}` on a device of the candidate network.", (_dev(),))
        for name, (cmd, _fn) in SHOW_CMDS.items()
    ),
    ToolSpec("show_access_lists", "Run `show access-lists` (with match counters).", (_dev(),)),
    ToolSpec("get_logs", "Show a device's syslog buffer.", (_dev(),)),
    ToolSpec(
        "ping",
        "Ping an address from a device.",
        (Param("target", "string", "destination IP address"), _dev("source device")),
    ),
    ToolSpec(
        "traceroute",
        "Traceroute to an address from a device.",
        (Param("target", "string", "destination IP address"), _dev("source device")),
    ),
    ToolSpec(
        "test_flow",
        "Walk one packet through the network and report its fate.",
        (
            Param("src", "string", "source IP"),
            Param("dst", "string", "destination IP"),
            Param("proto", "string", "tcp, udp, icmp", False, "tcp", ("tcp", "udp", "icmp")),
            Param("port", "integer", "destination port", False, 80),
        ),
    ),
    ToolSpec(
        "apply_config",
        "Apply IOS-lite configuration lines to a device.",
        (Param("text", "string", "configuration lines"), _dev()),
    ),
    ToolSpec(
        "submit",
        "Submit: device configs (`! device NAME` sections), nothing (the "
        "candidate as edited) or the JSON answer. Ends the episode.",
        (Param("config", "string", "the submission", False, ""),),
    ),
)


class NetState:
    """The task, the agent's candidate configs, the compiled candidate and ACL counters.

    The candidate starts as the shared parsed starting configs; a device is copied on its
    first edit (:meth:`editable`), so an unedited candidate is the memoized start network."""

    def __init__(self, task: NetTask) -> None:
        self.task = task
        self._mine: dict[str, DeviceConfig] | None = None
        self.edited: set[str] = set()
        self.hits: dict[tuple[str, str, int], int] = {}
        self.logs: dict[str, list[str]] = {}
        self._net: Network | None = None

    @property
    def mine(self) -> dict[str, DeviceConfig]:
        """The candidate's configuration of each device the agent configures. Parsed on first
        use, not at reset: an episode that submits a full answer first never reads it."""
        if self._mine is None:
            with gc_paused():  # (see bounded.gc_paused: a parse allocates much, keeps little)
                self._mine = {d: parsed_config(text, d)[0] for d, text in self.task.start}
        return self._mine

    def editable(self, device: str) -> DeviceConfig:
        """``device``'s candidate config, this episode's own copy (KeyError if not mine)."""
        if device not in self.edited:
            # clone: the same config, dicts and lists in the same order, ~8x cheaper than
            # copy.deepcopy (the first edit of a device is an agent's tool step)
            self.mine[device] = self.mine[device].clone()
            self.edited.add(device)
        return self.mine[device]

    def texts(self) -> dict[str, str] | None:
        """The candidate's configuration texts while nothing was edited, else None."""
        return None if self.edited else dict(self.task.start)

    @property
    def devices(self) -> dict[str, str]:
        """Every device of the network (the agent's, the fixed ones, hosts) and its kind."""
        return dict(self.task.devices)

    def config(self, device: str) -> DeviceConfig:
        """``device``'s configuration in the candidate network, without compiling that
        network: the very config the compiled network holds (``net.config(device)``), for the
        tools that read a config and nothing else (``show running-config`` is an agent's
        commonest first look; the compile waits for a tool that needs the network).
        KeyError if the task has no such device."""
        if self._net is not None:
            return self._net.config(device)
        if self._mine is not None and device in self._mine:
            return self._mine[device]
        task = self.task
        text = next((t for d, t in task.start if d == device), None)
        if text is None:
            text = next((t for d, t in task.fixed if d == device), None)
        if text is None:
            if device not in self.devices:
                raise KeyError(device)
            return DeviceConfig(device)  # a device nobody configured, as the compile has it
        with gc_paused():  # (the same memoized parse the compile reads)
            return parsed_config(text, device)[0]

    @property
    def net(self) -> Network:
        """The candidate network, compiled on first use after a reset or an edit (a tool
        step's share of the work: paused collector, as for a reset)."""
        if self._net is None:
            texts = self.texts()
            with gc_paused():
                self._net = (network(self.task, self.mine) if texts is None
                             else text_network(self.task, texts))
        return self._net


class NetConfigEnv(TextEnv):
    """NetConfig; see the module docstring for kwargs, tools and scoring."""

    metric_parts = ("parse", "progress", "kept", "requirements_met", "locked", "locked_lines",
                    "device", "component", "cause")

    tools = TOOLS
    # One variant per family (so conformance covers every family), levels mixed.
    conformance_variants = tuple(
        {"family": f, "difficulty": lvl}
        for f, lvl in zip(FAMILIES, ("easy", "hard", "medium", "hard", "medium", "medium",
                                     "hard", "easy", "hard", "medium", "hard", "hard",
                                     "hard"))
    )

    def __init__(
        self,
        *,
        family: str = "routing",
        difficulty: str = "medium",
        split: str = "train",
        max_turns: int = 30,
        **kwargs,
    ) -> None:
        self.family = check_choice("family", family, FAMILIES)
        self.split = check_choice("split", split, SPLITS)
        self.difficulty = check_choice("difficulty", difficulty, LEVELS)
        kwargs.setdefault("max_obs_chars", 32_768)
        super().__init__(max_turns=max_turns, **kwargs)
        # The shared memos grow with the distinct tasks the envs of the process hold, so a
        # worker's warmed tasks stay cached until their episodes.
        self._memo_share = MemoShare(self)
        self._episode_task: str | None = None  # the id of the episode's task

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        obs, info = super().reset(seed=seed, options=options)
        self._episode_task = info["task_id"]
        self._hold_tasks()
        return obs, info

    def pregenerate(self, seed: int) -> None:
        super().pregenerate(seed)
        self._hold_tasks()

    def _hold_tasks(self) -> None:
        """Name this env's tasks in its share of the memos (bounded.MemoShare)."""
        ahead = self.pregenerated
        self._memo_share.hold(self._episode_task, None if ahead is None else ahead.task_id)

    def close(self) -> None:
        """Release this env's share of the memos (they shrink back with fewer tasks)."""
        self._memo_share.release()
        super().close()

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_memo_share"]  # (its finalizer does not pickle; the copy holds its own)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._memo_share = MemoShare(self)
        self._hold_tasks()

    def generate(self, rng: np.random.Generator) -> NetTask:
        """A task of the configured family, difficulty and split (a hash partition of tasks).

        Memoized on the generator's state, which is then set to where drawing the task
        leaves it, so a repeated seed gives the same task and the same generator."""
        key = (self.family, self.difficulty, self.split, _rng_key(rng))

        def draw() -> tuple[NetTask, dict]:
            task = generate_in_split(
                lambda: generate(rng, self.family, self.difficulty), self.split)
            return task, rng.bit_generator.state

        with gc_paused():
            task, after = _TASKS.get(key, draw)
        rng.bit_generator.state = after
        return task

    def prompt(self, task: NetTask) -> str:
        return render_prompt(task)

    def warm(self, task: NetTask) -> None:
        """Compile and check the starting network ahead (:func:`verify.warm`): an agent's first
        tool step and a wrong submission's baseline then find both done."""
        with gc_paused():
            warm(task)

    def init_state(self, task: NetTask) -> NetState:
        return NetState(task)

    def respond(self, state: NetState, action: str) -> Turn:
        call = parse(action, self.tools)
        if type(call) is ParseError:
            return Turn(call.message, error=call.error, obs_kind="feedback", info=self._extra())
        if call.name == "submit":
            verdict = self._submit(state, call.args["config"])
            return Turn(
                verdict.feedback,
                terminated=True,
                verdict=verdict,
                obs_kind="feedback",
                info=self._extra(),
            )
        obs, error = self._tool(state, call.name, call.args)
        return Turn(
            obs, error=error, obs_kind="tool" if error is None else "feedback", info=self._extra()
        )

    def _submit(self, state: NetState, body: str) -> Verdict:
        task = state.task
        with gc_paused():
            if body.strip() or task.family in ("diagnosis", "analysis"):
                return verify_submission(task, body)
            return verify_configs(task, state.mine, [], 1, state.texts())

    def _tool(self, state: NetState, name: str, args) -> tuple[str, str | None]:
        """Run one inspection or edit tool on the candidate; (output, error or None)."""
        return run_tool(state, name, args)

    def final_verdict(self, state: NetState) -> Verdict:
        """No submission: the candidate as it stands, at half weight."""
        task = state.task
        if task.family in ("diagnosis", "analysis"):
            return Verdict(0.0, False, "No answer was submitted.", {}, "no_submit")
        with gc_paused():
            v = verify_configs(task, state.mine, [], 1, state.texts())
        return Verdict(v.score * 0.5, False, "Not submitted. " + v.feedback, v.parts, "no_submit")

    def solve(self, task: NetTask) -> list[str]:
        """Submit the reference configs (config families) or the true answer."""
        if task.family == "diagnosis":
            label = json.loads(task.answer)
            ans = {
                "device": label["device"],
                "component": label["components"][0],
                "cause": label["cause"],
            }
            return [f"<submit>{json.dumps(ans)}</submit>"]
        if task.family == "analysis":
            return [f"<submit>{task.answer}</submit>"]
        body = "\n".join(f"! device {d}\n{text}" for d, text in task.reference)
        return [f"<submit>\n{body}\n</submit>"]

    def sample_action(self, rng: np.random.Generator) -> str:
        """A random valid inspection call (rarely a submission of the candidate)."""
        state: NetState = self.state
        devices = [d for d, _ in state.task.devices]
        dev = devices[int(rng.integers(len(devices)))]
        r = rng.random()
        if r < 0.04:
            return "<submit/>"
        if r < 0.5:
            name = (
                "show_run",
                "show_ip_route",
                "show_ip_int_brief",
                "show_ip_ospf_neighbor",
                "show_access_lists",
                "show_vlan_brief",
                "get_logs",
                "show_standby_brief",
            )[int(rng.integers(8))]
            return f'<{name} device="{dev}"/>'
        addrs = [str(ipaddress.IPv4Address(i.ip)) for ifs in state.net.l3.values() for i in ifs]
        target = addrs[int(rng.integers(len(addrs)))] if addrs else "10.0.0.1"
        if r < 0.8:
            tool = "ping" if r < 0.65 else "traceroute"
            return f'<{tool} device="{dev}">{target}</{tool}>'
        src = addrs[int(rng.integers(len(addrs)))] if addrs else "10.0.0.2"
        proto = ("tcp", "udp", "icmp")[int(rng.integers(3))]
        return (
            f'{{"name": "test_flow", "arguments": {{"src": "{src}", "dst": "{target}", '
            f'"proto": "{proto}", "port": {int(rng.integers(1, 1024))}}}}}'
        )

    def _extra(self) -> dict[str, str]:
        return {"family": self.family, "difficulty": self.difficulty}


def _rng_key(rng: np.random.Generator) -> tuple:
    """A hashable copy of the generator's whole state (any bit generator)."""
    return _frozen(rng.bit_generator.state)


def _frozen(x: Any) -> Any:
    """``x`` with its dicts and arrays as tuples. (A module-level function: a recursive
    closure refers to itself through its cell, a reference cycle left at every reset for
    the cyclic garbage collector to find.)"""
    if isinstance(x, dict):
        return tuple((k, _frozen(v)) for k, v in sorted(x.items()))
    if isinstance(x, np.ndarray):
        return (x.dtype.str, x.shape, x.tobytes())
    return x


__all__ = ["NetConfigEnv", "NetState", "TOOLS"]
