"""Building pacs.008 XML as text: elements rendered indented as they are made (the generator
and the MT103 -> pacs.008 translator both write XML this way)."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr


def el(tag: str, *children: str, **attrs: str) -> str:
    """``<tag attrs>`` around rendered child elements, one per line, indented two spaces
    (built indented: re-indenting a finished message costs more than drawing it)."""
    attr = "".join(f" {k}={quoteattr(v)}" for k, v in attrs.items()) if attrs else ""
    inner = "\n".join(children).replace("\n", "\n  ")
    return f"<{tag}{attr}>\n  {inner}\n</{tag}>"


def text(tag: str, value: str, **attrs: str) -> str:
    """A leaf element holding escaped text."""
    attr = "".join(f" {k}={quoteattr(v)}" for k, v in attrs.items()) if attrs else ""
    return f"<{tag}{attr}>{escape(value)}</{tag}>"
