"""The viewer page: one self-contained HTML file (inline CSS, script and gzip-compressed data).

The page needs no network and no server: it works opened from disk. Its data is the JSON of
:func:`textgyms.view.data.build_payload`, gzip-compressed and base64-encoded (a 10,000-episode
run is a few MB), which the script unpacks with the browser's ``DecompressionStream``.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
from pathlib import Path
from typing import Any

from textgyms.view.assets import CSS, JS
from textgyms.view.data import (
    MIN_CAP,
    TEXT_BUDGET,
    Prepared,
    assemble,
    labels,
    load_view_runs,
    prepare,
)

#: The most bytes of packed data a page holds; texts are clipped harder to fit.
MAX_DATA_BYTES = 4_000_000
#: The text budget (characters) below which a page stops shrinking its texts.
MIN_BUDGET = 200_000

BODY = """<header><h1>{title}</h1></header><main>
<table class="runs"><thead><tr><th>run</th><th>policy</th><th>episodes</th>
<th>mean score</th><th>feedback use</th></tr></thead><tbody id="runs"></tbody></table>
<p id="capnote" class="muted"></p>
<nav><button id="tab-episodes" class="on">Episodes</button><button id="tab-diff">Diff</button></nav>
<section id="v-episodes">
<div class="filters">
<label>run<select id="f-run"></select></label><label>env<select id="f-env"></select></label>
<label>score ≥<input id="f-min" type="number" step="0.05" min="0" max="1"></label>
<label>score ≤<input id="f-max" type="number" step="0.05" min="0" max="1"></label>
<label>solved<select id="f-solved"><option value="">any</option><option value="yes">yes</option>
<option value="no">no</option></select></label>
<label>text in actions or observations<input id="f-text" type="search" size="30"></label>
<span id="count" class="muted"></span></div>
<table id="episodes"><thead><tr><th data-key="run">run</th><th data-key="env">env</th>
<th data-key="task">task</th><th data-key="seed">seed</th><th data-key="score">score</th>
<th data-key="solved">solved</th><th data-key="turns">turns</th>
<th data-key="invalid">invalid</th><th>reward parts</th><th>feedback use</th></tr></thead>
<tbody id="rows"></tbody>
</table>
<div class="pager"><button id="prev">◀ prev</button> <span id="page"></span>
<button id="next">next ▶</button></div>
<div id="detail"></div></section>
<section id="v-diff" hidden>
<div class="filters"><label>runs<select id="d-pair"></select></label>
<label>show<select id="d-show"><option value="changed">tasks whose score changed</option>
<option value="better">better</option><option value="worse">worse</option>
<option value="all">all tasks</option></select></label></div>
<p id="d-summary"></p><p id="d-skipped" class="muted"></p>
<table id="d-table"><thead><tr><th>env</th><th>task</th><th>seed</th><th id="d-a">score A</th>
<th id="d-b">score B</th><th>change</th></tr></thead><tbody id="d-rows"></tbody></table>
<p id="d-more" class="muted"></p><div id="d-detail"></div></section></main>"""


def pack(payload: dict[str, Any]) -> str:
    """The payload as base64 of gzip-compressed JSON (``mtime=0``: same runs, same bytes)."""
    raw = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


def render(packed: str, title: str) -> str:
    """The HTML page of the :func:`pack`-ed data ``packed``."""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        # No request may leave the page: the policy blocks any the data could cause.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
        + BODY.format(title=html.escape(title))
        + f'<script id="data" type="application/octet-stream">{packed}</script>'
        + f"<script>{JS}</script></body></html>\n"
    )


def default_title(names: list[str]) -> str:
    """``textgyms runs: a, b`` (the run names, shortened when there are many)."""
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return f"textgyms runs: {shown}"


def fit(prep: Prepared, limit: int = MAX_DATA_BYTES) -> str:
    """The packed data of ``prep`` under ``limit`` bytes: the text budget shrinks in proportion
    until it fits (or reaches :data:`MIN_BUDGET`, for runs too large to show in any detail)."""
    budget = TEXT_BUDGET
    while True:
        payload = assemble(prep, budget)
        packed = pack(payload)
        if len(packed) <= limit or budget <= MIN_BUDGET or payload["cap"] == MIN_CAP:
            return packed
        budget = max(MIN_BUDGET, int(budget * limit / len(packed) * 0.9))


def write_page(paths: list[Path], out: Path, title: str | None = None) -> Path:
    """Render the runs in ``paths`` (run directories or directories holding runs) to ``out``."""
    runs = load_view_runs(paths)
    text = render(fit(prepare(runs)), title or default_title(labels([r.name for r in runs])))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out
