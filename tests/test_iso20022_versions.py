"""ISO 20022 family: every supported pacs.008 and head.001 version, CBPR+ limits of the
generator, the added network rules, scoring probes (line order, material errors, valid
alternatives), transliteration, and the MT103 -> pacs.008 direction end to end."""

from __future__ import annotations

import copy
import re
from xml.sax.saxutils import unescape

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import textgyms  # noqa: F401  (registers the ids)
import textgyms.envs.iso20022 as iso
from textgyms.envs.iso20022 import banks, names, xsd
from textgyms.envs.iso20022.charset import clean
from textgyms.envs.iso20022.generate import draw_payment, generate_mt, to_xml
from textgyms.envs.iso20022.mt103 import parse, validate_text
from textgyms.envs.iso20022.verify_mx import SCHEMA_GATE
from textgyms.seeding import seeded_generator

CBPR_TEXT = re.compile(r"[0-9a-zA-Z/\-?:().,'+ !#$%&*=^_`{|}~\";<>@\[\\\]]*")


def payment(level: int, seed: int, **changes) -> dict:
    p = copy.deepcopy(draw_payment(np.random.default_rng(seed), level))
    p.update(changes)
    return p


def codes(mt: str) -> set[str]:
    return {i.code for i in validate_text(mt)}


# --- versions -------------------------------------------------------------------------------


@pytest.mark.parametrize("version", xsd.PACS_VERSIONS)
@pytest.mark.parametrize("head", (None, *xsd.HEAD_VERSIONS))
def test_every_version_and_header_is_xsd_valid_and_translates_alike(version, head):
    p = payment(4, 3, envelope=False, prefix=False, version="08")
    expected = iso.translate(to_xml(p))
    for prefix in (False, True):
        q = dict(p, version=version, envelope=head is not None, head=head or "02", prefix=prefix)
        xml = to_xml(q)
        assert xsd.validate_xml(xml) == [], (version, head, prefix)
        assert f"pacs.008.001.{version}" in xml and ("Doc:Document" in xml) == prefix
        assert iso.translate(xml) == expected


def test_other_envelopes_and_unsupported_versions():
    p = payment(2, 1, envelope=False, prefix=False, version="08")
    doc = to_xml(p).split("\n", 1)[1]
    expected = iso.translate(doc)
    for wrapper in ("BizMsgEnvlp", "DataPDU", "RequestPayload"):
        assert iso.translate(f"<{wrapper}><Body>{doc}</Body></{wrapper}>") == expected
    old = doc.replace("pacs.008.001.08", "pacs.008.001.07")
    with pytest.raises(ValueError, match=r"pacs.008.001.07 is not supported.*08 to .13"):
        iso.translate(old)
    assert "unsupported pacs.008.001 version '07'" in xsd.validate_xml(old)[0]


def test_the_header_names_sender_and_receiver():
    p = payment(2, 5, envelope=True, prefix=False)
    p["bics"]["instg"], p["bics"]["instd"] = "BARCGB22", "CHASUS33"
    mt = iso.translate(to_xml(p))
    assert mt.startswith("{1:F01BARCGB22AXXX0000000000}{2:I103CHASUS33XXXXN}")


def test_every_street_belongs_to_one_town_of_its_country():
    towns = {t: c for c, pairs in names.TOWNS.items() for t, _ in pairs}
    assert set(names.STREETS) == set(towns)
    streets = [s for group in names.STREETS.values() for s in group]
    assert len(streets) == len(set(streets))  # no street name under two towns


def test_generator_mixes_versions_headers_and_address_forms():
    seen: dict[str, set] = {"version": set(), "head": set(), "adr": set()}
    for seed in range(150):
        p = draw_payment(seeded_generator(seed), 4)
        seen["version"].add(p["version"])
        if p["envelope"]:
            seen["head"].add(p["head"])
        for party in (p["dbtr"], p["cdtr"]):
            adr = party["address"] or {}
            seen["adr"].add(("TwnNm" in adr) * 1 + ("AdrLine" in adr) * 2)
    assert seen["version"] == set(xsd.PACS_VERSIONS)
    assert seen["head"] == {"02", "03", "04"}
    assert seen["adr"] == {0, 1, 2, 3}  # none, structured, unstructured, hybrid


# --- CBPR+ limits and plausible data ----------------------------------------------------------


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_generated_messages_keep_to_cbpr_plus(level):
    known_banks = set(banks.by_bic())
    for seed in range(300):
        p = draw_payment(seeded_generator(seed), level)
        xml = to_xml(p)
        instr = p["ids"]["instr"]
        assert len(instr) <= 16 and not instr.startswith("/") and not instr.endswith("/")
        assert "//" not in instr
        assert xml.count("<Ustrd>") <= 1 and not ("<Ustrd>" in xml and "<Strd>" in xml)
        assert all(len(unescape(u)) <= 140 for u in re.findall(r"<Ustrd>(.*?)</Ustrd>", xml))
        texts = re.findall(r">([^<>\n]+)</", xml)
        assert all(CBPR_TEXT.fullmatch(unescape(t)) for t in texts), seed
        assert p["dbtr"]["address"] is not None  # CBPR+: the debtor's address
        for party in (p["dbtr"], p["cdtr"]):
            adr = party["address"] or {}
            lines = adr.get("AdrLine", [])
            assert len(lines) <= (2 if "TwnNm" in adr else 3)
            assert all(len(line) <= 35 for line in lines)
            if "StrtNm" in adr:  # a street of the party's own town
                assert adr["StrtNm"] in names.STREETS[adr["TwnNm"]]
            if lines and "TwnNm" not in adr:  # "street number", ..., "postcode town"
                town = next(t for t in names.STREETS if lines[-1].endswith(t))
                assert any(lines[0].startswith(s) for s in names.STREETS[town]), lines
            if party["anybic"]:  # a corporate BIC, not a bank's
                assert party["anybic"] + "XXX" not in known_banks


def test_reference_mt103s_pass_the_added_network_rules():
    seen = set()
    for level in (3, 4):
        for seed in range(400):
            xml = to_xml(draw_payment(seeded_generator(seed), level))
            mt = iso.translate(xml)
            assert validate_text(mt) == [], (level, seed)
            seen |= {t for t, _ in parse(mt).fields}
    assert {"57D", "53B", "71F", "23E", "72", "77B", "50F", "59F"} <= seen


@pytest.mark.parametrize(
    ("old", "new", "code"),
    [
        (":23B:CRED", ":23B:CRED\n:23E:SDVA\n:23E:HOLD", "D67"),
        (":23B:CRED", ":23B:CRED\n:23E:PHOB\n:23E:TELB", "D67"),
        (":23B:CRED", ":23B:CRED\n:23E:HOLD\n:23E:HOLD", "E46"),
        (":23B:CRED", ":23B:CRED\n:23E:TELI", "E44"),
        (":23B:CRED", ":23B:CRED\n:23E:PHON", "E45"),
        (":23B:CRED", ":23B:CRED\n:23E:CHQB", "E18"),
        (":23B:CRED", ":23B:SSTD", "E10"),
        (":56A:", ":54B:/12345\n:56A:", "E05"),
        (":59:", ":57C:FW021000021\n:59:", "T34"),
        (":59:", ":57D://FW021000021\n:59:", "T34"),
    ],
)
def test_added_network_rules_are_caught(old, new, code):
    mt = REF.replace(old, new)
    if code == "E10":
        mt = mt.replace(":59:/GB29NWBK60161331926819\n", ":59:")
    if code in ("E44", "E45"):
        mt = mt.replace(":56A:IRVTUS3N\n", "")
    if code == "E45":
        mt = mt.replace(":57A:CITIUS33\n", "")
    if code == "E05":
        mt = mt.replace(":23B:CRED", ":23B:SSTD")
    assert code in codes(mt)


# --- scoring probes -------------------------------------------------------------------------

REF = (
    "{1:F01DEUTDEFFAXXX0000000000}{2:I103CHASUS33XXXXN}"
    "{3:{121:4b1c2f3a-1d2e-4f5a-8b6c-7d8e9f0a1b2c}}{4:\n"
    ":20:REF123\n:23B:CRED\n:32A:260115EUR1000,00\n:33B:EUR1000,00\n"
    ":50K:/DE89370400440532013000\nACME GMBH\nMAIN STREET 1\n10115 BERLIN\n"
    ":56A:IRVTUS3N\n:57A:CITIUS33\n"
    ":59:/GB29NWBK60161331926819\nJOHN SMITH\nHIGH STREET 2\nLONDON\n"
    ":70:/ROC/E2E1\nINVOICE 4711 AND 4712 OF JANUARY 20\n26 FOR GOODS DELIVERED\n"
    ":71A:SHA\n:72:/REC/PLEASE ADVISE THE BENEFICIARY\n//ON RECEIPT\n-}"
)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("ACME GMBH\nMAIN STREET 1", "MAIN STREET 1\nACME GMBH"),
        ("JOHN SMITH\nHIGH STREET 2", "HIGH STREET 2\nJOHN SMITH"),
        ("/ROC/E2E1\nINVOICE 4711 AND 4712 OF JANUARY 20\n26 FOR GOODS DELIVERED",
         "26 FOR GOODS DELIVERED\nINVOICE 4711 AND 4712 OF JANUARY 20\n/ROC/E2E1"),
    ],
)
def test_reordered_lines_lose_score(old, new):
    v = iso.score(REF, REF.replace(old, new))
    assert v.score < 1.0 and not v.solved


@pytest.mark.parametrize(
    ("old", "new", "what"),
    [
        (":71A:SHA", ":71A:OUR", "71A"),
        (":56A:IRVTUS3N\n:57A:CITIUS33", ":56A:CITIUS33\n:57A:IRVTUS3N", "56"),  # swapped
        (":56A:IRVTUS3N", ":56A:BOFAUS3N", "56"),
        (":57A:CITIUS33", ":57A:BOFAUS3N", "57"),
        (":56A:IRVTUS3N\n", "", "56"),  # dropped intermediary (57A stays)
        ("EUR1000,00\n:33B", "EUR1001,00\n:33B", "32A"),
        ("260115EUR", "260116EUR", "32A"),
        ("260115EUR1000,00\n", "260115USD1000,00\n", "32A"),
        (":59:/GB29NWBK60161331926819", ":59:/GB29NWBK60161331926818", "59.account"),
        (":70:/ROC/E2E1\nINVOICE 4711 AND 4712 OF JANUARY 20\n26 FOR GOODS DELIVERED\n", "",
         "70 (remittance information)"),
    ],
)
def test_each_material_error_fails_the_translation(old, new, what):
    assert old in REF
    v = iso.score(REF, REF.replace(old, new))
    assert v.score <= 0.5 and v.parts["material"] == 0.0 and what in v.feedback


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("INVOICE 4711 AND 4712 OF JANUARY 20\n26 FOR GOODS DELIVERED",  # word wrap
         "INVOICE 4711 AND 4712 OF JANUARY\n2026 FOR GOODS DELIVERED"),
        ("/REC/PLEASE ADVISE THE BENEFICIARY\n//ON RECEIPT",
         "/REC/PLEASE ADVISE THE\n//BENEFICIARY ON RECEIPT"),
        (":57A:CITIUS33", ":57A://FW021000089\nCITIUS33XXX"),  # clearing line next to BIC
        ("DEUTDEFFAXXX", "DEUTDEFFAXXX"),
    ],
)
def test_valid_alternatives_score_one(old, new):
    assert old in REF
    alt = REF.replace(old, new)
    assert validate_text(alt) == []
    assert iso.score(REF, alt).score == 1.0


def test_50f_name_continuation_equals_the_cut_name():
    ref = REF.replace(":50K:/DE89370400440532013000\nACME GMBH\nMAIN STREET 1\n10115 BERLIN",
                      ":50F:/DE89370400440532013000\n1/INTERNATIONAL ADVANCED MANUFACTU+"
                      "\n2/MAIN STREET 1\n3/DE/10115 BERLIN")
    alt = ref.replace("1/INTERNATIONAL ADVANCED MANUFACTU+",
                      "1/INTERNATIONAL ADVANCED MANUFACTUR\n1/ING HOLDINGS")
    assert validate_text(ref) == [] and validate_text(alt) == []
    assert iso.score(ref, alt).score == 1.0
    wrong = ref.replace("1/INTERNATIONAL ADVANCED MANUFACTU+", "1/NATIONAL ADVANCED")
    assert iso.score(ref, wrong).score < 1.0


def test_transliteration_not_dots():
    assert clean("Иван Хабаров ЩУКИН") == "Ivan Khabarov SHCHUKIN"
    assert clean("Юлия Жукова") == "IUliia Jukova".replace("IUliia", "Iuliia")
    assert clean("Νίκος Παπαδόπουλος") == "Nikos Papadopoulos"
    assert clean("Müller, Straße 5, Łódź") == "Muller, Strasse 5, Lodz"
    p = payment(2, 0, prefix=False)
    p["cdtr"] = dict(p["cdtr"], name="ООО Ромашка", anybic=None)
    mt = iso.translate(to_xml(p))
    assert "OOO Romashka" in mt and validate_text(mt) == []


# --- MT103 -> pacs.008 ------------------------------------------------------------------------


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_translate_mt_is_xsd_valid_and_round_trips(level):
    for seed in range(150):
        task = generate_mt(seeded_generator(seed), level)
        assert xsd.validate_xml(task.reference) == [], (level, seed)
        assert iso.translate(task.reference) == task.mt  # MT -> MX -> MT is the identity
        assert iso.score_mx(task.reference, task.reference).score == 1.0


def test_translate_mt_fields():
    task = generate_mt(seeded_generator(3), 4)
    x = task.reference
    assert "<UETR>" + task.mt.split("{121:")[1][:36] + "</UETR>" in x
    assert "<ChrgBr>DEBT</ChrgBr>" in x and "<PrvsInstgAgt1>" in x
    mt = REF.replace(":59:/GB29", ":57D://SC200000\nBARCLAYS BANK\nLONDON\n:59:/GB29").replace(
        ":57A:CITIUS33\n", "")
    x = iso.translate_mt(mt)
    assert xsd.validate_xml(x) == []
    assert "<Cd>GBDSC</Cd>" in x and "<MmbId>200000</MmbId>" in x and "<Nm>BARCLAYS BANK" in x
    assert "<EndToEndId>E2E1</EndToEndId>" in x
    assert "<Ustrd>INVOICE 4711 AND 4712 OF JANUARY 2026 FOR GOODS DELIVERED</Ustrd>" in x
    with pytest.raises(ValueError, match="not an MT message"):
        iso.translate_mt("hello")


def test_score_mx_probes():
    ref = generate_mt(seeded_generator(5), 3).reference
    assert iso.score_mx(ref, ref.replace("\n  ", "\n")).score == 1.0  # indentation
    bic11 = re.search(r"<BICFI>(\w{8})XXX</BICFI>", ref) or re.search(r"<BICFI>(\w{8})</", ref)
    other = bic11.group(1) + ("" if len(bic11.group(0)) > 25 else "XXX")
    assert iso.score_mx(ref, ref.replace(bic11.group(0), f"<BICFI>{other}</BICFI>")).score == 1.0
    ccy_amt = re.search(r'<IntrBkSttlmAmt Ccy="(\w+)">([\d.]+)<', ref)
    wrong_amt = ref.replace(ccy_amt.group(0), ccy_amt.group(0).replace(ccy_amt.group(2), "1.00"))
    v = iso.score_mx(ref, wrong_amt)
    assert v.score <= 0.5 and "IntrBkSttlmAmt" in v.feedback
    broken = ref.replace("<NbOfTxs>1</NbOfTxs>", "<NbOfTxs>one</NbOfTxs>")
    v = iso.score_mx(ref, broken)
    assert v.parts["format"] == SCHEMA_GATE and v.score <= 0.1 and "XSD" in v.feedback
    for junk in ("", "<Document>", "<a/>", "x" * 300_000, ref.replace("pacs.008", "pacs.009")):
        assert iso.score_mx(ref, junk).score == 0.0
    renamed = re.sub(r"<Nm>[^<]*</Nm>", "<Nm>SOMEONE ELSE</Nm>", ref, count=1)
    assert iso.score_mx(ref, renamed).score < 1.0


def test_reverse_env_oracle_and_junk():
    env = gym.make("textgyms/MT103ToISO20022-v3", difficulty=3)
    obs, info = env.reset(seed=2)
    assert obs.startswith("Translate this SWIFT MT103") and "{4:" in obs
    _, reward, terminated, _, info = env.step(env.unwrapped.solve(env.unwrapped.task)[0])
    assert terminated and reward == 1.0 and info["solved"]
    env.reset(seed=2)
    _, reward, terminated, _, info = env.step("<answer><Document/></answer>")
    assert terminated and reward == 0.0 and info["error"] == "format"
    env.close()


def test_what_the_mt103_cannot_carry_is_reported():
    from textgyms.envs.iso20022.translate import translate_with_losses

    xml = to_xml(payment(2, 0, envelope=False, prefix=False, version="08"))
    assert translate_with_losses(xml)[1] == []
    extra = "<UltmtDbtr><Nm>PARENT HOLDING</Nm></UltmtDbtr>\n<Dbtr>"
    with_ultimate = xml.replace("<Dbtr>", extra, 1)
    assert xsd.validate_xml(with_ultimate) == []
    mt, losses = translate_with_losses(with_ultimate)
    assert losses == ["UltmtDbtr"] and "PARENT" not in mt
    env = gym.make("textgyms/ISO20022-MT103-v4", difficulty=1)
    env.reset(seed=0)
    *_, info = env.step(env.unwrapped.solve(env.unwrapped.task)[0])
    assert info["translation_loss"] == []
    env.close()


XML_ALPHABET = st.sampled_from(["<", ">", "/", "Document", "<Document>", "</Document>", "&amp;",
                                'xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"',
                                "<IntrBkSttlmAmt>", "1.00", "<?xml", "?>", "é", "\x00", " ",
                                "\n", "<!DOCTYPE a [<!ENTITY b 'c'>]>", "&b;"])


@settings(max_examples=200, deadline=None)
@given(st.lists(XML_ALPHABET, max_size=40).map("".join))
def test_score_mx_and_translate_mt_are_total_on_any_text(text):
    ref = REVERSE_REF
    v = iso.score_mx(ref, text)
    assert 0.0 <= v.score <= 1.0 and not v.solved
    with pytest.raises(ValueError, match="not an MT message"):  # never another exception
        iso.translate_mt(text)


REVERSE_REF = generate_mt(seeded_generator(0), 2).reference
