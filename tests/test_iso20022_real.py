"""Real-data regression of the ISO 20022 family: sample messages published by other open-source
ISO 20022 / MT projects (provenance and licence in tests/golden/iso20022/real/PROVENANCE.md),
in both directions, and the agreement with the expected values those projects publish."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

import textgyms.envs.iso20022 as iso
from textgyms.envs.iso20022 import xsd
from textgyms.envs.iso20022.mt103 import parse, validate_text

REAL = Path(__file__).parent / "golden" / "iso20022" / "real"
MX = sorted(p for p in REAL.glob("*.xml") if "pacs.008.001.07" not in p.name)
MT = sorted(REAL.glob("*.txt"))
# Values asserted by mx20022's crates/mx20022-translate/tests/translation.rs for MT103_RAW.
PUBLISHED_MX = {"PmtId/EndToEndId": "REFERENCE123", "IntrBkSttlmAmt": "1000.50",
                "IntrBkSttlmAmt@Ccy": "EUR", "ChrgBr": "SHAR", "Dbtr/Nm": "JOHN DOE",
                "Cdtr/Nm": "JANE SMITH"}
PUBLISHED_MT = (":20:REFERENCE123", ":32A:230615EUR1000,50", ":71A:SHA")


def test_the_files_match_their_recorded_sha256():
    sums = dict(reversed(line.split()) for line in (REAL / "SHA256SUMS").read_text().splitlines())
    assert len(sums) == len(MX) + len(MT) + 1
    for name, digest in sums.items():
        assert hashlib.sha256((REAL / name).read_bytes()).hexdigest() == digest, name


@pytest.mark.parametrize("path", MX, ids=lambda p: p.name)
def test_real_pacs008_translate_to_valid_mt103(path):
    xml = path.read_text(encoding="utf-8")
    assert xsd.validate_xml(xml) == []
    mt = iso.translate(xml)
    assert validate_text(mt) == [], mt
    amount = re.search(r'<IntrBkSttlmAmt Ccy="(\w{3})">([\d.]+)<', xml)
    assert f"{amount.group(1)}{amount.group(2).replace('.', ',')}" in mt


def test_an_unsupported_version_is_refused_clearly():
    xml = (REAL / "prowide_pacs.008.001.07.xml").read_text(encoding="utf-8")
    with pytest.raises(ValueError, match=r"pacs.008.001.07 is not supported.*08 to .13"):
        iso.translate(xml)


@pytest.mark.parametrize("path", MT, ids=lambda p: p.name)
def test_real_mt103_translate_to_xsd_valid_pacs008(path):
    mt = path.read_text(encoding="utf-8")
    assert parse(mt) is not None
    xml = iso.translate_mt(mt)
    assert xsd.validate_xml(xml) == []
    amount = parse(mt).get("32A")[0]
    assert f'Ccy="{amount[6:9]}">{amount[9:].replace(",", ".")}' in xml


def agreement_mx() -> tuple[int, int]:
    """(matching, total) of the published MT103 -> pacs.008 values."""
    xml = iso.translate_mt((REAL / "mx20022_translation_test_mt103.txt").read_text())
    got = {"PmtId/EndToEndId": re.search(r"<EndToEndId>(.*?)<", xml).group(1),
           "IntrBkSttlmAmt": re.search(r"<IntrBkSttlmAmt[^>]*>(.*?)<", xml).group(1),
           "IntrBkSttlmAmt@Ccy": re.search(r'<IntrBkSttlmAmt Ccy="(.*?)"', xml).group(1),
           "ChrgBr": re.search(r"<ChrgBr>(.*?)<", xml).group(1),
           "Dbtr/Nm": re.search(r"<Dbtr>\s*<Nm>(.*?)<", xml).group(1),
           "Cdtr/Nm": re.search(r"<Cdtr>\s*<Nm>(.*?)<", xml).group(1)}
    return sum(got[k] == v for k, v in PUBLISHED_MX.items()), len(PUBLISHED_MX)


def test_agreement_with_published_expected_values():
    # MT103 -> pacs.008: 5 of 6. The one difference is deliberate: the CBPR+ rules take the
    # EndToEndId from a /ROC/ reference in field 70 and use NOTPROVIDED without one; mx20022
    # copies field 20 there (field 20 is the InstrId).
    assert agreement_mx() == (5, 6)
    xml = iso.translate_mt((REAL / "mx20022_translation_test_mt103.txt").read_text())
    assert "<InstrId>REFERENCE123</InstrId>" in xml and "<EndToEndId>NOTPROVIDED<" in xml
    # pacs.008 -> MT103: 3 of 3.
    mt = iso.translate(xml)
    assert all(value in mt for value in PUBLISHED_MT)
