"""The textgyms command: list, play, eval (run files, resume, errors)."""

import json
import subprocess
import sys

import pytest

import textgyms
from textgyms.cli import as_call, main, read_action, split_kwargs
from textgyms.errors import ConfigError, MissingExtraError
from textgyms.evaluate import load_results

ID = "textgyms/Wordle-v0"
ISO = next(i for i in textgyms.env_ids() if i.startswith("textgyms/ISO20022-MT103-v"))


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
    err = capsys.readouterr().err
    assert "different policy (name: 'oracle' != 'random')" in err  # the differing field only


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


def test_version_and_bare_command_show_something_useful(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == f"textgyms {textgyms.__version__}\n"
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: textgyms") and "list" in out and "eval" in out


def test_eval_help_shows_the_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for default in ("(default: 20)", "(default: test)", "(default: 8)", "(default: all)"):
        assert default in out
    assert "--policy POLICY one of: oracle" in out and "(default: None)" not in out


def lines(*typed):
    """A stand-in for input(): returns the typed lines, then raises EOFError."""
    it = iter(typed)

    def read(prompt):
        try:
            return next(it)
        except StopIteration:
            raise EOFError from None

    return read


def test_read_action_joins_multi_line_answers():
    assert read_action(lines("", "  ", "crane")) == "crane"  # empty lines are never sent
    mt = ["<answer>{1:F01AAAAFIHHAXXX0000000000}{4:", ":20:REF", "-}", "</answer>"]
    assert read_action(lines(*mt)) == "\n".join(mt)  # an open tag continues the answer
    raw = ["{1:F01AAAAFIHHAXXX0000000000}{4:", ":20:REF", "-}"]
    assert read_action(lines(*raw, "next")) == "\n".join(raw)  # so does an open brace
    cfg = ['"""', "interface Gi0/0", " ip address 10.0.0.1 255.255.255.0", '"""']
    assert read_action(lines(*cfg)) == "\n".join(cfg[1:3])  # a """ block, without its marks
    assert read_action(lines('<run>print("{")</run>')) == '<run>print("{")</run>'
    config = ['<apply_config device="R1">', "interface Gi0/0", " no shutdown", "</apply_config>"]
    assert read_action(lines(*config)) == "\n".join(config)  # a tag with attributes
    assert read_action(lines("<back/>", "next")) == "<back/>"  # a self-closing tag is complete
    assert read_action(lines("<answer>never closed")) is None  # end of input: nothing sent


def test_a_bare_word_is_a_call_of_the_first_tool_unless_that_tool_ends_the_episode():
    from textgyms.envs.iso20022.env import Iso20022Env
    from textgyms.envs.wordle.env import WordleEnv

    assert as_call("crane", WordleEnv.tools) == "<guess>crane</guess>"
    assert as_call("two words", WordleEnv.tools) == "two words"
    assert as_call("hello", Iso20022Env.tools) == "hello"  # never a final answer by accident


def test_play_iso_survives_a_stray_line_and_takes_a_pasted_mt103():
    import gymnasium as gym

    env = gym.make(ISO, difficulty=1)
    env.reset(seed=4)
    answer = env.unwrapped.solve(env.unwrapped.task)[0]  # "<answer>\n{1:...\n-}\n</answer>"
    proc = subprocess.run(
        [sys.executable, "-m", "textgyms.cli", "play", ISO]
        + ["--seed", "4", "--kwargs", '{"difficulty": 1}'],
        input=f"hello\n\n{answer}\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "score 1.000  solved True  turns 2" in proc.stdout  # the stray line was turn 1


@pytest.mark.parametrize("command", ["play", "eval"])
def test_bad_kwargs_json_names_the_option(command, capsys):
    argv = [command, ID] if command == "play" else [command, "--policy", "oracle", "--out", "x"]
    assert main([*argv, "--kwargs", "{hard_mode: true}"]) == 2
    err = capsys.readouterr().err
    assert "--kwargs is not valid JSON" in err and '{"hard_mode": true}' in err
    assert main([*argv, "--kwargs", "[1]"]) == 2
    assert "--kwargs must be a JSON object" in capsys.readouterr().err


def test_kwargs_for_one_env_of_many(tmp_path, capsys):
    iso = ISO
    kwargs = {"max_invalid": 2, ID: {"length": 4}}
    assert split_kwargs(kwargs, [ID, iso]) == {
        ID: {"max_invalid": 2, "length": 4},
        iso: {"max_invalid": 2},
    }
    with pytest.raises(ConfigError, match="not among --envs"):
        split_kwargs({"textgyms/Nope-v0": {}}, [ID])
    out = tmp_path / "run"
    argv = ["eval", "--policy", "oracle", "--envs", f"{ID},{iso}", "--episodes", "2"]
    assert main([*argv, "--kwargs", json.dumps(kwargs), "--out", str(out), "--quiet"]) == 0
    envs = json.loads((out / "metadata.json").read_text())["protocol"]["envs"]
    assert envs[ID]["kwargs"]["length"] == 4 and envs[ID]["kwargs"]["max_invalid"] == 2
    assert "length" not in envs[iso]["kwargs"] and envs[iso]["kwargs"]["max_invalid"] == 2
    assert {r["env_id"] for r in load_results(out)} == {ID, iso}
    meta = json.loads((out / "metadata.json").read_text())
    assert set(meta["aggregates"]) == {ID, iso}  # so the printed table covers both calls
    assert capsys.readouterr().out.count("100.0%") == 2


def test_protocol_mismatch_names_the_differing_keys(tmp_path, capsys):
    out = str(tmp_path / "run")
    argv = ["eval", "--policy", "oracle", "--envs", ID, "--episodes", "1", "--out", out]
    assert main([*argv, "--quiet"]) == 0
    assert main([*argv, "--quiet", "--kwargs", '{"hard_mode": true, "vocab": "easy"}']) == 2
    err = capsys.readouterr().err
    assert "kwargs: hard_mode False != True, vocab 'common' != 'easy'" in err, err
    assert "max_guesses" not in err  # the keys that agree are not dumped


def test_list_says_which_extra_an_env_still_needs(monkeypatch, capsys):
    from textgyms import extras

    monkeypatch.setattr(extras, "installed", lambda module: module not in ("networkx", "tantivy"))
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    block = {b.split(":")[0]: b for b in out.split("\n\n")}
    net = next(i for i in block if i.startswith("textgyms/NetConfig-v"))
    assert "pip install 'textgyms[net]' to run" in block[net]
    assert "textgyms[search]' for backend='tantivy'" in block["textgyms/Search-v1"]
    assert "needs:  nothing more" in block[ID] and "max_turns=None" in block[ID]
    with pytest.raises(MissingExtraError, match=r"pip install 'textgyms\[net\]'"):
        extras.require("net", "networkx_is_not_a_module")


def test_an_unknown_hf_model_gets_one_clean_message(capsys):
    pytest.importorskip("transformers")
    argv = ["eval", "--policy", "hf:/nonexistent", "--envs", ID, "--out", "x", "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "unknown model '/nonexistent'; choose one of: tiny-random" in err
    assert "Repo id" not in err and "Traceback" not in err and err.count("\n") == 1
