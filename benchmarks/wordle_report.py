"""The Wordle comparison's report: ratios of textgyms over each peer, the targets they are
judged against, and the Markdown tables written next to ``wordle.json``. Pure functions of the
measured results, kept apart from the measuring in ``bench_wordle.py``."""

from __future__ import annotations

from typing import Any

from wordle_adapters import LABELS

#: The libraries, in the order of the tables' columns.
LIB_ORDER = ("textgyms", "textarena", "gem")
#: Distinct guesses per game in the plan every library plays.
GUESSES_PER_GAME = 6

#: Targets: (ratio key, label, comparison, threshold, unit).
TARGETS = (
    ("steps_vs_textarena", "env steps/CPU-s vs TextArena", ">=", 2.0, "×"),
    ("steps_vs_gem", "env steps/CPU-s vs GEM", ">=", 1.0, "×"),
    ("resets_vs_textarena", "resets/CPU-s vs TextArena", ">=", 2.0, "×"),
    ("resets_vs_gem", "resets/CPU-s vs GEM", ">=", 2.0, "×"),
    ("make_cheaper_vs_textarena", "env creation, times cheaper than TextArena", ">=", 100.0, "×"),
    (
        "vector_overhead_ms",
        "multiprocessing vector overhead per env-step (64 envs)",
        "<",
        1.0,
        " ms",
    ),
)


def ratio(num: float | None, den: float | None) -> float | None:
    """``num / den``, or None when either is missing."""
    return num / den if num and den else None


def metric(results: dict[str, Any], lib: str, key: str) -> float | None:
    """The median of ``key`` for ``lib``, or None when that library was not measured."""
    res = results.get(lib, {})
    return res[key]["median"] if res.get("ok") else None


def compute_ratios(results: dict[str, Any], vector: dict[str, Any]) -> dict[str, float | None]:
    """Speed ratios of textgyms over each peer (and the vector overhead)."""

    def m(lib: str, key: str) -> float | None:
        return metric(results, lib, key)

    return {
        "steps_vs_textarena": ratio(
            m("textgyms", "steps_per_cpu_s"), m("textarena", "steps_per_cpu_s")
        ),
        "steps_vs_gem": ratio(m("textgyms", "steps_per_cpu_s"), m("gem", "steps_per_cpu_s")),
        "resets_vs_textarena": ratio(
            m("textgyms", "resets_per_cpu_s"), m("textarena", "resets_per_cpu_s")
        ),
        "resets_vs_gem": ratio(m("textgyms", "resets_per_cpu_s"), m("gem", "resets_per_cpu_s")),
        "make_cheaper_vs_textarena": ratio(
            m("textarena", "make_cpu_s"), m("textgyms", "make_cpu_s")
        ),
        "vector_overhead_ms": vector.get("overhead_ms_per_env_step") if vector.get("ok") else None,
    }


def judge(ratios: dict[str, float | None]) -> list[dict[str, Any]]:
    """Pass/fail of every target (``None`` when it could not be measured)."""
    verdicts = []
    for key, label, op, threshold, unit in TARGETS:
        value = ratios.get(key)
        ok = None if value is None else (value >= threshold if op == ">=" else value < threshold)
        verdicts.append(
            {
                "key": key,
                "target": label,
                "value": value,
                "unit": unit.strip(),
                "requirement": f"{op} {threshold:g}{unit}",
                "pass": ok,
            }
        )
    return verdicts


def fmt_num(value: float | None, unit: str = "") -> str:
    """Human formatting with thousands separators; ``n/a`` for missing values."""
    if value is None:
        return "n/a"
    if abs(value) >= 100:
        return f"{value:,.0f}{unit}"
    if abs(value) >= 1:
        return f"{value:.2f}{unit}"
    return f"{value:.3g}{unit}"


METRIC_ROWS = (  # (label, result key, scale)
    ("Env steps per CPU-second", "steps_per_cpu_s", 1.0),
    ("Resets per CPU-second", "resets_per_cpu_s", 1.0),
    ("Env creation (`make`), CPU ms", "make_cpu_s", 1e3),
)


def metrics_table(report: dict[str, Any]) -> list[str]:
    """Markdown rows: one per metric, one column per library."""
    libs = report["libraries"]
    names = " | ".join(LABELS[lib] for lib in LIB_ORDER)
    rows = [f"| Metric (median of {report['config']['reps']} reps) | {names} |"]
    rows.append("|---|" + "---:|" * len(LIB_ORDER))
    for label, key, scale in METRIC_ROWS:
        values = [metric(libs, lib, key) for lib in LIB_ORDER]
        cells = [fmt_num(None if v is None else v * scale) for v in values]
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    imports = [
        fmt_num(libs[lib].get("import_cpu_s")) if libs.get(lib, {}).get("ok") else "n/a"
        for lib in LIB_ORDER
    ]
    rows.append("| First import, CPU s (once, not in the ratios) | " + " | ".join(imports) + " |")
    return rows


def targets_table(report: dict[str, Any]) -> list[str]:
    """Markdown rows: one per target, with the measured value and PASS/FAIL."""
    rows = ["| Target | Measured | Required | Result |", "|---|---:|---:|---|"]
    for v in report["targets"]:
        unit = " ms" if v["unit"] == "ms" else v["unit"]
        result = {True: "PASS", False: "FAIL", None: "not measured"}[v["pass"]]
        measured = fmt_num(v["value"], unit)
        rows.append(f"| {v['target']} | {measured} | {v['requirement']} | {result} |")
    return rows


def missing_lines(report: dict[str, Any]) -> list[str]:
    """Markdown bullets: what could not be measured, and why."""
    libs = report["libraries"]
    lines = [
        f"- {LABELS[lib]}: {libs[lib].get('error')}"
        for lib in LIB_ORDER
        if not libs.get(lib, {}).get("ok")
    ]
    if not report["vector"].get("ok"):
        lines.append(f"- textgyms vector env: {report['vector'].get('error')}")
    lines += [
        f"- install of `{name}` failed: {why}"
        for name, why in report.get("install_failures", {}).items()
    ]
    return ["", "Not measured:", *lines] if lines else []


def render_markdown(report: dict[str, Any]) -> str:
    """The results as Markdown: metrics per library, targets, gaps and the machine."""
    m, cfg = report["machine"], report["config"]
    footer = (
        f"Machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, load average at start "
        f"{m['loadavg_at_start'][0]:.2f}. Valid-guess pool: {len(report['pool'])} words; "
        f"{cfg['episodes']} games of up to {GUESSES_PER_GAME} guesses per rep."
    )
    rows = [*metrics_table(report), "", *targets_table(report), *missing_lines(report), "", footer]
    return "\n".join(rows) + "\n"
