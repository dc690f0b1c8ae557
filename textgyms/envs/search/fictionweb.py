"""FictionWeb: a seeded fictional world of typed entities and relations, rendered as a web.

Entities: countries, cities, people, companies and universities, with functional relations
(``born_in``, ``alma_mater``, ``employer``, ``founder``, ``hq``, ``located_in``, ``country``,
``capital``, ``mayor``) and years. Names are made of random syllables, so near-duplicate names
occur naturally and identical names (homonyms) get ``Name (qualifier)`` pages and a
disambiguation page. The web has wiki pages (one per entity), list pages, disambiguation pages and
news pages and, with ``distractors``, stale archived news and forum threads that contradict the
wiki. Everything is a pure function of ``(seed, pages, distractors)``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from textgyms.envs.search.world import slug

__all__ = ["Entity", "Graph", "build_graph", "RELATIONS"]

WIKI = "https://wiki.example/wiki/"
_ONSETS = "b c d f g h j k l m n p r s t v w z br cr dr fr gr kr pr tr st th sh ch qu".split()
_VOWELS = "a e i o u a e o ai ea ou io".split()
_CODAS = ["", "", "n", "r", "l", "s", "th", "x", "m", "nd", "rk", "ll"]
OCCUPATIONS = "engineer chemist painter novelist architect economist botanist violinist".split()
INDUSTRIES = "software shipping textiles robotics brewing aerospace pharmaceuticals mining".split()
_CO_SUFFIX = "Systems Works Holdings Labs Foods Motors Dynamics Group Energy Partners".split()
_CITY_SUFFIX = ["", "", "", "ford", "vik", "port", "burg", "ton", "mouth", "dale", "haven"]
_COUNTRY_SUFFIX = ["ia", "land", "stan", "ora", "ica", "ador"]
# relation -> (source type, target type)
RELATIONS = {
    "born_in": ("person", "city"),
    "alma_mater": ("person", "university"),
    "employer": ("person", "company"),
    "founder": ("company", "person"),
    "hq": ("company", "city"),
    "located_in": ("university", "city"),
    "country": ("city", "country"),
    "capital": ("country", "city"),
    "mayor": ("city", "person"),
}


@dataclass(slots=True)
class Entity:
    """One entity of the world; ``rel`` maps a relation name to the target's ``eid``."""

    eid: int
    type: str
    name: str
    year: int
    attr: str = ""  # occupation (person), industry (company); empty otherwise
    population: int = 0
    rel: dict[str, int] = field(default_factory=dict)
    url: str = ""
    title: str = ""


@dataclass
class Graph:
    """The entity graph behind a FictionWeb world."""

    entities: list[Entity]
    by_type: dict[str, list[int]]
    inverse: dict[tuple[str, int], list[int]]
    doc_of: dict[int, int]  # eid -> doc id of its wiki page
    homonyms: dict[str, list[int]]  # name shared by several entities -> their eids


def _word(rng: np.random.Generator, lo: int, hi: int) -> str:
    n = int(rng.integers(lo, hi + 1))
    parts = []
    for _ in range(n):
        parts.append(_ONSETS[int(rng.integers(len(_ONSETS)))])
        parts.append(_VOWELS[int(rng.integers(len(_VOWELS)))])
    parts.append(_CODAS[int(rng.integers(len(_CODAS)))])
    return "".join(parts).capitalize()


def _unique(rng: np.random.Generator, n: int, make) -> list[str]:
    """``n`` distinct names from ``make(rng)`` (drawn in order, duplicates redrawn)."""
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        name = make(rng)
        if name not in seen:
            seen.add(name)
            out.append(name)
    return out


def _counts(pages: int) -> dict[str, int]:
    """Entity and page counts for a world of about ``pages`` pages."""
    return {
        "country": max(6, pages // 250),
        "city": max(30, pages * 8 // 100),
        "university": max(10, pages * 3 // 100),
        "company": max(30, pages * 10 // 100),
        "person": max(60, pages * 40 // 100),
        "news": pages * 20 // 100,
        "forum": pages * 10 // 100,
    }


def _make_entities(rng: np.random.Generator, n: dict[str, int]) -> list[Entity]:
    """Entities with names, years and attributes (relations are drawn next)."""
    ents: list[Entity] = []

    def add(kind: str, names: list[str], lo: int, hi: int) -> None:
        years = rng.integers(lo, hi, size=len(names))
        for name, year in zip(names, years, strict=True):
            ents.append(Entity(len(ents), kind, name, int(year)))

    countries = _unique(rng, n["country"], lambda r: _word(r, 1, 2) + _pick(r, _COUNTRY_SUFFIX))
    add("country", countries, 1700, 1990)
    # Cities are drawn with replacement from a smaller pool: some names repeat (homonyms).
    pool = _unique(rng, n["city"], lambda r: _word(r, 1, 2) + _pick(r, _CITY_SUFFIX))
    add("city", [pool[int(i)] for i in rng.integers(0, len(pool), n["city"])], 1100, 1950)
    unis = _unique(rng, n["university"], _uni_name)
    add("university", unis, 1400, 2000)
    add("company", _unique(rng, n["company"], _company_name), 1850, 2020)
    firsts = _unique(rng, max(40, n["person"] // 80), lambda r: _word(r, 1, 2))
    lasts = _unique(rng, max(80, n["person"] // 6), lambda r: _word(r, 2, 3))
    fi = rng.integers(0, len(firsts), n["person"])
    la = rng.integers(0, len(lasts), n["person"])
    add("person", [f"{firsts[a]} {lasts[b]}" for a, b in zip(fi, la, strict=True)], 1920, 2000)
    for e in ents:
        if e.type == "person":
            e.attr = _pick(rng, OCCUPATIONS)
        elif e.type == "company":
            e.attr = _pick(rng, INDUSTRIES)
        elif e.type == "city":
            e.population = int(rng.integers(2, 4000)) * 250
    return ents


def _pick(rng: np.random.Generator, items: list[str]) -> str:
    return items[int(rng.integers(len(items)))]


def _uni_name(rng: np.random.Generator) -> str:
    base = _word(rng, 2, 3)
    return f"University of {base}" if rng.integers(2) else f"{base} Institute of Technology"


def _company_name(rng: np.random.Generator) -> str:
    return f"{_word(rng, 2, 3)} {_pick(rng, _CO_SUFFIX)}"


def _link_relations(rng: np.random.Generator, ents: list[Entity], by_type) -> None:
    """Draw every functional relation (each entity gets exactly one target per relation)."""
    for rel, (src, dst) in RELATIONS.items():
        targets = by_type[dst]
        if rel == "capital":
            continue  # chosen among the country's own cities below
        picks = rng.integers(0, len(targets), len(by_type[src]))
        for eid, t in zip(by_type[src], picks, strict=True):
            ents[eid].rel[rel] = targets[int(t)]
    cities_of: dict[int, list[int]] = defaultdict(list)
    for c in by_type["city"]:
        cities_of[ents[c].rel["country"]].append(c)
    for k in by_type["country"]:
        own = cities_of.get(k)
        if not own:  # a country with no city gets one of the cities moved to it
            own = [by_type["city"][k % len(by_type["city"])]]
            ents[own[0]].rel["country"] = k
            cities_of[k] = own
        ents[k].rel["capital"] = own[int(rng.integers(len(own)))]
    for k in by_type["country"]:  # a moved city may have been another country's capital
        if ents[ents[k].rel["capital"]].rel["country"] != k:
            ents[k].rel["capital"] = next(c for c in by_type["city"] if ents[c].rel["country"] == k)


def _titles(ents: list[Entity]) -> dict[str, list[int]]:
    """Give every entity a unique page title and URL; return the homonym groups."""
    groups: dict[str, list[int]] = defaultdict(list)
    for e in ents:
        groups[e.name].append(e.eid)
    homonyms = {name: ids for name, ids in groups.items() if len(ids) > 1}
    for e in ents:
        if e.name in homonyms:
            q = e.attr if e.type == "person" else e.type
            e.title = f"{e.name} ({q}, {e.year})"
        else:
            e.title = e.name
        e.url = WIKI + slug(e.title)
    return homonyms


def build_graph(seed: int = 0, pages: int = 10_000) -> tuple[np.random.Generator, Graph, dict]:
    """The FictionWeb entity graph of a world of about ``pages`` pages drawn from ``seed``, the
    page counts per kind, and the generator in the state the page rendering continues from
    (``fictionpages.build_fictionweb`` turns them into the world)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    n = _counts(pages)
    ents = _make_entities(rng, n)
    by_type: dict[str, list[int]] = defaultdict(list)
    for e in ents:
        by_type[e.type].append(e.eid)
    _link_relations(rng, ents, by_type)
    homonyms = _titles(ents)
    inverse: dict[tuple[str, int], list[int]] = defaultdict(list)
    for e in ents:
        for rel, t in e.rel.items():
            inverse[(rel, t)].append(e.eid)
    return rng, Graph(ents, dict(by_type), dict(inverse), {}, homonyms), n
