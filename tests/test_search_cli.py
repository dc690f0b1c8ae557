"""Bring-your-own corpus: `textgyms index build` and a JSONL corpus round trip."""

import argparse
import json

import gymnasium as gym
import pytest

import textgyms  # noqa: F401  (registers the ids)
from textgyms.envs.search import cli
from textgyms.errors import ConfigError

ROWS_R1 = [
    {
        "id": "1",
        "contents": '"Marrow Lake"\nMarrow Lake is a reservoir that feeds the Ostrel '
        "river. Its dam was finished by the engineer Ada Quillfeather.",
    },
    {"id": "2", "contents": '"Ostrel"\nThe Ostrel is a river that flows into the Grey Sound.'},
    {
        "id": "3",
        "contents": '"Ada Quillfeather"\nAda Quillfeather was an engineer born in '
        "Pellmouth. She built the Marrow Lake dam.",
    },
]
ROWS_WEB = [
    {
        "id": "a",
        "url": "https://news.example/2020/dam",
        "title": "Dam opens",
        "text": "The Marrow Lake dam opened after years of work.",
    },
]
QA = [
    {"question": "Who finished the dam of Marrow Lake?", "answers": ["Ada Quillfeather"]},
    {"question": "Into what does the Ostrel flow?", "golden_answers": ["the Grey Sound"]},
]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def parse(argv):
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    cli.add_parser(sub)
    return parser.parse_args(argv)


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTGYMS_CACHE_DIR", str(tmp_path / "cache"))
    return (
        write_jsonl(tmp_path / "corpus.jsonl", ROWS_R1 + ROWS_WEB),
        write_jsonl(tmp_path / "qa.jsonl", QA),
    )


@pytest.mark.parametrize("backend", ["tantivy", "fts5"])
def test_index_build_then_env_round_trip(corpus, tmp_path, capsys, backend):
    path, qa = corpus
    args = parse(["index", "build", path, "--backend", backend])
    assert args.command == "index" and args.index_command == "build"
    assert cli.run(args) == 0
    assert "index of 4 documents" in capsys.readouterr().out
    (built,) = (tmp_path / "cache" / "search").iterdir()
    stamp = (built / "COMPLETE").stat().st_mtime_ns
    env = gym.make("textgyms/Search-v1", corpus=path, qa=qa, backend=backend)
    seen = set()
    for seed in range(12):
        env.reset(seed=seed)
        task = env.unwrapped.task
        seen.add(task.question)
        info = None
        for action in env.unwrapped.solve(task):
            info = env.step(action)[4]
        assert info["score"] == 1.0
    assert len(seen) == 2
    env.reset(seed=0)
    o = env.step("<search>who built the dam</search>")[0]
    assert "[1: Ada Quillfeather]" in o and "https://wiki.example/doc/3" in o
    o = env.step("<open>https://news.example/2020/dam</open>")[0]
    assert "L1: The Marrow Lake dam opened" in o
    assert (built / "COMPLETE").stat().st_mtime_ns == stamp  # opened, not rebuilt
    assert [p.name for p in (tmp_path / "cache" / "search").iterdir()] == [built.name]


def test_builtin_corpora_build(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TEXTGYMS_CACHE_DIR", str(tmp_path))
    assert cli.run(parse(["index", "build", "fictionweb", "--pages", "800"])) == 0
    assert cli.run(parse(["index", "build", "sample", "--backend", "fts5"])) == 0
    out = capsys.readouterr().out
    assert "tantivy index of" in out and "fts5 index of 947 documents" in out


def test_bad_corpus_is_reported(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "contents": "ok"}\n{not json\n')
    assert cli.run(parse(["index", "build", str(bad)])) == 2
    assert "bad.jsonl:2: not valid JSON" in capsys.readouterr().err
    missing = parse(["index", "build", str(tmp_path / "absent.jsonl")])
    assert cli.run(missing) == 2


def test_corpus_path_needs_a_qa_file(corpus):
    path, _ = corpus
    with pytest.raises(ConfigError, match="needs qa="):
        gym.make("textgyms/Search-v1", corpus=path)
