"""The one action parser: tags, JSON tool calls, typing, errors, and its worst cases."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textgyms.actions import Param, ParseError, ToolCall, ToolSpec, parse, parse_all, tool_schemas

SEARCH = ToolSpec(
    "search",
    "Search the web.",
    (Param("query"), Param("page", "integer", required=False, default=1)),
)
OPEN = ToolSpec(
    "open", "Open a URL.", (Param("target"), Param("line", "integer", required=False, default=0))
)
BACK = ToolSpec("back", "Go back.")
RUN = ToolSpec("run", "Run code.", (Param("code"),))
TOOLS = (SEARCH, OPEN, BACK, RUN)


def test_tag_with_reasoning_and_attribute():
    call = parse('I think... <open line="40">https://wiki.example/Paris</open> done', TOOLS)
    assert call == ToolCall("open", {"target": "https://wiki.example/Paris", "line": 40}, "tag", 11)


def test_defaults_filled_and_last_call_wins():
    call = parse("<search>a</search> then <search page='2'>b</search>", TOOLS)
    assert call.args == {"query": "b", "page": 2}
    assert parse("<search>a</search> <search>b</search>", TOOLS, rule="first").args["query"] == "a"


def test_self_closing_tool_and_unknown_tags_ignored():
    call = parse("<think>maybe <b>bold</b></think><back/>", TOOLS)
    assert call.name == "back" and call.args == {}


def test_fenced_code_is_unwrapped():
    call = parse("<run>\n```python\nprint(1)\nprint(2)\n```\n</run>", TOOLS)
    assert call.args["code"] == "print(1)\nprint(2)"


def test_json_tool_call_with_string_arguments_and_wrappers():
    text = '<tool_call>{"name": "search", "arguments": "{\\"query\\": \\"x y\\", \\"page\\": 3}"}</tool_call>'
    call = parse(text, TOOLS)
    assert (call.name, call.form, call.args) == ("search", "json", {"query": "x y", "page": 3})


def test_tag_and_json_mixed_order_is_by_position():
    text = '{"name": "search", "arguments": {"query": "first"}} <search>second</search>'
    assert [c.args["query"] for c in parse_all(text, TOOLS)] == ["first", "second"]


@pytest.mark.parametrize(
    "text, error, needle",
    [
        ("", "format", "No tool call found"),
        ("just prose", "format", "Valid actions"),
        ("<search>never closed", "invalid", "never closed"),
        ('{"name": "rm", "arguments": {}}', "invalid", "Unknown tool 'rm'"),
        ('<open line="abc">u</open>', "invalid", "must be integer"),
        ("<open>u</open><open bogus='1'>v</open>", None, None),
        ("<search></search>", "invalid", "missing argument 'query'"),
        ('{"name": "search", "arguments": [1]}', "invalid", "must be a JSON object"),
        ('{"name": "search", "arguments": "{not json"}', "invalid", "not valid JSON"),
        ('{"name": "search", "arguments": {"query": "x"', "invalid", "could not be decoded"),
    ],
)
def test_errors_explain_what_is_wrong(text, error, needle):
    result = parse(text, TOOLS)
    if error is None:  # a bad call next to a good one: the good one is used
        assert isinstance(result, ToolCall) and result.args["target"] == "u"
        return
    assert isinstance(result, ParseError)
    assert result.error == error and needle in result.message
    assert "<search>query</search>" in result.message  # the valid forms are always shown


def test_schemas_are_openai_function_format():
    schema = tool_schemas([SEARCH])[0]
    assert schema["type"] == "function"
    fn = schema["function"]
    assert fn["name"] == "search" and fn["parameters"]["required"] == ["query"]
    assert fn["parameters"]["properties"]["page"] == {
        "type": "integer",
        "description": "",
        "default": 1,
    }
    json.dumps(schema)


def test_adversarial_megabyte_inputs_are_linear():
    # 140k unclosed opening tags and 90k JSON starts: a backtracking parser would take minutes.
    assert isinstance(parse("<search>" * 140_000, TOOLS), ParseError)
    assert isinstance(parse('{"name":' * 120_000, TOOLS), ParseError)
    nested = '{"name": "search", "arguments": ' + "[" * 100_000
    assert isinstance(parse(nested, TOOLS), ParseError)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_never_raises_on_any_text(text):
    result = parse(text, TOOLS)
    assert isinstance(result, (ToolCall, ParseError))


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=st.characters(blacklist_characters="<>"), min_size=1, max_size=80).filter(
        str.strip
    )
)
def test_tag_and_json_forms_agree(query):
    by_tag = parse(f"<search>{query}</search>", TOOLS)
    by_json = parse(json.dumps({"name": "search", "arguments": {"query": query.strip()}}), TOOLS)
    assert isinstance(by_tag, ToolCall) and isinstance(by_json, ToolCall)
    assert by_tag.args == by_json.args
