"""Reading a pacs.008 message of any supported version (pacs.008.001.08 to .13), bare or in
an envelope with a business application header (head.001.001.01 to .04), with or without
namespace prefixes.

:func:`load` finds the ``Document`` and the ``AppHdr`` wherever the envelope puts them (any
wrapper element: ``Envelope``, ``BizMsgEnvlp``, ``DataPDU``...), strips the namespaces (the
element names the translator reads are the same in every supported version) and returns them
with the versions and the header's sender and receiver BICs.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import NamedTuple

from textgyms.envs.iso20022.xsd import HEAD_NS, HEAD_VERSIONS, PACS_NS, PACS_VERSIONS


class Loaded(NamedTuple):
    """A parsed pacs.008: the namespace-free Document, its version ("08"-"13"), the header
    version (None without an AppHdr) and the header's From/To BICs."""

    doc: ET.Element
    version: str
    head_version: str | None
    head_from: str | None
    head_to: str | None


def _split(tag: str) -> tuple[str, str]:
    """("namespace", "local name") of an ElementTree tag."""
    return tuple(tag[1:].split("}", 1)) if tag[:1] == "{" else ("", tag)  # type: ignore


def _strip(node: ET.Element) -> None:
    for child in node.iter():
        if isinstance(child.tag, str) and child.tag[:1] == "{":
            child.tag = child.tag.split("}", 1)[1]


_SIMPLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:/[A-Za-z_][A-Za-z0-9_]*)*")
_PATHS: dict[str, tuple[str, ...] | None] = {}  # path -> its tags (None: not a plain path)


def find(node: ET.Element, path: str) -> ET.Element | None:
    """``node.find(path)``, the same element, 1.5-5x faster for a plain path of tag names
    (``"Cdtr/PstlAdr/Ctry"``, how the translator and verifiers name elements).

    ``Element.find`` hands any path with a ``/`` to ElementPath (Python: a tokenizer, a
    selector chain and generators per call); a single tag it matches in C. So a plain path is
    walked one tag at a time, depth first in document order, which finds the element
    ElementPath finds first: under the first child with the first tag that has a match for
    the rest. Any other path (wildcards, predicates, ``.``, ``//``) goes to ``find`` itself.
    """
    parts = _plain(path)
    return node.find(path) if parts is None else _descend(node, parts, 0)


def _plain(path: str) -> tuple[str, ...] | None:
    """The tags of a plain path, else None; memoized (the paths are the code's own, a few
    hundred: the bound only keeps a caller passing other texts from growing it)."""
    parts = _PATHS.get(path, ())
    if parts == ():
        parts = tuple(path.split("/")) if _SIMPLE.fullmatch(path) else None
        if len(_PATHS) < 4096:
            _PATHS[path] = parts
    return parts


def _descend(node: ET.Element, parts: tuple[str, ...], i: int) -> ET.Element | None:
    tag = parts[i]
    if i == len(parts) - 1:
        return node.find(tag)
    first = node.find(tag)
    if first is None:
        return None
    hit = _descend(first, parts, i + 1)
    if hit is not None:
        return hit
    for child in node.findall(tag)[1:]:  # (rare: a repeated element without the rest)
        hit = _descend(child, parts, i + 1)
        if hit is not None:
            return hit
    return None


def findall(node: ET.Element, path: str) -> list[ET.Element]:
    """``node.findall(path)``, the same elements in the same order, walked as :func:`find`
    walks a plain path (nested loops in document order); any other path goes to
    ``findall`` itself."""
    parts = _plain(path)
    if parts is None:
        return node.findall(path)
    level = [node]
    for tag in parts:
        level = [hit for parent in level for hit in parent.findall(tag)]
    return level


def text(node: ET.Element | None, path: str) -> str | None:
    """Stripped text at ``path`` under ``node`` (None when absent or empty)."""
    if node is None:
        return None
    found = find(node, path)
    return None if found is None or found.text is None else found.text.strip() or None


def _head_bic(head: ET.Element, side: str) -> str | None:
    # head.001.001.01 names the element BIC; .02 onwards BICFI.
    fin = find(head, f"{side}/FIId/FinInstnId")
    return text(fin, "BICFI") or text(fin, "BIC") if fin is not None else None


def _locate(root: ET.Element) -> tuple:
    """(Document, its version, AppHdr, its version) near the top of the tree: envelopes
    nest them a few levels deep at most, and neither is searched inside."""
    doc = head = version = head_version = None
    level = [root]
    for _ in range(4):
        below = []
        for node in level:
            ns, local = _split(node.tag) if isinstance(node.tag, str) else ("", "")
            if local == "Document" and ns.startswith(PACS_NS):
                if doc is None:
                    doc, version = node, ns[len(PACS_NS):]
            elif local == "AppHdr" and ns.startswith(HEAD_NS):
                if head is None:
                    head, head_version = node, ns[len(HEAD_NS):]
            else:
                below.extend(node)
        level = below
    return doc, version, head, head_version


def load(xml: str | bytes) -> Loaded:
    """The pacs.008 of ``xml``; raises ``ValueError`` when it is not one of a supported
    version (the message names the versions)."""
    try:
        root = ET.fromstring(xml.encode("utf-8") if isinstance(xml, str) else xml)
    except ET.ParseError as exc:
        raise ValueError(f"not well-formed XML: {exc}") from exc
    doc, version, head, head_version = _locate(root)
    supported = f"pacs.008.001.{PACS_VERSIONS[0]} to .{PACS_VERSIONS[-1]}"
    if doc is None:
        raise ValueError(f"no pacs.008 Document element found (supported: {supported})")
    if version not in PACS_VERSIONS:
        raise ValueError(f"pacs.008.001.{version} is not supported (supported: {supported})")
    if head is not None and head_version not in HEAD_VERSIONS:
        raise ValueError(f"head.001.001.{head_version} is not supported (supported: "
                         f"head.001.001.{HEAD_VERSIONS[0]} to .{HEAD_VERSIONS[-1]})")
    _strip(doc)
    if head is None:
        return Loaded(doc, version, None, None, None)
    _strip(head)
    return Loaded(doc, version, head_version, _head_bic(head, "Fr"), _head_bic(head, "To"))
