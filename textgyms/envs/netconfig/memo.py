"""Bounded per-process memos of NetConfig's pure functions of immutable inputs.

Configuration text parses to the same :class:`DeviceConfig` every time, and the same texts on
the same cabling compile to the same :class:`Network`; a GRPO group resets one seed G times,
the verifier parses the reference, start and fixed devices the generator already parsed, and
an oracle submission repeats the reference texts. Each memo is a plain dict that drops its
oldest entry when full (bounded memory, no per-entry bookkeeping). The parse and network
memos' bounds grow with the distinct tasks the live NetConfig envs of the process have in
flight (:class:`bounded.MemoShare`), so a worker with many envs keeps each env's warmed next
network as one with few does; :data:`DERIVED`, an intermediate cache, keeps its size.

Sharing rules, so a cached object never leaks a change: a parsed config from
:func:`parsed_config` is read-only (copy it with :func:`copy.deepcopy` before an edit; it is
registered with :func:`bounded.share`, so per-device caches may key on its identity), and
:func:`compiled` hands out a shallow copy of the cached network with its own NAT state (the
only thing a packet walk writes).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from textgyms.envs.netconfig.bounded import Key, Memo, share
from textgyms.envs.netconfig.model import DeviceConfig, Issue, compact
from textgyms.envs.netconfig.parser import parse_config
from textgyms.envs.netconfig.sim import Network

__all__ = ["Key", "Memo", "compiled", "derived", "key_of", "parsed_config", "same_config",
           "view"]


PARSED = Memo(2048, grows=True)
NETWORKS = Memo(128, grows=True)
DERIVED = Memo(128)  # networks made from a compiled one (a link failed, ...)

# (name, kind, configuration text or None for an unconfigured device) of every device
DeviceTexts = tuple[tuple[str, str, "str | None"], ...]


def parsed_config(text: str, device: str = "") -> tuple[DeviceConfig, tuple[Issue, ...], int]:
    """:func:`parse_config` of ``text``, shared between callers: never mutate the config."""

    def make():
        cfg, issues, accepted = parse_config(text, device)
        compact(cfg)  # its empty lists and sets: one shared object each (see model.compact)
        return share(cfg), tuple(issues), accepted

    return PARSED.get((text, device), make)


def same_config(text: str, other: str, device: str = "") -> bool:
    """Whether two texts parse to identical configs: equal, and every dict and list in the
    same order (walks and listings follow that order), so they compile to the same network.
    Texts that differ only in comments, ``!`` and ``end`` lines or abbreviations do."""
    if text == other:
        return True
    a, b = parsed_config(text, device)[0], parsed_config(other, device)[0]
    return a == b and repr(a) == repr(b)


def _compile(devices: DeviceTexts, links: tuple) -> Network:
    configs = {
        name: (kind, parsed_config(text, name)[0] if text is not None else DeviceConfig(name))
        for name, kind, text in devices
    }
    return Network(configs, list(links))


def view(net: Network) -> Network:
    """A fresh view of a cached network: routing tables shared and read-only, NAT
    translations (all a packet walk writes) its own."""
    return net.view()


def compiled(devices: DeviceTexts, links: tuple) -> Network:
    """The network of these device texts and cabling: a view of a cached compile."""
    key = Key((devices, links))

    def make() -> Network:
        net = _compile(devices, links)
        net.memo_key = key  # what it is a pure function of (its views carry it)
        return net

    return NETWORKS.get(key, make).view()


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

    full = Key((key, how))

    def made() -> Network:
        out = make()
        out.memo_key = full
        return out

    return DERIVED.get(full, made).view()
