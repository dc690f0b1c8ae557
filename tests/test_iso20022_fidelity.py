"""ISO 20022 family: translation fidelity on the fields the SWIFT rules treat specially --
field 70 line joining and long /ROC/ references, the gpi service type {111:001} <-> SvcLvl
G001, the 13C time indications <-> SttlmTmIndctn / SttlmTmReq (both directions) and in the
generated MT103 -> pacs.008 tasks, 77B continuation lines, and the network rules on 13C, 53B
(E04) and 57D (E09)."""

from __future__ import annotations

import re

import gymnasium as gym
import pytest

import textgyms  # noqa: F401  (registers the ids)
import textgyms.envs.iso20022 as iso
from textgyms.envs.iso20022 import xsd
from textgyms.envs.iso20022.generate import generate, generate_mt
from textgyms.envs.iso20022.mt103 import parse, parties, validate_text
from textgyms.envs.iso20022.timezones import utc_offset
from textgyms.envs.iso20022.translate import translate_with_losses
from textgyms.seeding import seeded_generator

UETR = "4b1c2f3a-1d2e-4f5a-8b6c-7d8e9f0a1b2c"
MT = (
    "{1:F01DEUTDEFFAXXX0000000000}{2:I103CHASUS33XXXXN}"
    f"{{3:{{121:{UETR}}}}}{{4:\n"
    ":20:REF123\n:23B:CRED\n:32A:260115EUR1000,00\n:33B:EUR1000,00\n"
    ":50K:/DE89370400440532013000\nACME GMBH\nMAIN STREET 1\n10115 BERLIN\n"
    ":59:/GB29NWBK60161331926819\nJOHN SMITH\nHIGH STREET 2\nLONDON\n"
    ":70:/ROC/E2E1\nINVOICE 12\nFOR GOODS\n"
    ":71A:SHA\n-}"
)


def codes(mt: str) -> set[str]:
    return {i.code for i in validate_text(mt)}


def element(xml: str, tag: str) -> str | None:
    m = re.search(rf"<{tag}>([^<]*)</{tag}>", xml)
    return m.group(1) if m else None


def with_70(*lines: str) -> str:
    return MT.replace(":70:/ROC/E2E1\nINVOICE 12\nFOR GOODS\n", ":70:" + "\n".join(lines) + "\n")


# --- field 70 -------------------------------------------------------------------------------


def test_a_short_line_of_70_ends_a_word():
    xml = iso.translate_mt(MT)
    assert element(xml, "Ustrd") == "INVOICE 12 FOR GOODS"  # not "INVOICE 12FOR GOODS"
    assert element(xml, "EndToEndId") == "E2E1"


def test_a_full_line_of_70_was_cut_by_the_line_width():
    first = "PAYMENT OF INVOICE 4711 AND 4712 FO"  # 35 characters: a word cut in two
    assert len(first) == 35
    xml = iso.translate_mt(with_70(first, "R GOODS", "DELIVERED IN MARCH"))
    assert element(xml, "Ustrd") == (
        "PAYMENT OF INVOICE 4711 AND 4712 FOR GOODS DELIVERED IN MARCH")
    structured = iso.translate_mt(with_70("/INV/4711", "SHORT LINE", "NEXT"))
    assert element(structured, "AddtlRmtInf") == "SHORT LINE NEXT"
    assert xsd.validate_xml(xml) == [] and xsd.validate_xml(structured) == []


def test_a_roc_reference_longer_than_35_is_cut_with_a_plus_and_kept_whole_in_ustrd():
    ref = "CUSTOMER-REFERENCE-2026-0001-0002-0003-XYZ"  # 42 characters (FIN allows 30)
    xml = iso.translate_mt(with_70("/ROC/" + ref, "INVOICE 12"))
    assert element(xml, "EndToEndId") == ref[:34] + "+"
    assert element(xml, "Ustrd") == f"/ROC/{ref} INVOICE 12"
    assert xsd.validate_xml(xml) == []
    short = iso.translate_mt(with_70("/ROC/" + ref[:30], "INVOICE 12"))
    assert element(short, "EndToEndId") == ref[:30] and element(short, "Ustrd") == "INVOICE 12"


# --- gpi service type -----------------------------------------------------------------------


def test_gpi_service_type_and_service_level_g001_both_ways():
    mt = MT.replace("{3:{121:", "{3:{111:001}{121:").replace(
        ":23B:CRED\n", ":23B:CRED\n:23E:SDVA\n")
    xml = iso.translate_mt(mt)
    assert xsd.validate_xml(xml) == []
    assert re.findall(r"<SvcLvl>\s*<Cd>(\w+)</Cd>", xml) == ["G001", "SDVA"]
    back = iso.translate(xml)
    assert back.startswith("{1:F01DEUTDEFFAXXX0000000000}{2:I103CHASUS33XXXXN}"
                           f"{{3:{{111:001}}{{121:{UETR}}}}}")
    assert ":23E:SDVA" in back and validate_text(back) == []
    plain = iso.translate_mt(MT)
    assert "G001" not in plain and "{111:" not in iso.translate(plain)


def test_the_gpi_flag_is_scored_only_when_the_reference_has_one():
    ref = iso.translate(iso.translate_mt(MT.replace("{3:{121:", "{3:{111:001}{121:")))
    assert iso.score(ref, ref).score == 1.0
    dropped = iso.score(ref, ref.replace("{111:001}", ""))
    assert dropped.parts["111"] == 0.0 and dropped.score < 1.0
    plain = iso.translate(iso.translate_mt(MT))
    assert "111" not in iso.score(plain, plain).parts


# --- 13C time indications -------------------------------------------------------------------


def test_13c_times_become_settlement_times_and_come_back():
    mt = MT.replace(":23B:CRED", ":13C:/SNDTIME/1030+0200\n:13C:/RNCTIME/1045+0200\n"
                    ":13C:/CLSTIME/0915+0100\n:23B:CRED")
    assert validate_text(mt) == []
    xml = iso.translate_mt(mt)
    assert xsd.validate_xml(xml) == []
    assert element(xml, "DbtDtTm") == "2026-01-15T10:30:00+02:00"
    assert element(xml, "CdtDtTm") == "2026-01-15T10:45:00+02:00"
    assert element(xml, "CLSTm") == "09:15:00+01:00"
    assert iso.translate(xml) == iso.translate(iso.translate_mt(MT)).replace(
        ":20:REF123\n", ":20:REF123\n:13C:/SNDTIME/1030+0200\n:13C:/RNCTIME/1045+0200\n"
        ":13C:/CLSTIME/0915+0100\n")


def test_times_13c_cannot_carry_are_reported_as_lost():
    xml = iso.translate_mt(MT)
    extra = ("<IntrBkSttlmDt>2026-01-15</IntrBkSttlmDt>\n<SttlmTmIndctn><DbtDtTm>"
             "2026-01-15T10:30:00Z</DbtDtTm><CdtDtTm>2026-01-15T10:45:00</CdtDtTm>"
             "</SttlmTmIndctn><SttlmTmReq><RjctTm>16:00:00+01:00</RjctTm></SttlmTmReq>")
    xml = re.sub(r"<IntrBkSttlmDt>[^<]*</IntrBkSttlmDt>", extra, xml)
    assert xsd.validate_xml(xml) == []
    mt, lost = translate_with_losses(xml)
    assert ":13C:/SNDTIME/1030+0000" in mt and "RNCTIME" not in mt
    assert lost == ["SttlmTmReq/RjctTm", "SttlmTmIndctn/CdtDtTm"]


@pytest.mark.parametrize(
    ("value", "code"),
    [("/CLSTIME/2515+0100", "T38"), ("/CLSTIME/0960+0100", "T38"), ("CLSTIME/0915+0100", "T38"),
     ("/CLSTIME/0915*0100", "T15"), ("/CLSTIME/0915+1400", "T16"), ("/SNDTIME/0915-0060", "T16")],
)
def test_13c_format_errors(value, code):
    mt = MT.replace(":23B:CRED", f":13C:{value}\n:23B:CRED")
    assert code in codes(mt)
    xml = iso.translate_mt(mt)  # an invalid time is not carried (it would break the XSD)
    assert "SttlmTm" not in xml and xsd.validate_xml(xml) == []


def test_a_valid_13c_passes_whatever_its_code():
    for value in ("/CLSTIME/0915+0100", "/RNCTIME/2359-1300", "/FROTIME/0800+0000"):
        assert validate_text(MT.replace(":23B:CRED", f":13C:{value}\n:23B:CRED")) == []


# --- gpi and 13C in the generated MT103 -> pacs.008 tasks -------------------------------------


def reverse_tasks(level: int, n: int = 80) -> list:
    return [generate_mt(seeded_generator(seed), level) for seed in range(n)]


TASKS = {level: reverse_tasks(level) for level in (1, 2, 3, 4)}


def test_only_the_higher_levels_of_the_reverse_tasks_have_gpi_and_13c():
    for level, tasks in TASKS.items():
        gpi = sum("{111:001}" in t.mt for t in tasks)
        times = sum(":13C:" in t.mt for t in tasks)
        if level < 3:
            assert gpi == times == 0, level
        else:  # "sometimes": neither always nor never
            assert 0.3 * len(tasks) < gpi < 0.7 * len(tasks), (level, gpi)
            assert 0.15 * len(tasks) < times < 0.6 * len(tasks), (level, times)
    codes_seen = {line[5:14] for t in TASKS[3] + TASKS[4] for line in t.mt.split("\n")
                  if line.startswith(":13C:")}
    assert codes_seen == {"/SNDTIME/", "/RNCTIME/", "/CLSTIME/"}


def test_the_pacs008_to_mt103_tasks_never_draw_gpi_or_13c():
    for level in (3, 4):
        for seed in range(60):
            task = generate(seeded_generator(seed), level)
            assert "G001" not in task.xml and "SttlmTm" not in task.xml
            assert "{111:" not in task.reference and ":13C:" not in task.reference


def expected_times(mt: str) -> dict[str, str]:
    """The pacs.008 times the 13C lines of ``mt`` stand for (value date + time + offset)."""
    msg = parse(mt)
    day = "20" + msg.get("32A")[0][:6]
    date = f"{day[:4]}-{day[4:6]}-{day[6:]}"
    out = {}
    for value in msg.get("13C"):
        code, hhmm, offset = value[1:8], value[9:13], value[13:]
        tm = f"{hhmm[:2]}:{hhmm[2:]}:00{offset[:3]}:{offset[3:]}"
        out[{"SNDTIME": "DbtDtTm", "RNCTIME": "CdtDtTm", "CLSTIME": "CLSTm"}[code]] = (
            tm if code == "CLSTIME" else f"{date}T{tm}")
    return out


def test_generated_gpi_and_13c_are_carried_xsd_valid_and_the_oracle_scores_one():
    carried = 0
    for task in TASKS[3] + TASKS[4]:
        assert validate_text(task.mt) == []
        assert xsd.validate_xml(task.reference) == []
        assert iso.score_mx(task.reference, task.reference).score == 1.0
        levels = re.findall(r"<SvcLvl>\s*<Cd>(\w+)</Cd>", task.reference)
        assert ("G001" in levels) == ("{111:001}" in task.mt)
        assert levels[:1] == ["G001"] or "G001" not in levels  # G001 before SDVA
        times = expected_times(task.mt)
        for tag, value in times.items():
            assert element(task.reference, tag) == value
        carried += bool(times)
    assert carried > 20


def test_generated_13c_offsets_are_those_of_the_places_they_name():
    for task in TASKS[3] + TASKS[4]:
        msg = parse(task.mt)
        sender, receiver = parties(msg)
        month = int(msg.get("32A")[0][2:4])
        place = {"SNDTIME": sender[4:6], "RNCTIME": receiver[4:6], "CLSTIME": "DE"}
        for value in msg.get("13C"):
            offset = utc_offset(place[value[1:8]], month).replace(":", "")
            assert value.endswith(offset) and "0600" <= value[9:13] <= "1759", value


def test_the_reverse_env_oracle_scores_one_on_gpi_and_13c_tasks():
    env = gym.make("textgyms/MT103ToISO20022-v3", difficulty=4, header=True)
    found = set()
    for seed in range(40):
        env.reset(seed=seed)
        task = env.unwrapped.task
        kinds = {k for k, mark in (("gpi", "{111:001}"), ("13C", ":13C:")) if mark in task.mt}
        if kinds - found:
            found |= kinds
            *_, info = env.step(env.unwrapped.solve(task)[0])
            assert info["score"] == 1.0 and info["solved"], seed
    assert found == {"gpi", "13C"}


def dropped(ref: str, pattern: str) -> str:
    out = re.sub(pattern, "", ref, flags=re.S)
    assert out != ref, pattern
    return out


def test_dropping_gpi_or_the_settlement_times_lowers_the_score():
    gpi = next(t.reference for t in TASKS[4] if "<Cd>G001</Cd>" in t.reference)
    v = iso.score_mx(gpi, dropped(gpi, r"<SvcLvl>\s*<Cd>G001</Cd>\s*</SvcLvl>\s*"))
    assert v.score < 1.0 and "PmtTpInf" in v.feedback
    timed = next(t.reference for t in TASKS[3] + TASKS[4] if "<SttlmTmIndctn>" in t.reference)
    v = iso.score_mx(timed, dropped(timed, r"<SttlmTmIndctn>.*?</SttlmTmIndctn>\s*"))
    assert v.score < 1.0 and "SttlmTmIndctn" in v.feedback
    cls = next(t.reference for t in TASKS[3] + TASKS[4] if "<SttlmTmReq>" in t.reference)
    v = iso.score_mx(cls, dropped(cls, r"<SttlmTmReq>.*?</SttlmTmReq>\s*"))
    assert v.score < 1.0 and "SttlmTmReq" in v.feedback
    wrong_zone = re.sub(r"(<DbtDtTm>[^<]*)[+-]\d\d:\d\d<", r"\g<1>+13:00<", timed)
    if wrong_zone != timed:
        assert iso.score_mx(timed, wrong_zone).score < 1.0


# --- 77B continuation lines -----------------------------------------------------------------


def with_77b(*lines: str) -> str:
    return MT.replace(":71A:SHA\n", ":71A:SHA\n:77B:" + "\n".join(lines) + "\n")


def test_a_short_77b_continuation_line_ends_a_word():
    xml = iso.translate_mt(with_77b("/ORDERRES/DE//150", "//EXPORT OF GOODS", "//MACHINERY"))
    assert xsd.validate_xml(xml) == []
    assert re.findall(r"<Inf>([^<]*)</Inf>", xml) == ["EXPORT OF GOODS MACHINERY"]


def test_a_full_77b_continuation_line_was_cut_by_the_line_width():
    first = "//EXPORT OF INDUSTRIAL MACHINERY AN"  # 35 characters: "AND" cut in two
    assert len(first) == 35
    xml = iso.translate_mt(with_77b("/BENEFRES/GB//150", first, "//D SPARE PARTS"))
    assert xsd.validate_xml(xml) == []
    infs = re.findall(r"<Inf>([^<]*)</Inf>", xml)
    assert "".join(infs) == "EXPORT OF INDUSTRIAL MACHINERY AND SPARE PARTS"
    assert all(len(i) <= 35 for i in infs) and "<DbtCdtRptgInd>CRED<" in xml


def test_77b_text_survives_the_round_trip_whatever_its_wrapping():
    for lines in (("//GOODS", "//AND SERVICES"), ("//GOODS AND SERVICES",)):
        mt = iso.translate(iso.translate_mt(with_77b("/ORDERRES/DE//150", *lines)))
        assert ":77B:/ORDERRES/DE//150\n//GOODS AND SERVICES\n" in mt, mt


# --- E04 and E09 ----------------------------------------------------------------------------


@pytest.mark.parametrize("service", ["SPRI", "SSTD", "SPAY"])
def test_53b_needs_its_party_identifier_with_a_service_level(service):
    location = MT.replace(":23B:CRED", f":23B:{service}").replace(
        ":59:", ":53B:FRANKFURT\n:59:")
    assert "E04" in codes(location)
    account = location.replace(":53B:FRANKFURT", ":53B:/12345678\nFRANKFURT")
    assert "E04" not in codes(account)
    assert "E04" not in codes(location.replace(f":23B:{service}", ":23B:CRED"))


@pytest.mark.parametrize("service", ["SPRI", "SSTD", "SPAY"])
def test_57d_needs_its_party_identifier_with_a_service_level(service):
    bare = MT.replace(":23B:CRED", f":23B:{service}").replace(
        ":59:", ":57D:BARCLAYS BANK\nLONDON\n:59:")
    assert "E09" in codes(bare)
    assert "E09" not in codes(bare.replace(":57D:", ":57D://SC200000\n"))
    assert "E09" not in codes(bare.replace(f":23B:{service}", ":23B:CRED"))
