"""Reading a shipped data file checked against the ``SHA256SUMS`` beside it (``<sha256>
<name>`` lines, as ``sha256sum`` writes them): a corrupt, edited or missing file raises
:class:`~textgyms.errors.DataError` naming it, never a silent wrong task."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from textgyms.errors import DataError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = ["checked_bytes"]

SUMS_FILE = "SHA256SUMS"


def checked_bytes(folder: Traversable, name: str, what: str, rebuild: str = "") -> bytes:
    """The bytes of ``folder / name`` after checking them against ``folder / SHA256SUMS``.
    ``what`` names the file kind in errors; ``rebuild`` says how to make it again."""
    try:
        data = (folder / name).read_bytes()
        sums = (folder / SUMS_FILE).read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"cannot read the {what} {name}: {exc}") from exc
    expected = dict(reversed(line.split()) for line in sums.splitlines() if line.strip())
    actual = hashlib.sha256(data).hexdigest()
    if expected.get(name) != actual:
        hint = f"; {rebuild}" if rebuild else ""
        raise DataError(f"{name} does not match its recorded sha256 (got {actual}){hint}")
    return data
