"""NetConfig's caches change no output: every observation, reward and info of many episodes
(oracle, random, crafted wrong submissions, edits then a submission of the candidate, runs cut
short, repeated resets of one seed) hashes to the digests recorded from the code before the
task, parse and network caches existed (main at 9311458).

To re-record after a deliberate change of behaviour:
``python tests/test_netconfig_equality.py`` prints the new table.
"""

from __future__ import annotations

import copy
import hashlib
import ipaddress
import json

import gymnasium as gym
import numpy as np
import pytest

import textgyms  # noqa: F401  (registers the ids)
from textgyms.envs.netconfig.bounded import by_identity, is_shared
from textgyms.envs.netconfig.generate import FAMILIES, LEVELS
from textgyms.envs.netconfig.memo import Memo, key_of, parsed_config, same_config
from textgyms.envs.netconfig.topologies import Hosts
from textgyms.envs.netconfig.verify import text_network

SEEDS = (0, 1)
ANSWER_FAMILIES = ("diagnosis", "analysis")

# sha256 (first 16 hex digits) of every output of _play(family), recorded at 9311458.
RECORDED = {
    "addressing": "d19e3b684990e561",
    "acl": "6e5cdb0a108744cc",
    "routing": "04acd0e6de3f9987",
    "vlan": "92a93f2ed66514ab",
    "nat": "15bdafc964b6c174",
    "repair": "6608e92e3f9afb99",
    "diagnosis": "24fb314afc19b7c8",
    "analysis": "5be86b8bfa1317af",
    "ospf_areas": "0b914d046106d7c9",
    "fhrp": "165ecdfdb427bed9",
    "bgp": "39500e33cbf325f6",
    "redistribution": "47bada0357cf5de5",
    "ipv6": "e5089f7ec7dca824",
    "ibgp": "699031165a3b5a64",
    "bgp_ospf": "fec1a2fa1a9bc65a",
    "vrrp": "aa27f4e163697127",
    "nssa": "41db791beb2660b1",
}


def _body(sections) -> str:
    return "<submit>\n" + "\n".join(f"! device {d}\n{t}" for d, t in sections) + "\n</submit>"


def _wrong_actions(task) -> list[list[str]]:
    """Crafted wrong episodes for one task (each a list of actions)."""
    if task.family == "diagnosis":
        label = json.loads(task.answer)
        half = {"device": label["device"], "component": "Loopback99", "cause": "acl"}
        return [[f"<submit>{json.dumps(half)}</submit>"], ["<submit>not json</submit>"]]
    if task.family == "analysis":
        items = json.loads(task.answer)
        return [[f"<submit>{json.dumps(items[:-1] + ['bogus'])}</submit>"], ["<submit>{}</submit>"]]
    ref = list(task.reference)
    first, text = ref[0]
    lines = text.splitlines()
    dropped = [(first, "\n".join(lines[:-1])), *ref[1:]]
    garbage = [(d, t + "\nip route 10.0.0.0 255.0.0.0 nowhere\nfrobnicate") for d, t in ref]
    half = "\n".join(lines[: len(lines) // 2])
    return [
        [_body(dropped)],
        [_body(garbage)],
        [_body(list(task.start))],
        [_body(ref[1:])] if len(ref) > 1 else ["<submit>\n! device NOPE\nhostname x\n</submit>"],
        [f'<apply_config device="{first}">{half}</apply_config>',
         f'<show_run device="{first}"/>', "<submit/>"],
    ]


def _digest(h, out) -> None:
    h.update(json.dumps(out, sort_keys=True, default=repr).encode())


def _play(family: str) -> str:
    """Hash every output of the episodes of ``family`` over every level and seed."""
    h = hashlib.sha256()
    for level in LEVELS:
        env = gym.make("textgyms/NetConfig-v4", family=family, difficulty=level).unwrapped
        short = gym.make("textgyms/NetConfig-v4", family=family, difficulty=level,
                         max_turns=3).unwrapped
        for seed in SEEDS:
            _digest(h, env.reset(seed=seed))
            task = env.task
            episodes = [env.solve(task), *_wrong_actions(task)]
            for actions in episodes:
                _digest(h, env.reset(seed=seed))
                for a in actions:
                    _digest(h, env.step(a))
            rng = np.random.default_rng(seed)
            _digest(h, short.reset(seed=seed))
            for _ in range(3):  # random tools, cut short by the turn limit
                out = short.step(short.sample_action(rng))
                _digest(h, out)
                if out[2] or out[3]:
                    break
    return h.hexdigest()[:16]


@pytest.mark.parametrize("family", FAMILIES)
def test_outputs_equal_the_recorded_ones(family):
    assert _play(family) == RECORDED[family]


def test_a_repeated_seed_leaves_the_generator_where_a_fresh_draw_does():
    env = gym.make("textgyms/NetConfig-v4", family="repair", difficulty="hard").unwrapped
    other = gym.make("textgyms/NetConfig-v4", family="repair", difficulty="hard").unwrapped
    env.reset(seed=5)
    env.reset(seed=5)  # from the task memo
    other.reset(seed=5)
    assert env.np_random.bit_generator.state == other.np_random.bit_generator.state
    assert env.np_random.random() == other.np_random.random()


def test_an_edit_never_reaches_the_shared_parsed_configs():
    env = gym.make("textgyms/NetConfig-v4", family="routing", difficulty="easy").unwrapped
    env.reset(seed=3)
    dev = env.task.start[0][0]
    before = env.step(f'<show_run device="{dev}"/>')[0]
    env.step(f'<apply_config device="{dev}">hostname CHANGED\nip route 0.0.0.0 0.0.0.0 '
             f'Null0</apply_config>')
    assert "CHANGED" in env.step(f'<show_run device="{dev}"/>')[0]
    env.reset(seed=3)
    assert env.step(f'<show_run device="{dev}"/>')[0] == before
    assert parsed_config(dict(env.task.start)[dev], dev)[0].hostname != "CHANGED"


@pytest.mark.parametrize("net", ["10.1.2.0/24", "10.1.2.0/30", "10.1.2.4/31", "10.1.2.9/32",
                                 "172.16.0.0/22"])
def test_hosts_is_the_list_of_hosts(net):
    n = ipaddress.IPv4Network(net)
    want, got = list(n.hosts()), Hosts(n)
    assert list(got) == want and len(got) == len(want)
    assert [got[k] for k in (0, -1)] == [want[0], want[-1]] and got[1:3] == want[1:3]
    with pytest.raises(IndexError):
        got[len(want)]


def test_memos_stay_bounded():
    memo = Memo(3)
    for k in range(10):
        assert memo.get(k, lambda k=k: k * k) == k * k
        assert len(memo) <= 3
    assert memo.get(9, lambda: -1) == 81 and memo.get(0, lambda: -1) == -1


def test_texts_of_identical_configs_share_one_network():
    env = gym.make("textgyms/NetConfig-v4", family="routing", difficulty="easy").unwrapped
    env.reset(seed=11)
    task = env.task
    dev, text = task.reference[0]
    padded = "! a comment\n" + text + "\n!\nend\n"
    changed = text + "\nip route 192.0.2.0 255.255.255.0 Null0"
    assert same_config(padded, text, dev) and not same_config(changed, text, dev)
    ref = dict(task.reference)

    def net(first):
        return text_network(task, {**ref, dev: first})

    assert key_of(net(padded)) == key_of(net(text)) != key_of(net(changed))
    assert net(padded).config(dev) is net(text).config(dev)
    # and the verdict is the one of the reference itself, but for nothing
    body = "<submit>\n" + "\n".join(f"! device {d}\n{padded if d == dev else t}"
                                      for d, t in task.reference) + "\n</submit>"
    assert env.step(body)[1] == 1.0


def test_only_shared_read_only_configs_are_cached_by_identity():
    text = "hostname R1\ninterface Loopback0\n ip address 10.0.0.1 255.255.255.255\n"
    shared = parsed_config(text, "R1")[0]
    edited = copy.deepcopy(shared)  # what the env edits: its own copy
    assert is_shared(shared) and not is_shared(edited)
    memo, calls = Memo(4), []

    def make(cfg):
        calls.append(cfg)
        return len(cfg.interfaces)

    for _ in range(3):
        assert by_identity(memo, shared, "x", lambda: make(shared)) == 1
        assert by_identity(memo, edited, "x", lambda: make(edited)) == 1
    edited.iface("Loopback1")  # an edit is always seen: the copy is never cached
    assert by_identity(memo, edited, "x", lambda: make(edited)) == 2
    assert [c is shared for c in calls] == [True, False, False, False, False]


if __name__ == "__main__":
    print("RECORDED = {")
    for fam in FAMILIES:
        print(f'    "{fam}": "{_play(fam)}",')
    print("}")
