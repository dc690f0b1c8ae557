"""The vendored official pacs.008.001.08 XSD (see ``xsd/PROVENANCE.md``): sha256-checked on
load, compiled with lxml once per process."""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources

from textgyms.errors import DataError

XSD_NAME = "pacs.008.001.08.xsd"
NS = "urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"


def _dir():
    return resources.files(__package__) / "xsd"


@cache
def xsd_bytes() -> bytes:
    """The XSD file, checked against ``xsd/SHA256SUMS``."""
    try:
        sums = (_dir() / "SHA256SUMS").read_text(encoding="utf-8")
        data = (_dir() / XSD_NAME).read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read the vendored pacs.008 XSD: {exc}") from exc
    expected = dict(reversed(line.split()) for line in sums.splitlines() if line.strip())
    actual = hashlib.sha256(data).hexdigest()
    if expected.get(XSD_NAME) != actual:
        raise DataError(f"{XSD_NAME} does not match its recorded sha256 (got {actual})")
    return data


def data_sha256() -> dict[str, str]:
    """sha256 of the vendored XSD (recorded in leaderboard metadata)."""
    return {f"iso20022/xsd/{XSD_NAME}": hashlib.sha256(xsd_bytes()).hexdigest()}


@cache
def schema():
    """The compiled ``lxml.etree.XMLSchema`` (lxml is imported only here)."""
    from lxml import etree

    return etree.XMLSchema(etree.fromstring(xsd_bytes()))


def validate_xml(xml: str) -> list[str]:
    """XSD errors of the pacs.008 Document in ``xml`` (bare or inside an envelope)."""
    from lxml import etree

    root = etree.fromstring(xml.encode("utf-8"), etree.XMLParser(resolve_entities=False,
                                                                 no_network=True))
    doc = root if root.tag == f"{{{NS}}}Document" else root.find(f".//{{{NS}}}Document")
    if doc is None:
        return ["no pacs.008.001.08 Document element"]
    xsd = schema()
    if xsd.validate(etree.ElementTree(doc)):
        return []
    return [str(e) for e in xsd.error_log]
