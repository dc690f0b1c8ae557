"""The bank data shipped with the package (``data/``): the banks :func:`banks.registry_banks`
picks from schwifty's registry (``registry_banks.txt``) and the IBAN pools
:func:`banks.iban_pool` draws accounts from (``iban_pools.txt``), each exactly what the
pinned schwifty gives, computed ahead of time.

Computing them took every process about 3 s of CPU: 0.4 s to pick the registry's banks (each
probed with three IBANs) at its first task, then about 5 ms for each bank's pool of
``banks.IBANS_PER_BANK`` IBANs, met one bank at a time during the first few hundred resets,
which made those resets 5-9x dearer than later ones (the first resets of every worker of a
vector). Each file is used only with the schwifty version its first line names (another
version may know other banks, or lay out or check a BBAN differently: then everything is
computed as before) and is checked against ``data/SHA256SUMS`` when first read.
``scripts/build_bank_data.py`` writes both (``--check`` compares them with a fresh build), and
tests/test_iso_iban_pools.py compares them with what schwifty gives.

File formats: UTF-8 text; a first line ``# schwifty <version> <count>`` (IBANs per bank, or
banks per country at most), further ``#`` lines of comment, then one line per bank:

* ``iban_pools.txt``: its BIC11, bank code, branch code (``-`` when empty) and its IBANs,
  separated by single spaces;
* ``registry_banks.txt``: its country, BIC11, bank code, branch code and name as a JSON array
  (a registry name may hold a line break), in the order :func:`banks.registry_banks` lists
  them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from importlib import metadata, resources
from typing import TYPE_CHECKING

from textgyms.datafiles import checked_bytes
from textgyms.errors import DataError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = ["POOLS_FILE", "REGISTRY_FILE", "PoolKey", "Row", "registry", "render_pools",
           "render_registry", "shipped_pool"]

POOLS_FILE = "iban_pools.txt"
REGISTRY_FILE = "registry_banks.txt"
PoolKey = tuple[str, str, str]  # (BIC11, bank code, branch code)
Row = tuple[str, str, str, str, str]  # (country, BIC11, bank code, branch code, name)


def _data_dir() -> Traversable:
    """The directory holding the files (a seam the tests redirect)."""
    return resources.files(__package__) / "data"


def _installed_schwifty() -> str | None:
    """The installed schwifty's version (None when it is not installed)."""
    try:
        return metadata.version("schwifty")
    except metadata.PackageNotFoundError:
        return None


def _lines(name: str) -> tuple[int, list[str]] | None:
    """(the count of its first line, its data lines) of the file ``name``, after checking it
    against ``data/SHA256SUMS``; None when it was built with another schwifty."""
    data = checked_bytes(_data_dir(), name, "shipped bank data",
                         "rebuild it with scripts/build_bank_data.py")
    lines = data.decode("utf-8").splitlines()
    head = lines[0].split() if lines else []
    if len(head) != 4 or head[:2] != ["#", "schwifty"] or not head[3].isdigit():
        raise DataError(f"{name}: the first line must be '# schwifty VERSION N'")
    if head[2] != _installed_schwifty():
        return None
    return int(head[3]), [ln for ln in lines[1:] if ln.strip() and not ln.startswith("#")]


@cache
def _pools() -> dict[PoolKey, tuple[str, ...]]:
    """Every shipped pool by its key; empty under another schwifty (the pools are then
    built, as they always may be)."""
    read = _lines(POOLS_FILE)
    if read is None:
        return {}
    size, lines = read
    pools: dict[PoolKey, tuple[str, ...]] = {}
    for line in lines:
        bic, bank_code, branch_code, *ibans = line.split(" ")
        if len(ibans) != size:
            raise DataError(f"{POOLS_FILE}: {bic} has {len(ibans)} IBANs, not {size}")
        codes = ("" if c == "-" else c for c in (bank_code, branch_code))
        pools[(bic, *codes)] = tuple(ibans)
    return pools


def shipped_pool(key: PoolKey, size: int) -> tuple[str, ...] | None:
    """The shipped pool of the bank with this key when the file has one of ``size`` IBANs
    for the installed schwifty; else None (the caller builds it)."""
    pool = _pools().get(key)
    return pool if pool is not None and len(pool) == size else None


@cache
def _registry() -> tuple[int, tuple[Row, ...]] | None:
    read = _lines(REGISTRY_FILE)
    if read is None:
        return None
    per_country, lines = read
    rows = []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise DataError(f"{REGISTRY_FILE}: not a JSON line: {line[:80]!r}") from exc
        if not (isinstance(row, list) and len(row) == 5 and all(isinstance(f, str) for f in row)):
            raise DataError(f"{REGISTRY_FILE}: want 5 strings a line, got {line[:80]!r}")
        rows.append(tuple(row))
    return per_country, tuple(rows)


def registry(per_country: int) -> tuple[Row, ...] | None:
    """The shipped registry banks when they were picked, at most ``per_country`` a country,
    with the installed schwifty; else None (the caller picks them)."""
    read = _registry()
    return read[1] if read is not None and read[0] == per_country else None


def _header(version: str, count: int) -> list[str]:
    return [f"# schwifty {version} {count}",
            "# Generated by scripts/build_bank_data.py; do not edit (see PROVENANCE.md)."]


def render_pools(pools: Iterable[tuple[PoolKey, tuple[str, ...]]], version: str,
                 size: int) -> str:
    """``iban_pools.txt`` for ``pools`` built with schwifty ``version``."""
    out = _header(version, size)
    for (bic, bank_code, branch_code), ibans in pools:
        if len(ibans) != size or any(" " in x for x in ibans):
            raise ValueError(f"pool of {bic}: {len(ibans)} IBANs, want {size} without spaces")
        out.append(" ".join([bic, bank_code or "-", branch_code or "-", *ibans]))
    return "\n".join(out) + "\n"


def render_registry(rows: Iterable[Row], version: str, per_country: int) -> str:
    """``registry_banks.txt`` for ``rows`` picked with schwifty ``version``."""
    out = _header(version, per_country)
    for row in rows:
        if len(row) != 5 or not all(isinstance(f, str) for f in row):
            raise ValueError(f"a registry bank must be 5 strings: {row!r}")
        out.append(json.dumps(list(row), ensure_ascii=False))
    return "\n".join(out) + "\n"
