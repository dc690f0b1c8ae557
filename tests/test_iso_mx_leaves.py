"""verify_mx.leaves and the score built on it: the optimised walk (one pass per element,
attributes sorted only where there are any, groups and material rows looked up per path)
gives exactly what the plain definition gives, on generated answers and on answers with
comments, processing instructions and attributes put in."""

from __future__ import annotations

import random

import pytest

from textgyms.envs.iso20022 import translate, translate_mt, verify_mx
from textgyms.envs.iso20022.generate import draw_payment, to_xml
from textgyms.seeding import seeded_generator


def _spec_walk(node, path: str, out: list) -> None:
    """The definition: attributes (sorted), then each child element in order (a leaf of a
    joined sequence collected, any other walked), then the node's own text when it has no
    child element, then each joined sequence squashed into one value."""
    out += [(f"{path}@{k}", v.strip()) for k, v in sorted(node.attrib.items())]
    kids = [k for k in node if isinstance(k.tag, str)]
    joined: dict[str, list[str]] = {}
    for kid in kids:
        local = kid.tag.rpartition("}")[2]
        if local in verify_mx.JOINED and len(kid) == 0:
            joined.setdefault(local, []).append(kid.text or "")
        else:
            _spec_walk(kid, f"{path}/{local}", out)
    if not kids:
        out.append((path, verify_mx._value(path.rpartition("/")[2], node.text or "")))
    for local, texts in joined.items():
        out.append((f"{path}/{local}", "".join("".join(texts).split()).upper()))


def _spec_leaves(doc, head=None) -> list[tuple[str, str]]:
    out: list = []
    root = next(k for k in doc if isinstance(k.tag, str))
    _spec_walk(root, "", out)
    if head is not None:
        top = len(out)
        _spec_walk(head, "AppHdr", out)
        out[top:] = [(p[:-4] + "/BICFI" if p.endswith("FinInstnId/BIC") else p, v)
                     for p, v in out[top:]]
    return [(p.lstrip("/"), v) for p, v in out if p.lstrip("/") not in verify_mx.UNSCORED]


def _answers(n: int) -> list[str]:
    """pacs.008 answers of every level, with and without a header."""
    out = []
    for seed in range(n):
        mt = translate(to_xml(draw_payment(seeded_generator(seed), 1 + seed % 4)))
        out.append(translate_mt(mt))
    return out


def _litter(xml: str, rng: random.Random) -> str:
    """``xml`` with comments, processing instructions and attributes put in after random
    tags (still well-formed: each goes right after a ``>`` or inside a start tag)."""
    parts = xml.split(">")
    for i in rng.sample(range(2, len(parts) - 2), k=min(12, len(parts) - 4)):
        what = rng.choice(["<!--c-->", "<?pi x?>", "ATTR", " text "])
        if what == "ATTR" and parts[i] and not parts[i].startswith(("/", "!", "?")) \
                and not parts[i].endswith("/") and "<" in parts[i] and "</" not in parts[i]:
            parts[i] += f' zz="{rng.randint(0, 9)}" aa=" {rng.randint(0, 9)} "'
        elif what != "ATTR":
            parts[i + 1] = what + parts[i + 1]
    return ">".join(parts)


@pytest.fixture(scope="module")
def answers() -> list[str]:
    return _answers(40)


def test_leaves_are_the_definitions_on_generated_answers(answers):
    for xml in answers:
        _root, doc, head = verify_mx._root(xml)
        assert verify_mx.leaves(doc, head) == _spec_leaves(doc, head)


def test_leaves_are_the_definitions_with_comments_pis_and_attributes(answers):
    rng = random.Random(7)
    seen_comment_in_leaf = False
    for xml in answers:
        for _ in range(5):
            litter = _litter(xml, rng)
            _root, doc, head = verify_mx._root(litter)
            assert doc is not None, litter
            assert verify_mx.leaves(doc, head) == _spec_leaves(doc, head)
            seen_comment_in_leaf |= "<!--c-->" in litter
    assert seen_comment_in_leaf


def test_a_comment_inside_a_leaf_keeps_only_the_text_before_it():
    """lxml's ``text`` of an element is what comes before its first child node, comments
    included: the walk reads that, as the plain definition does."""
    xml = ('<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08">'
           '<FIToFICstmrCdtTrf><GrpHdr b="2" a=" 1 "><MsgId>AB<!--x-->CD</MsgId>'
           '<?p q?></GrpHdr><CdtTrfTxInf><Cdtr><PstlAdr><AdrLine>1 MAIN</AdrLine>'
           '<AdrLine> st </AdrLine></PstlAdr><Nm> a  b </Nm></Cdtr></CdtTrfTxInf>'
           '</FIToFICstmrCdtTrf></Document>')
    _root, doc, head = verify_mx._root(xml)
    assert verify_mx.leaves(doc, head) == [
        ("GrpHdr@a", "1"), ("GrpHdr@b", "2"), ("GrpHdr/MsgId", "AB"),
        ("CdtTrfTxInf/Cdtr/PstlAdr/AdrLine", "1MAINST"), ("CdtTrfTxInf/Cdtr/Nm", "A B")]


def test_groups_and_material_rows_per_path_are_the_definitions(answers):
    """The per-path caches give what splitting the path gives, for every path of the
    generated answers and for paths an agent makes up."""
    paths = {p for xml in answers
             for p, _v in verify_mx.leaves(*verify_mx._root(xml)[1:])}
    paths |= {"CdtTrfTxInf", "CdtTrfTxInf/Made/Up@x", "Nope/Nm", "GrpHdr@x", "AppHdr/Fr"}
    for path in sorted(paths):
        head, _, rest = path.partition("/")
        group = (rest.partition("/")[0] if head == "CdtTrfTxInf" and rest else head)
        assert verify_mx.group_of(path) == group.partition("@")[0]
        steps = path.partition("@")[0].split("/")
        row = next((verify_mx._PREFIX["/".join(steps[:n])] for n in range(len(steps), 0, -1)
                    if "/".join(steps[:n]) in verify_mx._PREFIX), None)
        assert verify_mx._row_of(path) == row, path


def test_an_equivalent_answer_scores_one_and_a_wrong_amount_at_most_half(answers):
    """Both ways, through the faster scorer. Equivalent under the rules the module states
    from the standards: a BIC8 is the BIC11 with branch ``XXX`` (ISO 9362), a name is free
    text (letter case and blanks do not matter). Wrong: the settlement amount changed (a
    material element)."""
    import re

    for xml in answers[:10]:
        same = re.sub(r"<BICFI>(\w{8})XXX</BICFI>", r"<BICFI>\1</BICFI>", xml)
        same = re.sub(r"<Nm>([^<]*)</Nm>", lambda m: "<Nm>  " + m.group(1).lower() + " </Nm>",
                      same)
        assert same != xml
        assert verify_mx.score_mx(xml, same).score == 1.0, verify_mx.score_mx(xml, same).feedback
        wrong = re.sub(r'(<IntrBkSttlmAmt Ccy="\w+">)(\d)',
                       lambda m: m.group(1) + str((int(m.group(2)) + 1) % 10 or 1), xml, count=1)
        assert wrong != xml
        assert verify_mx.score_mx(xml, wrong).score <= 0.5
