"""ISO 20022 family: the translation rules added for real traffic (26T and Purp/Prtry, agent
accounts, a party's country on the last 50K/59 line, coded 72 texts, the FIN date window,
UETRs FIN rejects) and the business application header of the MT103 -> pacs.008 direction
(translator, verifier and env variant)."""

from __future__ import annotations

import re

import gymnasium as gym
import pytest

import textgyms  # noqa: F401  (registers the ids)
import textgyms.envs.iso20022 as iso
from textgyms.envs.iso20022 import xsd
from textgyms.envs.iso20022.mt103 import validate_text
from textgyms.envs.iso20022.translate import translate_with_losses
from textgyms.errors import ConfigError

UETR = "3f1c2b7e-9a4d-4e2b-8c6f-0d1e2f3a4b5c"
MT = f"""{{1:F01BNPAFRPPAXXX0000000000}}{{2:I103DEUTDEFFXXXXN}}{{3:{{121:{UETR}}}}}{{4:
:20:PAY-77-0042
:23B:CRED
:26T:K90
:32A:260310EUR1250,00
:33B:EUR1250,00
:50K:/FR7630006000011234567890189
ATELIERS DUVAL SARL
12 RUE DES LILAS
69003 LYON
:52A:/00012345
BNPAFRPP
:59:/DE89370400440532013000
KRAUSE MASCHINENBAU GMBH
INDUSTRIESTRASSE 5
DE
:70:INVOICE 2026-118
:71A:SHA
:72:/BNF/PLEASE CALL ON RECEIPT
-}}"""


def tag(xml: str, name: str) -> list[str]:
    return re.findall(rf"<{name}>([^<]*)</{name}>", xml)


def test_the_sample_is_a_valid_mt103_and_translates_to_a_valid_pacs008():
    assert validate_text(MT) == []
    assert xsd.validate_xml(iso.translate_mt(MT)) == []


def test_26t_is_the_proprietary_purpose_both_ways():
    xml = iso.translate_mt(MT)
    assert "<Purp><Prtry>K90</Prtry></Purp>" in re.sub(r"\s", "", xml)
    mt, losses = translate_with_losses(xml)
    assert ":26T:K90\n:32A:" in mt and "Purp" not in losses
    coded = xml.replace("<Prtry>K90</Prtry>", "<Cd>GDDS</Cd>")
    assert xsd.validate_xml(coded) == []
    mt, losses = translate_with_losses(coded)
    assert ":26T:" not in mt and "Purp" in losses  # a 4-letter ISO code does not fit 3!c


def test_an_agent_account_travels_in_the_agent_field():
    xml = iso.translate_mt(MT)
    assert "<DbtrAgtAcct><Id><Othr><Id>00012345</Id>" in re.sub(r"\s", "", xml)
    # The debtor agent is the sender, yet 52A stays: it is the only place for its account.
    mt, losses = translate_with_losses(xml)
    assert ":52A:/00012345\nBNPAFRPP\n" in mt and losses == []
    assert validate_text(mt) == []
    without = re.sub(r"<DbtrAgtAcct>.*?</DbtrAgtAcct>", "", xml, flags=re.S)
    assert ":52A:" not in iso.translate(without)


def test_a_country_code_line_is_the_country_both_ways():
    xml = iso.translate_mt(MT)
    assert tag(xml, "Ctry") == ["DE"] and "<AdrLine>DE</AdrLine>" not in xml
    mt, losses = translate_with_losses(xml)
    assert "KRAUSE MASCHINENBAU GMBH\nINDUSTRIESTRASSE 5\nDE\n" in mt and losses == []
    # Three address lines leave no room for the country: it is reported, not dropped.
    full = xml.replace("<AdrLine>INDUSTRIESTRASSE 5</AdrLine>",
                       "<AdrLine>INDUSTRIESTRASSE 5</AdrLine><AdrLine>HALLE 2</AdrLine>"
                       "<AdrLine>WERKSTOR 3</AdrLine>")
    mt, losses = translate_with_losses(full)
    assert "WERKSTOR 3\n:" in mt and losses == ["Cdtr/PstlAdr/Ctry"]


def test_a_coded_72_text_keeps_its_code_both_ways():
    xml = iso.translate_mt(MT)
    assert tag(xml, "InstrInf") == ["/BNF/PLEASE CALL ON RECEIPT"]
    mt = iso.translate(xml)
    assert ":72:/BNF/PLEASE CALL ON RECEIPT\n" in mt  # not /ACC//BNF/...
    other = iso.translate_mt(MT.replace(":72:/BNF/", ":72:/INT/"))
    assert "<InstrForNxtAgt><InstrInf>/INT/PLEASE" in re.sub(r">\s+<", "><", other)


def test_fin_dates_use_the_century_window():
    assert tag(iso.translate_mt(MT), "IntrBkSttlmDt") == ["2026-03-10"]
    old = iso.translate_mt(MT.replace(":32A:260310", ":32A:950310"))
    assert tag(old, "IntrBkSttlmDt") == ["1995-03-10"]


def test_a_uetr_fin_rejects_gives_no_uetr():
    assert tag(iso.translate_mt(MT), "UETR") == [UETR]
    bad = MT.replace(UETR, "a3f2c8e1-4b5d-6789-abcd-ef0123456789")  # version nibble 6
    xml = iso.translate_mt(bad)
    assert tag(xml, "UETR") == [] and xsd.validate_xml(xml) == []


def test_the_business_application_header():
    xml = iso.translate_mt(MT, header=True)
    assert xml.count("<AppHdr") == 1 and xsd.validate_xml(xml) == []
    head = xml[xml.index("<AppHdr"):xml.index("</AppHdr>")]
    assert tag(head, "BICFI") == ["BNPAFRPPXXX", "DEUTDEFFXXX"]
    assert tag(head, "BizMsgIdr") == ["PAY-77-0042"]
    assert tag(head, "MsgDefIdr") == ["pacs.008.001.08"]
    assert tag(head, "BizSvc") == ["swift.cbprplus.02"]
    assert tag(head, "CreDt") == ["2026-03-10T00:00:00+00:00"]
    assert 'xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.02"' in head
    assert iso.translate(xml) == iso.translate(iso.translate_mt(MT))  # same MT103 back
    broken = xml.replace("<MsgDefIdr>pacs.008.001.08</MsgDefIdr>", "")
    assert xsd.validate_xml(broken) != []  # the header is checked against its XSD


def test_the_verifier_scores_the_header_when_the_reference_has_one():
    ref, bare = iso.translate_mt(MT, header=True), iso.translate_mt(MT)
    assert iso.score_mx(ref, ref).score == 1.0
    missing = iso.score_mx(ref, bare)
    assert missing.score < 1.0 and missing.parts["AppHdr"] == 0.0
    to = re.search(r"<To>.*?</To>", ref, re.S).group(0)
    wrong_to = iso.score_mx(ref, ref.replace(to, to.replace("DEUTDEFFXXX", "COBADEFFXXX")))
    assert wrong_to.score < 1.0 and 0.0 < wrong_to.parts["AppHdr"] < 1.0
    other_clock = ref.replace("<CreDt>2026-03-10T00:00:00+00:00", "<CreDt>2026-03-09T17:42:10Z")
    assert iso.score_mx(ref, other_clock).score == 1.0  # CreDt is not scored, like CreDtTm
    # A Document-only task accepts the header (CBPR+ messages travel with one) if it is right.
    assert iso.score_mx(bare, ref).score == 1.0
    wrong = iso.score_mx(bare, ref.replace(to, to.replace("DEUTDEFFXXX", "COBADEFFXXX")))
    assert wrong.score <= 0.5 and "header" in wrong.feedback


def test_the_header_variant_of_the_reverse_env():
    env = gym.make("textgyms/MT103ToISO20022-v3", difficulty=2, header=True)
    obs, _ = env.reset(seed=4)
    assert "AppHdr" in obs and "BizSvc swift.cbprplus.02" in obs
    answer = env.unwrapped.solve(env.unwrapped.task)[0]
    assert "<AppHdr" in answer
    _, reward, terminated, _, info = env.step(answer)
    assert terminated and reward == 1.0 and info["solved"]
    env.reset(seed=4)
    doc_only = iso.translate_mt(env.unwrapped.task.mt)
    _, reward, *_ = env.step(f"<answer>{doc_only}</answer>")
    assert 0.0 < reward < 1.0
    env.close()
    with pytest.raises(ConfigError, match="header"):
        gym.make("textgyms/MT103ToISO20022-v3", header="yes")
