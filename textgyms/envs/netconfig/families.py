"""The ACL/firewall, VLAN and NAT task families (see :mod:`generate` for the others)."""

from __future__ import annotations

import ipaddress

import numpy as np

from textgyms.envs.netconfig.acl import difference, parse_ace
from textgyms.envs.netconfig.model import Acl
from textgyms.envs.netconfig.scenario import (
    SERVICES,
    Scenario,
    flow_check,
    host_collateral,
    ip,
)
from textgyms.envs.netconfig.topologies import (
    ETH,
    FA,
    GI,
    TEST_NET_3,
    Hosts,
    Plan,
    Topo,
    base_config,
    dotted,
    draw,
    host_ints,
    hostmask_text,
    hostnames,
    iface4,
    link_ends,
    net4,
    net_text,
    netmask_text,
    quad_int,
    star,
    uniform,
)

VLAN_NAMES = ("SALES", "ENG", "HR", "GUEST", "VOICE", "MGMT", "OPS", "FINANCE", "LAB", "PRINT")
VLAN_SETS = ((10, 20, 30), (100, 200, 300), (11, 12, 13), (50, 60, 70), (110, 120, 130))


# --- ACL ----------------------------------------------------------------------------------


def _acl_addr(spec: str) -> str:
    """Rule address (``any``, ``host A``, ``A/len``) -> ACL syntax."""
    if spec in ("any",) or spec.startswith("host "):
        return spec
    addr, plen = spec.split("/")  # a network as str() writes it: its address is canonical
    return f"{addr} {hostmask_text(int(plen))}"


def _acl_line(rule: dict, standard: bool) -> str:
    if standard:
        return f"{rule['action']} {_acl_addr(rule['src'])}"
    port = ""
    if rule.get("port"):
        port = " " + " ".join(str(x) for x in rule["port"])
    est = " established" if rule.get("established") else ""
    return (
        f"{rule['action']} {rule['proto']} {_acl_addr(rule['src'])} "
        f"{_acl_addr(rule['dst'])}{port}{est}"
    )


def _rule(rng: np.random.Generator, level: str, srcs: list[str], dsts: list[str]) -> dict:
    action = "permit" if uniform(rng) < 0.55 else "deny"
    src = srcs[draw(rng, len(srcs))]
    if level == "easy":
        return {"action": action, "proto": "ip", "src": src, "dst": "any", "port": None}
    proto, port = SERVICES[draw(rng, len(SERVICES))]
    op = ["eq", port]
    if level == "hard" and uniform(rng) < 0.4:
        lo = draw(rng, 1000, 9000)
        op = ["range", lo, lo + draw(rng, 5, 50)] if uniform(rng) < 0.6 else ["gt", lo]
    est = level == "hard" and proto == "tcp" and uniform(rng) < 0.25
    dst = dsts[draw(rng, len(dsts))]
    return {
        "action": action,
        "proto": proto,
        "src": src,
        "dst": dst,
        "port": op,
        "established": est,
    }


def _rule_flows(rule: dict, lans: list, srv: str, inject_for) -> list[dict]:
    """A flow matching the rule and its boundary flows (ports and addresses at the edges)."""
    src_spec = rule["src"]
    if src_spec.startswith("host "):
        srcs = [src_spec[5:]]
    elif src_spec == "any":
        srcs = [str(lans[0][2])]
    else:
        addr, plen = src_spec.split("/")
        hosts = host_ints(quad_int(addr), int(plen))
        srcs = [dotted(hosts[0]), dotted(hosts[-1])]
    proto = rule["proto"] if rule["proto"] != "ip" else "tcp"
    port = rule.get("port") or ["eq", 80]
    ports = {
        "eq": [port[1] - 1, port[1], port[1] + 1],
        "range": [port[1] - 1, port[1], port[-1], port[-1] + 1],
        "gt": [port[1], port[1] + 1],
        "lt": [port[1] - 1, port[1]],
    }[port[0]]
    inject = {s: inject_for(s) for s in srcs}  # looked up once per source, not per flow
    out = [
        flow_check(
            "flows",
            srcs[0],
            srv,
            proto,
            port[1] if port[0] == "eq" else ports[1],
            False,
            inject[srcs[0]],
        )
    ]
    for s in srcs:
        for p in ports:
            if 0 <= p <= 65535:
                out.append(flow_check("boundary", s, srv, proto, p, False, inject[s]))
        if rule.get("established"):
            out.append(flow_check("boundary", s, srv, proto, ports[1], True, inject[s]))
    return out


def _policy(rng: np.random.Generator, level: str, srcs: list[str], dsts: list[str]):
    """Prioritised rules and a default action that filter something and let something
    through."""
    n_rules = {"easy": 2, "medium": 3, "hard": 5}[level] + draw(rng, 2)
    for _attempt in range(1000):
        rules = [_rule(rng, level, srcs, dsts) for _ in range(n_rules)]
        default = "deny" if level == "easy" or uniform(rng) < 0.6 else "permit"
        if _meaningful(rules, default, level == "easy"):
            return rules, default
    raise RuntimeError("no meaningful ACL policy drawn in 1000 draws (a generator bug)")


def _acl_text(name: str, rules: list[dict], default: str, standard: bool) -> str:
    """The reference ACL: numbered lines or a named block."""
    lines = [_acl_line(r, standard) for r in rules]
    if default == "permit":
        lines.append("permit any" if standard else "permit ip any any")
    if name.isdigit():
        return "\n".join(f"access-list {name} {x}" for x in lines)
    return f"ip access-list extended {name}\n" + "\n".join(f" {x}" for x in lines)


_ACL_NAMES = ("SRV-FILTER", "PROTECT-SERVERS", "DMZ-IN", "FW-POLICY")  # rng.choice's one draw


def acl(rng: np.random.Generator, level: str) -> Scenario:
    """Write an ACL from a prioritised policy and apply it outbound on the server LAN."""
    t = star(rng, 2 if level != "hard" else 3)
    fw = t.routers()[0]
    lans = [
        (i, net, next(ip.ip for ip, _gw in t.hosts.values() if ip.ip in net))
        for (_r, i, net) in t.lans
    ]
    srv_if, srv_net, srv_ip = next(x for x in lans if x[2] == t.hosts["SRV1"][0].ip)
    users = [x for x in lans if x[0] != srv_if]
    srcs = [net_text(n) for _, n, _ in users] + [f"host {h}" for _, _, h in users]
    dsts = [f"host {srv_ip}", str(srv_net)]
    standard = level == "easy"
    rules, default = _policy(rng, level, srcs, dsts)
    name = {"easy": str(draw(rng, 2, 99)), "medium": str(draw(rng, 100, 199))}.get(
        level, _ACL_NAMES[draw(rng, len(_ACL_NAMES))])  # all three drawn, as ever
    acl_text = _acl_text(name, rules, default, standard)
    extra = {srv_if: [f" ip access-group {name} out"]}
    reference = {fw: base_config(t, fw, extra) + "\n" + acl_text}
    reqs = [
        {
            "type": "acl",
            "device": fw,
            "interface": srv_if,
            "direction": "out",
            "kind": "standard" if standard else "extended",
            "name": name,
            "rules": rules,
            "default": default,
        }
    ]
    checks = [{"g": "acl_equiv", "dev": fw, "if": srv_if, "dir": "out", "subnet": str(srv_net)}]
    inject = _injector(fw, users)
    for r in rules:
        checks += _rule_flows(r, [(i, n, h) for i, n, h in users], str(srv_ip), inject)
    checks += _acl_collateral(rng, users, str(srv_ip), inject)
    return Scenario(t, reference, {fw: base_config(t, fw)}, reqs, checks)


def _meaningful(rules: list[dict], default: str, standard: bool) -> bool:
    """True if the policy is neither "permit everything" nor "deny everything"."""
    kind = "standard" if standard else "extended"
    lines = [_acl_line(r, standard).split() for r in rules]
    lines.append(["permit", "any"] if standard else ["permit", "ip", "any", "any"])
    entries = [parse_ace(w, kind) for w in (lines if default == "permit" else lines[:-1])]
    policy = Acl("p", kind, entries)
    deny_all = Acl("d", kind, [parse_ace(["deny", "any"] if standard else
                                         ["deny", "ip", "any", "any"], kind)])
    return difference(policy, None) is not None and difference(policy, deny_all) is not None


def _injector(fw: str, users: list):
    # each user LAN as an int range: a flow's source is looked up once per boundary flow
    spans = [(iface, int(net.network_address), int(net.network_address) + net.num_addresses - 1)
             for iface, net, _h in users]

    def inject(src: str) -> tuple[str, str]:
        a = ip(src)
        for iface, lo, hi in spans:
            if lo <= a <= hi:
                return fw, iface
        return fw, users[0][0]

    return inject


def _acl_collateral(rng, users, srv: str, inject) -> list[dict]:
    """Unmentioned flows: user LAN to user LAN, server replies, random services to servers."""
    out = []
    for _i, _n, a in users:
        for _j, _m, b in users:
            if a != b:
                out.append(flow_check("collateral", str(a), str(b), "tcp", 443, False, None))
        out.append(flow_check("collateral", srv, str(a), "udp", 514, False, None))
    for _ in range(4):
        _i, _n, h = users[draw(rng, len(users))]
        proto, port = SERVICES[draw(rng, len(SERVICES))]
        out.append(flow_check("collateral", str(h), srv, proto, port, False, inject(str(h))))
    return out


# --- VLAN ---------------------------------------------------------------------------------


def _campus(rng: np.random.Generator, level: str):
    """A router (or L3 switch) and one or two access switches with hosts in VLANs."""
    t, plan = Topo("two-tier-campus"), Plan(rng)
    nvl = 2 if level == "easy" else 3
    vids = list(VLAN_SETS[draw(rng, len(VLAN_SETS))][:nvl])
    # permuting the indices draws what permuting the names does
    names = [VLAN_NAMES[k] for k in rng.permutation(len(VLAN_NAMES))[:nvl].tolist()]
    sws = hostnames(rng, 2 if level == "hard" else 1, "SW")
    gw_dev = sws[0] if level == "medium" else hostnames(rng, 1, "R")[0]
    t.kinds[gw_dev] = "l3switch" if level == "medium" else "router"
    for s in sws:
        t.kinds.setdefault(s, "switch")
    if level != "medium":
        t.link(gw_dev, GI.format(0), sws[0], GI.format(1))
    if level == "hard":
        t.link(sws[0], GI.format(2), sws[1], GI.format(1))
    subnets = {v: plan.lan() for v in vids}
    port = {s: 1 for s in sws}
    placement: dict[str, tuple[str, str, int]] = {}
    for k in range(nvl + 1 + (level == "hard")):
        v = vids[k % nvl]
        sw = sws[k % len(sws)]
        h = f"PC{k + 1}"
        net = subnets[v]
        hosts = Hosts(net).ints
        t.kinds[h] = "host"
        t.hosts[h] = (iface4(hosts[10 + 7 * k], net.prefixlen), ipaddress.IPv4Address(hosts[0]))
        t.link(sw, FA.format(port[sw]), h, ETH)
        placement[h] = (sw, FA.format(port[sw]), v)
        port[sw] += 1
    return t, sws, gw_dev, vids, names, subnets, placement


def _switch_config(t: Topo, sw: str, vids, names, placement, trunks: dict) -> str:
    lines = [f"hostname {sw}", "!"]
    for v, n in zip(vids, names):
        lines += [f"vlan {v}", f" name {n}", "!"]
    for _h, (s, port, v) in sorted(placement.items()):
        if s == sw:
            lines += [
                f"interface {port}",
                f" description {t.desc[(sw, port)]}",
                " switchport mode access",
                f" switchport access vlan {v}",
                "!",
            ]
    for port, allowed in sorted(trunks.get(sw, {}).items()):
        vl = ",".join(str(v) for v in sorted(allowed))
        lines += [
            f"interface {port}",
            f" description {t.desc[(sw, port)]}",
            f" switchport trunk allowed vlan {vl}",
            " switchport mode trunk",
            "!",
        ]
    return "\n".join(lines)


def _switch_start(t: Topo, sw: str) -> str:
    lines = [f"hostname {sw}", "!"]
    for (d, port), desc in sorted(t.desc.items()):
        if d == sw:
            lines += [f"interface {port}", f" description {desc}", "!"]
    return "\n".join(lines)


def _gateway_lines(t: Topo, gw_dev: str, vids, subnets, svi: bool, reqs: list) -> list[str]:
    """Inter-VLAN routing lines: SVIs, or a router's trunk port and dot1Q subinterfaces
    (whose first 7 lines, hostname and trunk port, are the router's starting config)."""
    lines = []
    if not svi:
        port = GI.format(0)
        lines = [f"hostname {gw_dev}", "!", f"interface {port}",
                 f" description {t.desc[(gw_dev, port)]}", " no ip address", " no shutdown", "!"]
    mode = "SVIs" if svi else "router-on-a-stick subinterfaces"
    for v in vids:
        net = subnets[v]
        gw = Hosts(net)[0]
        name = f"Vlan{v}" if svi else f"{GI.format(0)}.{v}"
        enc = [] if svi else [f" encapsulation dot1Q {v}"]
        lines += [f"interface {name}", *enc, f" ip address {gw} {net.netmask}", " no shutdown",
                  "!"]
        reqs.append({"type": "gateway", "vlan": v, "subnet": str(net), "device": gw_dev,
                     "address": str(gw), "mode": mode})
    return lines


def vlan(rng: np.random.Generator, level: str) -> Scenario:
    """VLANs, access ports and trunks, routed by router-on-a-stick or by SVIs."""
    t, sws, gw_dev, vids, names, subnets, placement = _campus(rng, level)
    reqs: list[dict] = []
    checks: list[dict] = []
    trunks: dict[str, dict[str, set[int]]] = {}
    if level != "medium":
        trunks.setdefault(sws[0], {})[GI.format(1)] = set(vids)
    if level == "hard":
        far = {v for h, (s, _p, v) in placement.items() if s == sws[1]}
        trunks[sws[0]][GI.format(2)] = far
        trunks.setdefault(sws[1], {})[GI.format(1)] = far
    reference = {s: _switch_config(t, s, vids, names, placement, trunks) for s in sws}
    start = {s: _switch_start(t, s) for s in sws}
    svi = level == "medium"
    gw_lines = _gateway_lines(t, gw_dev, vids, subnets, svi, reqs)
    if svi:  # a Catalyst switch routes between its SVIs only with "ip routing"
        reference[gw_dev] += "\nip routing\n" + "\n".join(gw_lines)
    else:
        start[gw_dev] = "\n".join(gw_lines[:7])  # hostname and the trunk port
        reference[gw_dev] = "\n".join(gw_lines)
    _vlan_reqs(t, sws, vids, names, placement, trunks, reqs, checks)
    checks += host_collateral(rng, t.hosts)
    return Scenario(t, reference, start, reqs, checks)


def _vlan_reqs(t, sws, vids, names, placement, trunks, reqs, checks) -> None:
    for s in sws:
        for v, n in zip(vids, names):
            reqs.append({"type": "vlan", "device": s, "vlan": v, "name": n})
            checks.append({"g": "vlan", "dev": s, "vlan": v, "name": n})
    for h, (s, port, v) in sorted(placement.items()):
        reqs.append({"type": "access", "device": s, "interface": port, "vlan": v, "host": h})
        checks.append({"g": "reach", "src": h, "dst": str(t.hosts[h][1])})
    for s, ports in sorted(trunks.items()):
        for port, allowed in sorted(ports.items()):
            reqs.append({"type": "trunk", "device": s, "interface": port, "vlans": sorted(allowed)})
            checks.append({"g": "trunk", "dev": s, "if": port, "vlans": sorted(allowed)})
    hosts = sorted(placement)
    for a in hosts:
        for b in hosts:
            if a < b:
                checks.append({"g": "reach", "src": a, "dst": dotted(int(t.hosts[b][0]))})
                if placement[a][2] != placement[b][2]:
                    checks.append({"g": "isolation", "a": a, "b": b})


# --- NAT ----------------------------------------------------------------------------------


WEB_NET = 0xC6336400  # 198.51.100.0/24, the Internet server's LAN


def _add_isp(rng: np.random.Generator, t: Topo, fw: str, out_if: str):
    """Cable a provider router (with an Internet server behind it) to ``fw``'s ``out_if``;
    return (provider address, public /28 routed to fw, server address, provider config)."""
    k = draw(rng, 1, 60)
    link = net4(TEST_NET_3 + 4 * k, 30)
    m = draw(rng, 1, 15)
    while 4 * k // 16 == m:  # the public /28 must not contain the link's /30
        m = draw(rng, 1, 15)
    block = net4(TEST_NET_3 + 16 * m, 28)
    isp_ip, fw_ip = link_ends(link)
    t.kinds["ISP"] = "router"
    t.addr[(fw, out_if)] = iface4(int(fw_ip), 30)
    t.addr[("ISP", GI.format(0))] = iface4(int(isp_ip), 30)
    t.link(fw, out_if, "ISP", GI.format(0))
    web_ip = ipaddress.IPv4Address(WEB_NET + draw(rng, 10, 250))
    t.addr[("ISP", GI.format(1))] = iface4(WEB_NET + 1, 24)
    t.kinds["WEB1"] = "host"
    t.hosts["WEB1"] = (iface4(int(web_ip), 24), ipaddress.IPv4Address(WEB_NET + 1))
    t.link("ISP", GI.format(1), "WEB1", ETH)
    cfg = base_config(t, "ISP") + \
        f"\nip route {dotted(TEST_NET_3 + 16 * m)} {netmask_text(28)} {dotted(int(fw_ip))}"
    return isp_ip, block, web_ip, cfg


def nat(rng: np.random.Generator, level: str) -> Scenario:
    """PAT for the user LANs on the edge router, plus static NAT for a server (medium, hard)."""
    t = star(rng, 1 if level != "hard" else 2)
    fw = t.routers()[0]
    out_if = GI.format(3)
    isp_ip, block, web_ip, isp_cfg = _add_isp(rng, t, fw, out_if)
    isp = "ISP"
    users = [(i, net) for (r, i, net) in t.lans if r == fw and net != _net_of(t, "SRV1")]
    srv_if = next(i for (r, i, net) in t.lans if net == _net_of(t, "SRV1"))
    glob = block[draw(rng, 1, 15)]
    static = level != "easy"
    acl_name = "1" if level != "hard" else "NAT-INSIDE"
    extra = {i: [" ip nat inside"] for i, _ in users}
    if static:
        extra[srv_if] = [" ip nat inside"]
    extra[out_if] = [" ip nat outside"]
    route = f"ip route 0.0.0.0 0.0.0.0 {isp_ip}"
    if acl_name.isdigit():
        acl_lines = [f"access-list 1 permit {n.network_address} {n.hostmask}" for _, n in users]
    else:
        acl_lines = [f"ip access-list standard {acl_name}"]
        acl_lines += [f" permit {n.network_address} {n.hostmask}" for _, n in users]
    nat_lines = [f"ip nat inside source list {acl_name} interface {out_if} overload"]
    if static:
        nat_lines.append(f"ip nat inside source static {t.hosts['SRV1'][0].ip} {glob}")
    ref = base_config(t, fw, extra) + "\n" + "\n".join([route, *nat_lines, *acl_lines])
    sc = Scenario(t, {fw: ref}, {fw: base_config(t, fw) + "\n" + route}, [], [], {isp: isp_cfg})
    _nat_reqs(sc, fw, users, srv_if, out_if, acl_name, glob if static else None, str(web_ip))
    return sc


def _net_of(t: Topo, host: str) -> ipaddress.IPv4Network:
    return t.hosts[host][0].network


def _nat_reqs(sc, fw, users, srv_if, out_if, acl_name, glob, web: str) -> None:
    t = sc.topo
    inside = [i for i, _ in users] + ([srv_if] if glob else [])
    sc.reqs.append(
        {
            "type": "nat_pat",
            "device": fw,
            "networks": [str(n) for _, n in users],
            "outside": out_if,
            "inside": inside,
            "acl": acl_name,
        }
    )
    fw_out = dotted(int(t.addr[(fw, out_if)]))
    for h in sorted(t.hosts):
        if h.startswith("PC"):
            sc.checks.append({"g": "nat", "src": h, "dst": web, "ok": True, "seen": fw_out})
            sc.checks.append(flow_check("collateral", web, dotted(int(t.hosts[h][0])), "tcp", 22))
    taken = {int(a) for a in t.addr.values()} | {int(a) for a, _gw in t.hosts.values()}
    for iface, lan in users:  # the whole LAN translates: its lowest and highest free hosts
        ints = host_ints(int(lan.network_address), lan.prefixlen)
        for a in (next(x for x in ints if x not in taken),
                  next(x for x in reversed(ints) if x not in taken)):
            sc.checks.append({"g": "nat_inside", "src": dotted(a), "dst": web,
                              "inject": [fw, iface], "seen": fw_out})
    srv = dotted(int(t.hosts["SRV1"][0]))
    if glob is not None:
        sc.reqs.append({"type": "nat_static", "device": fw, "local": srv, "global": str(glob)})
        sc.checks.append({"g": "nat", "src": "SRV1", "dst": web, "ok": True, "seen": str(glob)})
        sc.checks.append({"g": "nat", "src": "WEB1", "dst": str(glob), "ok": True, "at": "SRV1"})
    for h in sorted(t.hosts):
        if h.startswith("PC"):
            sc.checks.append(flow_check("collateral", dotted(int(t.hosts[h][0])), srv, "tcp", 443))
    sources = sorted(h for h in t.hosts if h.startswith("PC")) + (["SRV1"] if glob else [])
    sc.reqs.append({"type": "reach", "src": ", ".join(sources), "dst": f"WEB1 ({web})"})
