"""verify._padded: a text that only adds skipped lines (blank, ``!``, ``end``) to another
parses to the same config, and nothing else is taken for one."""

from textgyms.envs.netconfig.memo import same_config
from textgyms.envs.netconfig.verify import _padded

BASE = "hostname R1\ninterface Ethernet0\n ip address 10.0.0.1 255.255.255.0\n"


def test_padded_texts_parse_the_same() -> None:
    for tail in ("!", "!\nend", "\n\n", " ! note\n END\n", "end\n!\n"):
        long = BASE + tail
        assert _padded(long, BASE) and same_config(long, BASE, "R1")
    assert _padded(BASE.rstrip("\n") + "\n!", BASE.rstrip("\n"))


def test_other_texts_are_not_padded() -> None:
    assert not _padded(BASE, BASE)  # equal texts: the caller compares those itself
    assert not _padded(BASE + " shutdown\n", BASE)
    assert not _padded(BASE.rstrip("\n") + "0\n", BASE.rstrip("\n"))  # differs inside a line
    assert not _padded(BASE + "! caf\u00e9\n", BASE)  # non-ASCII: left to same_config
    assert not _padded(BASE, BASE + "!")
