"""ISO 20022 translator mappings of round 3, each with the rule it follows: the 50F party
identifier and its 4/-8/ lines (SWIFT MT103 field 50F format and the CBPR+ MT <-> MX mapping
of Dbtr/Id), 53B's debit/credit mark, 23E additional information and the codes with no ISO
code, the translation losses reported in info, and the round trip MT -> MX -> MT."""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium as gym
import pytest

import textgyms  # noqa: F401  (registers the ids)
import textgyms.envs.iso20022 as iso
from textgyms.envs.iso20022 import xsd
from textgyms.envs.iso20022.mt103 import validate_text
from textgyms.envs.iso20022.reverse import translate_mt_with_losses
from textgyms.envs.iso20022.translate import translate_with_losses

UETR = "5e0b1a2c-3d4e-4f60-9a1b-2c3d4e5f6a7b"
HEAD = f"{{1:F01DEUTDEFFAXXX0000000000}}{{2:I103CHASUS33XXXXN}}{{3:{{121:{UETR}}}}}{{4:\n"
REAL = Path(__file__).parent / "golden" / "iso20022" / "real"


def mt(*fields: str) -> str:
    if not any(f.startswith(":50") for f in fields):
        fields += (":50K:/DE89370400440532013000\nACME GMBH\nMAIN STREET 1\n10115 BERLIN",)
    body = [":20:REF-2026-001", ":23B:CRED", *[f for f in fields if f.startswith(":2")],
            ":32A:260115USD2500,00", *[f for f in fields if not f.startswith(":2")],
            ":59:/GB29NWBK60161331926819\nJOHN SMITH\nHIGH STREET 2\nLONDON", ":71A:SHA"]
    order = ("20", "23B", "23E", "32A", "50", "53", "57", "59", "70", "71A", "72")
    body.sort(key=lambda f: order.index(next(t for t in order if f[1:].startswith(t))))
    return HEAD + "\n".join(body) + "\n-}"


def tags(xml: str, name: str) -> list[str]:
    return re.findall(rf"<{name}>([^<]*)</{name}>", xml)


F_IDENT = ":50F:NIDN/DE/121212121212\n1/MUELLER HANS\n3/DE/10115 BERLIN\n4/19800131\n5/DE/MUNICH"
F_ACCT = ":50F:/DE89370400440532013000\n1/MUELLER HANS\n3/DE/10115 BERLIN\n6/DE/ABC BANK/C-778\n7/DE/T22000129"


def test_50f_party_identifier_and_numbered_lines_map_to_dbtr_id():
    # SWIFT MT103 50F: line 1 CODE/CC/identifier; 4/ birth date, 5/ CC/town of birth, 6/
    # CC/issuer/customer number, 7/ CC/national identity number. The MT -> MX rules put
    # them in Dbtr/Id/PrvtId: DtAndPlcOfBirth, and Othr (Id, SchmeNm/Cd = code, Issr).
    message = mt(F_IDENT)
    assert validate_text(message) == []
    xml, lost = translate_mt_with_losses(message)
    assert xsd.validate_xml(xml) == [] and lost == []
    dbtr = re.search(r"<Dbtr>.*</Dbtr>", xml, re.S).group(0)
    assert "<PrvtId>" in dbtr and "<DbtrAcct>" not in xml
    assert tags(dbtr, "BirthDt") == ["1980-01-31"] and tags(dbtr, "CityOfBirth") == ["MUNICH"]
    assert tags(dbtr, "CtryOfBirth") == ["DE"]
    assert tags(dbtr, "Cd") == ["NIDN"] and tags(dbtr, "Issr") == ["DE"]
    assert tags(dbtr, "Id")[-1] == "121212121212"
    assert iso.translate(xml) == message  # and back, line for line


def test_50f_with_an_account_keeps_6_and_7_lines_and_notprovided_is_no_account():
    message = mt(F_ACCT)
    assert validate_text(message) == []
    xml = iso.translate_mt(message)
    assert "<IBAN>DE89370400440532013000</IBAN>" in xml and xsd.validate_xml(xml) == []
    assert tags(xml, "Cd")[:2] == ["CUST", "NIDN"] and "<Issr>DE/ABC BANK</Issr>" in xml
    assert iso.translate(xml) == message
    # /NOTPROVIDED is the 50F party identifier of a customer without account or identifier
    # (the line is mandatory): no DbtrAcct, and the MX -> MT translation writes it back.
    bare = mt(":50F:/NOTPROVIDED\n1/MUELLER HANS\n2/HAUPTSTRASSE 1\n3/DE/10115 BERLIN")
    xml = iso.translate_mt(bare)
    assert "<DbtrAcct>" not in xml and "NOTPROVIDED</Id>" not in xml
    assert iso.translate(xml) == bare and validate_text(bare) == []


def test_a_debtor_without_account_gives_a_valid_50f_reference():
    # The forward reference of a real message whose debtor has no account: 50F's line 1
    # is the party identifier (here from Dbtr/Id) or /NOTPROVIDED, never absent (T56).
    for path in sorted(REAL.glob("*.xml")) + sorted((REAL / "inputs").glob("*.xml")):
        xml = path.read_text(encoding="utf-8")
        if "<DbtrAcct>" not in xml or "pacs.008.001.07" in path.name:
            continue
        without = re.sub(r"\s*<DbtrAcct>.*?</DbtrAcct>", "", xml, count=1, flags=re.S)
        try:
            ref = iso.translate(without)
        except ValueError:
            continue  # the inputs refused for their own reasons (see test_iso20022_real)
        codes = {i.code for i in validate_text(ref)} - {"U01", "T52"}
        assert codes == set(), (path.name, ref)
        assert re.search(r":50(K|A|F:/NOTPROVIDED\n|F:[A-Z]{4}/[A-Z]{2}/)", ref), path.name


def test_53b_debit_credit_mark_is_reported_not_kept_in_the_account():
    # SttlmAcct has no debit/credit mark (pacs.008 CashAccount): /D/ is a translation loss.
    message = mt(":53B:/D/12345678")
    xml, lost = translate_mt_with_losses(message)
    assert tags(xml, "Id") == ["12345678"] or "<Id>12345678</Id>" in xml
    assert "D/12345678" not in xml and "53B debit/credit mark" in lost
    assert iso.translate(xml) == mt(":53B:/12345678")  # lossless apart from the mark


def test_23e_information_and_codes_without_an_iso_code_survive():
    # MT103 23E: PHON/TELE/PHOB/TELB/PHOI/TELI/HOLD/REPA take 30x of information. PHON ->
    # InstrForNxtAgt PHOA with InstrInf; REPA, PHOI and TELI have no ISO instruction code
    # and travel as "/CODE/info" in InstrForNxtAgt/InstrInf.
    message = mt(":23E:REPA/RELATED 7781", ":23E:PHON/+49 69 910 00", ":57A:CITIUS33")
    assert validate_text(message) == []
    xml, lost = translate_mt_with_losses(message)
    assert xsd.validate_xml(xml) == [] and lost == []
    assert "<Cd>PHOA</Cd>" in xml and "<InstrInf>+49 69 910 00</InstrInf>" in xml
    assert "<InstrInf>/REPA/RELATED 7781</InstrInf>" in xml
    assert iso.translate(xml) == message
    phoi = mt(":23E:PHOI", ":57A:CITIUS33").replace(":57A:", ":56A:IRVTUS3N\n:57A:")
    assert validate_text(phoi) == [] and iso.translate(iso.translate_mt(phoi)) == phoi


def test_round_trip_of_50f_53b_and_23e_is_exact():
    message = mt(F_IDENT, ":53B:/12345678", ":23E:PHON/CALL BEFORE", ":57A:CITIUS33",
                 ":70:/ROC/E2E-99\nINVOICE 12")
    assert validate_text(message) == []
    assert iso.translate(iso.translate_mt(message)) == message


def test_what_no_pacs008_element_carries_is_reported():
    message = mt(":53B:/C/998877\nFRANKFURT", ":57B:FRANKFURT").replace(
        "{3:{", "{3:{108:MUR-1}{")
    _, lost = translate_mt_with_losses(message)
    assert {"{108:}", "53B debit/credit mark", "53B location", "57B"} <= set(lost)


def test_the_reverse_env_reports_losses_and_schema_errors_in_info():
    env = gym.make("textgyms/MT103ToISO20022-v3", difficulty=1)
    env.reset(seed=0)
    *_, info = env.step(env.unwrapped.solve(env.unwrapped.task)[0])
    assert info["translation_loss"] == [] and info["schema_errors"] == []
    env.close()


def test_the_forward_translation_reports_identifiers_it_cannot_write():
    xml = (REAL / "inputs" / "paymsg_mx_full_valid.xml").read_text(encoding="utf-8")
    _, lost = translate_with_losses(xml)
    assert "Cdtr/Id" in lost and "Dbtr/Id/Othr" in lost


@pytest.mark.parametrize("line", ["-CONTINUED", ":CONTINUED"])
def test_a_70_line_starting_with_a_hyphen_or_colon_fails_validation(line):
    message = mt(":70:INVOICE 12\n" + line)
    assert "T32" in {i.code for i in validate_text(message)}


def test_50f_keeps_to_five_lines_and_reports_the_identifiers_left_out():
    # 50F is 35x + 4*35x: with account, name and town there is room for two numbered lines;
    # the date and place of birth (4/ with 5/, never one alone) come first, the rest is lost.
    xml = iso.translate_mt(mt(F_ACCT))
    birth = ("<DtAndPlcOfBirth><BirthDt>1980-01-31</BirthDt><CityOfBirth>MUNICH</CityOfBirth>"
             "<CtryOfBirth>DE</CtryOfBirth></DtAndPlcOfBirth>")
    xml = xml.replace("<PrvtId>", "<PrvtId>" + birth, 1)
    assert xsd.validate_xml(xml) == []
    back, lost = translate_with_losses(xml)
    assert validate_text(back) == []
    assert "\n4/19800131\n5/DE/MUNICH\n" in back and "6/DE" not in back
    assert lost == ["Dbtr/Id (6/ line)", "Dbtr/Id (7/ line)"]
