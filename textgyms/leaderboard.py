"""``textgyms leaderboard``: rank evaluation runs and render Markdown and self-contained HTML.

Runs are grouped into *columns*: one per env id and env kwargs (split excluded), so a run with
custom kwargs (say Wordle with ``length=4``) gets its own column instead of being compared with
the default env. Within a column every run must share the protocol record (env version, split,
seed, episodes, turn budget, data sha256; see :func:`textgyms.protocol.env_protocol`) and all
runs must share the protocol version; otherwise nothing is ranked and :class:`ConfigError` names
the runs and the differing fields. Only ``samples`` may differ (pass@k is shown up to each
run's K).

Normalised score of a run in a column: ``(score - random) / (oracle - random)``, with the
``oracle`` and ``random`` baselines taken from the runs of policy ``oracle`` and ``random`` in
the same column (so under the same protocol). It is not clipped: below 0 is worse than random,
above 1 better than the oracle (possible where the scripted oracle is not perfect). Without both
baselines, or when they are equal, it is "n/a". A run's cross-env normalised score is the mean
over the columns where it is defined, and runs are ranked by it (n/a last).

The same score against the ``blind`` baseline (the env's best constant action sequence,
:mod:`textgyms.blind`), ``(score - blind) / (oracle - blind)``, is shown beside it ("vs
blind"): at or below 0 a policy does no better than one that reads nothing. Each column also
shows the feedback-use metrics of its runs (:mod:`textgyms.feedback_use`).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from textgyms.errors import ConfigError
from textgyms.evaluate import METADATA, load_results, protocol_rows, run_dirs
from textgyms.protocol import PROTOCOL_VERSION, protocol_diff, resolved_kwargs
from textgyms.stats import aggregate

#: Fields of a column's protocol records that may differ between ranked runs.
FREE_FIELDS = ("samples",)


@dataclass
class Run:
    """One run directory: its metadata and per-column aggregates of its complete envs."""

    name: str
    meta: dict[str, Any]
    aggregates: dict[str, dict[str, Any]] = field(default_factory=dict)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)  # column -> protocol record
    incomplete: list[str] = field(default_factory=list)
    normalised: dict[str, float | None] = field(default_factory=dict)
    vs_blind: dict[str, float | None] = field(default_factory=dict)

    @property
    def policy(self) -> str:
        """The policy's name (``oracle``, ``random``, ``hf:...``)."""
        return str(self.meta.get("policy", {}).get("name", "?"))

    @property
    def score(self) -> float | None:
        """Mean normalised score over the columns where it is defined."""
        vals = [v for v in self.normalised.values() if v is not None]
        return sum(vals) / len(vals) if vals else None

    @property
    def score_vs_blind(self) -> float | None:
        """Mean score normalised against blind over the columns where it is defined."""
        vals = [v for v in self.vs_blind.values() if v is not None]
        return sum(vals) / len(vals) if vals else None


@dataclass
class Board:
    """Runs ranked best first, the columns (sorted) and each column's baselines."""

    runs: list[Run]
    columns: list[str]
    baselines: dict[str, dict[str, float | None]]


def find_runs(paths: list[Path]) -> list[Run]:
    """Load each path that holds ``metadata.json``, or every run directory below it."""
    return [load_run(d) for d in run_dirs(paths)]


def column_of(record: dict[str, Any]) -> str:
    """The column label of an env protocol record: the env id, plus the kwargs that differ from
    the env's defaults (split excluded: it is a protocol field that must match)."""
    env_id, kwargs = record["env_id"], dict(record["kwargs"])
    defaults = resolved_kwargs(env_id, {})
    custom = {k: v for k, v in sorted(kwargs.items()) if k != "split" and defaults.get(k) != v}
    if not custom:
        return env_id
    return f"{env_id} [{', '.join(f'{k}={json.dumps(v)}' for k, v in custom.items())}]"


def load_run(path: Path) -> Run:
    """A run directory, with aggregates recomputed from ``results.jsonl`` for each env whose
    protocol episodes are all recorded (an interrupted env is listed in ``incomplete``)."""
    meta = json.loads((path / METADATA).read_text())
    if "protocol" not in meta:
        raise ConfigError(
            f"{path} has no protocol record (written before protocol version {PROTOCOL_VERSION}); "
            "run its textgyms eval command again in a new directory"
        )
    envs = meta["protocol"]["envs"]
    agg = aggregate(protocol_rows(load_results(path), envs))
    run = Run(str(path), meta)
    for env_id, rec in envs.items():
        col = column_of(rec)
        got = agg.get(env_id)
        if got is None or got["n"] < rec["episodes"] * rec["samples"]:
            run.incomplete.append(f"{col} ({0 if got is None else got['n']} episodes recorded)")
            continue
        run.aggregates[col], run.records[col] = got, rec
    return run


def check_compatible(runs: list[Run]) -> None:
    """Raise :class:`ConfigError` naming the runs and fields when protocols differ."""
    versions = {r.name: r.meta.get("protocol_version") for r in runs}
    if len(set(versions.values())) > 1:
        listed = ", ".join(f"{n} (version {v})" for n, v in versions.items())
        raise ConfigError(f"cannot rank runs of different protocol versions: {listed}")
    problems, first = [], {}
    for run in runs:
        for col, rec in run.records.items():
            ref_name, ref = first.setdefault(col, (run.name, rec))
            diff = protocol_diff(ref, rec, ignore=FREE_FIELDS)
            if diff:
                problems.append(f"  {col}: {ref_name} vs {run.name}: {'; '.join(diff)}")
    if problems:
        raise ConfigError(
            "cannot rank runs whose protocols differ (re-run them with the same --split, --seed "
            "and --episodes under the same textgyms version):\n" + "\n".join(problems)
        )


def normalise(score: float, random: float | None, oracle: float | None) -> float | None:
    """``(score - random) / (oracle - random)``, unclipped; None without a usable range."""
    if random is None or oracle is None or abs(oracle - random) < 1e-12:
        return None
    return (score - random) / (oracle - random)


def build(runs: list[Run]) -> Board:
    """Check the runs' protocols, compute baselines and normalised scores, rank the runs."""
    check_compatible(runs)
    columns = sorted({c for r in runs for c in r.aggregates})
    baselines: dict[str, dict[str, float | None]] = {}
    for col in columns:
        base: dict[str, float | None] = {"oracle": None, "random": None, "blind": None}
        for run in sorted(runs, key=lambda r: r.name):  # the first run of each kind counts
            if run.policy in base and base[run.policy] is None and col in run.aggregates:
                base[run.policy] = run.aggregates[col]["score"]
        baselines[col] = base
        for run in runs:
            if col in run.aggregates:
                score = run.aggregates[col]["score"]
                run.normalised[col] = normalise(score, base["random"], base["oracle"])
                run.vs_blind[col] = normalise(score, base["blind"], base["oracle"])
    ranked = sorted(runs, key=lambda r: (r.score is None, -(r.score or 0.0), r.name))
    return Board(ranked, columns, baselines)


# --- rendering -------------------------------------------------------------------------------


def _num(x: float | None, fmt: str = "{:.3f}") -> str:
    return "n/a" if x is None else fmt.format(x)


def short(col: str) -> str:
    """A column label without the ``textgyms/`` namespace."""
    return col.removeprefix("textgyms/")


def overall_rows(board: Board) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the ranking table: rank, run, policy, normalised score, envs, and the
    normalised score per column."""
    head = ["rank", "run", "policy", "normalised", "vs blind", "envs",
            *(short(c) for c in board.columns)]
    rows = []
    for i, run in enumerate(board.runs, 1):
        cells = [
            "" if col not in run.normalised else _num(run.normalised[col], "{:.2f}")
            for col in board.columns
        ]
        rows.append(
            [str(i), run.name, run.policy, _num(run.score), _num(run.score_vs_blind),
             str(len(run.aggregates)), *cells]
        )
    return head, rows


def column_rows(board: Board, col: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows of one column's table (its runs, best score first)."""
    runs = sorted(
        (r for r in board.runs if col in r.aggregates), key=lambda r: -r.aggregates[col]["score"]
    )
    ks = sorted({int(k) for r in runs for k in r.aggregates[col]["pass_at_k"]})
    head = ["run", "policy", "score ± 95% CI", "solved [95% CI]"]
    head += [f"pass@{k}" for k in ks] + ["turns", "tokens in/out", "invalid/ep", "normalised",
                                         "vs blind", "feedback use"]
    rows = []
    for run in runs:
        a = run.aggregates[col]
        lo, hi = a["solve_ci95"]
        toks = (
            "—"
            if a.get("prompt_tokens") is None
            else f"{a['prompt_tokens']:.0f}/{a['completion_tokens']:.0f}"
        )
        row = [run.name, run.policy, f"{a['score']:.3f} ± {a['score_ci95']:.3f}"]
        row.append(f"{a['solve_rate']:.1%} [{lo:.1%}, {hi:.1%}]")
        row += [_num(a["pass_at_k"].get(str(k))) if str(k) in a["pass_at_k"] else "" for k in ks]
        row += [f"{a['turns']:.2f}", toks, f"{a['invalid']:.2f}", _num(run.normalised[col]),
                _num(run.vs_blind.get(col)), use_cell(a.get("use") or {})]
        rows.append(row)
    return head, rows


def use_cell(use: dict[str, dict[str, Any]]) -> str:
    """The feedback-use metrics of a column's run, ``consistent 0.62 · repeats 0.05``."""
    return " · ".join(f"{k} {v['mean']:.2f}" for k, v in use.items()) or "—"


def protocol_line(board: Board, col: str) -> str:
    """The shared protocol of a column, in one line."""
    rec = next(r.records[col] for r in board.runs if col in r.records)
    base = board.baselines[col]
    return (
        f"protocol: v{rec['env_version']} env, split {rec['split']}, seed {rec['seed']}, "
        f"{rec['episodes']} tasks, max_turns {rec['max_turns']}, "
        f"data sha256 {rec['data_sha256'][:12]}; baselines: oracle {_num(base['oracle'])}, "
        f"random {_num(base['random'])}, blind {_num(base.get('blind'))}"
    )


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    def esc(cell: str) -> str:
        return cell.replace("|", "\\|")

    lines = ["| " + " | ".join(map(esc, head)) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(map(esc, row)) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(board: Board) -> str:
    """The leaderboard as Markdown: the ranking, then one table per column."""
    parts = [f"# textgyms leaderboard\n\n{_caption(board)}\n", "## Ranking\n"]
    parts.append(_md_table(*overall_rows(board)) + "\n")
    for col in board.columns:
        parts.append(f"## {col}\n\n{protocol_line(board, col)}\n")
        parts.append(_md_table(*column_rows(board, col)) + "\n")
    notes = _notes(board)
    if notes:
        parts.append("## Notes\n\n" + "\n".join(f"- {n}" for n in notes) + "\n")
    return "\n".join(parts)


def _caption(board: Board) -> str:
    when = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return (
        f"Protocol version {PROTOCOL_VERSION}; {len(board.runs)} runs; generated {when}. "
        "Normalised score = (score − random) / (oracle − random) per env, averaged over envs; "
        "vs blind = (score − blind) / (oracle − blind), blind being the env's best constant "
        "action sequence."
    )


def _notes(board: Board) -> list[str]:
    return [f"{r.name}: incomplete, not ranked on {c}" for r in board.runs for c in r.incomplete]


CSS = """body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:72em}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .6em;
text-align:right}td:nth-child(-n+3),th{text-align:left}th{background:#f2f2f2}
.proto{color:#555;font-size:.9em}svg{display:block;margin-bottom:1.5em}"""


def _html_table(
    head: list[str], rows: list[list[str]], links: dict[str, str] | None = None
) -> str:
    def td(cell: str) -> str:
        href = (links or {}).get(cell)  # a run's name links to its viewer page
        text = html.escape(cell)
        return f'<td><a href="{html.escape(href)}">{text}</a></td>' if href else f"<td>{text}</td>"

    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    trs = "".join("<tr>" + "".join(td(c) for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>"


def svg_bars(title: str, bars: list[tuple[str, float, float, float]]) -> str:
    """A horizontal bar chart: one ``(label, value, low, high)`` per bar, the CI as a whisker.

    The axis spans [min(0, lows), max(1, highs)], with a line at 0.
    """
    lo = min([0.0, *(b[2] for b in bars)])
    hi = max([1.0, *(b[3] for b in bars)])
    left, width, row, top = 230, 420, 22, 28

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * width

    out = [
        f'<svg width="{left + width + 70}" '
        f'height="{top + row * len(bars) + 24}" role="img"><title>{html.escape(title)}</title>',
        f'<text x="4" y="16" font-size="13" font-weight="bold">{html.escape(title)}</text>',
    ]
    for i, (label, value, low, high) in enumerate(bars):
        y = top + i * row
        x0, x1 = sorted((x(0.0), x(value)))
        out += [
            f'<text x="{left - 6}" y="{y + 14}" font-size="12" text-anchor="end">'
            f"{html.escape(label[:34])}</text>",
            f'<rect x="{x0:.1f}" y="{y + 3}" width="{x1 - x0:.1f}" height="{row - 8}" '
            'fill="#4c78a8"/>',
            f'<line x1="{x(low):.1f}" x2="{x(high):.1f}" y1="{y + row / 2 - 1}" '
            f'y2="{y + row / 2 - 1}" stroke="#222" stroke-width="1.5"/>',
            f'<text x="{x(max(high, value)) + 4:.1f}" y="{y + 14}" font-size="11">'
            f"{value:.3f}</text>",
        ]
    axis_y = top + row * len(bars) + 4
    out.append(
        f'<line x1="{x(0.0):.1f}" x2="{x(0.0):.1f}" y1="{top}" y2="{axis_y}" stroke="#888"/>'
    )
    for v in (lo, hi):
        out.append(
            f'<text x="{x(v):.1f}" y="{axis_y + 14}" font-size="10" '
            f'text-anchor="middle">{v:g}</text>'
        )
    return "".join(out) + "</svg>"


def render_html(board: Board, links: dict[str, str] | None = None) -> str:
    """The leaderboard as one self-contained HTML page (inline CSS and SVG, no scripts);
    ``links`` maps run names to their viewer pages."""
    ranked = [(r.name, r.score, r.score, r.score) for r in board.runs if r.score is not None]
    body = [f"<h1>textgyms leaderboard</h1><p>{html.escape(_caption(board))}</p><h2>Ranking</h2>"]
    body.append(_html_table(*overall_rows(board), links))
    if ranked:
        body.append(svg_bars("normalised score (mean over envs)", ranked))
    for col in board.columns:
        body.append(f"<h2>{html.escape(col)}</h2>")
        body.append(f'<p class="proto">{html.escape(protocol_line(board, col))}</p>')
        body.append(_html_table(*column_rows(board, col), links))
        bars = [
            (r.name, a["score"], a["score"] - a["score_ci95"], a["score"] + a["score_ci95"])
            for r in board.runs
            if (a := r.aggregates.get(col)) is not None
        ]
        body.append(svg_bars(f"{short(col)}: mean score, 95% CI", bars))
    notes = _notes(board)
    if notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes))
        body.append("</ul>")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>textgyms leaderboard</title><style>{CSS}</style></head><body>"
        + "".join(body)
        + "</body></html>\n"
    )


def write(board: Board, out: Path, views: bool = True) -> tuple[Path, Path]:
    """Write ``leaderboard.md`` and ``leaderboard.html`` into ``out``, and with ``views`` each
    run's viewer page into ``out/view/`` (linked from the run's rows of the HTML page; the
    Markdown stays plain tables); return the two paths."""
    out.mkdir(parents=True, exist_ok=True)
    links = write_views(board, out) if views else {}
    md_path, html_path = out / "leaderboard.md", out / "leaderboard.html"
    md_path.write_text(render_markdown(board))
    html_path.write_text(render_html(board, links))
    return md_path, html_path


def view_links(board: Board) -> dict[str, str]:
    """Where each run's viewer page goes, relative to the leaderboard's directory."""
    links: dict[str, str] = {}
    for run in sorted(board.runs, key=lambda r: r.name):
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", run.name).strip("-.") or "run"
        while f"view/{slug}.html" in links.values():  # two names with the same slug
            slug += "-"
        links[run.name] = f"view/{slug}.html"
    return links


def write_views(board: Board, out: Path) -> dict[str, str]:
    """Each run's ``textgyms view`` page in ``out/view/``; the links, relative to ``out``."""
    from textgyms.view.page import write_page  # the viewer's imports only when pages are made

    links = view_links(board)
    for name, link in links.items():
        write_page([Path(name)], out / link, f"textgyms run {name}")
    return links


def text_table(title: str, head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain table for logs and pipes: columns padded to their widest cell, never wrapped."""
    cells = [[str(c) for c in head], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join([title, *lines])


def board_json(board: Board, links: dict[str, str] | None = None) -> dict[str, Any]:
    """The leaderboard as data (``--format json``): runs best first with their normalised
    scores, per-column aggregates and viewer page; each column's protocol and baselines."""
    runs = [
        {
            "rank": i, "run": r.name, "policy": r.policy, "normalised": r.score,
            "vs_blind": r.score_vs_blind,
            "columns": {c: {**r.aggregates[c], "normalised": r.normalised.get(c),
                            "vs_blind": r.vs_blind.get(c)}
                        for c in r.aggregates},
            "incomplete": r.incomplete, "view": (links or {}).get(r.name),
        }
        for i, r in enumerate(board.runs, 1)
    ]
    columns = {c: {"protocol": protocol_line(board, c), "baselines": board.baselines[c]}
               for c in board.columns}
    return {"protocol_version": PROTOCOL_VERSION, "runs": runs, "columns": columns}
