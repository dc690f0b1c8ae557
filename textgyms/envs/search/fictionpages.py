"""Rendering the FictionWeb entity graph as pages: wiki, list, disambiguation, news, forum.

News pages are neutral unless the world has distractors (noise level 3): then they are stale
archived news (an older value of a fact, dated and marked ``Archived YEAR: ...``) and the forum
threads contradict the wiki.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from textgyms.envs.search.fictionweb import INDUSTRIES, RELATIONS, WIKI, Entity, Graph, build_graph
from textgyms.envs.search.world import Page, World, slug, world_key

__all__ = ["build_fictionweb", "render_all", "aliases", "list_url"]

_FILLER = [
    "Little else is recorded about the early years.",
    "Archives from the period are incomplete.",
    "Several accounts of this history disagree in their details.",
    "The subject is mentioned in regional almanacs.",
    "Local historians have written about it at length.",
]


def _art(word: str) -> str:
    """The indefinite article for ``word``."""
    return "an" if word[0] in "aeiou" else "a"


def _a(e: Entity) -> str:
    """A link to ``e``'s wiki page, anchored by its name."""
    return f"[[{e.url}|{e.name}]]"


def _links(g: Graph, eids: list[int], limit: int) -> str:
    shown = [_a(g.entities[i]) for i in sorted(eids)[:limit]]
    return ", ".join(shown) if shown else "none recorded"


def _person(g: Graph, e: Entity, rng: np.random.Generator) -> str:
    E = g.entities
    city, uni, co = (E[e.rel[r]] for r in ("born_in", "alma_mater", "employer"))
    return "\n".join(
        [
            f"{e.name} is {_art(e.attr)} {e.attr} born in {e.year}.",
            f"Born: {e.year} in {_a(city)}",
            f"Occupation: {e.attr}",
            f"Education: {_a(uni)}",
            f"Employer: {_a(co)}",
            f"{e.name} studied at {uni.name} before joining {co.name}.",
            _FILLER[int(rng.integers(len(_FILLER)))],
        ]
    )


def _city(g: Graph, e: Entity, rng: np.random.Generator) -> str:
    E = g.entities
    country, mayor = E[e.rel["country"]], E[e.rel["mayor"]]
    hq = g.inverse.get(("hq", e.eid), [])
    return "\n".join(
        [
            f"{e.name} is a city in {_a(country)}, founded in {e.year}.",
            f"Country: {_a(country)}",
            f"Founded: {e.year}",
            f"Population: {e.population:,}",
            f"Mayor: {_a(mayor)}",
            f"Companies headquartered here ({len(hq)}): {_links(g, hq, 60)}",
            f"Universities: {_links(g, g.inverse.get(('located_in', e.eid), []), 20)}",
            f"Notable people born here: {_links(g, g.inverse.get(('born_in', e.eid), []), 8)}",
            _FILLER[int(rng.integers(len(_FILLER)))],
        ]
    )


def _country(g: Graph, e: Entity, rng: np.random.Generator) -> str:
    cap = g.entities[e.rel["capital"]]
    return "\n".join(
        [
            f"{e.name} is a country established in {e.year}.",
            f"Capital: {_a(cap)}",
            f"Established: {e.year}",
            f"Cities: see [[{list_url('cities', e.name)}|List of cities in {e.name}]]",
            _FILLER[int(rng.integers(len(_FILLER)))],
        ]
    )


def _company(g: Graph, e: Entity, rng: np.random.Generator) -> str:
    E = g.entities
    founder, hq = E[e.rel["founder"]], E[e.rel["hq"]]
    staff = g.inverse.get(("employer", e.eid), [])
    return "\n".join(
        [
            f"{e.name} is {_art(e.attr)} {e.attr} company founded in {e.year}.",
            f"Founded: {e.year}",
            f"Founder: {_a(founder)}",
            f"Headquarters: {_a(hq)}",
            f"Industry: {e.attr}",
            f"Notable employees: {_links(g, staff, 6)}",
            _FILLER[int(rng.integers(len(_FILLER)))],
        ]
    )


def _university(g: Graph, e: Entity, rng: np.random.Generator) -> str:
    city = g.entities[e.rel["located_in"]]
    return "\n".join(
        [
            f"{e.name} is a university founded in {e.year}.",
            f"Location: {_a(city)}",
            f"Founded: {e.year}",
            f"Alumni: {_links(g, g.inverse.get(('alma_mater', e.eid), []), 8)}",
            _FILLER[int(rng.integers(len(_FILLER)))],
        ]
    )


_RENDER = {
    "person": _person,
    "city": _city,
    "country": _country,
    "company": _company,
    "university": _university,
}


def list_url(what: str, name: str) -> str:
    """The URL of the list page of ``what`` (cities, companies) for ``name``."""
    return WIKI + slug(f"List of {what} in {name}")


def _lists(g: Graph) -> list[Page]:
    E = g.entities
    out = []
    cities_of: dict[int, list[int]] = defaultdict(list)
    for c in g.by_type["city"]:
        cities_of[E[c].rel["country"]].append(c)
    for k in g.by_type["country"]:
        rows = [
            f"- {_a(E[c])} (founded {E[c].year}, population {E[c].population:,})"
            for c in cities_of[k]
        ]
        head = f"Cities of {_a(E[k])} ({len(rows)} entries):"
        out.append(
            Page(
                list_url("cities", E[k].name),
                f"List of cities in {E[k].name}",
                "\n".join([head, *rows]),
                "list",
            )
        )
    by_ind: dict[str, list[int]] = defaultdict(list)
    for c in g.by_type["company"]:
        by_ind[E[c].attr].append(c)
    for ind in INDUSTRIES:
        rows = [
            f"- {_a(E[c])}, founded {E[c].year}, headquartered in {_a(E[E[c].rel['hq']])}"
            for c in by_ind[ind]
        ]
        title = f"List of companies in {ind}"
        out.append(Page(list_url("companies", ind), title, "\n".join([title, *rows]), "list"))
    return out


def _disambiguation(g: Graph) -> list[Page]:
    out = []
    for name, ids in sorted(g.homonyms.items()):
        rows = []
        for i in ids:
            e = g.entities[i]
            what = e.attr if e.type == "person" else e.type
            rows.append(f"- [[{e.url}|{e.title}]]: {what}, {e.year}")
        body = "\n".join([f"{name} may refer to:", *rows])
        out.append(Page(WIKI + slug(name), f"{name} (disambiguation)", body, "disambiguation"))
    return out


def _news(g: Graph, rng: np.random.Generator, i: int) -> Page:
    """A neutral news page (every noise level): an office opening, nothing that contradicts the
    wiki."""
    E = g.entities
    co = E[g.by_type["company"][int(rng.integers(len(g.by_type["company"])))]]
    city = E[g.by_type["city"][int(rng.integers(len(g.by_type["city"])))]]
    year = int(rng.integers(max(co.year, 1990), 2026))
    title = f"{co.name} announces expansion to {city.name}"
    body = "\n".join(
        [
            f"{city.name}, {year}. {_a(co)}, the {co.attr} firm, said it would open an office "
            f"in {_a(city)}.",
            "The company did not say how many people the new office would employ.",
        ]
    )
    return Page(_news_url(year, i, title), title, body, "news")


def _report(g: Graph, rng: np.random.Generator, i: int) -> Page:
    """A neutral news page of another kind (so no title word ends up on most pages, where the
    index's common-term pruning would drop it)."""
    E = g.entities
    co = E[g.by_type["company"][int(rng.integers(len(g.by_type["company"])))]]
    year = int(rng.integers(max(co.year, 1990), 2026))
    title = f"{co.name} reports record sales for {year}"
    body = "\n".join(
        [
            f"{year}. The {co.attr} firm reported record sales for the year.",
            "Analysts said demand had been strong across the sector.",
            f"More: [[{co.url}|company profile]]",  # the name only in the title: its wiki page
            # stays the top result for the name
        ]
    )
    return Page(_news_url(year, i, title), title, body, "news")


def _news_url(year: int, i: int, title: str) -> str:
    return f"https://news.example/{year}/{i % 12 + 1:02d}/{slug(title).lower()}-{i}"


def _other(g: Graph, rng: np.random.Generator, kind: str, not_eid: int) -> Entity:
    """A random entity of ``kind`` whose name differs from ``not_eid``'s (the wrong value of a
    stale or conflicting fact must really contradict the wiki, homonyms included)."""
    ids, name = g.by_type[kind], g.entities[not_eid].name
    at = int(rng.integers(len(ids)))
    for step in range(len(ids)):
        e = g.entities[ids[(at + step) % len(ids)]]
        if e.name != name:
            return e
    raise ValueError(f"every {kind} is named {name}")  # impossible: names are drawn at random


# Stale facts: (relation, source type, headline, sentence); the page states an older value.
_STALE = (
    ("mayor", "city", "{old} elected mayor of {src}", "{old} was elected mayor of {src}"),
    ("hq", "company", "{src} moves its headquarters to {old}", "{src} is now based in {old}"),
    ("employer", "person", "{src} joins {old}", "{src} has joined {old}"),
)


def _stale(g: Graph, rng: np.random.Generator, i: int) -> Page:
    """A stale news page (noise level 3): an older value of a fact, dated and marked archived."""
    E = g.entities
    rel, kind, head, sentence = _STALE[int(rng.integers(len(_STALE)))]
    src = E[g.by_type[kind][int(rng.integers(len(g.by_type[kind])))]]
    old = _other(g, rng, RELATIONS[rel][1], src.rel[rel])
    low = max(src.year, old.year, 1960)
    year = int(rng.integers(low, max(low, 2015) + 1))
    title = f"Archived {year}: " + head.format(old=old.name, src=src.name)
    body = "\n".join(
        [
            f"Archived article from {year}; it has not been updated since and may be out of date.",
            f"{year}. " + sentence.format(old=_a(old), src=_a(src)) + ".",
            f"For current information see the wiki page of {_a(src)}.",
        ]
    )
    return Page(_news_url(year, i, title), title, body, "stale")


def _forum(g: Graph, rng: np.random.Generator, i: int) -> Page:
    """A conflicting forum thread (noise level 3): a wrong birthplace stated with confidence."""
    E = g.entities
    p = E[g.by_type["person"][int(rng.integers(len(g.by_type["person"])))]]
    wrong = _other(g, rng, "city", p.rel["born_in"])
    title = f"Where was {p.name} born?"
    body = "\n".join(
        [
            f"user{int(rng.integers(100, 999))}: Does anyone know where {p.name} was born?",
            f"user{int(rng.integers(100, 999))}: {p.name} was born in {wrong.name}, I am sure.",
            f"user{int(rng.integers(100, 999))}: Check the wiki page: {_a(p)}",
        ]
    )
    return Page(f"https://forum.example/t/{i}/{slug(title).lower()}", title, body, "forum")


def render_all(
    rng: np.random.Generator, g: Graph, n: dict[str, int], distractors: bool = True
) -> list[Page]:
    """Every page of the world, in a fixed order (entity pages first).

    With ``distractors`` the news share of the world is stale archived news and the forum share
    conflicting threads; without, the same number of neutral news pages (office openings and
    company results), so the size and every entity, list and disambiguation page are the same
    either way.
    """
    pages = [
        Page(e.url, e.title, f"{e.title}\n{_RENDER[e.type](g, e, rng)}", e.type) for e in g.entities
    ]
    pages += _lists(g) + _disambiguation(g)
    if not distractors:
        pages += [_news(g, rng, i) for i in range(n["news"])]
        return pages + [_report(g, rng, n["news"] + i) for i in range(n["forum"])]
    pages += [_stale(g, rng, i) for i in range(n["news"])]
    pages += [_forum(g, rng, i) for i in range(n["forum"])]
    return pages


def aliases(g: Graph) -> dict[str, str]:
    """Alias URLs that redirect (301) to an entity page: a company's name without its suffix."""
    out: dict[str, str] = {}
    taken = {e.url for e in g.entities}
    for c in g.by_type["company"]:
        e = g.entities[c]
        alias = WIKI + slug(e.name.rsplit(" ", 1)[0])
        if alias not in taken and alias not in out:
            out[alias] = e.url
    return out


def build_fictionweb(seed: int = 0, pages: int = 10_000, distractors: bool = False) -> World:
    """The FictionWeb world of about ``pages`` pages drawn from ``seed``; ``distractors`` adds
    stale and conflicting news and forum pages (see :func:`render_all`)."""
    rng, graph, n = build_graph(seed, pages)
    out: list[Page] = render_all(rng, graph, n, distractors)
    params = {"seed": seed, "pages": pages, "distractors": distractors}
    world = World("fictionweb", world_key("fictionweb", params), out, {}, graph, params)
    graph.doc_of = {e.eid: world.by_url[e.url] for e in graph.entities}
    world.redirects = aliases(graph)
    return world
