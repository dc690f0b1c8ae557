"""The textgyms command: list, play, eval (run files, resume, errors)."""

import json
import subprocess
import sys

import pytest

from textgyms.cli import main
from textgyms.evaluate import load_results

ID = "textgyms/Wordle-v0"


def test_list_shows_ids_and_kwargs(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert ID in out and "hard_mode" in out


def test_play_in_a_terminal():
    words = "crane\n<guess>zzzzz</guess>\n"
    proc = subprocess.run(
        [sys.executable, "-m", "textgyms.cli", "play", ID, "--seed", "3"],
        input=words,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0
    assert "1. C R A N E" in proc.stdout and "not in the word list" in proc.stdout


def test_eval_writes_results_and_metadata_and_resumes(tmp_path, capsys):
    out = tmp_path / "run"
    args = [
        "eval",
        "--policy",
        "oracle",
        "--envs",
        ID,
        "--episodes",
        "6",
        "--concurrency",
        "4",
        "--out",
        str(out),
        "--quiet",
    ]
    assert main(args) == 0
    rows = load_results(out)
    assert sorted(r["episode"] for r in rows) == list(range(6))
    assert all(r["score"] == 1.0 and r["solved"] and r["seed"] == r["episode"] for r in rows)
    assert rows[0]["observations"][0].startswith("Let's play Wordle")
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["aggregates"][ID]["solve_rate"] == 1.0 and meta["split"] == "test"
    assert meta["envs"][ID]["data_sha256"] and meta["policy"]["name"] == "oracle"
    # Resume: an interrupted run keeps its episodes and plays only the missing ones.
    lines = (out / "results.jsonl").read_text().splitlines()
    (out / "results.jsonl").write_text("\n".join(lines[:3]) + "\n" + lines[3][:20])
    assert main(args[:6] + ["8"] + args[7:]) == 0
    rows = load_results(out)
    assert sorted(r["episode"] for r in rows) == list(range(8))
    assert "1.000" in capsys.readouterr().out


def test_eval_is_deterministic_and_random_baseline_is_weaker(tmp_path):
    def run(name, policy):
        main(
            [
                "eval",
                "--policy",
                policy,
                "--envs",
                ID,
                "--episodes",
                "12",
                "--seed",
                "5",
                "--out",
                str(tmp_path / name),
                "--quiet",
            ]
        )
        return sorted(
            (r["episode"], r["actions"], r["score"]) for r in load_results(tmp_path / name)
        )

    assert run("r1", "random") == run("r2", "random")
    assert sum(s for *_, s in run("r1", "random")) < sum(s for *_, s in run("o", "oracle"))


def test_eval_refuses_to_mix_runs(tmp_path, capsys):
    out = str(tmp_path / "run")
    assert (
        main(
            ["eval", "--policy", "oracle", "--envs", ID, "--episodes", "1", "--out", out, "--quiet"]
        )
        == 0
    )
    assert (
        main(
            ["eval", "--policy", "random", "--envs", ID, "--episodes", "1", "--out", out, "--quiet"]
        )
        == 2
    )
    assert "different policy" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["eval", "--policy", "gpt", "--out", "x"], "unknown policy 'gpt'"),
        (["eval", "--policy", "oracle", "--envs", "textgyms/Nope-v0", "--out", "x"], "unknown env"),
        (["play", ID, "--kwargs", '{"length": 9}'], "choose one of: 4, 5, 6, 7"),
    ],
)
def test_errors_are_one_line_messages(argv, needle, capsys):
    assert main(argv) == 2
    assert needle in capsys.readouterr().err
