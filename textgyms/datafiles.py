"""Shipped and pinned data files checked against a ``SHA256SUMS`` file (``<sha256>  <name>``
lines, as ``sha256sum`` writes them): a corrupt, edited, missing or unlisted file raises
:class:`~textgyms.errors.DataError` naming it, never a silent wrong task.

One place for the check, used by every family that reads data: :func:`checked_bytes` for a
file beside its ``SHA256SUMS`` (Wordle's word lists, Search's pages, ISO 20022's schemas and
bank data), :func:`checked_digest` for a file recorded there but read from elsewhere (Code's
pinned upstream datasets, installed by their own packages)."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from textgyms.errors import DataError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = ["SUMS_FILE", "checked_bytes", "checked_digest", "recorded_sums"]

SUMS_FILE = "SHA256SUMS"


def recorded_sums(folder: Traversable) -> dict[str, str]:
    """File name -> sha256 hex digest, as ``folder / SHA256SUMS`` records them (a missing or
    malformed sums file raises, naming it)."""
    try:
        text = (folder / SUMS_FILE).read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"cannot read the checksum file {folder / SUMS_FILE}: {exc}") from exc
    sums = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        digest, _, name = line.partition("  ")
        if len(digest) != 64 or not name.strip():
            raise DataError(f"malformed line in {folder / SUMS_FILE}: {line!r}")
        sums[name.strip()] = digest
    return sums


def checked_digest(data: bytes, folder: Traversable, name: str, what: str,
                   rebuild: str = "") -> str:
    """The sha256 of ``data`` (the contents of ``name``) after checking it against the
    digest ``folder / SHA256SUMS`` records for ``name``. ``what`` names the file kind in
    errors; ``rebuild`` says how to make it again."""
    expected = recorded_sums(folder).get(name)
    if expected is None:
        raise DataError(f"the {what} {name} is not listed in {folder / SUMS_FILE}")
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        hint = f"; {rebuild}" if rebuild else ""
        raise DataError(f"the {what} {name} does not match its recorded sha256: it has "
                        f"{actual}, expected {expected} ({folder / SUMS_FILE}){hint}")
    return actual


def checked_bytes(folder: Traversable, name: str, what: str, rebuild: str = "") -> bytes:
    """The bytes of ``folder / name`` after checking them against ``folder / SHA256SUMS``
    (see :func:`checked_digest`)."""
    try:
        data = (folder / name).read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read the {what} {name}: {exc}") from exc
    checked_digest(data, folder, name, what, rebuild)
    return data
