"""The one parser of agent text: XML-style tool tags and JSON tool calls.

An action is a model's raw completion. It may contain reasoning, then one or more tool calls in
either form:

* XML-style tags, the convention of Search-R1 and most RL recipes:
  ``<search>capital of France</search>``, ``<open line="40">https://...</open>``, ``<back/>``.
  The tag name is the tool name, the content is the tool's main argument and any other
  arguments are attributes. A content that is exactly one fenced block (```` ```py ... ``` ````)
  is unwrapped, so code can be written the way models like to write it.
* JSON tool calls, what chat APIs with native tool calling produce:
  ``{"name": "search", "arguments": {"query": "..."}}`` (``arguments`` may also be a JSON string,
  as in the OpenAI wire format), optionally inside ``<tool_call>...</tool_call>`` or a fence.

Tags that do not name a tool (``<think>``, ``<b>``) are reasoning and are ignored. Parsing is
linear in the length of the text (no backtracking regex over the whole action), so a megabyte of
adversarial text costs milliseconds. The parser never raises on agent text: it returns a
:class:`ParseError` that says what was wrong and what the valid forms are.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

__all__ = ["Param", "ToolSpec", "ToolCall", "ParseError", "parse", "parse_all", "tool_schemas"]

_JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object"}


@dataclass(frozen=True)
class Param:
    """One argument of a tool: its JSON-schema type, description and default."""

    name: str
    type: str = "string"
    description: str = ""
    required: bool = True
    default: Any = None
    enum: tuple[Any, ...] | None = None

    def __post_init__(self) -> None:
        if self.type not in _JSON_TYPES:
            raise ValueError(f"param {self.name!r}: type {self.type!r} is not one of {_JSON_TYPES}")


@dataclass(frozen=True)
class ToolSpec:
    """A tool the agent can call. ``params[0]`` is the main argument (the tag's content)."""

    name: str
    description: str
    params: tuple[Param, ...] = ()

    @functools.cached_property
    def main(self) -> Param | None:
        """The argument carried by the tag's content, if the tool takes any."""
        return self.params[0] if self.params else None

    def schema(self) -> dict[str, Any]:
        """The tool in OpenAI function-calling format."""
        props: dict[str, Any] = {}
        for p in self.params:
            prop: dict[str, Any] = {"type": p.type, "description": p.description}
            if p.enum is not None:
                prop["enum"] = list(p.enum)
            if not p.required and p.default is not None:
                prop["default"] = p.default
            props[p.name] = prop
        required = [p.name for p in self.params if p.required]
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {"type": "object", "properties": props, "required": required},
            },
        }

    def example(self) -> str:
        """A one-line example of the tag form, used in feedback messages."""
        if self.main is None:
            return f"<{self.name}/>"
        return f"<{self.name}>{self.main.name}</{self.name}>"


class ToolCall(NamedTuple):
    """A parsed tool call: the tool name, its typed arguments and where it started in the text.

    A NamedTuple rather than a dataclass: one is built on every env step.
    """

    name: str
    args: Mapping[str, Any] = {}
    form: Literal["tag", "json"] = "tag"
    start: int = 0


_new_tuple = tuple.__new__  # builds a NamedTuple without its Python-level __new__


class ParseError(NamedTuple):
    """Why an action could not be parsed; ``message`` is shown to the agent as feedback."""

    error: str  # "format" | "invalid" | "too_long"
    message: str


def tool_schemas(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """JSON schemas of ``tools`` in OpenAI function format (the ``info["tools"]`` value)."""
    return [t.schema() for t in tools]


def valid_forms(tools: Sequence[ToolSpec]) -> str:
    """A short description of the valid action forms, for feedback observations."""
    tags = ", ".join(t.example() for t in tools)
    first = tools[0]
    arg = {first.main.name: "..."} if first.main else {}
    js = json.dumps({"name": first.name, "arguments": arg})
    return f"Valid actions: {tags} or a JSON tool call such as {js}."


def parse(
    text: str, tools: Sequence[ToolSpec], rule: Literal["last", "first"] = "last"
) -> ToolCall | ParseError:
    """Parse one tool call from ``text``; when several appear, ``rule`` picks one."""
    entry = _TOOLSETS.get(id(tools))  # inlined _toolset: this runs every step
    if entry is not None and entry[0] is tools:
        call = _fast_call(text, entry)
        if call is not None:
            return call
    calls = parse_all(text, tools)
    if isinstance(calls, ParseError):
        return calls
    return calls[-1] if rule == "last" else calls[0]


def parse_all(text: str, tools: Sequence[ToolSpec]) -> list[ToolCall] | ParseError:
    """Every tool call in ``text`` in order of appearance, or the first error that explains why
    there is none. A malformed call is reported only when no valid call is present."""
    by_name, tag_re, simple_re = _toolset(tools)
    simple = simple_re.fullmatch(text) if len(text) < 512 else None
    if simple is not None:  # the whole action is one call of a one-string-argument tool
        return [_simple_call(simple, by_name)]
    tag_calls, tag_err = _tag_calls(text, by_name, tag_re)
    json_calls, json_err = _json_calls(text, by_name) if '"name"' in text else ([], None)
    calls = tag_calls + json_calls
    if tag_calls and json_calls:
        calls.sort(key=lambda c: c.start)
    if calls:
        return calls
    if tag_err or json_err:
        return ParseError("invalid", f"{tag_err or json_err} {valid_forms(tools)}")
    return ParseError("format", f"No tool call found. {valid_forms(tools)}")


def _fast_call(text: str, entry: tuple) -> ToolCall | None:
    """The call by the first fast path that serves ``text`` (each gives what the full scan
    gives, from string operations or one anchored regex), else None. ``entry``: the
    toolset's :data:`_TOOLSETS` entry."""
    by_name = entry[1][0]
    if text[-2:] == "/>":  # (none of the other paths serves a text that ends so)
        return _closed_call(text, by_name) if len(text) < 512 else None
    if len(text) < 512:
        call = _plain_call(text, entry[2])
        if call is not None:
            return call
    call = _paired_call(text, by_name)  # (a tag with attributes: the regex below needs none)
    if call is None and len(text) < 512:
        m = entry[1][2].fullmatch(text)
        if m is not None:  # the whole action is one call of a one-string-argument tool
            return _simple_call(m, by_name)
    return call


def _simple_call(m: re.Match[str], by_name: Mapping[str, ToolSpec]) -> ToolCall:
    """The call matched by a toolset's simple regex (same result as the full scan)."""
    spec = _tool(by_name, m.group(1))
    args = {spec.params[0].name: m.group(2).strip()}
    return _new_tuple(ToolCall, (spec.name, args, "tag", m.start(1) - 1))


def _plain_call(text: str, plain: Mapping[str, tuple[str, str, str]]) -> ToolCall | None:
    """The call when ``text`` is exactly ``<name>content</name>`` of a one-string-argument tool,
    in the tool's own spelling and without surrounding space (what policies nearly always
    send); else None. The same call as the simple regex gives for such text, from a few string
    operations instead of a regex match (about a third of a step's parsing cost)."""
    end = text.find(">")
    found = plain.get(text[: end + 1])
    if found is None:
        return None
    name, main, close = found
    if not text.endswith(close):
        return None
    body = text[end + 1 : len(text) - len(close)]
    if not body.isalpha():  # one word (the common case) needs none of the checks below
        # The characters the simple regex refuses in a content (tags, fences, JSON).
        if "<" in body or ">" in body or "`" in body or "{" in body:
            return None
        body = body.strip()
        if not body:
            return None
    return _new_tuple(ToolCall, (name, {main: body}, "tag", 0))


def _closed_call(text: str, by_name: Mapping[str, ToolSpec]) -> ToolCall | None:
    """The call when ``text`` is exactly one self-closing tag of a tool in its own spelling,
    ``<name a="x" b="y"/>`` with double-quoted attributes and valid arguments (how policies
    write a call with several arguments); else None, for the full scan. For such text the
    full scan finds one tag, named by the text up to the first space or ``/`` (no tool name
    holds either, so no longer name matches there), no JSON call (no ``"name"``), and
    :data:`_ATTR` finds exactly the pairs split out here: the same call, without the scan."""
    if text[:1] != "<" or text[-2:] != "/>" or text.count(">") != 1 or text.count("<") != 1:
        return None
    if '"name"' in text:
        return None
    space = text.find(" ")
    end = text.find("/") if space < 0 else min(space, text.find("/"))
    spec = by_name.get(text[1:end])
    if spec is None:
        return None
    parts = text[end:-2].split('"')  # attribute names and values alternate, then the rest
    if len(parts) % 2 == 0 or parts[-1].strip():
        return None
    raw = {}
    for k in range(0, len(parts) - 1, 2):
        m = _ATTR_NAME.fullmatch(parts[k])
        if m is None:
            return None
        raw[m.group(1)] = parts[k + 1]
    args = _typed_args(spec, raw)
    return None if isinstance(args, str) else _new_tuple(ToolCall, (spec.name, args, "tag", 0))


def _paired_call(text: str, by_name: Mapping[str, ToolSpec]) -> ToolCall | None:
    """The call when ``text`` is exactly an open tag of a tool in its own spelling with
    attributes, its content and its close tag, and no other ``<`` or ``>``
    (``<apply_config device="R1">lines</apply_config>``, how policies write an edit); else
    None, for the full scan. For such text the full scan's tag regex finds these two tags and
    no other (the name ends at the space, and no tool name holds one), pairs them, finds no
    JSON call (no ``"name"``) and builds the call from the same content and attribute text
    with :func:`_make_call`, as here; an invalid call is left to it for its message."""
    if text[:1] != "<" or text.count("<") != 2 or text.count(">") != 2 or '"name"' in text:
        return None
    gt = text.find(">")
    space = text.find(" ", 1, gt)
    if space < 0:
        return None
    name = text[1:space]
    spec = by_name.get(name)
    if spec is None:
        return None
    close = f"</{name}>"  # (with the counts above, its "<" is the text's second one)
    # (an open tag ending in "/" closes itself: the full scan reads it so)
    if text[gt - 1] == "/" or not text.endswith(close):
        return None
    call = _make_call(spec, text[gt + 1:len(text) - len(close)], text[space:gt], 0)
    return None if type(call) is str else call


def _tool(tools: Mapping[str, ToolSpec], matched: str) -> ToolSpec:
    """The tool a tag name matched by the toolset regexes stands for.

    The regexes match names case-insensitively with Unicode case folding, under which "ſ"
    (long s) matches "s" and "K" (Kelvin sign) matches "k"; ``str.lower`` maps neither, so
    such a name is resolved by the same case-insensitive comparison the regex made.
    """
    spec = tools.get(matched.lower())
    if spec is None:
        spec = next(t for n, t in tools.items() if re.fullmatch(re.escape(n), matched, re.I))
    return spec


# --- XML-style tags -------------------------------------------------------------------------

_ATTR_KEY = r"([A-Za-z_][\w-]*)\s*=\s*"  # an attribute's name and its "="
_ATTR = re.compile(_ATTR_KEY + r"""(?:"([^"]*)"|'([^']*)'|([^\s"'>/]+))""")
_ATTR_NAME = re.compile(r"\s*" + _ATTR_KEY)  # what precedes a double-quoted value
_FENCE = re.compile(r"^```[\w+.-]*[ \t]*\n(.*?)\n?```$", re.S)
_Toolset = tuple[dict[str, ToolSpec], re.Pattern[str], re.Pattern[str]]
# id(tools) -> (tools, toolset, {"<name>": (name, main argument, "</name>")} of the tools the
# simple regex serves)
_TOOLSETS: dict[int, tuple[Sequence[ToolSpec], _Toolset, dict[str, tuple[str, str, str]]]] = {}
_NEVER = re.compile(r"(?!)(x)(x)")


def _toolset(tools: Sequence[ToolSpec]) -> _Toolset:
    """The tools by name and two regexes, built once per tool tuple.

    The tag regex matches "<", an optional "/", a tool name ending at a space, "/" or ">",
    then anything up to the next ">": no nested quantifiers, so no backtracking, and tags that
    are not tools (``<think>``) are skipped inside the regex engine. The simple regex matches
    an action that is exactly one call of a tool whose only argument is a string (the common
    case in RL rollouts): it gives the same result as the full scan, several times faster.
    """
    entry = _TOOLSETS.get(id(tools))
    if entry is None or entry[0] is not tools:  # ids are reused once an object is freed
        names = "|".join(re.escape(t.name) for t in sorted(tools, key=lambda t: -len(t.name)))
        tag_re = re.compile(rf"<(/?)({names})(?=[\s/>])([^<>]*)>", re.IGNORECASE)
        simple_tools = [
            t
            for t in tools
            if len(t.params) == 1 and t.params[0].type == "string" and t.params[0].enum is None
        ]
        simple = [re.escape(t.name) for t in simple_tools]
        simple_re = (
            re.compile(
                rf"\s*<({'|'.join(simple)})>([^<>`{{]*[^<>`{{\s][^<>`{{]*)</\1>\s*", re.IGNORECASE
            )
            if simple
            else _NEVER
        )
        plain = {f"<{t.name}>": (t.name, t.params[0].name, f"</{t.name}>") for t in simple_tools}
        entry = (tools, ({t.name: t for t in tools}, tag_re, simple_re), plain)
        if len(_TOOLSETS) > 256:
            _TOOLSETS.clear()
        _TOOLSETS[id(tools)] = entry
    return entry[1]


def _tag_calls(
    text: str, tools: Mapping[str, ToolSpec], tag_re: re.Pattern[str]
) -> tuple[list[ToolCall], str | None]:
    """Pair open and close tags of known tools in one linear scan."""
    calls: list[ToolCall] = []
    error: str | None = None
    open_tag: tuple[str, int, int, str] | None = None  # name, start, content start, attrs
    for m in tag_re.finditer(text):
        closing, name, attrs = m.groups()
        name = name.lower()
        if not closing and attrs.endswith("/"):
            call = _make_call(_tool(tools, name), "", attrs, m.start())
            calls, error = _collect(calls, call, error)
        elif not closing:
            open_tag = (name, m.start(), m.end(), attrs)
        elif open_tag is not None and open_tag[0] == name:
            body = text[open_tag[2] : m.start()]
            call = _make_call(_tool(tools, name), body, open_tag[3], open_tag[1])
            calls, error = _collect(calls, call, error)
            open_tag = None
    if open_tag is not None and error is None:
        error = f"<{open_tag[0]}> is never closed (write <{open_tag[0]}>...</{open_tag[0]}>)."
    return calls, error


def _collect(
    calls: list[ToolCall], call: ToolCall | str, error: str | None
) -> tuple[list[ToolCall], str | None]:
    if isinstance(call, str):
        return calls, error or call
    calls.append(call)
    return calls, error


def _make_call(spec: ToolSpec, body: str, attrs: str, start: int) -> ToolCall | str:
    """Build a call from a tag's content and attributes, or return an error message."""
    raw: dict[str, Any] = {}
    if attrs and attrs != "/":
        for a in _ATTR.finditer(attrs):
            raw[a.group(1)] = next(g for g in a.groups()[1:] if g is not None)
    body = body.strip()
    if body.startswith("```"):
        fenced = _FENCE.match(body)
        body = fenced.group(1) if fenced else body
    main = spec.main
    if main is not None and body:
        if not raw and main.type == "string" and len(spec.params) == 1:
            return ToolCall(spec.name, {main.name: body}, "tag", start)  # the common case, fast
        raw[main.name] = body
    args = _typed_args(spec, raw)
    if isinstance(args, str):
        return args
    return ToolCall(spec.name, args, "tag", start)


# --- JSON tool calls ------------------------------------------------------------------------

_JSON_START = re.compile(r'\{\s*"name"\s*:')
_DECODER = json.JSONDecoder()
# Deepest JSON nesting accepted in a tool call. json's C decoder raises RecursionError at a depth
# that depends on the recursion limit and on how deep the caller's stack already is (both differ
# between an env stepped in-process, under a test runner, or in a worker), so the same action
# could parse differently; deeper text is refused here, by a check that depends on the text only.
_MAX_DEPTH = 100
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[{\]}]')


def _many_openers(text: str) -> bool:
    """False for text with too few brackets to nest past _MAX_DEPTH (nearly all text: cheap)."""
    return text.count("[") + text.count("{") > _MAX_DEPTH


def _too_deep(text: str, start: int = 0) -> bool:
    """True when the JSON value at ``start`` nests deeper than ``_MAX_DEPTH``: a scan of its
    brackets outside strings that stops where the value closes, or past the limit."""
    depth = 0
    for token in _JSON_TOKEN.finditer(text, start):
        char = text[token.start()]
        if char in "[{":
            depth += 1
            if depth > _MAX_DEPTH:
                return True
        elif char != '"':
            depth -= 1
            if depth <= 0:
                return False
    return False


def _loads(text: str) -> Any:
    """``json.loads``, raising RecursionError for nesting past ``_MAX_DEPTH`` in every process."""
    if _many_openers(text) and _too_deep(text, len(text) - len(text.lstrip())):
        raise RecursionError("JSON nested too deeply")
    return json.loads(text)


def _json_calls(text: str, tools: Mapping[str, ToolSpec]) -> tuple[list[ToolCall], str | None]:
    """Decode every ``{"name": ..., "arguments": ...}`` object that starts in ``text``."""
    calls: list[ToolCall] = []
    error: str | None = None
    pos = 0
    deep = _many_openers(text)
    while (m := _JSON_START.search(text, pos)) is not None:
        try:
            if deep and _too_deep(text, m.start()):
                raise RecursionError
            obj, end = _DECODER.raw_decode(text, m.start())
        except json.JSONDecodeError as exc:
            error = error or "A JSON tool call could not be decoded."
            # Resume after the point of failure, not just after this start: nested starts
            # ('{"name":{"name":...') would otherwise cost a quadratic number of decodes.
            pos = max(m.end(), exc.pos)
            continue
        except RecursionError:
            # Nesting deeper than the interpreter's limit is adversarial: stop looking for
            # JSON calls rather than retry at every nested start.
            error = error or "A JSON tool call is nested too deeply."
            break
        call = _json_call(obj, tools, m.start())
        calls, error = _collect(calls, call, error)
        pos = end
    return calls, error


def _json_call(obj: Any, tools: Mapping[str, ToolSpec], start: int) -> ToolCall | str:
    name = obj.get("name") if isinstance(obj, dict) else None
    if not isinstance(name, str) or name not in tools:
        return f"Unknown tool {name!r}; tools are: {', '.join(tools)}."
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = _loads(args) if args.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            return f"The arguments of {name!r} are not valid JSON."
    if not isinstance(args, dict):
        return f"The arguments of {name!r} must be a JSON object."
    typed = _typed_args(tools[name], args)
    if isinstance(typed, str):
        return typed
    return ToolCall(name, typed, "json", start)


# --- argument typing ------------------------------------------------------------------------


def _typed_args(spec: ToolSpec, raw: Mapping[str, Any]) -> dict[str, Any] | str:
    """Check names, fill defaults and coerce types; return an error message on failure."""
    known = {p.name: p for p in spec.params}
    unknown = [k for k in raw if k not in known]
    if unknown:
        names = ", ".join(known) or "none"
        return f"{spec.name}: unknown argument {unknown[0]!r}; arguments are: {names}."
    out: dict[str, Any] = {}
    for p in spec.params:
        if p.name not in raw:
            if p.required:
                return f"{spec.name}: missing argument {p.name!r} (e.g. {spec.example()})."
            out[p.name] = p.default
            continue
        value = _coerce(p, raw[p.name])
        if isinstance(value, _Bad):
            return (
                f"{spec.name}: argument {p.name!r} must be {p.type}, got {str(raw[p.name])[:40]!r}."
            )
        if p.enum is not None and value not in p.enum:
            return f"{spec.name}: argument {p.name!r} must be one of {list(p.enum)}."
        out[p.name] = value
    return out


class _Bad:
    """Marker for a value that could not be coerced."""


def _coerce(p: Param, value: Any) -> Any:
    """Coerce ``value`` to ``p.type``; attribute values arrive as strings, and models often
    quote numbers in JSON too, so numeric strings are accepted in both forms."""
    try:
        if p.type == "string":
            return value if isinstance(value, str) else json.dumps(value)
        if p.type == "integer":
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                return _Bad()
            return int(value)
        if p.type == "number":
            return float(value)
        if p.type == "boolean":
            if isinstance(value, bool):
                return value
            return {"true": True, "false": False}.get(str(value).strip().lower(), _Bad())
        if p.type in ("array", "object"):
            parsed = _loads(value) if isinstance(value, str) else value
            want = list if p.type == "array" else dict
            return parsed if isinstance(parsed, want) else _Bad()
    except (ValueError, TypeError, OverflowError, RecursionError):
        return _Bad()
    return _Bad()
