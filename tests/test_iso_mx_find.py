"""mx.find and mx.findall walk a plain path themselves: they must return exactly the elements
ElementTree's ElementPath returns (the same objects, in the same order), on any tree,
including repeated elements where the first one lacks the rest of the path."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st

from textgyms.envs.iso20022 import mx
from textgyms.envs.iso20022.generate import draw_payment, to_xml
from textgyms.seeding import seeded_generator

TAGS = ("A", "B", "C")


@st.composite
def trees(draw, depth: int = 4) -> ET.Element:
    """A random tree of a few tags, repeated siblings included."""
    root = ET.Element("R")
    level = [root]
    for _ in range(depth):
        below = []
        for node in level:
            for tag in draw(st.lists(st.sampled_from(TAGS), max_size=3)):
                child = ET.SubElement(node, tag)
                child.text = f"{tag}{len(below)}"
                below.append(child)
        level = below
    return root


paths = st.lists(st.sampled_from(TAGS), min_size=1, max_size=4).map("/".join)


@settings(max_examples=300, deadline=None)
@given(trees(), paths)
def test_plain_paths_find_what_elementpath_finds(root, path):
    assert mx.find(root, path) is root.find(path)
    assert [id(e) for e in mx.findall(root, path)] == [id(e) for e in root.findall(path)]
    assert mx.text(root, path) == (None if root.find(path) is None
                                   else root.find(path).text.strip() or None)


def test_a_first_branch_without_the_rest_is_passed_over():
    root = ET.fromstring("<R><A><B/></A><A><B><C>x</C></B><B><C>y</C></B></A></R>")
    assert mx.find(root, "A/B/C") is root.find("A/B/C")
    assert mx.text(root, "A/B/C") == "x"
    assert [c.text for c in mx.findall(root, "A/B/C")] == ["x", "y"]


def test_other_paths_go_to_elementpath():
    root = ET.fromstring("<R><A><B>1</B></A><A><B>2</B></A><C><B>3</B></C></R>")
    for path in (".//B", "*/B", "A[2]/B", "A/./B", "./A", "A//B", "A/B[1]"):
        assert mx.find(root, path) is root.find(path), path
        assert mx.findall(root, path) == root.findall(path), path


def test_every_path_of_generated_messages_reads_the_same():
    for seed in range(30):
        doc = mx.load(to_xml(draw_payment(seeded_generator(seed), 1 + seed % 4))).doc
        tx = doc.find("FIToFICstmrCdtTrf/CdtTrfTxInf")
        paths = {"/".join(e.tag for e in chain)
                 for chain in _chains(tx)}
        for path in paths:
            assert mx.find(tx, path) is tx.find(path), path
            assert mx.findall(tx, path) == tx.findall(path), path


def _chains(node: ET.Element, above: tuple = ()):
    """Every chain of elements from ``node``'s children down."""
    for child in node:
        yield (*above, child)
        yield from _chains(child, (*above, child))
