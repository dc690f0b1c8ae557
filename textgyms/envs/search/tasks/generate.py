"""Question generation for FictionWeb: multi-hop chains, inverted constraints, counting.

Every generator is a pure function of ``rng`` and the world. Generation-time filters: the answer
is unique (functional relations for chains; exactly one entity satisfies all constraints; counts
are exact), the answer is absent from the question, and absent from the top-10 results page for
the question text (``results(question)`` renders that page with the env's own backend).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from textgyms.core import Task
from textgyms.envs.search.fictionweb import RELATIONS, Entity, Graph
from textgyms.envs.search.verify import normalize

__all__ = ["SearchTask", "DIFFICULTIES", "HOPS", "fiction_task", "passes_filters", "NUMBER_WORDS"]

DIFFICULTIES = ("lookup", "easy", "medium", "hard")
# "lookup" is the level below easy (FictionWeb only): one-hop chain questions, one fact read
# off the start entity's page; the others mix chains, constraints and counts.
HOPS = {"lookup": (1, 1), "easy": (1, 2), "medium": (2, 3), "hard": (3, 5)}
NUMBER_WORDS = "zero one two three four five six seven eight nine ten".split()
_PHRASE = {
    "born_in": "the city where {x} was born",
    "alma_mater": "the university that {x} attended",
    "employer": "the company that {x} works for",
    "founder": "the person who founded {x}",
    "hq": "the city where {x} has its headquarters",
    "located_in": "the city where {x} is located",
    "country": "the country in which {x} lies",
    "capital": "the capital city of {x}",
    "mayor": "the mayor of {x}",
}
_OUT = {
    t: [r for r, (s, _) in RELATIONS.items() if s == t]
    for t in ("person", "city", "country", "company", "university")
}


@dataclass(frozen=True)
class SearchTask(Task):
    """One question over a corpus. ``answers``: the gold answer first, then aliases.
    ``support``: URLs of the gold path in order (the oracle opens them). ``intent``: the hidden
    intent a simulated user reveals on ``clarify`` (empty when the question is not ambiguous)."""

    corpus: str
    world: str
    family: str
    difficulty: str
    question: str
    answers: tuple[str, ...]
    support: tuple[str, ...]
    grounded: bool = True
    intent: str = ""
    start: str = ""  # what the oracle searches for first


def passes_filters(question: str, answers: tuple[str, ...], results: Callable[[str], str]) -> bool:
    """The answer (and every alias) is absent from the question and from its results page.

    A numeric answer (a count) is only checked against the question: small numbers are on every
    results page (the result ranks), so their presence there leaks nothing.
    """
    q = f" {normalize(question)} "
    norm = [normalize(a) for a in answers]
    if any(f" {a} " in q for a in norm):
        return False
    if all(a.isdigit() or a in NUMBER_WORDS for a in norm):
        return True
    page = f" {normalize(results(question))} "
    return all(f" {a} " not in page for a in norm)


def _describe(g: Graph, e: Entity, vague: bool = False) -> str:
    """How a question names ``e``: its type and name, qualified when the name is shared."""
    kind = e.attr if e.type == "person" and not vague else e.type
    if e.name in g.homonyms and not vague:
        return f"the {kind} {e.name} ({e.year})"
    return f"the {kind} {e.name}"


def _aliases(e: Entity) -> tuple[str, ...]:
    return (e.name,) if e.title == e.name else (e.name, e.title)


def _pick(rng: np.random.Generator, items: list) -> object:
    return items[int(rng.integers(len(items)))]


def _chain(rng: np.random.Generator, g: Graph, difficulty: str, vague: bool) -> SearchTask | None:
    """A 1-5 hop chain question starting from a random entity."""
    lo, hi = HOPS[difficulty]
    hops = int(rng.integers(lo, hi + 1))
    if vague:
        start = g.entities[_pick(rng, _pick(rng, sorted(g.homonyms.values())))]
    else:
        start = g.entities[int(rng.integers(len(g.entities)))]
    path, cur, phrase = [start], start, _describe(g, start, vague)
    for _ in range(hops):
        options = [r for r in _OUT[cur.type] if g.entities[cur.rel[r]] not in path]
        if not options:
            return None
        rel = _pick(rng, options)
        cur = g.entities[cur.rel[rel]]
        path.append(cur)
        phrase = _PHRASE[rel].format(x=phrase)
    intent = ""
    if vague:
        kind = start.attr if start.type == "person" else start.type
        intent = f"I mean {start.name} the {kind} from {start.year}."
    return SearchTask(
        "fictionweb",
        "",
        "chain",
        difficulty,
        f"What is the name of {phrase}?",
        _aliases(cur),
        tuple(e.url for e in path),
        True,
        intent,
        start.name,
    )


def _art(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _person_constraints(g: Graph, p: Entity) -> list[tuple[str, Callable[[Entity], bool]]]:
    """Obfuscated facts about person ``p``, each with a test any person can be checked by."""
    E = g.entities
    country = E[E[p.rel["born_in"]].rel["country"]]
    uni, co = E[p.rel["alma_mater"]], E[p.rel["employer"]]
    decade, uc, cd = p.year // 10 * 10, uni.year // 100 + 1, co.year // 10 * 10
    cap = E[country.rel["capital"]].name
    return [
        (f"was born in the {decade}s", lambda e: e.year // 10 * 10 == decade),
        (f"works as {_art(p.attr)} {p.attr}", lambda e: e.attr == p.attr),
        (
            f"was born in a city of the country whose capital is {cap}",
            lambda e: E[e.rel["born_in"]].rel["country"] == country.eid,
        ),
        (
            f"studied at a university founded in the {uc}th century",
            lambda e: E[e.rel["alma_mater"]].year // 100 + 1 == uc,
        ),
        (
            f"works for {_art(co.attr)} {co.attr} company",
            lambda e: E[e.rel["employer"]].attr == co.attr,
        ),
        (
            f"works for a company founded in the {cd}s",
            lambda e: E[e.rel["employer"]].year // 10 * 10 == cd,
        ),
    ]


def _constraint(rng: np.random.Generator, g: Graph, difficulty: str) -> SearchTask | None:
    """Which person satisfies several obfuscated constraints (exactly one does)?"""
    p = g.entities[_pick(rng, g.by_type["person"])]
    cons = _person_constraints(g, p)
    order = rng.permutation(len(cons))
    people = [g.entities[i] for i in g.by_type["person"]]
    chosen: list[str] = []
    for i in order:
        text, test = cons[int(i)]
        people = [e for e in people if test(e)]
        chosen.append(text)
        if len(people) == 1 and len(chosen) >= 2:
            break
    if len(people) != 1 or people[0] is not p:
        return None
    q = f"Which person {', '.join(chosen[:-1])} and {chosen[-1]}? Give the person's full name."
    E = g.entities
    support = (p.url, E[p.rel["born_in"]].url, E[p.rel["employer"]].url)
    return SearchTask(
        "fictionweb", "", "constraint", difficulty, q, _aliases(p), support, True, "", p.name
    )


def _count(rng: np.random.Generator, g: Graph, difficulty: str) -> SearchTask | None:
    """How many companies headquartered in a city were founded before a year?"""
    city = g.entities[_pick(rng, g.by_type["city"])]
    cos = sorted(g.inverse.get(("hq", city.eid), []))
    if len(cos) < 2 or len(cos) > 10:
        return None
    years = sorted(g.entities[c].year for c in cos)
    cut = years[int(rng.integers(1, len(years)))]
    n = sum(y < cut for y in years)
    where = _describe(g, city)
    q = f"How many companies headquartered in {where} were founded before {cut}?"
    answers = (str(n), NUMBER_WORDS[n]) if n < len(NUMBER_WORDS) else (str(n),)
    support = (city.url, *(g.entities[c].url for c in cos))
    return SearchTask(
        "fictionweb", "", "count", difficulty, q, answers, support, False, "", city.name
    )


def fiction_task(
    rng: np.random.Generator,
    g: Graph,
    world_key: str,
    difficulty: str,
    results: Callable[[str], str],
    ambiguous_rate: float = 0.0,
) -> SearchTask:
    """A FictionWeb task that passes every generation-time filter."""
    for _ in range(500):
        vague = ambiguous_rate > 0 and rng.random() < ambiguous_rate
        roll = 0.0 if difficulty == "lookup" else rng.random()
        if vague or roll < 0.6:
            task = _chain(rng, g, difficulty, vague)
        elif roll < 0.85:
            task = _constraint(rng, g, difficulty)
        else:
            task = _count(rng, g, difficulty)
        if task is not None and passes_filters(task.question, task.answers, results):
            return _with_world(task, world_key)
    raise RuntimeError("no FictionWeb task passed the filters in 500 draws")  # a generator bug


def _with_world(task: SearchTask, key: str) -> SearchTask:
    from dataclasses import replace

    return replace(task, world=key)
