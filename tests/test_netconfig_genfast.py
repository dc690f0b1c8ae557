"""The generator's shortcuts: its cheap draws (topologies.draw, topologies.uniform) give what
numpy's Generator methods give and leave the generator in the same state; requirement texts
read by arithmetic match ipaddress's."""

import numpy as np

from textgyms.envs.netconfig.topologies import _FAST_DRAW, draw, uniform


def test_fast_draws_are_enabled():
    assert _FAST_DRAW  # this numpy is checked at import; a silent fallback would be slow


def test_draw_and_uniform_match_numpy():
    meta = np.random.default_rng(99)
    for seed in range(40):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        for _ in range(60):
            kind = int(meta.integers(5))
            if kind == 0:
                n = int(meta.integers(1, 400))
                assert draw(b, n) == int(a.integers(n))
            elif kind == 1:
                lo = int(meta.integers(0, 70000))
                hi = lo + int(meta.choice([1, 2, 3, 50, 255, 2**31 + 1, 3 * 2**30 + 7, 2**36]))
                assert draw(b, lo, hi) == int(a.integers(lo, hi))
            elif kind == 2:
                assert uniform(b) == a.random()
            elif kind == 3:
                assert b.permutation(12).tolist() == a.permutation(12).tolist()
            else:
                assert b.integers(9, size=3).tolist() == a.integers(9, size=3).tolist()
        assert a.bit_generator.state == b.bit_generator.state


def test_requirement_interface_texts_match_ipaddress():
    import ipaddress
    import random

    from textgyms.envs.netconfig.requirements import _interface

    def ref(text):
        i = ipaddress.IPv4Interface(text)
        return str(i.ip), str(i.netmask), str(i.network)

    cases = ["10.0.0.1/24", "0.0.0.0/0", "255.255.255.255/32", "10.1.2.3/31", "010.1.2.3/24",
             "10.1.2.3/024", "10.1.2.3", "10.1.2.3/255.255.255.0", "1.2.3.4/33", "1.2.3.256/8",
             "1.2.3/8", "1.2.3.4.5/8", " 1.2.3.4/8", "1.2.3.4/", "1.2.3.4/+8", "\u0661.2.3.4/8"]
    rnd = random.Random(5)
    cases += [f"{ipaddress.IPv4Address(rnd.getrandbits(32))}/{rnd.randint(0, 32)}"
              for _ in range(5000)]
    for text in cases:
        try:
            want = ref(text)
        except ValueError as e:
            want = ("error", type(e), str(e))
        try:
            got = _interface(text)
        except ValueError as e:
            got = ("error", type(e), str(e))
        assert got == want, text


def test_canonical_quad_reads_what_ipaddress_writes():
    import ipaddress
    import random

    from textgyms.envs.netconfig.scenario import ip
    from textgyms.envs.netconfig.topologies import canonical_quad

    rnd = random.Random(9)
    for _ in range(20000):
        x = rnd.getrandbits(32)
        assert canonical_quad(str(ipaddress.IPv4Address(x))) == x
    for text in ("010.1.2.3", "1.2.3", "1.2.3.4.5", "1.2.3.256", " 1.2.3.4", "1.2.3.4 ",
                 "1..2.3", "+1.2.3.4", "\u0661.2.3.4", "", "a.b.c.d"):
        assert canonical_quad(text) is None
    assert ip("10.0.0.1") == 0x0A000001


def test_v6_text_is_ipaddress_str():
    import ipaddress
    import random

    from textgyms.envs.netconfig.ipv6tasks import v6_text

    rnd = random.Random(3)
    cases = [0, 1, (1 << 128) - 1, 0xFFFF << 32 | 0x01020304, 1 << 127]
    for _ in range(20000):  # zero groups often, so every run length and place comes up
        x = 0
        for _k in range(8):
            x = x << 16 | (0 if rnd.random() < 0.5 else rnd.getrandbits(rnd.choice((4, 16))))
        cases.append(x)
    for x in cases:
        assert v6_text(x) == str(ipaddress.IPv6Address(x))
