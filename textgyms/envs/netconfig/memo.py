"""Bounded per-process memos of NetConfig's pure functions of immutable inputs.

Configuration text parses to the same :class:`DeviceConfig` every time, and the same texts on
the same cabling compile to the same :class:`Network`; a GRPO group resets one seed G times,
the verifier parses the reference, start and fixed devices the generator already parsed, and
an oracle submission repeats the reference texts. Each memo is a plain dict that drops its
oldest entry when full (bounded memory, no per-entry bookkeeping).

Texts that parse to identical configs (they differ only in comments, ``!`` and ``end``
lines, blank lines or abbreviations) compile to the same network: :func:`compiled` keys a
network by each device's first text seen with that config, so such a submission reuses the
network, its check results and its derived networks.

Sharing rules, so a cached object never leaks a change: a parsed config from
:func:`parsed_config` is read-only (copy it with :func:`copy.deepcopy` before an edit), and
:func:`compiled` hands out a shallow copy of the cached network with its own NAT state (the
only thing a packet walk writes).
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable, Hashable

from textgyms.envs.netconfig.bounded import Memo
from textgyms.envs.netconfig.model import DeviceConfig, Issue
from textgyms.envs.netconfig.parser import parse_config
from textgyms.envs.netconfig.sim import Network

__all__ = ["Memo", "canonical_text", "compiled", "derived", "key_of", "parsed_config", "view"]


PARSED = Memo(2048)
NETWORKS = Memo(128)
DERIVED = Memo(128)  # networks made from a compiled one (a link failed, ...)
CANONICAL = Memo(2048)  # (text, device) -> the first text seen that parses to the same config
_FIRST = Memo(2048)  # (device, digest of the parsed config's repr) -> that first text

# (name, kind, configuration text or None for an unconfigured device) of every device
DeviceTexts = tuple[tuple[str, str, "str | None"], ...]


def parsed_config(text: str, device: str = "") -> tuple[DeviceConfig, tuple[Issue, ...], int]:
    """:func:`parse_config` of ``text``, shared between callers: never mutate the config."""

    def make():
        cfg, issues, accepted = parse_config(text, device)
        return cfg, tuple(issues), accepted

    return PARSED.get((text, device), make)


def _fingerprint(cfg: DeviceConfig) -> bytes:
    """A digest of everything a parsed config holds, in order (the dataclass repr lists every
    field; dicts and lists in their order, which later walks and listings follow)."""
    return hashlib.blake2b(repr(cfg).encode(), digest_size=16).digest()


def canonical_text(text: str, device: str = "") -> str:
    """The first text seen for ``device`` that parses to a config identical to ``text``'s
    (same repr: same fields, same order), else ``text`` itself. Compiling either gives the
    same network."""

    def make() -> str:
        cfg = parsed_config(text, device)[0]
        first = _FIRST.get((device, _fingerprint(cfg)), lambda: text)
        if first is text or first == text:
            return text
        # A digest match: confirm it (a collision must never merge two different configs).
        return first if repr(parsed_config(first, device)[0]) == repr(cfg) else text

    return CANONICAL.get((text, device), make)


def _compile(devices: DeviceTexts, links: tuple) -> Network:
    configs = {
        name: (kind, parsed_config(text, name)[0] if text is not None else DeviceConfig(name))
        for name, kind, text in devices
    }
    net = Network(configs, list(links))
    net.memo_key = (devices, links)  # what it is a pure function of (its views carry it)
    return net


def view(net: Network) -> Network:
    """A fresh view of a cached network: routing tables shared and read-only, NAT
    translations (all a packet walk writes) its own."""
    out = copy.copy(net)
    out.nat_pool_use = {}
    return out


def compiled(devices: DeviceTexts, links: tuple) -> Network:
    """The network of these device texts and cabling: a view of a cached compile (shared
    with any texts that parse to identical configs: see :func:`canonical_text`)."""
    devices = tuple((name, kind, canonical_text(text, name) if text is not None else None)
                    for name, kind, text in devices)
    return view(NETWORKS.get((devices, links), lambda: _compile(devices, links)))


def key_of(net: Network) -> Hashable | None:
    """What a network compiled by :func:`compiled` (or derived from one) is a pure function
    of; None for any other network (an edited candidate)."""
    return getattr(net, "memo_key", None)


def derived(net: Network, how: Hashable, make: Callable[[], Network]) -> Network:
    """``make()``, a network computed from ``net`` as ``how`` says; cached (and handed out
    as a view) when ``net`` has a memo key."""
    key = key_of(net)
    if key is None:
        return make()

    def made() -> Network:
        out = make()
        out.memo_key = (key, how)
        return out

    return view(DERIVED.get((key, how), made))
