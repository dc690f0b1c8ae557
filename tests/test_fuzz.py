"""Hypothesis fuzzing of every registered id: random and structure-aware hostile actions.

Actions are derived generically from each env's ``info["tools"]`` schemas (nothing here names a
family): valid-looking tool calls in the tag form ``<name attr="...">main</name>`` and the JSON
form ``{"name": ..., "arguments": {...}}`` with hostile argument values (wrong types, huge and
non-finite numbers, deep or huge JSON, control characters, lone surrogates, bidi marks, 1 MB
strings), nested and unbalanced tags, raw junk, and the env's own valid moves (its random
``sample_action`` and its oracle's plan), plain or with hostile text spliced in, so episodes
also reach deep states. Every step of every episode is checked against the contract:

- ``step`` never raises on agent text;
- the observation and every transcript message are inside the spaces;
- the reward is finite and exactly what core.py documents (see :func:`check_rewards`);
- ``info["turn"]`` counts the steps and never passes ``max_turns``; the episode ends by then;
- the info dicts are JSON-able.

Budgets come from the Hypothesis profile (tests/conftest.py): ``ci`` in ``make test``, ``fuzz``
in ``make fuzz``, which also writes the counts to ``benchmarks/results/fuzz.json``.
"""

from __future__ import annotations

import importlib
import json
import math
import os
from collections import Counter
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import textgyms
from textgyms.core import TOOLS

ENV_IDS = textgyms.env_ids()
RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "fuzz.json"

# Env configurations every id is fuzzed under (drawn per example): the defaults (sparse rewards,
# no penalties); dense shaping with many invalid actions tolerated, so episodes run into the
# turn limit; and a small turn limit with an invalid-action penalty.
CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "dense": {"reward_mode": "dense", "max_invalid": 40, "max_turns": 12},
    "penalized": {"invalid_penalty": 0.25, "max_invalid": 4, "max_turns": 6},
}

# --- hostile text -------------------------------------------------------------------------------

ATOMS = (
    "", " ", "\x00", "\x07\x08\x1b[2J", "\r\n", "\r", "\t\v\f", "\x7f", "\x85", "\u2028",
    "\u202e", "\u200f", "\u2066", "\u200b", "\ufeff", "\ud800", "\udfff", "\U0001f984", "\U0010ffff",
    "İ", "ß", "ﬃ", "ǅ", "\u0301", "<", ">", "</", "/>", "<!--", "-->", "]]>", "&lt;", "&#0;", "```",
    "```python\n", '"', "'", "\\", "\\u0000", "{", "}", "[", "]", '{"name":', '"arguments":', "null",
    "NaN", "-Infinity", "1e309", "-0", "0x1F", "9" * 5000, "-" + "9" * 400, "%s%n", "${x}",
    "{{7*7}}", "../../../etc/passwd", "file:///etc/passwd", "http://", "#", "?", "DROP TABLE x;",
    "'; --", "<think>", "</think>", "<tool_call>", "</tool_call>", "ctrl-\x03", "__import__('os')",
)
_CHARS = st.characters(codec=None, exclude_categories=())  # every code point, surrogates too
small_text = st.one_of(
    st.text(_CHARS, max_size=30),
    st.sampled_from(ATOMS),
    st.lists(st.one_of(st.sampled_from(ATOMS), st.text(_CHARS, max_size=8)), max_size=6).map(
        "".join
    ),
)


def _repeat(unit: str, size: int) -> str:
    """``unit`` repeated to exactly ``size`` characters (a 1 MB string from a short seed)."""
    unit = unit or "x"
    return (unit * (size // len(unit) + 1))[:size]


_SIZES = st.one_of(st.sampled_from([65_535, 65_536, 65_537, 1_000_000]), st.integers(0, 70_000))
huge_text = st.builds(_repeat, small_text, _SIZES)
huge_json = st.one_of(
    st.integers(1, 200_000).map(lambda n: "[" * n + "]" * n),
    st.integers(1, 200_000).map(lambda n: '{"a":' * n + "1" + "}" * n),
    st.integers(1, 200_000).map(lambda n: "[" * n),
    st.integers(1, 100_000).map(lambda n: json.dumps(list(range(n)))),
    st.integers(1, 50_000).map(lambda n: '{"name":' * n),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | small_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(small_text, inner, max_size=4),
    max_leaves=12,
)
any_text = st.one_of(small_text, small_text, huge_text, huge_json)


def value_for(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Hostile values for one argument of a tool schema: its own type at its edges, mostly,
    and any other JSON value sometimes."""
    kind = prop.get("type")
    own = {
        "integer": st.integers() | st.integers(-(2**70), 2**70) | st.floats() | small_text,
        "number": st.floats() | st.integers(-(10**400), 10**400) | small_text,
        "boolean": st.booleans() | small_text,
        "array": st.lists(json_values, max_size=4) | huge_json | small_text,
        "object": st.dictionaries(small_text, json_values, max_size=4) | huge_json,
    }.get(kind, any_text)
    if prop.get("enum"):
        own = st.sampled_from(prop["enum"]) | own
    return st.one_of(own, own, own, json_values)


def _as_attr_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


@st.composite
def tool_call(draw: st.DrawFn, tools: list[dict[str, Any]]) -> str:
    """One call of a tool of the env, in a random form, with hostile arguments."""
    fn = draw(st.sampled_from(tools))["function"]
    props = fn["parameters"]["properties"]
    args = draw(st.fixed_dictionaries({}, optional={k: value_for(v) for k, v in props.items()}))
    if draw(st.integers(0, 4)) == 0:
        args[draw(small_text)] = draw(json_values)  # an argument the tool does not have
    # Mostly the right name, so that most calls get past the parser into the env's own code.
    name = draw(st.sampled_from([fn["name"]] * 3 + [fn["name"].upper(), fn["name"] + "x"]))
    if draw(st.booleans()):  # JSON form, arguments as an object or as a JSON string
        wire = json.dumps(args) if draw(st.booleans()) else args
        text = json.dumps({"name": name, "arguments": wire}, ensure_ascii=draw(st.booleans()))
        wrap = draw(st.sampled_from(["{}", "<tool_call>{}</tool_call>", "```json\n{}\n```"]))
        text = wrap.replace("{}", text, 1)
    else:  # tag form: the first parameter is the content, the others are attributes
        main = _as_attr_text(args.pop(next(iter(props), ""), ""))
        quote = draw(st.sampled_from(['"', "'", ""]))
        attrs = "".join(f" {k}={quote}{_as_attr_text(v)}{quote}" for k, v in args.items())
        text = f"<{name}{attrs}/>" if not main and draw(st.booleans()) else (
            f"<{name}{attrs}>{main}</{name}>"
        )
    around = st.just("") | small_text
    return draw(around) + text + draw(around)


def nested_tags(tools: list[dict[str, Any]]) -> st.SearchStrategy[str]:
    """Tags of the env's tools (and non-tools) nested, interleaved and left open."""
    names = st.sampled_from([t["function"]["name"] for t in tools] + ["think", "b", "tool_call"])
    return st.recursive(
        small_text,
        lambda inner: st.builds(
            lambda n, a, b, close: f"<{n}>{a}{b}" + (f"</{n}>" if close else ""),
            names, inner, inner, st.booleans(),
        )
        | st.lists(inner, min_size=2, max_size=3).map("".join),
        max_leaves=8,
    )


# An env move resolved at run time (the strategies cannot see the env's state): the env's own
# random action, or its oracle's k-th action; optionally with hostile text spliced in.
env_moves = st.tuples(
    st.sampled_from(["sample", "oracle"]), st.integers(0, 2**32), st.none() | small_text
)


def actions_for(tools: list[dict[str, Any]]) -> st.SearchStrategy[list[Any]]:
    """A list of actions (strings, or env moves to resolve) for one episode."""
    one = st.one_of(
        tool_call(tools), tool_call(tools), tool_call(tools), nested_tags(tools), any_text,
        env_moves, env_moves,
        st.lists(tool_call(tools) | env_moves.map(str), min_size=2, max_size=3).map("".join),
    )
    return st.lists(one, min_size=1, max_size=8)


# --- running and checking episodes --------------------------------------------------------------


def _variants(env_id: str) -> list[dict[str, Any]]:
    cls = gym.spec(env_id).entry_point
    if isinstance(cls, str):
        module, _, name = cls.partition(":")
        cls = getattr(importlib.import_module(module), name)
    return [dict(kw) for kw in cls.conformance_variants] or [{}]


_ENVS: dict[str, gym.Env] = {}
_TOOLS: dict[str, list[dict[str, Any]]] = {}
COUNTS: Counter[str] = Counter()
ERRORS: dict[str, Counter[str]] = {i: Counter() for i in ENV_IDS}  # info["error"] per step


@pytest.fixture(scope="module", autouse=True)
def _close_envs() -> Any:
    """Close the shared envs after the module: a Code env holds the process's sandbox server,
    which later tests in the same worker (tests/test_faults.py) expect to be released."""
    yield
    for env in _ENVS.values():
        env.close()
    _ENVS.clear()


def get_env(env_id: str, variant: dict[str, Any], config: str) -> gym.Env:
    """One env per (id, variant, config), reused across examples (reset on each)."""
    key = json.dumps([env_id, variant, config], sort_keys=True)
    if key not in _ENVS:
        _ENVS[key] = gym.make(env_id, **{**variant, **CONFIGS[config]})
    return _ENVS[key]


def tools_of(env_id: str) -> list[dict[str, Any]]:
    """The union of the tool schemas of every variant of ``env_id`` (by tool name)."""
    if env_id not in _TOOLS:
        seen: dict[str, dict[str, Any]] = {}
        for variant in _variants(env_id):
            for tool in get_env(env_id, variant, "default").reset(seed=0)[1][TOOLS]:
                seen.setdefault(tool["function"]["name"], tool)
        _TOOLS[env_id] = list(seen.values())
    return _TOOLS[env_id]


def resolve(env: gym.Env, move: Any, plan: list[str]) -> str:
    """The text of an action: a string as is, an env move played by the env itself."""
    if isinstance(move, str):
        return move
    kind, number, splice = move
    if kind == "oracle":
        text = plan[number % len(plan)] if plan else ""
    else:
        text = env.unwrapped.sample_action(np.random.default_rng(number))
    if splice is None:
        return text
    at = number % (len(text) + 1)
    return text[:at] + splice + text[at:]


def check_rewards(env: gym.Env, rewards: list[float], errors: list[Any], score: float) -> None:
    """The rewards of one finished episode are exactly what core.py documents.

    Sparse: 0 before the last step and the score on it, minus ``invalid_penalty`` on each invalid
    step (the last step's error may be the verdict's, so it may or may not be charged there).
    Dense: the shaping of each step, the last step topping it up to the score, so with no
    penalties the rewards sum to the score. A family's own ``Turn.penalty`` (Search's
    ``wrong_penalty``) is 0 unless configured; none is configured here.
    """
    base = env.unwrapped
    assert all(math.isfinite(r) for r in rewards), rewards
    assert 0.0 <= score <= 1.0
    assert getattr(base, "wrong_penalty", 0.0) == 0.0
    pen = base.invalid_penalty
    for r, err in zip(rewards[:-1], errors[:-1]):
        charged = pen if err is not None else 0.0
        if base.reward_mode == "sparse":
            assert r == -charged, (r, err)
        else:
            assert -1.0 - charged <= r <= 1.0, (r, err)  # shaping: growth of a [0, 1] potential
    last = rewards[-1]
    if base.reward_mode == "sparse":
        assert last in (score, score - pen), (last, score)
    if pen == 0.0:
        assert math.isclose(sum(rewards), score, abs_tol=1e-9), (rewards, score)


def check_step(env: gym.Env, obs: str, info: dict[str, Any], steps: int) -> None:
    """The per-step part of the contract."""
    base = env.unwrapped
    assert env.observation_space.contains(obs), (type(obs), len(obs))
    assert info["turn"] == steps <= base.max_turns
    json.dumps({k: v for k, v in info.items() if k != "messages"})  # JSON-able, like the API says
    last_action, last_obs = info["messages"][-2:]
    assert last_action["role"] == "assistant" and env.action_space.contains(last_action["content"])
    assert last_obs == {"role": "user", "content": obs}


def run_episode(env: gym.Env, seed: int, moves: list[Any], env_id: str) -> None:
    """Play ``moves``, then the env's own random moves alternating with ``moves`` again (so
    that episodes also go deep and reach the turn limit), until the episode ends; check every
    step."""
    obs, info = env.reset(seed=seed)
    assert env.observation_space.contains(obs) and info["turn"] == 0
    plan = env.unwrapped.solve(env.unwrapped.task)
    rewards: list[float] = []
    errors: list[Any] = []
    for steps in range(1, env.unwrapped.max_turns + 1):
        over = steps - 1 - len(moves)
        move = moves[steps - 1] if over < 0 else ("sample", seed + steps, None)
        if over >= 0 and over % 2:
            move = moves[over % len(moves)]
        action = resolve(env, move, plan)
        obs, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        errors.append(info["error"])
        check_step(env, obs, info, steps)
        if terminated or truncated:
            break
    assert terminated or truncated, "the episode outlived max_turns"
    assert truncated == (not terminated and info["turn"] == env.unwrapped.max_turns)
    assert "score" in info and isinstance(info["solved"], bool)
    json.dumps(info)
    check_rewards(env, rewards, errors, info["score"])
    COUNTS[env_id + " episodes"] += 1
    COUNTS[env_id + " steps"] += len(rewards)
    ERRORS[env_id].update(str(e) for e in errors)  # None: a call the env carried out


@st.composite
def episodes(
    draw: st.DrawFn, env_id: str, tools: list[dict[str, Any]]
) -> tuple[dict, str, int, list[Any]]:
    """A variant, a config, a seed and the moves of one episode of ``env_id``."""
    variant = draw(st.sampled_from(_variants(env_id)))
    config = draw(st.sampled_from(sorted(CONFIGS)))
    return variant, config, draw(st.integers(0, 2**31 - 1)), draw(actions_for(tools))


@pytest.mark.parametrize("env_id", ENV_IDS)
@given(data=st.data())
def test_fuzz_episodes(env_id: str, data: st.DataObject) -> None:
    """Random and structure-aware hostile episodes never break the contract."""
    # Envs are made (and their tools read) outside the strategies: a draw must not run env code.
    variant, config, seed, moves = data.draw(episodes(env_id, tools_of(env_id)))
    run_episode(get_env(env_id, variant, config), seed, moves, env_id)


def _deep_args_attr(tools: list[dict[str, Any]]) -> str:
    """A tag call putting 5,000 "[" in the env's first array or object argument, if any."""
    for tool in tools:
        props = tool["function"]["parameters"]["properties"]
        for arg, prop in props.items():
            if prop["type"] in ("array", "object"):
                name = tool["function"]["name"]
                return f'<{name} {arg}="{"[" * 5000}">x</{name}>'
    return "[" * 5000


def _surrogate_call(tools: list[dict[str, Any]]) -> str:
    """A tag call of the env's first tool with a lone surrogate in every string argument."""
    fn = tools[0]["function"]
    strings = [k for k, v in fn["parameters"]["properties"].items() if v["type"] == "string"]
    attrs = "".join(f' {k}="a\ud800"' for k in strings[1:])
    return f"<{fn['name']}{attrs}>\ud800\udfff</{fn['name']}>"


# Inputs that broke an env or a backend once (built from the env's tools), and other fixed edges.
REGRESSIONS = {
    # RecursionError escaped step(): json.loads of deep nesting in a tool's array argument
    # (Search's answer urls), in arguments sent as a JSON string, in a JSON call itself.
    "deep-array-attr": _deep_args_attr,
    "deep-args-string": lambda t: json.dumps({"name": t[0]["function"]["name"]})[:-1]
    + ', "arguments": "' + "[" * 5000 + '"}',
    "deep-args-object": lambda t: json.dumps({"name": t[0]["function"]["name"]})[:-1]
    + ', "arguments": {"a": ' + "[" * 3000 + "]" * 3000 + "}}",
    "nested-name": lambda t: '{"name":' * 9000,
    # UnicodeEncodeError escaped step(): a lone surrogate in Search's query, site or URL.
    "surrogate-args": _surrogate_call,
    "open-angles": lambda t: "<" * 70_000,
    "nul": lambda t: "\x00" * 1000,
}


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regressions(env_id: str, name: str) -> None:
    """Fixed hostile inputs, on every variant and config of every id."""
    action = REGRESSIONS[name](tools_of(env_id))
    for variant in _variants(env_id):
        for config in CONFIGS:
            run_episode(get_env(env_id, variant, config), 0, [action], env_id)


# Fuzz finds that needed one family's state to fail: (id, variant, config, seed, moves). Ids that
# are no longer registered are skipped.
EXACT = [
    # ValueError escaped step(): int() of a 5,000-digit VLAN id spliced into the oracle's config.
    ("textgyms/NetConfig-v4", {"family": "vlan", "difficulty": "hard"}, "default", 1125,
     [("oracle", 1123, "9" * 5000)]),
    # The same with a digit int() refuses although "²".isdigit() is True.
    ("textgyms/NetConfig-v4", {"family": "vlan", "difficulty": "hard"}, "default", 1125,
     [("oracle", 1123, "²")]),
    # UnicodeEncodeError escaped step(): a lone surrogate in a search query.
    ("textgyms/Search-v1", {"corpus": "fictionweb", "pages": 1500}, "default", 0,
     ["<search>\ud800</search>"]),
]


@pytest.mark.parametrize(("env_id", "variant", "config", "seed", "moves"), EXACT)
def test_exact_regressions(env_id: str, variant: dict, config: str, seed: int, moves: list) -> None:
    """Each falsifying example the fuzzer found, replayed as it was found."""
    if env_id not in ENV_IDS:
        pytest.skip(f"{env_id} is not registered")
    run_episode(get_env(env_id, variant, config), seed, moves, env_id)


# --- the vector path ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vec_pairs():
    """Per id, lazily: a multiprocessing vector and a serial one fed the same hostile batches."""
    pairs: dict[str, tuple[Any, Any]] = {}

    def get(env_id: str) -> tuple[Any, Any]:
        if env_id not in pairs:
            backends = ("multiprocessing", "serial")
            pair = tuple(textgyms.make_vec(env_id, 4, backend=b) for b in backends)
            for vec in pair:
                vec.reset(seed=5)
            pairs[env_id] = pair
        return pairs[env_id]

    yield get
    for pair in pairs.values():
        for vec in pair:
            vec.close()


def _batch_key(batch: Any) -> str:
    """A batch as JSON text, for byte-for-byte comparison across backends."""
    cols = batch.observations, batch.rewards.tolist(), batch.terminated.tolist()
    return json.dumps([*cols, batch.truncated.tolist(), batch.infos, batch.env_ids.tolist()])


@pytest.mark.parametrize("env_id", ENV_IDS)
@settings(max_examples=max(10, settings().max_examples // 5))  # each example is one batch step
@given(data=st.data())
def test_fuzz_vector_batches(env_id: str, vec_pairs: Any, data: st.DataObject) -> None:
    """Hostile batches through worker processes: no worker dies, the batch is inside the spaces
    and identical to the serial backend's (autoreset carries episodes across examples)."""
    tools = tools_of(env_id)
    one = st.one_of(tool_call(tools), nested_tags(tools), any_text)
    actions = data.draw(st.lists(one, min_size=4, max_size=4))
    mp, serial = vec_pairs(env_id)
    batch, ref = mp.step(actions), serial.step(actions)
    assert _batch_key(batch) == _batch_key(ref)
    assert all(mp.single_observation_space.contains(o) for o in batch.observations)
    assert np.isfinite(batch.rewards).all()
    limit = get_env(env_id, {}, "default").unwrapped.max_turns  # the vectors' kwargs
    assert all(0 <= info["turn"] <= limit for info in batch.infos)
    COUNTS[env_id + " vector steps"] += 4


def test_deep_json_parses_the_same_in_workers(vec_pairs: Any) -> None:
    """Regression: how deep a JSON call could nest before json's decoder gave up depended on the
    caller's stack depth and recursion limit, so an action near that depth parsed one way in
    the test process and another in a worker (found by test_fuzz_vector_batches)."""
    env_id = ENV_IDS[0]
    name = tools_of(env_id)[0]["function"]["name"]
    mp, serial = vec_pairs(env_id)
    for depth in range(80, 1200, 40):
        deep = "[" * depth + "]" * depth
        actions = [
            json.dumps({"name": name})[:-1] + f', "arguments": {{"x": {deep}}}}}',
            json.dumps({"name": name, "arguments": deep}),
            '{"name":' * depth,
            f"<{name}>{deep}</{name}>",
        ]
        assert _batch_key(mp.step(actions)) == _batch_key(serial.step(actions)), depth


@pytest.fixture(autouse=True)
def fuzz_report():
    """After each test: under the ``fuzz`` profile (or with ``TEXTGYMS_FUZZ_REPORT=path``),
    write how many episodes and steps were fuzzed so far per id (so far: a long run that is
    stopped early still leaves its counts)."""
    yield
    profile = settings.get_current_profile_name()
    path = os.environ.get("TEXTGYMS_FUZZ_REPORT") or (RESULTS if profile == "fuzz" else None)
    if path is None:
        return
    kinds = ("episodes", "steps", "vector steps")
    per_id: dict[str, dict[str, Any]] = {
        i: {k: COUNTS[f"{i} {k}"] for k in kinds} for i in ENV_IDS
    }
    report = {
        "profile": profile,
        "max_examples": settings().max_examples,
        "configs": CONFIGS,
        "per_id": per_id,
        "total": {k: sum(v[k] for v in per_id.values()) for k in kinds},
    }
    for i in ENV_IDS:
        per_id[i]["step errors"] = dict(ERRORS[i].most_common())
    Path(path).write_text(json.dumps(report, indent=2) + "\n")
