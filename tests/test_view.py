"""``textgyms view``: the page's data from real eval runs of every env, and the page itself in
headless Chromium (Debian's ``chromium`` driven by Playwright; skipped without them)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from textgyms.cli import main
from textgyms.evaluate import evaluate, load_results
from textgyms.policies.scripted import ScriptedPolicy
from textgyms.view.data import (
    MIN_CAP,
    build_payload,
    clip,
    clip_cap,
    load_view_runs,
    mt_rows,
    tool_call,
)
from textgyms.view.page import MAX_DATA_BYTES, write_page

EPISODES = 2
CHROMIUM = "/usr/bin/chromium"
ISO = "textgyms/ISO20022-MT103-"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Oracle and random runs of every env (2 tasks each), and a page of the two."""
    root = tmp_path_factory.mktemp("view")
    out = {}
    for kind in ("oracle", "random"):
        out[kind] = root / kind
        evaluate(ScriptedPolicy(kind), _env_ids(), episodes=EPISODES, out=out[kind],
                 concurrency=2, progress=False)
    out["page"] = write_page([out["oracle"], out["random"]], root / "view.html")
    return out


def _env_ids() -> list[str]:
    import textgyms

    return textgyms.env_ids()


def _rows(run: Path) -> list[dict]:
    return sorted(load_results(run), key=lambda r: (r["env_id"], r["episode"]))


# --- the data, without a browser -------------------------------------------------------------


def test_clip_cap_water_fills_the_budget():
    assert clip_cap([10, 20, 100], budget=200) is None  # fits: nothing is clipped
    assert clip_cap([100, 300, 5000], budget=1000) == 600  # 100 + 300 + 600
    assert clip_cap([1000] * 10, budget=10) == MIN_CAP  # never below the floor
    text = "a" * 500 + "b" * 500
    cut = clip(text, 100)
    assert cut.startswith("a" * 75) and cut.endswith("b" * 25) and "900 characters cut" in cut
    assert clip(text, None) == text and clip("short", 100) == "short"


def test_tool_calls_are_parsed_with_the_envs_parser():
    import gymnasium as gym

    tools = tuple(gym.make("textgyms/Wordle-v0").unwrapped.tools)
    assert tool_call("I think <guess>crane</guess>", tools) == ["guess", {"word": "crane"}]
    assert tool_call('{"name": "guess", "arguments": {"word": "slate"}}', tools)[0] == "guess"
    name, why = tool_call("crane", tools)
    assert name is None and "No tool call found" in why


def test_every_episode_of_every_env_is_on_the_page(runs):
    payload = build_payload(load_view_runs([runs["oracle"], runs["random"]]))
    assert payload["envs"] == sorted(_env_ids())
    assert len(payload["episodes"]) == 2 * EPISODES * len(_env_ids())
    rows = _rows(runs["oracle"]) + _rows(runs["random"])
    got = sorted(payload["episodes"], key=lambda e: (e["run"], e["env"], e["episode"]))
    for ep, row in zip(got, rows):
        strings = payload["strings"]
        assert [strings[i] for i in ep["obs"]] == row["observations"]  # nothing clipped here
        assert [strings[i] for i in ep["act"]] == row["actions"]
        assert ep["turns"] == len(ep["act"]) == len(ep["obs"]) - 1
        assert ep["score"] == row["score"] and ep["parts"] == row["parts"]
        assert ep["feedback"] == row["feedback"]
        if ep["run"] == 0:  # the oracle's actions are all valid calls of the env's tools
            assert all(name is not None for name, _ in ep["calls"])


def test_mt103_answers_sit_beside_the_reference(runs):
    payload = build_payload(load_view_runs([runs["oracle"], runs["random"]]))
    iso = [e for e in payload["episodes"] if payload["envs"][e["env"]].startswith(ISO)]
    assert iso and all(e["mt"] is not None for e in iso)
    for ep in iso:
        for field, agent, ref, part in ep["mt"]["rows"]:
            if ep["run"] == 0:  # the oracle submits the reference itself
                assert agent == ref and part in (None, 1.0), field
            elif part is not None and part < 1.0:
                assert agent != ref, field  # a field the verifier marked wrong differs
    ref = "{1:F01AAAAGB2LAXXX0000000000}{2:I103BBBBDEFFXXXXN}{4:\n:20:X1\n:23B:CRED\n-}"
    rows = mt_rows(ref.replace("X1", "X2"), ref, {"20": 0.0, "23B": 1.0, "sender": 1.0})
    assert ["20", ":20:X2", ":20:X1", 0.0] in rows and ["23B", ":23B:CRED", ":23B:CRED", 1.0] in rows
    assert rows[0] == ["sender", "AAAAGB2LXXX", "AAAAGB2LXXX", 1.0]  # BIC8 + branch


def test_diff_lists_each_task_with_both_scores(runs):
    payload = build_payload(load_view_runs([runs["oracle"], runs["random"]]))
    (diff,) = payload["diffs"]
    assert (diff["a"], diff["b"], diff["skipped"]) == (0, 1, [])
    want = {
        (r["env_id"], r["episode"]): (r["score"], q["score"])
        for r, q in zip(_rows(runs["oracle"]), _rows(runs["random"]))
    }
    got = {(payload["envs"][t[0]], t[1]): (t[3], t[4]) for t in diff["tasks"]}
    assert got == want


def test_cli_writes_the_page(runs, tmp_path, capsys):
    out = tmp_path / "page.html"
    assert main(["view", str(runs["oracle"]), "--out", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") and "http://" not in html and "https://" not in html
    assert main(["view", str(tmp_path / "nowhere")]) == 2


# --- a 10,000-episode run --------------------------------------------------------------------


def synthetic_run(template: Path, out: Path, n: int = 10_000, seed: int = 0) -> Path:
    """A run of ``n`` episodes made from a real run's episodes (every env): each copy gets its
    own task index, seed, score, and texts whose digits and capital letters (the numbers and
    names that differ between tasks) are redrawn, so the page cannot share them."""
    rng = np.random.default_rng(seed)
    meta = json.loads((template / "metadata.json").read_text())
    rows = load_results(template)
    envs = sorted({r["env_id"] for r in rows})
    lines = []
    for e, env_id in enumerate(envs):
        count = _share(n, len(envs), e)
        meta["protocol"]["envs"][env_id]["episodes"] = count
        same = [r for r in rows if r["env_id"] == env_id]
        for j in range(count):
            r = dict(same[j % len(same)], episode=j, seed=j, task_id=f"{rng.integers(2**63):016x}")
            r["score"] = float(rng.random()) if not r["solved"] else 1.0
            keep = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
            table = str.maketrans(keep, "".join(rng.permutation(list(keep))))
            r["observations"] = [o.translate(table) for o in r["observations"]]
            r["actions"] = [a.translate(table) for a in r["actions"]]
            lines.append(json.dumps(r) + "\n")
    out.mkdir(parents=True)
    (out / "metadata.json").write_text(json.dumps(meta))
    (out / "results.jsonl").write_text("".join(lines))
    return out


def _share(n: int, parts: int, i: int) -> int:
    """Part ``i`` of ``n`` split into ``parts`` near-equal whole parts."""
    return n // parts + (i < n % parts)


@pytest.fixture(scope="module")
def big(runs, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("big")
    run = synthetic_run(runs["random"], root / "run")
    return write_page([run], root / "view.html")


def test_a_10000_episode_run_is_a_few_mb(big):
    size = big.stat().st_size
    print(f"10,000-episode page: {size / 1e6:.2f} MB")
    assert size <= MAX_DATA_BYTES + 100_000  # the data limit plus the page's script and style


# --- in headless Chromium --------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """One headless Chromium for the module (Debian's, never a downloaded one)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[view]'")
    if shutil.which(CHROMIUM) is None:
        pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run installs it)")
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM,
            headless=True,
            viewport={"width": 1400, "height": 1000},
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"],
        )
        yield context
        context.close()


class Opened:
    """A page opened from disk, with every console message and request it made."""

    def __init__(self, context, path: Path) -> None:
        self.page = context.new_page()
        self.console: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)
        self.page.wait_for_selector("body[data-ready]")

    def count(self) -> str:
        return self.page.locator("#count").inner_text()

    def filter(self, selector: str, value: str) -> None:
        """Set a filter and wait until the table is redrawn (the input is debounced)."""
        applied = self.page.locator("body").get_attribute("data-applied")
        el = self.page.locator(selector)
        if el.evaluate("e => e.tagName") == "SELECT":
            el.select_option(value)
        else:
            el.fill(value)
        self.page.wait_for_function("(a) => document.body.dataset.applied !== a", arg=applied)

    def rows(self, column: int) -> list[str]:
        """The text of one column of the table's current page."""
        return self.page.locator(f"#rows tr td:nth-child({column})").all_inner_texts()


@pytest.fixture(scope="module")
def viewer(browser, runs):
    opened = Opened(browser, runs["page"])
    yield opened
    opened.page.close()


def test_page_loads_without_errors_or_network(viewer):
    assert viewer.page.locator("body").get_attribute("data-ready") == "1"
    assert viewer.console == []
    assert viewer.requests == [viewer.url]  # the file itself, nothing else
    n = 2 * EPISODES * len(_env_ids())
    assert viewer.count() == f"{n} of {n} episodes"
    assert viewer.page.locator("#rows tr").count() == n


def _reset(viewer) -> None:
    for sel, value in (("#f-run", ""), ("#f-env", ""), ("#f-min", ""), ("#f-max", ""),
                       ("#f-solved", ""), ("#f-text", "")):
        if viewer.page.locator(sel).input_value() != value:
            viewer.filter(sel, value)


def test_filters_reduce_the_table_to_the_expected_rows(viewer, runs):
    rows = _rows(runs["oracle"]) + _rows(runs["random"])
    n = len(rows)
    _reset(viewer)
    viewer.filter("#f-env", str(sorted(_env_ids()).index("textgyms/Wordle-v0")))
    assert viewer.count() == f"{2 * EPISODES} of {n} episodes"
    assert set(viewer.rows(2)) == {"Wordle-v0"}
    viewer.filter("#f-env", "")
    viewer.filter("#f-solved", "no")
    unsolved = [r for r in rows if not r["solved"]]
    assert viewer.count() == f"{len(unsolved)} of {n} episodes"
    viewer.filter("#f-solved", "")
    viewer.filter("#f-min", "0.05")
    viewer.filter("#f-max", "0.5")
    within = [r for r in rows if 0.05 <= r["score"] <= 0.5]
    assert viewer.count() == f"{len(within)} of {n} episodes"
    assert sorted(float(x) for x in viewer.rows(5)) == sorted(round(r["score"], 3) for r in within)
    viewer.filter("#f-min", "")
    viewer.filter("#f-max", "")
    word = next(a for r in _rows(runs["random"]) if r["env_id"].endswith("Wordle-v0")
                for a in r["actions"])  # a random guess, e.g. "<guess>arson</guess>"
    word = re.search(r">(\w+)<", word).group(1)
    hits = [r for r in rows if word in "\n".join(r["observations"] + r["actions"]).lower()]
    viewer.filter("#f-text", word.upper())  # case-insensitive
    assert viewer.count() == f"{len(hits)} of {n} episodes" and hits
    _reset(viewer)
    assert viewer.count() == f"{n} of {n} episodes"


def test_clicking_an_episode_shows_its_transcript(viewer, runs):
    _reset(viewer)
    rows = _rows(runs["oracle"]) + _rows(runs["random"])
    page = viewer.page
    for i, row in enumerate(rows):
        if row["episode"] != 0:
            continue
        page.locator(f"#rows tr[data-idx='{i}']").click()
        shown = page.locator("#detail .transcript")
        assert shown.get_attribute("data-idx") == str(i)
        assert page.locator("#detail .turn").count() == row["turns"], row["env_id"]
        assert f"score {row['score']:.3f}" in shown.locator(".verdict").inner_text()
        last = page.locator("#detail .turn .obs").last.inner_text()
        assert row["observations"][-1][:40].split("\n")[0] in last
        if row["env_id"].startswith(ISO):  # the answer beside the reference, field by field
            assert page.locator("#detail table.mt tr.hit").count() > 0
    assert viewer.console == []


def test_sorting_by_score(viewer, runs):
    _reset(viewer)
    rows = _rows(runs["oracle"]) + _rows(runs["random"])
    viewer.page.locator("#episodes th[data-key='score']").click()
    assert [float(x) for x in viewer.rows(5)] == sorted(round(r["score"], 3) for r in rows)
    viewer.page.locator("#episodes th[data-key='score']").click()
    assert [float(x) for x in viewer.rows(5)][0] == max(round(r["score"], 3) for r in rows)


def test_diff_view_lists_the_tasks_whose_score_changed(viewer, runs):
    page = viewer.page
    page.locator("#tab-diff").click()
    changed = {
        f"{r['env_id']}#{r['episode']}"
        for r, q in zip(_rows(runs["oracle"]), _rows(runs["random"]))
        if abs(r["score"] - q["score"]) > 1e-9
    }
    listed = page.locator("#d-rows tr")
    assert {listed.nth(i).get_attribute("data-task") for i in range(listed.count())} == changed
    n = EPISODES * len(_env_ids())  # the random policy never beats the oracle's 1.0 here
    summary = page.locator("#d-summary").inner_text()
    assert summary.startswith(f"{n} tasks compared: 0 better, {len(changed)} worse")
    listed.first.click()
    assert page.locator("#d-detail .transcript").count() == 2
    page.locator("#tab-episodes").click()
    assert viewer.console == []


def test_a_10000_episode_page_stays_usable(browser, big):
    opened = Opened(browser, big)
    try:
        assert opened.count() == "10000 of 10000 episodes"
        assert opened.page.locator("#rows tr").count() == 100  # paginated
        opened.page.locator("#next").click()
        assert opened.page.locator("#page").inner_text() == "page 2 of 100"
        opened.filter("#f-env", "0")
        assert opened.count() == f"{_share(10_000, len(_env_ids()), 0)} of 10000 episodes"
        opened.page.locator("#rows tr").first.click()
        assert opened.page.locator("#detail .turn").count() >= 1
        assert opened.console == [] and opened.requests == [opened.url]
    finally:
        opened.page.close()


def test_screenshot_of_an_episode(viewer, runs, tmp_path):
    """The docs' screenshot (docs/img/viewer.png), remade with TEXTGYMS_DOCS_SCREENSHOT=1."""
    _reset(viewer)
    page = viewer.page
    rows = _rows(runs["oracle"]) + _rows(runs["random"])
    i = next(i for i, r in enumerate(rows) if r["env_id"].endswith("Search-v1") and r["turns"] > 1)
    viewer.filter("#f-env", str(sorted(_env_ids()).index(rows[i]["env_id"])))
    page.locator(f"#rows tr[data-idx='{i}']").click()
    page.evaluate("window.scrollTo(0, 0)")
    shot = tmp_path / "viewer.png"
    page.screenshot(path=str(shot), full_page=False)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    if os.environ.get("TEXTGYMS_DOCS_SCREENSHOT"):
        docs = Path(__file__).parent.parent / "docs" / "img" / "viewer.png"
        docs.parent.mkdir(exist_ok=True)
        shutil.copy(shot, docs)


# --- terminal output -------------------------------------------------------------------------


def test_tables_in_logs_are_plain_and_never_wrapped(tmp_path, capsys):
    from textgyms.leaderboard import text_table

    assert text_table("t", ["a", "long header"], [["xyz", 1]]).splitlines() == [
        "t", "a    long header", "---  -----------", "xyz  1"]
    out = tmp_path / "run"
    argv = ["eval", "--policy", "oracle", "--envs", "textgyms/Wordle-v0", "--episodes", "2",
            "--out", str(out), "--quiet"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()  # pytest's stdout is not a TTY
    assert lines[0] == f"policy oracle -> {out}" and lines[1].split()[:2] == ["env", "score"]
    assert lines[3].startswith("textgyms/Wordle-v0  1.000 ± 0.000") and len(lines) == 4
    assert main([*argv, "--format", "json"]) == 0  # resumes: nothing left to play
    data = json.loads(capsys.readouterr().out)
    assert data["run"] == str(out) and data["aggregates"]["textgyms/Wordle-v0"]["n"] == 2


def test_leaderboard_json_names_each_runs_viewer_page(runs, tmp_path, capsys):
    argv = ["leaderboard", str(runs["oracle"]), str(runs["random"]), "--out", str(tmp_path)]
    assert main([*argv, "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert [r["policy"] for r in board["runs"]] == ["oracle", "random"]
    assert [r["normalised"] for r in board["runs"]] == [1.0, 0.0]
    for r in board["runs"]:
        assert (tmp_path / r["view"]).is_file()
        assert f'href="{r["view"]}"' in (tmp_path / "leaderboard.html").read_text()
        assert set(r["columns"]) == set(_env_ids())


def test_agent_text_is_shown_as_text_never_run(browser, runs, tmp_path):
    """Actions are adversarial: markup in them must not become elements, scripts or requests."""
    run = tmp_path / "hostile"
    shutil.copytree(runs["random"], run)
    rows = load_results(run)
    hostile = ('</script><script>document.title="pwned"</script><img src="x.png" '
               'onerror="document.title=\'pwned\'"><guess>crane</guess>')
    rows[0]["actions"][0] = hostile
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    opened = Opened(browser, write_page([run], tmp_path / "hostile.html"))
    try:
        opened.filter("#f-text", "pwned")
        assert opened.count().startswith("1 of ")
        opened.page.locator("#rows tr").first.click()
        assert hostile in opened.page.locator("#detail .turn pre").all_inner_texts()
        assert opened.page.locator("#detail img").count() == 0
        assert opened.page.title() != "pwned"
        assert opened.console == [] and opened.requests == [opened.url]
    finally:
        opened.page.close()


def test_envs_are_rebuilt_with_the_runs_own_kwargs(tmp_path):
    run = tmp_path / "len4"
    evaluate(ScriptedPolicy("oracle"), ["textgyms/Wordle-v0"], episodes=1, out=run,
             env_kwargs={"length": 4}, progress=False)
    (view_run,) = load_view_runs([run])
    assert view_run.make_kwargs("textgyms/Wordle-v0") == {"length": 4, "split": "test"}
    (ep,) = build_payload([view_run])["episodes"]
    assert all(name == "guess" for name, _ in ep["calls"]) and ep["score"] == 1.0
