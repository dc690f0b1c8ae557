"""Tests of the ISO 20022 pacs.008 -> MT103 family: generator, XSD validity, translator,
MT103 validator (field formats and network rules C1-C9), verifier and env."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from schwifty import IBAN

import textgyms.envs.iso20022 as iso
from textgyms.envs.iso20022 import xsd
from textgyms.envs.iso20022.charset import chunks, clean, fit
from textgyms.envs.iso20022.env import Iso20022Env, render_prompt, validate_report
from textgyms.envs.iso20022.generate import draw_payment, generate, to_xml
from textgyms.envs.iso20022.mt103 import parse, validate_text
from textgyms.errors import ConfigError
from textgyms.seeding import seeded_generator

GOLDEN = Path(__file__).parent / "golden" / "iso20022"
SEEDS_PER_LEVEL = 1000


def codes(mt: str) -> set[str]:
    issues = validate_text(mt)
    assert issues is not None, "does not parse"
    return {i.code for i in issues}


def payment(level: int, seed: int = 0, **changes) -> dict:
    p = copy.deepcopy(draw_payment(np.random.default_rng(seed), level))
    for path, value in changes.items():
        node = p
        keys = path.split("__")
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value
    return p


def mt_of(p: dict) -> str:
    return iso.translate(to_xml(p))


def fields(mt: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for tag, value in parse(mt).fields:
        out.setdefault(tag, []).append(value)
    return out


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_every_generated_message_is_xsd_valid_and_its_reference_scores_one(level):
    for seed in range(SEEDS_PER_LEVEL):
        xml = to_xml(draw_payment(seeded_generator(seed), level))
        assert xsd.validate_xml(xml) == [], (level, seed)
        mt = iso.translate(xml)
        assert validate_text(mt) == [], (level, seed, mt)
        assert iso.score(mt, mt).score == 1.0


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_generated_ibans_are_valid_and_match_their_agent_bic():
    for seed in range(200):
        p = draw_payment(np.random.default_rng(seed), 2)
        for who, agent in (("dbtr", "dbtr_agt"), ("cdtr", "cdtr_agt")):
            party = p[who]
            if party["iban"] and party["account"][:2] not in ("KW", "BH"):
                iban = IBAN(party["account"], validate_bban=True)
                assert str(iban.bic)[:8] == p[agent][:8]


def test_levels_have_their_features():
    seen = {lvl: set() for lvl in (1, 2, 3, 4)}
    for lvl in seen:
        for seed in range(150):
            seen[lvl] |= set(fields(mt_of(payment(lvl, seed))))
    assert seen[1] == {"20", "23B", "32A", "50K", "59", "70", "71A"}
    assert {"50F", "59F", "33B", "56A", "57A"} <= seen[2]
    assert {"36", "71F", "71G", "23E", "50A", "59A"} <= seen[3]
    assert {"52A", "53A", "54A", "72", "77B"} <= seen[4]
    assert any(generate(np.random.default_rng(s), 4).xml.count("<AppHdr") for s in range(20))


def test_prompt_golden_and_translation_golden():
    task = generate(seeded_generator(7), 3)
    for name, text in (("l3_seed7.xml", task.xml), ("l3_seed7.mt103", task.reference),
                       ("l3_seed7_prompt.txt", render_prompt(task))):
        assert (GOLDEN / name).read_text(encoding="utf-8") == text, name
    task4 = generate(seeded_generator(11), 4)
    assert (GOLDEN / "l4_seed11.mt103").read_text(encoding="utf-8") == task4.reference
    assert "Translation rules" not in render_prompt(task4)  # L4: no rule card


# --- translation rules ----------------------------------------------------------------------


def test_field_20_truncates_with_plus():
    p = payment(1, ids__instr="INSTR-2026-1234567-CBPR")
    assert fields(mt_of(p))["20"] == ["INSTR-2026-1234+"]
    assert fields(mt_of(payment(1, ids__instr="SHORT1")))["20"] == ["SHORT1"]


def test_32a_date_currency_and_minor_units():
    from decimal import Decimal

    p = payment(1, date="2026-03-09", amount__ccy="JPY", amount__settle=Decimal("1500000"))
    assert fields(mt_of(p))["32A"] == ["260309JPY1500000,"]
    p = payment(1, amount__ccy="KWD", amount__settle=Decimal("12.5"))
    assert fields(mt_of(p))["32A"][0].endswith("KWD12,500")
    p = payment(1, amount__ccy="EUR", amount__settle=Decimal("1234.5"))
    assert fields(mt_of(p))["32A"][0].endswith("EUR1234,50")


def test_33b_eu_rule_and_36_only_with_fx():
    from decimal import Decimal

    eu = payment(1, routing__instg="DEUTDEFFXXX", routing__instd="BNPAFRPPXXX",
                 bics__instg="DEUTDEFF", bics__instd="BNPAFRPPXXX")
    f = fields(mt_of(eu))
    assert f["33B"] == [f["32A"][0][6:]] and "36" not in f
    non_eu = payment(1, bics__instg="DEUTDEFF", bics__instd="CHASUS33")
    assert "33B" not in fields(mt_of(non_eu))
    fx = payment(1, bics__instd="CHASUS33", amount__ccy="USD", amount__settle=Decimal("1080"),
                 amount__instd=("EUR", Decimal("1000")), amount__rate=Decimal("1.0800"))
    f = fields(mt_of(fx))
    assert f["33B"] == ["EUR1000,00"] and f["36"] == ["1,08"]


def test_option_selection_for_50a_and_59a():
    base = payment(2, 3)
    for who, tag in (("dbtr", "50"), ("cdtr", "59")):
        p = copy.deepcopy(base)
        p[who]["anybic"] = "CITIUS33XXX"
        assert tag + "A" in fields(mt_of(p))
        p[who]["anybic"] = None
        p[who]["address"] = {"StrtNm": "MAIN STREET", "BldgNb": "5", "PstCd": "10115",
                             "TwnNm": "BERLIN", "Ctry": "DE"}
        value = fields(mt_of(p))[tag + "F"][0].split("\n")
        assert value[-2:] == ["2/MAIN STREET 5", "3/DE/10115 BERLIN"]
        p[who]["address"] = {"AdrLine": ["MAIN STREET 5", "10115 BERLIN"]}
        key = "50K" if tag == "50" else "59"
        assert fields(mt_of(p))[key][0].split("\n")[-2:] == ["MAIN STREET 5", "10115 BERLIN"]


def test_name_and_address_truncation_and_cleaning():
    long_name = "Vereinigte Elektrizitäts- und Wasserversorgungsgesellschaft mbH"
    p = payment(2, 0, dbtr__name=long_name, dbtr__anybic=None,
                dbtr__address={"AdrLine": ["A" * 40, "B", "C", "D"]})
    lines = fields(mt_of(p))["50K"][0].split("\n")
    assert lines[1] == "Vereinigte Elektrizitats- und Wass+"
    assert lines[2] == "A" * 34 + "+" and lines[4] == "C+"
    assert clean("Müller & Söhne Straße Øst <x>") == "Muller . Sohne Strasse Ost .x."
    assert fit("ABCDEFGH", 5) == "ABCD+" and fit("ABC", 5) == "ABC"
    assert chunks("-" + "X" * 40, 35, 4) == ["." + "X" * 34, "XXXXXX"]


def test_field_70_roc_remittance_wrap_and_notprovided():
    text = "INVOICE 123 " * 20
    p = payment(2, ids__e2e="E2E-1", remittance={"ustrd": text})
    lines = fields(mt_of(p))["70"][0].split("\n")
    assert lines[0] == "/ROC/E2E-1" and len(lines) == 4 and lines[3].endswith("+")
    assert lines[1] == clean(text)[:35]
    p = payment(2, ids__e2e="NOTPROVIDED", remittance={"ustrd": "PAY"})
    assert fields(mt_of(p))["70"] == ["PAY"]
    p = payment(1, ids__e2e="NOTPROVIDED", remittance=None)
    assert "70" not in fields(mt_of(p))


def test_charges_71a_71f_71g():
    from decimal import Decimal

    ccy = payment(1)["amount"]["ccy"]
    p = payment(1, amount__bearer="CRED", amount__charges=[Decimal(10), Decimal(5)],
                amount__instd=(ccy, Decimal(1000)))
    f = fields(mt_of(p))
    assert f["71A"] == ["BEN"] and f["71F"] == [f"{ccy}10,00", f"{ccy}5,00"]
    p = payment(1, amount__bearer="DEBT", amount__charges=[Decimal(10), Decimal(5)],
                amount__instd=(ccy, Decimal(1000)))
    f = fields(mt_of(p))
    assert f["71A"] == ["OUR"] and f["71G"] == [f"{ccy}15,00"] and "71F" not in f
    assert fields(mt_of(payment(1, amount__bearer="SHAR")))["71A"] == ["SHA"]


def test_agents_52a_56a_57a_72_and_77b():
    p = payment(1)
    r = p["bics"]
    r.update(instd="CITIUS33", intrmy1="IRVTUS3N", intrmy2="CHASUS33", prev="HSBCGB2L",
             instg="BARCGB22", rmb_instg="DEUTDEFF", rmb_instd="BNPAFRPP")
    p["routing"].update(rmb_instg="x", rmb_instd="x")
    p["instructions"]["next_info"] = "PLEASE ADVISE BENEFICIARY ON RECEIPT OF FUNDS"
    p["regulatory"] = {"ind": "CRED", "ctry": "DE", "cd": "123", "inf": ["GOODS", "MORE"]}
    f = fields(mt_of(p))
    assert f["52A"] == [r["dbtr_agt"]] and f["56A"] == ["IRVTUS3N"]
    assert f["57A"] == [r["cdtr_agt"]] and f["53A"] == ["DEUTDEFF"] and f["54A"] == ["BNPAFRPP"]
    assert f["72"] == ["/INS/HSBCGB2L\n/INTA/CHASUS33\n/REC/PLEASE ADVISE BENEFICIARY ON R\n"
                       "//ECEIPT OF FUNDS"]
    assert f["77B"] == ["/BENEFRES/DE//123\n//GOODS MORE"]


def test_23e_codes_in_swift_order():
    p = payment(3, 0)
    p["instructions"].update(svclvl="SDVA", ctgy=None, cdtr_agt=("HOLD", "ID CARD"),
                             next_cd="TELA")
    assert fields(mt_of(p))["23E"] == ["SDVA", "HOLD/ID CARD", "TELE"]


# --- validator ------------------------------------------------------------------------------

REF = (
    "{1:F01DEUTDEFFAXXX0000000000}{2:I103CHASUS33XXXXN}"
    "{3:{121:4b1c2f3a-1d2e-4f5a-8b6c-7d8e9f0a1b2c}}{4:\n"
    ":20:REF123\n:23B:CRED\n:32A:260115EUR1000,00\n:33B:EUR1000,00\n"
    ":50K:/DE89370400440532013000\nACME GMBH\n:59:/GB29NWBK60161331926819\nJOHN SMITH\n"
    ":70:/ROC/E2E1\n:71A:SHA\n-}"
)


def edit(old: str, new: str) -> str:
    assert old in REF
    return REF.replace(old, new)


def test_reference_example_is_valid():
    assert codes(REF) == set()


@pytest.mark.parametrize(
    ("old", "new", "code"),
    [
        (":33B:EUR1000,00", ":33B:USD1000,00", "D75"),  # C1: different currency needs 36
        (":33B:EUR1000,00", ":33B:EUR1000,00\n:36:1,2", "D75"),  # C1: 36 without FX
        ("CHASUS33X", "BNPAFRPPX", "D49"),  # C2 once 33B is removed (below)
        (":23B:CRED", ":23B:SSTD\n:23E:SDVA", "E02"),  # C3
        (":23B:CRED", ":23B:SPRI\n:23E:HOLD", "E01"),  # C3
        (":50K:", ":55A:CITIUS33\n:50K:", "T13"),  # order
        (":70:/ROC/E2E1", ":55A:CITIUS33\n:70:/ROC/E2E1", "E06"),  # C4
        (":59:", ":56A:CITIUS33\n:59:", "C81"),  # C5
        (":23B:CRED", ":23B:SPRI", "E16"),  # C6 (with 56A, below)
        (":71A:SHA", ":71A:OUR\n:71F:EUR1,00", "E13"),  # C7
        (":71A:SHA", ":71A:SHA\n:71G:EUR1,00", "D50"),  # C7
        (":71A:SHA", ":71A:BEN", "E15"),  # C7
        (":33B:EUR1000,00\n", "", "D51"),  # C8 (with 71F, below)
        (":71A:SHA", ":71A:OUR\n:71G:USD1,00", "C02"),  # C9
    ],
)
def test_network_rules_are_caught(old, new, code):
    mt = edit(old, new)
    if code == "D49":
        mt = mt.replace(":33B:EUR1000,00\n", "")
    if code == "E16":
        mt = mt.replace(":59:", ":56A:CITIUS33\n:57A:BOFAUS3N\n:59:")
    if code == "D51":
        mt = mt.replace(":71A:SHA", ":71A:SHA\n:71F:EUR1,00")
    assert code in codes(mt)
    assert iso.score(REF, mt).parts["format"] == 0.5


@pytest.mark.parametrize(
    ("old", "new", "code"),
    [
        (":20:REF123", ":20:/REF123", "T26"),
        (":20:REF123", ":20:REF1234567890123456", "T33"),
        (":32A:260115EUR1000,00", ":32A:261315EUR1000,00", "T50"),
        (":32A:260115EUR1000,00", ":32A:260115EUR1000.00", "T40"),
        (":32A:260115EUR1000,00", ":32A:260115EUR1000,001", "C03"),
        (":32A:260115EUR1000,00", ":32A:260115XXQ1000,00", "T52"),
        ("JOHN SMITH", "JOHN SMITH & SONS", "T32"),
        ("JOHN SMITH", "J" * 36, "T33"),
        ("JOHN SMITH", "A\nB\nC\nD\nE", "T34"),
        (":71A:SHA", ":71A:SHR", "T36"),
        (":23B:CRED", ":23B:CRED\n:23E:XXXX", "T47"),
        (":23B:CRED", ":23B:CRED\n:23E:TELE\n:23E:SDVA", "D98"),
        (":23B:CRED", ":23B:CRED\n:23E:SDVA/NOW", "D97"),
        (":59:", ":57A:CHASUS3\n:59:", "T27"),
        (":59:/GB29NWBK60161331926819\nJOHN SMITH", ":59F:/GB29\n1/JOHN\n2/STREET", "T56"),
        (":59:/GB29NWBK60161331926819\nJOHN SMITH", ":59F:/GB29\n2/JOHN\n3/GB/X", "T56"),
        (":71A:SHA\n", "", "T15"),
        (":70:/ROC/E2E1", ":70:/ROC/E2E1\n:70:AGAIN", "T14"),
        (":70:", ":99Z:X\n:70:", "T13"),
        ("{1:F01DEUTDEFFAXXX", "{1:F01DEUTDEFFAXX", "H01"),
        ("{2:I103CHASUS33XXXXN}", "{2:I103CHASUS33N}", "H02"),
        ("{3:{121:4b1c2f3a-1d2e-4f5a-8b6c-7d8e9f0a1b2c}}", "", "U01"),
    ],
)
def test_field_format_errors_are_caught(old, new, code):
    assert code in codes(edit(old, new))


# --- verifier -------------------------------------------------------------------------------


def test_score_accepts_crlf_bic8_and_output_block2():
    assert iso.score(REF, REF.replace("\n", "\r\n")).score == 1.0
    assert iso.score(REF, REF.replace("DEUTDEFFAXXX", "DEUTDEFFAXXX")).score == 1.0
    out = REF.replace("{1:F01DEUTDEFFAXXX0000000000}{2:I103CHASUS33XXXXN}",
                      "{1:F01CHASUS33AXXX0000000000}"
                      "{2:O1031200260115DEUTDEFFAXXX00000000002601151201N}")
    assert codes(out) == set() and iso.score(REF, out).score == 1.0
    bic8 = REF.replace(":59:", ":57A:CITIUS33\n:59:")
    assert iso.score(bic8, bic8.replace("CITIUS33\n", "CITIUS33XXX\n")).score == 1.0


def test_partial_credit_per_field():
    v = iso.score(REF, REF.replace(":20:REF123", ":20:REF124"))
    assert v.parts["20"] == 0.0 and v.parts["material"] == 1.0
    assert 0.8 < v.score < 1.0 and not v.solved and v.parts["format"] == 1.0
    v = iso.score(REF, REF.replace("EUR1000,00\n:33B", "EUR1000,5\n:33B"))
    assert v.parts["32A.amount"] == 0.0 and v.parts["32A.date"] == 1.0
    assert v.score == 0.5 and v.parts["material"] == 0.0 and "32A" in v.feedback
    assert iso.score(REF, REF.replace("EUR1000,00\n:33B", "EUR1000,\n:33B")).score == 1.0
    wrong_option = REF.replace(":59:/GB29NWBK60161331926819\nJOHN SMITH",
                               ":59A:/GB29NWBK60161331926819\nNWBKGB2L")
    assert iso.score(REF, wrong_option).parts["59"] <= 0.5
    lower = REF.replace("JOHN SMITH", "John  Smith")
    assert iso.score(REF, lower).score == 1.0


def test_71f_is_a_multiset():
    ref = REF.replace(":71A:SHA", ":71A:SHA\n:71F:EUR5,00\n:71F:EUR2,50")
    swapped = REF.replace(":71A:SHA", ":71A:SHA\n:71F:EUR2,5\n:71F:EUR5,00")
    assert iso.score(ref, swapped).score == 1.0
    one = REF.replace(":71A:SHA", ":71A:SHA\n:71F:EUR5,00")
    assert iso.score(ref, one).parts["71F"] == pytest.approx(2 / 3)


def test_hack_strings_score_low():
    xml = generate(np.random.default_rng(0), 2).xml
    pasted = REF.replace(":70:/ROC/E2E1", ":70:" + xml)
    v = iso.score(REF, pasted)
    assert v.parts["format"] == 0.5 and v.score < 0.5
    everything = REF.replace(":71A:SHA", ":71A:SHA\n:71F:EUR1,00\n:72:/INS/CITIUS33\n:77B:/X/")
    everything = everything.replace(":59:", ":52A:DEUTDEFF\n:53A:CITIUS33\n:54A:CITIUS33\n"
                                    ":56A:CITIUS33\n:57A:CITIUS33\n:59:")
    everything = everything.replace(":33B:EUR1000,00", ":33B:EUR1000,00\n:36:1,")
    assert iso.score(REF, everything).parts["precision"] < 0.7
    assert iso.score(REF, everything).score < 0.5
    dup = REF.replace(":71A:SHA", ":71A:SHA\n:71A:OUR")
    assert iso.score(REF, dup).score < 0.5
    for junk in ("", " ", "{4:\n-}", "<answer></answer>", "\x00" * 10):
        assert iso.score(REF, junk).score == 0.0


# --- env ------------------------------------------------------------------------------------


def test_env_oracle_and_config_errors():
    with pytest.raises(ConfigError, match="1, 2, 3, 4"):
        Iso20022Env(difficulty=5)
    with pytest.raises(ConfigError, match="multi_turn"):
        Iso20022Env(multi_turn="yes")
    env = Iso20022Env(difficulty=4)
    env.reset(seed=3)
    _, reward, terminated, _, info = env.step(env.unwrapped.solve(env.task)[0])
    assert terminated and reward == 1.0 and info["solved"]


def test_multi_turn_tools_give_format_errors_only():
    env = Iso20022Env(difficulty=3, multi_turn=True)
    obs, info = env.reset(seed=1)
    assert {t["function"]["name"] for t in info["tools"]} == {"answer", "validate", "bic_info"}
    ref = env.task.reference
    obs, reward, terminated, _, _ = env.step(f"<validate>{ref}</validate>")
    assert obs == "No format or network-rule errors." and not terminated
    wrong = ref.replace(":71A:", ":71A:XX")
    report = validate_report(wrong)
    assert "T36" in report and ref.split(":20:")[1].split("\n")[0] not in report
    uetr = ref.split("{121:")[1][:36]
    wrong_content = ref.replace(uetr, uetr[:-1] + ("0" if uetr[-1] != "0" else "1"))
    assert wrong_content != ref  # well-formed but wrong content: validate gives no hint
    assert validate_report(wrong_content) == "No format or network-rule errors."
    obs, *_ = env.step("<bic_info>CHASUS33</bic_info>")
    assert "JPMORGAN CHASE" in obs and "US" in obs
    obs, *_ = env.step("<bic_info>no-bic!</bic_info>")
    assert "not a well-formed BIC" in obs
    _, reward, terminated, _, info = env.step(f"<answer>{ref}</answer>")
    assert terminated and info["score"] == 1.0


def test_single_turn_rejects_tools_of_the_multi_turn_variant():
    env = Iso20022Env(difficulty=1)
    env.reset(seed=0)
    obs, _, terminated, _, info = env.step("<validate>x</validate>")
    assert not terminated and info["error"] is not None
    assert {t["function"]["name"] for t in env.reset(seed=0)[1]["tools"]} == {"answer"}


def test_data_sha256_checks_the_vendored_xsd():
    lines = (Path(xsd.__file__).parent / "xsd" / "SHA256SUMS").read_text().splitlines()
    sums = {f"iso20022/xsd/{name}": digest for digest, name in map(str.split, lines)}
    assert Iso20022Env().data_sha256() == sums and len(sums) == 10


# --- properties -----------------------------------------------------------------------------

MT_ALPHABET = st.sampled_from(list("{}:-/\n\r ,.+ABCDEFKSXZ0123456789abcé<>&") + [":20:",
                              ":32A:", "{4:\n", "\n-}", ":71A:", ":59F:", "1/", "3/"])


@settings(max_examples=300, deadline=None)
@given(st.lists(MT_ALPHABET, max_size=80).map("".join))
def test_validator_and_score_are_total_on_any_text(text):
    issues = validate_text(text)
    assert issues is None or all(i.code for i in issues)
    v = iso.score(REF, text)
    assert 0.0 <= v.score <= 1.0 and (v.score < 1.0 or text.strip() == REF)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_mutated_references_never_score_one_unless_equivalent(data):
    lines = REF.split("\n")
    i = data.draw(st.integers(1, len(lines) - 2))
    junk = data.draw(st.text(max_size=40))
    mutated = "\n".join(lines[:i] + [junk] + lines[i + 1 :])
    v = iso.score(REF, mutated)
    assert 0.0 <= v.score <= 1.0
    if v.score == 1.0:  # only an equivalent field (case, blanks, numeric form) can do that
        assert validate_text(mutated) == []


def test_header_blocks_and_uetr_from_the_agents():
    p = payment(1, 4)
    p["bics"].update(instg="CITILULX", instd="SCBLUS33NYC")
    p["ids"]["uetr"] = "8750f8f0-ab18-4884-b209-ad3d4b973988"
    mt = mt_of(p)
    assert mt.startswith("{1:F01CITILULXAXXX0000000000}{2:I103SCBLUS33XNYCN}"
                         "{3:{121:8750f8f0-ab18-4884-b209-ad3d4b973988}}{4:\n")
    assert mt.endswith("\n-}")


def test_envelope_input_translates_like_the_bare_document():
    p = payment(4, 0, envelope=True)
    wrapped = to_xml(p)
    assert "<AppHdr" in wrapped and xsd.validate_xml(wrapped) == []
    p["envelope"] = False
    assert iso.translate(wrapped) == iso.translate(to_xml(p))
    with pytest.raises(ValueError, match="Document"):
        iso.translate("<Envelope><AppHdr/></Envelope>")
    with pytest.raises(ValueError, match="well-formed"):
        iso.translate("<Document>")


def test_xsd_rejects_a_broken_message():
    xml = to_xml(payment(2, 0))
    assert xsd.validate_xml(xml.replace("<ChrgBr>SHAR</ChrgBr>", "<ChrgBr>XXXX</ChrgBr>")
                            .replace("<ChrgBr>DEBT</ChrgBr>", "<ChrgBr>XXXX</ChrgBr>")) != []
    assert xsd.validate_xml(xml) == []
