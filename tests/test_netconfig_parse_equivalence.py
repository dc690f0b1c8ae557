"""The IOS-lite parser's results are pinned: every parsed config, rejected line (number and
message) and accepted-line count over a corpus hashes to digests recorded before the parser's
fast paths existed (main at aff25ba).

The corpus is every text the generators write (reference, start and fixed devices of each
family and level, two seeds), each also mutated so that most of the parser's paths run:
negated lines, IOS abbreviations and odd case, lines shuffled out of their modes, broken
arguments, flattened blocks with ``exit``/``end``, and the texts applied onto another config
(:func:`apply_lines`); plus crafted hostile lines.

To re-record after a deliberate change of behaviour:
``python tests/test_netconfig_parse_equivalence.py`` prints the new table.
"""

from __future__ import annotations

import dataclasses
import hashlib
import ipaddress
import json
import random
import re

import numpy as np
import pytest

from textgyms.envs.netconfig import parser as parser_module
from textgyms.envs.netconfig.generate import FAMILIES, LEVELS, generate
from textgyms.envs.netconfig.model import DeviceConfig
from textgyms.envs.netconfig.parse_if import network4
from textgyms.envs.netconfig.parse_v6 import LINK_LOCAL, _unicast, _v6_iface
from textgyms.envs.netconfig.parser import apply_lines, parse_config, split_devices
from textgyms.envs.netconfig.vocab import MODE_TREES, expand

SEEDS = (0, 1)

# sha256 (first 16 hex digits) of _family_digest(family), _hostile_digest() and
# _split_digest(), recorded with the parser of main at aff25ba.
RECORDED = {
    "addressing": "fa4bf2377b72af25",
    "acl": "1da98c624b7c155d",
    "routing": "52f3c9a51e2ccb63",
    "vlan": "4085a8dc6f127bf6",
    "nat": "4eb129ad08493143",
    "repair": "a2177d368c559c6d",
    "diagnosis": "24db1ad58120a3d5",
    "analysis": "29470ccd58c1eb71",
    "ospf_areas": "16972df11929cc36",
    "fhrp": "87c42f618bf7bf72",
    "bgp": "16422b631ecf337f",
    "redistribution": "240e3d44a16791b5",
    "ipv6": "d702f30743f7ae95",
    "ibgp": "213338ff17367e17",
    "bgp_ospf": "16818873b89aa9aa",
    "vrrp": "30d7646e701c8a12",
    "nssa": "bf0c77974c57ccc7",
    "hostile": "efbce45d79307cd5",
    "split": "b8290cda58821073",
}

# Whole-word abbreviations and case changes IOS accepts (or, for a few, refuses as ambiguous).
_ABBREV = [
    (r"^interface ", "int "), (r"^ ip address ", " ip add "), (r"^ no shutdown$", " no shut"),
    (r"^ description ", " desc "), (r"^ network ", " net "), (r"^ passive-interface ", " pass "),
    (r"^router ospf ", "router os "), (r"^hostname ", "HOSTNAME "), (r"^ switchport ", " sw "),
    (r"^ neighbor ", " nei "), (r"^ standby ", " stand "), (r"^ip route ", "IP ro "),
    (r"^ ip ospf ", " ip os "), (r"^ipv6 ", "ipv6 "), (r"^ shutdown$", " sh"),
    (r"^ no ", " NO "), (r"^router bgp ", "ro bgp "), (r"^ ipv6 address ", " ipv6 a "),
    (r"^ vrrp ", " vr "), (r"^ip default-gateway ", "ip default "),
]

HOSTILE = """hostname R
interface Gi0/0
 ip address 10.0.0.0 255.255.255.0
 ip address 10.0.0.255 255.255.255.0
 ip address 10.0.0.1 255.0.255.0
 ip address 10.0.0.1
 ip address 10.0.0.1 255.255.255.0 secondary
 ip address 010.0.0.1 255.255.255.0
 ip address 10.0.0.1 24
 ip address 10.0.0.2 255.255.255.252
interface Gi0/1
 ip address 10.0.0.1 255.255.255.0
 no shutdown
 shutdown
 no shutdown now
 description
 description  two  spaces
 no description
 ip access-group 101 sideways
 ip default-gateway 10.0.0.9
 ip route 0.0.0.0 0.0.0.0 10.0.0.9
 switchport access vlan 5000
 switchport trunk allowed vlan 10,x
 s
 i
 e
 ex
 network 10.0.0.0 0.0.0.255 area 0
 hostname INNER
 router ospf 1
 network 10.0.0.0 0.0.0.255 area 0
 network 10.0.0.0 0.0.0.255 area 0
 network 10.0.0.0 0.0.0.255 area 0.0.0.1
 network 10.0.0.0 0.0.0.255 area
 network 10.0.0.0 0.0.0.255 zone 1
 network 10.0.0.300 0.0.0.255 area 1
 no network 10.0.0.0 0.0.0.255 area 0
 passive-interface default
 passive-interface Gi0/1
 no passive-interface Gi0/1
 passive-interface bogus9
 passive-interface
 router-id 1.1.1.1
 router ospf 0
 router ospf 2
 interface Gi0/2
 interface
 interface bogus
 interface Gi 0/3
access-list 10 permit 10.0.0.0 0.0.255.0
access-list 10 permit tcp any any
access-list 101 permit tcp any any eq 70000
access-list 101 permit udp any any established
access-list 300 permit any
ip route 10.0.0.1 255.255.255.0 10.1.1.1
ip route 10.9.0.0 255.255.0.0 10.0.0.1
ip nat outside source static 1.1.1.1 2.2.2.2
router eigrp 100
hostname
hostname A B
no hostname R
vlan 10
 name USERS
 hostname R2
 interface vlan 10
 ip address 10.10.0.1 255.255.255.0
ip access-list extended EDGE
 20 permit tcp any host 10.0.0.5 range 8000 8080
 10 deny tcp 10.1.0.0 0.0.255.255 gt 1023 any lt 1024
 permit tcp any any established
 no 20
 interface Gi0/4
 description x
router bgp 65001
 neighbor 10.0.0.2 remote-as 65002
 network 10.0.0.0 mask 255.255.255.0
 address-family ipv4
 neighbor 10.0.0.2 activate
 hostname R3
 exit-address-family
 interface Gi0/5
line vty 0 4
 login
 exit
interface Gi0/6
 ip address 10.6.0.1 255.255.255.0
 end
 no shutdown
interface Gi0/7
 ip address 10.7.0.1 255.255.255.0 ２
 description ²
 description 99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999
conf t
enable
!
   !  comment
"""


def _canon(obj):
    """A JSON-able, hash-seed-independent form of a parsed value (dict order kept: it shows)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [type(obj).__name__, [_canon(getattr(obj, f.name)) for f in dataclasses.fields(obj)]]
    if isinstance(obj, dict):
        return ["dict", [[_canon(k), _canon(v)] for k, v in obj.items()]]
    if isinstance(obj, (list, tuple)):
        return [type(obj).__name__, [_canon(x) for x in obj]]
    if isinstance(obj, (set, frozenset)):
        return ["set", sorted(json.dumps(_canon(x)) for x in obj)]
    return repr(obj)


def _mutants(text: str, rng: random.Random) -> list[str]:
    """``text`` and variants of it that take the parser's other paths."""
    lines = text.splitlines()
    negated = [x for line in lines for x in (line, re.sub(r"^(\s*)", r"\1no ", line, count=1))]
    abbrev = []
    for line in lines:
        for pat, rep in _ABBREV:
            if rng.random() < 0.7:
                line = re.sub(pat, rep, line)
        abbrev.append(line)
    shuffled = list(lines)
    rng.shuffle(shuffled)
    broken = []
    for line in lines:
        roll = rng.random()
        if roll < 0.15:
            line = " ".join(line.split(" ")[:-1])
        elif roll < 0.3:
            line = re.sub(r"\d+", lambda m: str(int(m.group()) * 97 + 300), line, count=1)
        elif roll < 0.4:
            broken.append(line)
        broken.append(line)
    flat = [x for line in lines
            for x in ((["exit"] if not line.startswith(" ") else []) + [line.strip()])] + ["end"]
    return ["\n".join(v) for v in (lines, negated, abbrev, shuffled, broken, flat)]


def _result(dev: DeviceConfig, issues, count) -> list:
    return [_canon(dev), _canon(list(issues)), count]


def _family_digest(family: str) -> str:
    h = hashlib.sha256()
    rng = random.Random(family)
    for level in LEVELS:
        for seed in SEEDS:
            task = generate(np.random.default_rng(seed), family, level)
            texts = [(d, t) for d, t in (*task.reference, *task.start, *task.fixed) if t]
            for device, text in texts:
                for variant in _mutants(text, rng):
                    h.update(json.dumps(_result(*parse_config(variant, device))).encode())
            # Edits onto an existing config (the start), as apply_config does.
            for (device, start), (_d, ref) in zip(task.start, task.reference):
                dev = parse_config(start or "", device)[0]
                issues = apply_lines(dev, ref, device, first_line=7)
                h.update(json.dumps(_result(dev, issues, len(issues))).encode())
    return h.hexdigest()[:16]


def _hostile_digest() -> str:
    h = hashlib.sha256()
    rng = random.Random("hostile")
    for variant in _mutants(HOSTILE, rng):
        h.update(json.dumps(_result(*parse_config(variant, "R"))).encode())
        dev = parse_config(HOSTILE)[0]
        issues = apply_lines(dev, variant, "", first_line=3)
        h.update(json.dumps(_result(dev, issues, len(issues))).encode())
    return h.hexdigest()[:16]


_MARKS = ["! device {d}", "!device {d}", "  ! DEVICE {d}  ", "!! device {d}", "! device",
          "hostname {d}", " hostname {d}", "hostname\t{d}", "hostname {d} x",
          "! device {d} extra", "!\tdevice\t{d}"]


def _split_digest() -> str:
    """:func:`split_devices` of multi-device answers: markers in every spelling, hostname
    lines alone, junk before the first section, odd markers, the texts' mutants."""
    h = hashlib.sha256()
    rng = random.Random("split")
    for family in FAMILIES:
        task = generate(np.random.default_rng(3), family, "hard")
        sections = [(d, t) for d, t in task.reference if t]
        for variant in range(len(_MARKS) + 2):
            parts = ["junk line", "!"] if variant % 3 == 0 else []
            for k, (device, text) in enumerate(sections):
                mark = _MARKS[(variant + k) % len(_MARKS)].format(d=device)
                body = _mutants(text, rng)[variant % 6]
                parts += ([mark] if variant < len(_MARKS) else []) + [body]
            h.update(json.dumps(split_devices("\n".join(parts))).encode())
    h.update(json.dumps(split_devices(HOSTILE)).encode())
    return h.hexdigest()[:16]


def test_split_devices_unchanged():
    assert _split_digest() == RECORDED["split"]


@pytest.mark.parametrize("family", FAMILIES)
def test_parse_results_unchanged(family):
    assert _family_digest(family) == RECORDED[family]


def test_hostile_lines_unchanged():
    assert _hostile_digest() == RECORDED["hostile"]


if __name__ == "__main__":
    for fam in FAMILIES:
        print(f'    "{fam}": "{_family_digest(fam)}",')
    print(f'    "hostile": "{_hostile_digest()}",')
    print(f'    "split": "{_split_digest()}",')


# --- the fast paths against the general path they stand for ----------------------------------


def _texts() -> list[tuple[str, str]]:
    out = [(HOSTILE, "R")]
    rng = random.Random("fast")
    for family in FAMILIES:
        task = generate(np.random.default_rng(5), family, "hard")
        for device, text in (*task.reference, *task.start):
            out += [(v, device) for v in _mutants(text, rng) if text]
    return out


def test_fast_paths_match_the_general_path(monkeypatch):
    """Every text parses the same with the mode fast paths and the direct-to-global route
    switched off (what the digests pin, checked without them)."""
    texts = _texts()
    fast = [json.dumps(_result(*parse_config(t, d))) for t, d in texts]
    monkeypatch.setattr(parser_module, "MODE_FAST", {})
    monkeypatch.setattr(parser_module, "_GLOBAL_WORDS", frozenset())
    assert [json.dumps(_result(*parse_config(t, d))) for t, d in texts] == fast


def test_expand_shortcut_matches_vocab():
    """The parser's expansion (its copy shortcut for written-out keywords) equals
    :func:`vocab.expand` on every line of the corpus, in every mode."""
    for text, _d in _texts()[:200]:
        for line in text.splitlines():
            words = line.split()
            for mode, tree in MODE_TREES.items():
                if words:
                    assert parser_module._expand(mode, words) == expand(words, tree), line


_ODD_V4 = ["10.0.0.0", "10.0.0.1", "0.0.0.0", "255.255.255.255", "010.0.0.0", "10.0.0",
           "x", "", "10.0.0.256", "192.168.1.128", "１0.0.0.0", "1.2.3.4.5"]
_ODD_MASKS = ["255.255.255.0", "255.255.255.255", "0.0.0.0", "0.0.0.255", "255.0.255.0", "24",
              "33", "024", "", "255.255.255.252", "255.255.255.254", "0.255.255.255", "x"]


def _state(net) -> tuple:
    """An address object's state (a network's ``hosts`` is a method bound to it)."""
    return repr(net), {k: v for k, v in vars(net).items() if k not in ("hosts", "network")}


def test_network4_is_ipaddress_network():
    rng = random.Random(4)
    pairs = [(a, m) for a in _ODD_V4 for m in _ODD_MASKS]
    for _ in range(3000):
        plen = rng.randint(0, 32)
        bits = rng.getrandbits(32) & (rng.choice([0xFFFFFFFF, (0xFFFFFFFF << (32 - plen))]))
        pairs.append((str(ipaddress.IPv4Address(bits & 0xFFFFFFFF)),
                      str(ipaddress.IPv4Network(f"0.0.0.0/{plen}").netmask)))
    for addr, mask in pairs:
        try:
            want = ipaddress.IPv4Network(f"{addr}/{mask}")
        except ValueError:
            want = None
        got = network4(addr, mask)
        assert (got is None) == (want is None), (addr, mask)
        assert got is None or _state(got) == _state(want), (addr, mask)


def test_v6_interface_address_is_ipaddress():
    """``ipv6 address`` parses its text once: the same object, and the same refusals
    (non-unicast, link-local), as ``IPv6Interface`` of the text with the old checks."""
    rng = random.Random(6)
    addrs = ["2001:db8::1", "::", "::1", "ff02::1", "fe80::1", "FE80::1", "febf::1", "fec0::1",
             "::ffff:10.0.0.1", "::10.0.0.1", "2001:DB8:0:0:0:0:0:1", "2001:db8::1%eth0", "x",
             "1::2::3", "2001:db8:1:2::", "2001:0db8::1"]
    texts = [f"{a}/{p}" for a in addrs for p in ("64", "128", "129", "0", "064", "", "x", "64/1")]
    texts += addrs
    for _ in range(2000):
        n = rng.getrandbits(128) if rng.random() < 0.5 else rng.choice(
            [0xFF << 120, 0xFE80 << 112, 0xFFFF << 32, 0xFEBF << 112, 0xFEC0 << 112, 0, 1]
        ) | rng.getrandbits(32 if rng.random() < 0.5 else 0)
        texts.append(f"{ipaddress.IPv6Address(n)}/{rng.randint(0, 130)}")
    for text in texts:
        try:
            want = ipaddress.IPv6Interface(text)
            if not _unicast(want.ip) or want.ip in LINK_LOCAL:
                want = None
        except ValueError:
            want = None
        got = _v6_iface(text)
        assert (got is None) == (want is None), text
        assert got is None or (_state(got) == _state(want) and got.scope_id == want.scope_id
                               and _state(got.network) == _state(want.network)), text


def test_apply_counted_counts_the_command_lines():
    """An edit's report counts the lines that are neither blank nor ``!`` comments (the
    definition it had before the parser's own count served it), whatever the whitespace
    around them; the config and rejected lines are apply_lines' own."""
    texts = [t for t, _d in _texts()]
    texts += ["", "\n\n", " ! x\n\t!\n\u00a0\nend\n \u2003\ninterface Gi0/0\r\n !\r\n exit",
              "\u2028!\u2029 x\x1c!\x85y\x0bz"]
    for text in texts:
        want = sum(1 for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("!"))
        mine, other = DeviceConfig("R"), DeviceConfig("R")
        issues, count = parser_module.apply_counted(mine, text, "R")
        assert count == want
        assert issues == apply_lines(other, text, "R") and mine == other
