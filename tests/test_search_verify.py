"""Every rule of the Search verifier, including the reward-hacking strings."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from textgyms.envs.search.verify import (
    MAX_ANSWER_CHARS,
    answer_penalty,
    f1,
    fold_accents,
    grade,
    normalize,
)

GOLD = ("Shifemhaven", "Shifemhaven (city, 1257)")


def test_normalize_folds_unicode_case_accents_punctuation_articles_numbers():
    assert normalize("  The  Café-Crème!  ") == "cafe creme"
    assert normalize("ＡＢＣ") == "abc"  # NFKC full-width
    assert normalize("Three") == normalize("3") == "3"
    assert normalize("1,234") == "1234"
    assert normalize("an apple") == "apple"


@pytest.mark.parametrize(
    "answer", ["Shifemhaven", "shifemhaven", "  SHIFEMHAVEN. ", "the Shifemhaven"]
)
def test_exact_match_after_normalisation_scores_one(answer):
    v = grade(answer, GOLD)
    assert v.score == 1.0 and v.solved and v.parts["em"] == 1.0


def test_alias_scores_one():
    assert grade("Shifemhaven (city, 1257)", GOLD).score == 1.0
    assert grade("three", ("3", "three")).score == 1.0
    assert grade("3", ("3", "three")).score == 1.0


@pytest.mark.parametrize(
    "answer,error",
    [
        ("", "empty_answer"),
        ("   ", "empty_answer"),
        ("?!", "empty_answer"),
        ("Shifemhaven or Zull", "multiple_answers"),
        ("Zull or Shifemhaven or Calvik", "multiple_answers"),
        ("Shifemhaven, Zull", "multiple_answers"),
        ("Zull, Calvik and Shifemhaven", "multiple_answers"),
        ("Shifemhaven/Zull", "multiple_answers"),
        ("Shifemhaven; Zull", "multiple_answers"),
        ("Shifemhaven\nZull", "multiple_answers"),
        ("Shifem", "wrong_answer"),  # a substring: no containment credit
        ("Shifemhaven is the city you are looking for", "wrong_answer"),  # a superstring
        ("What is the name of the capital city of the country?", "wrong_answer"),  # question echo
        ("Shifemhaven" * 30, "too_long_answer"),
        ("unknown", "unknown"),
    ],
)
def test_hack_strings_score_zero(answer, error):
    v = grade(answer, GOLD)
    assert v.score == 0.0 and not v.solved and v.error == error


def test_f1_is_logged_but_earns_nothing():
    v = grade("Staiprus", ("Staiprus Laigrith",))
    assert v.score == 0.0 and v.parts["f1"] == pytest.approx(2 / 3)
    assert f1("a b c", "a b c") == 1.0 and f1("", "x") == 0.0


def test_gold_with_separators_is_not_a_list():
    assert grade("Bosnia and Herzegovina", ("Bosnia and Herzegovina",)).score == 1.0
    assert grade("Washington, D.C.", ("Washington, D.C.",)).score == 1.0
    assert grade("Africa/Brazzaville", ("Africa/Brazzaville",)).score == 1.0


def test_grounding_gate():
    seen = f" {normalize('L1: Capital: Shifemhaven')} "
    assert grade("Shifemhaven", GOLD, seen=seen).score == 1.0
    v = grade("Shifemhaven", GOLD, seen=" nothing relevant here ")
    assert v.score == 0.0 and v.error == "ungrounded" and v.parts["em"] == 1.0


def test_wrong_penalty_charges_wrong_answers_but_not_unknown():
    right, unknown, wrong = (grade(a, GOLD) for a in ("Shifemhaven", "unknown", "Zull"))
    assert (right.score, unknown.score, wrong.score) == (1.0, 0.0, 0.0)
    assert answer_penalty(right, 0.5) == 0.0 and answer_penalty(unknown, 0.5) == 0.0
    assert answer_penalty(wrong, 0.5) == 0.5
    assert answer_penalty(grade("Zull or Shifemhaven", GOLD), 0.5) == 0.5


def test_citation_credit():
    support = ("https://wiki.example/wiki/Shifemhaven",)
    cited = grade("Shifemhaven", GOLD, urls=[support[0] + "/"], support=support, cite_credit=True)
    uncited = grade(
        "Shifemhaven", GOLD, urls=["https://x.example"], support=support, cite_credit=True
    )
    assert cited.parts["cited"] == 1.0 and uncited.parts["cited"] == 0.0


def test_feedback_never_quotes_the_gold():
    for answer in ["", "Zull", "Zull or Shifemhaven", "unknown", "x" * 500]:
        assert "shifemhaven" not in grade(answer, GOLD).feedback.casefold()


def test_length_cap():
    assert grade("a" * (MAX_ANSWER_CHARS + 1), ("a" * (MAX_ANSWER_CHARS + 1),)).score == 0.0


@given(st.text(max_size=300))
def test_grade_is_total_and_bounded(answer):
    v = grade(answer, GOLD, seen=" shifemhaven ")
    assert 0.0 <= v.score <= 1.0
    assert v.score < 1.0 or normalize(answer) == "shifemhaven" or "1257" in normalize(answer)


def _fold_slowly(text: str) -> str:
    import unicodedata

    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    return "".join(c for c in text if not unicodedata.combining(c))


@given(st.text(alphabet=st.characters(max_codepoint=127)) | st.text())
def test_folding_ascii_as_is_equals_the_full_unicode_path(text):
    assert fold_accents(text) == _fold_slowly(text)


def test_folding_drops_accents_and_compatibility_forms():
    assert fold_accents("Zürich ﬁle Ⅻ café") == "Zurich file XII cafe"
