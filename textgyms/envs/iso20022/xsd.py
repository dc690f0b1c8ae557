"""The vendored official ISO 20022 schemas (see ``xsd/PROVENANCE.md``): pacs.008.001.08 to .13
and head.001.001.01 to .04, each sha256-checked on load and compiled with lxml once per
process. :func:`validate_xml` checks a Document (and its business application header, when
the message has one) against the schema of the version its namespace names."""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources

from textgyms.datafiles import checked_bytes
from textgyms.errors import DataError

PACS_VERSIONS = ("08", "09", "10", "11", "12", "13")
HEAD_VERSIONS = ("01", "02", "03", "04")
PACS_NS = "urn:iso:std:iso:20022:tech:xsd:pacs.008.001."
HEAD_NS = "urn:iso:std:iso:20022:tech:xsd:head.001.001."
XSD_NAME = "pacs.008.001.08.xsd"
NS = PACS_NS + "08"
XSD_NAMES = tuple(f"pacs.008.001.{v}.xsd" for v in PACS_VERSIONS) + tuple(
    f"head.001.001.{v}.xsd" for v in HEAD_VERSIONS)


def _dir():
    return resources.files(__package__) / "xsd"


@cache
def xsd_bytes(name: str = XSD_NAME) -> bytes:
    """One vendored XSD file, checked against ``xsd/SHA256SUMS``."""
    if name not in XSD_NAMES:
        raise DataError(f"no vendored schema {name!r}; have: {', '.join(XSD_NAMES)}")
    return checked_bytes(_dir(), name, "vendored XSD")


def data_sha256() -> dict[str, str]:
    """sha256 of every vendored XSD (recorded in leaderboard metadata)."""
    return {f"iso20022/xsd/{n}": hashlib.sha256(xsd_bytes(n)).hexdigest() for n in XSD_NAMES}


@cache
def schema(name: str = XSD_NAME):
    """The compiled ``lxml.etree.XMLSchema`` of one vendored XSD (lxml is imported only
    here and in :func:`validate_xml`)."""
    from lxml import etree

    return etree.XMLSchema(etree.fromstring(xsd_bytes(name)))


def _find(root, prefix: str, local: str, depth: int = 4):
    """The first element named ``local`` in a namespace starting with ``prefix``, at most
    ``depth`` levels down (envelopes nest a Document or AppHdr a few levels deep at most)."""
    level = [root]
    for _ in range(depth):
        below = []
        for node in level:
            tag = node.tag
            if isinstance(tag, str) and tag.startswith("{" + prefix) and tag.endswith("}" + local):
                return node
            below.extend(node)
        level = below
    return None


def _check(node, kind: str, versions: tuple[str, ...]) -> list[str]:
    from lxml import etree

    version = node.tag[1:].split("}")[0].rsplit(".", 1)[-1]
    if version not in versions:
        return [f"unsupported {kind} version {version!r}; supported: {', '.join(versions)}"]
    xsd = schema(f"{kind}.{version}.xsd")
    if xsd.validate(etree.ElementTree(node)):
        return []
    return [str(e) for e in xsd.error_log]


def parse_xml(xml: str):
    """The lxml root of ``xml`` (no entities, no network), or raises ``ValueError``."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False,
                             load_dtd=False)
    try:
        return etree.fromstring(xml.encode("utf-8"), parser)
    except etree.XMLSyntaxError as exc:
        raise ValueError(f"not well-formed XML: {exc}") from exc


def validate_tree(root) -> list[str]:
    """XSD errors of the pacs.008 Document under the lxml element ``root`` and of its
    ``AppHdr`` when there is one; [] when both are valid."""
    doc = _find(root, PACS_NS, "Document")
    if doc is None:
        return ["no pacs.008.001.08-13 Document element"]
    out = _check(doc, "pacs.008.001", PACS_VERSIONS)
    head = None if doc is root else _find(root, HEAD_NS, "AppHdr")  # bare: no header
    if head is not None:
        out += _check(head, "head.001.001", HEAD_VERSIONS)
    return out


def validate_xml(xml: str) -> list[str]:
    """XSD errors of the pacs.008 Document in ``xml`` (bare or inside an envelope) and of
    its ``AppHdr`` when there is one; [] when both are valid."""
    try:
        root = parse_xml(xml)
    except ValueError as exc:
        return [str(exc)]
    return validate_tree(root)
