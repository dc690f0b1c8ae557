"""Build textgyms/envs/search/data/sample_corpus.jsonl and sample_qa.jsonl from GeoWeb.

The sample is a Search-R1-format corpus (``{"id", "contents"}``, contents = a quoted title line
then the text) of the GeoWeb country pages, and a QA file asking for capitals. Run:
``.venv/bin/python scripts/search_make_sample.py`` (then the SHA256SUMS file is rewritten).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from textgyms.envs.search.geoweb import build_geoweb
from textgyms.envs.search.world import plain_text

DATA = Path(__file__).resolve().parents[1] / "textgyms" / "envs" / "search" / "data"


def main() -> None:
    world = build_geoweb(min_population=1_000_000)
    geo = world.data
    rows = []
    for p in world.pages:
        if p.kind in ("country", "city"):
            text = plain_text(p.body).split("\n", 1)[1].replace("\n", " ")
            rows.append({"id": p.url.rsplit("/", 1)[1], "contents": f'"{p.title}"\n{text}'})
    qa = []
    for iso, cap in sorted(geo.capital.items()):
        name = geo.countries[iso]["name"]
        qa.append(
            {
                "question": f"What is the capital city of {name}?",
                "answers": [geo.cities[cap]["name"]],
            }
        )
    with open(DATA / "sample_corpus.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    with open(DATA / "sample_qa.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in qa)
    sums = []
    for name in ("GEONAMES_ATTRIBUTION.md", "sample_corpus.jsonl", "sample_qa.jsonl"):
        digest = hashlib.sha256((DATA / name).read_bytes()).hexdigest()
        sums.append(f"{digest}  {name}\n")
    (DATA / "SHA256SUMS").write_text("".join(sums))
    print(f"{len(rows)} pages, {len(qa)} questions")


if __name__ == "__main__":
    main()
