"""IOS keywords per configuration mode, the abbreviations IOS accepts, its error messages and
the lines it accepts that change nothing the simulator models.

IOS lets every keyword be shortened to any prefix that is unique among the keywords valid at
that point (``int gi0/1``, ``ip add``, ``no shut``, ``sw mo acc``); a prefix shared by several
keywords is ``% Ambiguous command``. :func:`expand` applies that rule with the keyword trees
below (a leaf ``None`` means the rest of the line are arguments).
"""

from __future__ import annotations

INVALID = "% Invalid input detected at '^' marker."
INCOMPLETE = "% Incomplete command."
IPV6_OFF = "% IPv6 routing not enabled"

Tree = dict[str, "Tree | None"]

_ACL_ENTRY: Tree = {"permit": None, "deny": None, "remark": None}
_IP_GLOBAL: Tree = {
    "route": None,
    "nat": {"inside": {"source": {"list": None, "static": None}}, "pool": None},
    "access-list": {"standard": None, "extended": None},
    "prefix-list": None,
    "default-gateway": None,
    "routing": None,
    "cef": None,
    "classless": None,
    "subnet-zero": None,
    "domain-name": None,
    "domain-lookup": None,
    "domain": None,
    "name-server": None,
    "host": None,
    "ssh": None,
    "http": None,
    "ftp": None,
    "tftp": None,
    "forward-protocol": None,
    "dhcp": None,
    "source-route": None,
    "finger": None,
    "bootp": None,
    "scp": None,
}
_IPV6_GLOBAL: Tree = {
    "unicast-routing": None,
    "route": None,
    "router": {"ospf": None},
    "cef": None,
    "multicast-routing": None,
    "host": None,
}
GLOBAL: Tree = {
    "hostname": None,
    "interface": None,
    "vlan": None,
    "router": {"ospf": None, "bgp": None},
    "route-map": None,
    "access-list": None,
    "ip": _IP_GLOBAL,
    "ipv6": _IPV6_GLOBAL,
    "line": None,
    "service": None,
    "enable": None,
    "username": None,
    "banner": None,
    "logging": None,
    "ntp": None,
    "spanning-tree": None,
    "clock": None,
    "cdp": None,
    "lldp": None,
    "crypto": None,
    "snmp-server": None,
    "aaa": None,
    "vtp": None,
    "boot": None,
    "version": None,
    "errdisable": None,
    "archive": None,
    "license": None,
    "login": None,
    "security": None,
    "end": None,
    "exit": None,
}
_HARMLESS_GLOBAL = {
    "service", "enable", "username", "banner", "logging", "ntp", "spanning-tree", "clock",
    "cdp", "lldp", "crypto", "snmp-server", "aaa", "vtp", "boot", "version", "errdisable",
    "archive", "license", "login", "security",
}
_HARMLESS_IP = {
    "cef", "classless", "subnet-zero", "domain-name", "domain-lookup", "domain", "name-server",
    "host", "ssh", "http", "ftp", "tftp", "forward-protocol", "dhcp", "source-route", "finger",
    "bootp", "scp",
}
INTERFACE: Tree = {
    "ipv6": {
        "address": None,
        "enable": None,
        "ospf": {"cost": None, "hello-interval": None, "dead-interval": None,
                 "priority": None, "network": None, "mtu-ignore": None},
        "mtu": None,
        "redirects": None,
        "unreachables": None,
    },
    "ip": {
        "address": None,
        "access-group": None,
        "nat": {"inside": None, "outside": None},
        "ospf": {"cost": None, "hello-interval": None, "dead-interval": None,
                 "priority": None, "network": None, "authentication": None,
                 "authentication-key": None, "message-digest-key": None,
                 "mtu-ignore": None},
        "proxy-arp": None,
        "redirects": None,
        "unreachables": None,
        "helper-address": None,
        "mtu": None,
        "tcp": None,
        "directed-broadcast": None,
        "mask-reply": None,
        "virtual-reassembly": None,
    },
    "shutdown": None,
    "description": None,
    "switchport": {
        "mode": {"access": None, "trunk": None},
        "access": {"vlan": None},
        "trunk": {"allowed": {"vlan": None}, "native": {"vlan": None}, "encapsulation": None},
        "nonegotiate": None,
        "port-security": None,
        "voice": None,
    },
    "encapsulation": {"dot1q": None},
    "bandwidth": None,
    "standby": None,
    "vrrp": None,
    "duplex": None,
    "speed": None,
    "negotiation": None,
    "spanning-tree": None,
    "cdp": None,
    "lldp": None,
    "load-interval": None,
    "keepalive": None,
    "media-type": None,
    "mtu": None,
    "delay": None,
    "storm-control": None,
    "exit": None,
}
_HARMLESS_IF = {"duplex", "speed", "negotiation", "spanning-tree", "cdp", "lldp",
                "load-interval", "keepalive", "media-type", "mtu", "delay", "storm-control"}
_HARMLESS_IF_IP = {"redirects", "unreachables", "helper-address", "mtu", "tcp",
                   "directed-broadcast", "mask-reply", "virtual-reassembly"}
_HARMLESS_OSPF_IF = {"mtu-ignore"}  # authentication, priority and network type are modelled
_HARMLESS_OSPF6_IF = {"priority", "network", "mtu-ignore"}  # not modelled for OSPFv3
OSPF: Tree = {
    "network": None,
    "passive-interface": None,
    "router-id": None,
    "auto-cost": {"reference-bandwidth": None},
    "log-adjacency-changes": None,
    "default-information": {"originate": None},
    "redistribute": {"static": None, "connected": None, "bgp": None},
    "area": None,
    "timers": None,
    "maximum-paths": None,
    "ispf": None,
    "nsf": None,
    "bfd": None,
    "exit": None,
}
_HARMLESS_IPV6 = {"cef", "multicast-routing", "host"}
_HARMLESS_IF_IPV6 = {"mtu", "redirects", "unreachables"}
OSPF6: Tree = {
    "passive-interface": None,
    "area": None,
    "router-id": None,
    "auto-cost": {"reference-bandwidth": None},
    "log-adjacency-changes": None,
    "timers": None,
    "maximum-paths": None,
    "exit": None,
}
_HARMLESS_OSPF = {"log-adjacency-changes", "timers", "maximum-paths", "ispf", "nsf", "bfd"}
VLAN: Tree = {"name": None, "state": None, "exit": None}
BGP: Tree = {"neighbor": None, "network": None, "bgp": None, "synchronization": None,
             "auto-summary": None, "timers": None, "address-family": None,
             "redistribute": None, "maximum-paths": None, "exit": None}
# ``address-family ipv4`` mode: what is not here is tried in ``router bgp`` mode.
BGP_AF: Tree = {"neighbor": None, "network": None, "redistribute": None, "synchronization": None,
                "auto-summary": None, "maximum-paths": None, "exit-address-family": None,
                "exit": None}
RMAP: Tree = {"match": {"ip": {"address": {"prefix-list": None}}, "tag": None},
              "set": {"local-preference": None, "as-path": {"prepend": None}, "metric": None,
                      "metric-type": None, "tag": None},
              "description": None, "exit": None}
LINE: Tree = {
    "login": None, "password": None, "transport": None, "exec-timeout": None, "logging": None,
    "privilege": None, "access-class": None, "history": None, "session-timeout": None,
    "stopbits": None, "exec": None, "length": None, "width": None, "exit": None,
}
ACL: Tree = {**_ACL_ENTRY, "exit": None}


def expand(words: list[str], tree: Tree) -> list[str] | str:
    """``words`` with every keyword written out, or IOS's message for an ambiguous one.
    ``no`` is accepted in front of every command; unknown words are left for the caller."""
    out = list(words)
    i = 1 if out and out[0].lower() == "no" else 0
    if i:
        out[0] = "no"
    node: Tree | None = tree
    while node is not None and i < len(out):
        word = out[i].lower()
        if word in node:
            hit = word
        else:
            hits = [k for k in node if k.startswith(word)]
            if len(hits) > 1:
                return f'% Ambiguous command:  "{" ".join(words[: i + 1])}"'
            if not hits:
                return out
            hit = hits[0]
        out[i] = hit
        node = node[hit]
        i += 1
    return out


def harmless(mode: str, words: list[str]) -> bool:
    """Whether an expanded line is one IOS accepts that changes nothing this model checks
    (management, logging, timestamps, port speed, ...)."""
    w = words[1:] if words and words[0] == "no" else words
    if not w:
        return False
    if mode == "global":
        if w[0] in _HARMLESS_GLOBAL:
            return len(w) > 1 or w[0] in ("version",)
        if w[0] == "ipv6" and len(w) > 1 and w[1] in _HARMLESS_IPV6:
            return len(w) > 2 or w[1] in ("cef", "multicast-routing")
        return w[0] == "ip" and len(w) > 1 and w[1] in _HARMLESS_IP
    if mode == "if":
        if w[0] == "ipv6" and len(w) > 1 and w[1] in _HARMLESS_IF_IPV6:
            return True
        if w[0] in _HARMLESS_IF:
            return True
        if w[0] == "ip" and len(w) > 1 and w[1] in _HARMLESS_IF_IP:
            return True
        if w[0] in ("ip", "ipv6") and w[1:2] == ["ospf"] and len(w) > 2 \
                and w[2] in (_HARMLESS_OSPF_IF if w[0] == "ip" else _HARMLESS_OSPF6_IF):
            return True
        return w[0] == "switchport" and len(w) > 1 and w[1] in (
            "nonegotiate", "port-security", "voice", "trunk"
        ) and (w[1] != "trunk" or (len(w) > 2 and w[2] == "encapsulation"))
    if mode in ("ospf", "ospf6"):
        return w[0] in _HARMLESS_OSPF
    return mode == "line"


# The keyword tree of each configuration mode, by the name the parser's mode stack uses.
MODE_TREES: dict[str, Tree] = {
    "if": INTERFACE, "vlan": VLAN, "ospf": OSPF, "acl": ACL, "line": LINE, "global": GLOBAL,
    "bgp": BGP, "af": BGP_AF, "rmap": RMAP, "ospf6": OSPF6,
}
