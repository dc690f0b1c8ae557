"""The fast paths of the core loop give exactly what the general paths give.

The parser's plain-tag path against the regex and the full scan, the in-place reseeding of
``np_random`` against :func:`seeded_generator` and the ``state`` setter, and Wordle's fused
scoring against the rules. Speed itself is measured in ``benchmarks/``, never here.
"""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import textgyms  # noqa: F401  (registers the ids)
from textgyms import actions
from textgyms.actions import Param, ParseError, ToolSpec, parse, parse_all
from textgyms.seeding import Seeder, seeded_generator

TOOLS = (
    ToolSpec("guess", "Guess.", (Param("word"),)),
    ToolSpec("search", "Search.", (Param("query"),)),
    ToolSpec("open", "Open.", (Param("url"), Param("line", "integer", required=False))),
    ToolSpec("back", "Back."),
)

# Text shaped like a tag call, with the characters that decide which path serves it.
PIECES = "<guess> </guess> <GUESS> </Guess> <search> </search> <open> </open> <back/> crane"
pieces = st.sampled_from(
    [*PIECES.split(), " ", "\n", "\u00a0", "<", ">", "`", "{", "}", '"name"', "ſ", "K", "x"]
)
texts = st.lists(pieces, max_size=8).map("".join)


def full_scan(text: str, tools: tuple[ToolSpec, ...]) -> actions.ToolCall | ParseError:
    """The last call by the general tag and JSON scan, with no fast path."""
    by_name, tag_re, _ = actions._toolset(tools)
    tag_calls, tag_err = actions._tag_calls(text, by_name, tag_re)
    json_calls, json_err = actions._json_calls(text, by_name)
    calls = tag_calls + json_calls
    if tag_calls and json_calls:  # parse_all's order: by position only when forms mix
        calls.sort(key=lambda c: c.start)
    if calls:
        return calls[-1]
    if tag_err or json_err:
        return ParseError("invalid", f"{tag_err or json_err} {actions.valid_forms(tools)}")
    return ParseError("format", f"No tool call found. {actions.valid_forms(tools)}")


@settings(max_examples=400, deadline=None)
@given(text=texts)
def test_parse_equals_the_full_scan(text):
    assert parse(text, TOOLS) == full_scan(text, TOOLS)


# Self-closing tags with attributes, well and badly formed, for the closed-tag path.
attr_pieces = st.sampled_from(
    [' url="a"', ' url=""', " url='b'", " url=c", ' line="3"', ' line="x"', ' line = "4"',
     ' url="a/b c"', "  ", "\t", "\u00a0", ' x="1"', '"', "=", "/", ' "name"', "<", ">",
     "ſ", " ", "-", ' u-rl="1"', ' line="2" line="5"']
)
closed_tags = st.builds(
    lambda name, attrs, end: f"<{name}{''.join(attrs)}{end}",
    st.sampled_from(["open", "OPEN", "back", "guess", "opens", "ope", "/open", "open\t"]),
    st.lists(attr_pieces, max_size=5),
    st.sampled_from(["/>", " />", ">", "/> ", "//>", "/>x"]),
)


@settings(max_examples=600, deadline=None)
@given(text=closed_tags)
def test_closed_tag_path_equals_the_full_scan(text):
    assert parse(text, TOOLS) == full_scan(text, TOOLS)
    assert parse(text, TOOLS, rule="first") == full_scan(text, TOOLS)


@pytest.mark.parametrize("text", [
    '<open url="a" url=c/>', '<open url="a" line=4/>', '<open url="<"/>', '<open url=">"/>',
    '<open url="a" x/>', '<open url="a" line="3" />x', '<open url="a"/><back/>',
    '<open url=\'{"name": "back", "arguments": {}}\'/>', '<open url="a" "name"/>',
    '<open/ url="a"/>', '<open\turl="a"/>', '<open url="a" line="3" line="x"/>',
    '<opens url="a"/>', '<open url="a b" line=" 7 "/>', ' <open url="a"/>',
])
def test_closed_tag_path_on_texts_it_must_leave_or_read_exactly(text):
    assert parse(text, TOOLS) == full_scan(text, TOOLS)


def test_the_closed_tag_path_serves_well_formed_calls():
    """The path must actually serve the common forms (else the test above proves nothing)."""
    by_name = actions._toolset(TOOLS)[0]
    for text, args in [('<open url="a" line="3"/>', {"url": "a", "line": 3}),
                       ('<open  url = "a b/c"  />', {"url": "a b/c", "line": None}),
                       ("<back/>", {})]:
        call = actions._closed_call(text, by_name)
        assert call == full_scan(text, TOOLS) == actions.ToolCall(call.name, args, "tag", 0)
    for text in ['<open line="x"/>', "<open url='a'/>", '<Open url="a"/>', '<open url="a">',
                 '<open url="a"/> ', "<open>"]:
        assert actions._closed_call(text, by_name) is None  # left to the full scan


# Open tags with attributes, a content and a close tag, well and badly formed, for the
# paired-tag path.
paired_tags = st.builds(
    lambda name, attrs, end, body, close: f"<{name}{''.join(attrs)}{end}{''.join(body)}{close}",
    st.sampled_from(["open", "OPEN", "back", "guess", "opens", "ope", "/open", "open\t"]),
    st.lists(attr_pieces, max_size=4),
    st.sampled_from([">", "/>", " >", ">>"]),
    st.lists(st.sampled_from(["a", "x y", " ", "\n", "```", "```py\n", "<", ">", "/", "{",
                              '"name"', "7", "<back/>", "</open>"]), max_size=4),
    st.sampled_from(["</open>", "</OPEN>", "</opens>", "</open >", "</back>", "</guess>", "",
                     "</open>x", " </open>", "</open><back/>"]),
)


@settings(max_examples=800, deadline=None)
@given(text=paired_tags)
def test_paired_tag_path_equals_the_full_scan(text):
    assert parse(text, TOOLS) == full_scan(text, TOOLS)
    calls = parse_all(text, TOOLS)
    assert parse(text, TOOLS, rule="first") == (calls if type(calls) is ParseError else calls[0])


def test_the_paired_tag_path_serves_well_formed_calls():
    """The path must actually serve the common forms (else the test above proves nothing)."""
    by_name = actions._toolset(TOOLS)[0]
    for text, args in [('<open line="3">a b</open>', {"url": "a b", "line": 3}),
                       ('<open line="3" >\n```\nx\n```\n</open>', {"url": "x", "line": 3}),
                       ("<open line=4>a</open>", {"url": "a", "line": 4}),
                       ('<guess x="1">a</guess>', None)]:
        call = actions._paired_call(text, by_name)
        if args is None:  # an invalid call: left to the full scan for its message
            assert call is None and isinstance(parse(text, TOOLS), ParseError)
            continue
        assert call == full_scan(text, TOOLS) == actions.ToolCall("open", args, "tag", 0)
    for text in ['<open line="3">a</Open>', '<open line="3"/>a</open>', "<open>a</open>",
                 '<open\tline="3">a</open>', '<open line="3">a</open> ', '<opens u="1">a</opens>',
                 '<open line="3">a<b</open>', '<open url="a" "name">b</open>']:
        assert actions._paired_call(text, by_name) is None  # left to the full scan


@settings(max_examples=200, deadline=None)
@given(body=st.text(max_size=20), name=st.sampled_from(["guess", "search"]))
def test_plain_tag_path_equals_the_simple_regex(body, name):
    text = f"<{name}>{body}</{name}>"
    entry = actions._TOOLSETS.get(id(TOOLS))
    plain = actions._plain_call(text, entry[2]) if entry else None
    m = actions._toolset(TOOLS)[2].fullmatch(text)
    expected = actions._simple_call(m, actions._toolset(TOOLS)[0]) if m else None
    if plain is not None:  # the plain path serves a subset of what the regex serves
        assert plain == expected
    if m is not None:
        assert parse(text, TOOLS) == expected == parse_all(text, TOOLS)[-1]


@pytest.mark.parametrize(
    "text", ["<gueſs>crane</gueſs>", "x <gueſs>crane</gueſs>", "<GUEſS>crane</GUEſS> ok"]
)
def test_unicode_case_folded_tag_names_are_the_tool(text):
    # The tag regex matches "ſ" as "s" (Unicode case folding); str.lower does not map it, and
    # resolving the name by lower() raised KeyError from env.step on agent text.
    call = parse(text, TOOLS)
    assert call == actions.ToolCall("guess", {"word": "crane"}, "tag", call.start)
    env = gym.make("textgyms/Wordle-v0")
    env.reset(seed=0)
    *_, info = env.step(text)
    assert info["error"] is None and info["guesses"] == 1


def test_kelvin_sign_names_the_tool_back():
    assert parse("<bac\u212a/>", TOOLS) == actions.ToolCall("back", {}, "tag", 0)


SEEDS = [0, 1, 7, 2**31 - 1, 2**64 + 3, 2**127, 2**128 - 1, np.int64(5), np.uint32(9)]


@pytest.mark.parametrize("native", [True, False])
def test_seeder_state_equals_seeded_generator(native):
    seeder = Seeder()
    if not native:
        seeder._words = seeder._buffer = None  # the state-setter path
    for seed in SEEDS:
        generator = seeder.seed(seed)
        assert generator.bit_generator.state == seeded_generator(seed).bit_generator.state
        # A half-used 64-bit draw must not leak into the next seed's stream.
        generator.integers(0, 2**32, dtype=np.uint32)
        assert generator.bit_generator.state["has_uint32"] == 1
    for seed in SEEDS:
        seeder.seed(seed).integers(0, 10, size=3, dtype=np.uint32)
        a = seeder.seed(seed).integers(0, 2**32, size=5, dtype=np.uint32)
        b = seeded_generator(seed).integers(0, 2**32, size=5, dtype=np.uint32)
        assert np.array_equal(a, b)


def test_native_seeding_is_used_where_the_layout_allows():
    # This machine (x86-64/aarch64 numpy) has the native layout; elsewhere the setter serves.
    import sys

    if sys.byteorder == "little":
        assert Seeder()._words is not None


def test_env_reseeds_after_pickling():
    env = gym.make("textgyms/Wordle-v0").unwrapped
    env.reset(seed=3)
    first = env.np_random.random(3)
    copy = pickle.loads(pickle.dumps(env))
    copy.reset(seed=3)
    assert np.array_equal(copy.np_random.random(3), first)
    assert copy.task == env.task


def test_reset_info_and_episode_fields():
    env = gym.make("textgyms/Wordle-v0").unwrapped
    obs, info = env.reset(seed=11)
    assert info == {
        "task_id": env.task.task_id,
        "turn": 0,
        "error": None,
        "obs_kind": "prompt",
        "messages": [{"role": "user", "content": obs}],
        "tools": env.tools[0].schema() and [env.tools[0].schema()],
    }
    assert info["messages"] is not env._ep.messages  # a copy: the next step must not change it
    env.step("<guess>crane</guess>")
    assert len(info["messages"]) == 1 and len(env._ep.messages) == 3


# Words over a 3-letter alphabet: repeated letters everywhere, so every branch of the fused
# marking (green, yellow while copies are left, gray once they are used up) is exercised.
def small_words(n: int) -> st.SearchStrategy[str]:
    return st.text(alphabet="abc", min_size=n, max_size=n)


def wordle_state_agrees_with_the_rules(secret: str, guesses: list[str]) -> None:
    """Play ``guesses`` through ``WordleState.add`` and check everything it keeps against the
    reference rules (``rules.feedback`` and ``verify.progress``), guess by guess."""
    from textgyms.envs.wordle.env import WordleState, render_board
    from textgyms.envs.wordle.generate import WordleTask
    from textgyms.envs.wordle.rules import feedback
    from textgyms.envs.wordle.verify import progress

    state = WordleState(WordleTask(secret, length=len(secret), max_guesses=12))
    lines, grays, found, greens = [], set(), set(), set()
    for i, guess in enumerate(guesses, 1):
        obs = state.add(guess)
        fb = feedback.__wrapped__(guess, secret)
        lines.append(f"{i}. {' '.join(guess.upper())}   {' '.join('_YG'[m] for m in fb)}\n")
        grays |= {c for c, m in zip(guess, fb) if not m}
        found |= {c for c, m in zip(guess, fb) if m}
        greens |= {j for j, m in enumerate(fb) if m == 2}
        assert state.history[-1] == (guess, fb)
        assert state.board == "".join(lines)
        # letters marked gray and never green or yellow: the board's absent letters
        assert state.absent == grays - found
        assert state.found == found and state.greens == greens
        assert state.revealed() == progress(secret, state.history)
        absent = " ".join(sorted(grays - found)).upper() or "-"
        assert obs == render_board(state) == (
            f"{''.join(lines)}Letters not in the word: {absent}. Guesses left: {12 - i}."
        )


@settings(max_examples=400, deadline=None)
@given(data=st.data(), n=st.integers(4, 7))
def test_wordle_state_equals_the_rules(data, n):
    secret = data.draw(small_words(n))
    guesses = data.draw(st.lists(small_words(n), min_size=1, max_size=6))
    wordle_state_agrees_with_the_rules(secret, guesses)


@settings(max_examples=400, deadline=None)
@given(data=st.data(), n=st.integers(4, 7))
def test_wordle_state_of_guesses_without_repeats_equals_the_rules(data, n):
    """The one-pass marking of guesses whose letters are all different (any secret)."""
    secret = data.draw(st.text(alphabet="abcdefgh", min_size=n, max_size=n))
    guesses = data.draw(
        st.lists(st.permutations("abcdefgh").map(lambda p: "".join(p[:n])), min_size=1,
                 max_size=6)
    )
    wordle_state_agrees_with_the_rules(secret, guesses)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), n=st.integers(4, 7))
def test_wordle_state_lists_absent_letters_of_the_whole_alphabet(data, n):
    """The absent letters' text is looked up by parts of the alphabet: any letters, any set."""
    letters = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=n, max_size=n)
    secret = data.draw(letters)
    wordle_state_agrees_with_the_rules(secret, data.draw(st.lists(letters, min_size=1, max_size=8)))


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_wordle_state_of_listed_words_equals_the_rules(data):
    from textgyms.envs.wordle.generate import answer_pool

    words = st.sampled_from(sorted(answer_pool(5, "common", "all"))[:400])
    secret = data.draw(words)
    wordle_state_agrees_with_the_rules(secret, data.draw(st.lists(words, min_size=1, max_size=6)))


WORDLE_QUICK_ACTIONS = [
    "<guess>crane</guess>", "<guess>slate</guess>", "<guess>speed</guess>", "<guess>xxxxx</guess>",
    "<guess> crane</guess>", "<GUESS>crane</GUESS>", "<guess>crane</guess> ", "junk",
]


@settings(max_examples=150, deadline=None)
@given(
    kwargs=st.sampled_from([{}, {"hard_mode": True}, {"reward_mode": "dense"}, {"max_guesses": 3}]),
    seed=st.integers(0, 50),
    actions=st.lists(st.sampled_from(WORDLE_QUICK_ACTIONS), max_size=8),
)
def test_wordle_respond_quick_is_respond(kwargs, seed, actions):
    """Wherever Wordle's quick path answers, it gives respond's Turn and leaves the state as
    respond leaves it; where it declines, it leaves the state untouched."""
    import copy

    def fields(state):
        return state.history, state.board, state.absent, state.found, state.greens

    env = gym.make("textgyms/Wordle-v0", **kwargs).unwrapped
    env.reset(seed=seed)
    state = env.state
    for action in actions:
        want = copy.deepcopy(state)
        turn = env.respond(want, action)
        untouched = copy.deepcopy(state)
        quick = env.respond_quick(state, action)
        if quick is None:
            assert fields(state) == fields(untouched)
            env.respond(state, action)
        elif type(quick) is tuple:
            assert turn[:6] == (quick[0], 0.0, False, None, None, "tool") and turn.penalty == 0
            assert turn.info == quick[1]
        else:
            assert type(quick) is type(turn) and quick == turn
        assert fields(state) == fields(want)


def test_a_subclass_that_overrides_respond_is_not_bypassed_by_the_quick_path():
    from textgyms.envs.wordle.env import WordleEnv

    class LoudWordle(WordleEnv):
        def respond(self, state, action):
            turn = super().respond(state, action)
            return turn._replace(observation=turn.observation.upper())

    class QuietLoudWordle(LoudWordle):
        def respond_quick(self, state, action):
            return None

    for cls, quick in ((WordleEnv, True), (LoudWordle, False), (QuietLoudWordle, True)):
        env = cls()
        env.reset(seed=0)
        guess = "slate" if env.task.secret == "crane" else "crane"
        obs, *_ = env.step(f"<guess>{guess}</guess>")
        assert env._quick is quick
        assert ("Letters not in the word" in obs) is (cls is WordleEnv)
