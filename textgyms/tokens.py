"""The token-level contract of a multi-turn episode, for RL training on whole conversations.

A multi-turn episode is one sequence to a trainer: the prompt, the policy's first completion, the
env's observation, the policy's next completion, and so on. :func:`episode_tokens` turns the
transcript (``info["messages"]`` of any textgyms env, or the observation of ``ChatHistory``)
into that sequence:

* ``input_ids``: the token ids of the whole conversation, as the chat template renders it;
* ``loss_mask``: 1 exactly on the tokens the policy generated (each assistant turn, its
  end-of-turn token included when the policy emitted it) and 0 on the template and on the env's
  text, so a policy-gradient loss never trains the model to predict the environment;
* ``logprobs``: the sampling log-probs aligned with ``input_ids`` (0.0 off the mask), when given.

The policy's tokens are kept exactly as generated (``completion_ids``); only the env's text is
tokenised. That is correct only if the context *only grows*: the context the policy saw at turn
``k+1`` (what an inference server gets by applying the chat template to the messages and
tokenising it) must extend, token for token, the context of turn ``k`` plus the tokens it
generated. Two things break this, and both are checked, raising :class:`ContextDriftError`:

* a chat template that rewrites history (e.g. templates that drop the reasoning of earlier
  assistant turns) -- the rendered text of turn ``k`` is not a prefix of turn ``k+1``;
* re-tokenisation drift -- the policy generated a non-canonical split of its text (say ``c`` +
  ``rane`` where the tokenizer encodes ``crane``), or a merge crosses a turn boundary, so
  tokenising the rendered text does not give back the ids the policy produced.

A rollout that appends as it goes (the trainer adapters: verl, OpenRLHF) needs only the ids
after each completion. :func:`observation_turn` is the one rule they share: the env's turn as
the tokenizer's own chat template renders it after an assistant turn, found by rendering a
stand-in conversation, so it holds for templates that rewrite history too (the sequence then
keeps what the policy generated and saw, where a full re-render would not).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from textgyms.errors import TextgymsError

__all__ = [
    "ContextDriftError",
    "EpisodeTokens",
    "ObservationTurn",
    "episode_tokens",
    "next_turn_ids",
    "observation_ids",
    "observation_turn",
]

# The content of the stand-in assistant turn the observation is rendered after: invisible
# characters no template rewrites and no env writes.
_STUB = "\u2063textgyms\u2063"


class ContextDriftError(TextgymsError):
    """The conversation's context did not only grow between turns (template or tokenizer)."""


@dataclass
class EpisodeTokens:
    """A tokenised multi-turn episode; ``turn_spans[k]`` is ``(start, end)`` of policy turn k."""

    input_ids: list[int]
    loss_mask: list[int]
    turn_spans: list[tuple[int, int]] = field(default_factory=list)
    logprobs: list[float] | None = None

    @property
    def prompt_length(self) -> int:
        """Tokens before the policy's first token (the whole sequence if it never acted)."""
        return self.turn_spans[0][0] if self.turn_spans else len(self.input_ids)

    def policy_tokens(self) -> int:
        """How many tokens of the sequence the policy generated."""
        return sum(self.loss_mask)


def episode_tokens(
    tokenizer: Any,
    messages: Sequence[Mapping[str, Any]],
    *,
    completion_ids: Sequence[Sequence[int]] | None = None,
    completion_logprobs: Sequence[Sequence[float]] | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    check: bool = True,
) -> EpisodeTokens:
    """Token ids and loss mask of a whole conversation (see the module docstring).

    ``messages``: ``[{"role", "content"}, ...]`` with ``assistant`` messages for the policy's
    turns. ``completion_ids[k]``: the ids the policy generated for its k-th turn (omit to
    tokenise the assistant text canonically). ``check=True`` re-tokenises the context before
    every policy turn and raises :class:`ContextDriftError` if it is not exactly the sequence
    built so far.
    """
    turns = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    if completion_ids is not None and len(completion_ids) != len(turns):
        raise ValueError(f"{len(completion_ids)} completion_ids for {len(turns)} assistant turns")
    if completion_logprobs is not None and completion_ids is None:
        raise ValueError("completion_logprobs needs completion_ids")
    out = EpisodeTokens([], [], [], [] if completion_logprobs is not None else None)
    done = ""  # the rendered text the sequence covers so far
    for k, i in enumerate(turns):
        context = _render(tokenizer, messages[:i], tools, generation_prompt=True)
        _extend(out, tokenizer, _suffix(done, context, i, "context"), 0)
        if check:
            _check_context(tokenizer, messages[:i], tools, out.input_ids, k)
        rendered = _suffix(context, _render(tokenizer, messages[: i + 1], tools), i, "turn")
        ids = None if completion_ids is None else list(completion_ids[k])
        done = context + _policy_turn(out, tokenizer, rendered, ids, i)
        if completion_logprobs is not None:
            out.logprobs[-len(ids) :] = [float(x) for x in completion_logprobs[k]]  # type: ignore[index]
    if len(turns) < len(messages):
        final = _render(tokenizer, messages, tools)
        _extend(out, tokenizer, _suffix(done, final, len(messages) - 1, "context"), 0)
    return out


def next_turn_ids(
    tokenizer: Any,
    messages: Sequence[Mapping[str, Any]],
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    eos_emitted: bool = True,
) -> list[int]:
    """The ids a native multi-turn rollout appends after the policy's last turn (loss mask 0).

    ``messages`` ends with the policy's last ``assistant`` message and the env's answer to it.
    :func:`observation_turn` of the messages after that assistant turn: the template's end of
    the assistant turn (left out when the policy ended its turn itself, ``eos_emitted``), the
    env's turn and the next generation prompt.
    """
    i = max(j for j, m in enumerate(messages) if m["role"] == "assistant")
    turn = observation_turn(tokenizer, messages[i + 1 :], tools=tools)
    return list(turn.body) if eos_emitted else [*turn.close, *turn.body]


@dataclass(frozen=True)
class ObservationTurn:
    """What a chat template writes after an assistant turn's content (see
    :func:`observation_turn`): ``close``, the end of the assistant turn (its end-of-turn token,
    empty if the template writes none), and ``body``, the env's turn(s) and the next
    generation prompt."""

    close: tuple[int, ...]
    body: tuple[int, ...]
    stops: frozenset[int] = frozenset()  # ids that end a turn: ``close`` and the EOS

    def ids_after(self, completion_ids: Sequence[int], stop_ids: Sequence[int] = ()) -> list[int]:
        """The ids to append after ``completion_ids`` (all loss mask 0).

        A completion that ended its turn (its last id is the tokenizer's EOS, the template's
        end-of-turn token or one of ``stop_ids``) is followed by ``body``; one that did not
        (cut by a length limit) gets ``close`` first, so the turn is closed as the template
        closes it and the policy is never trained to emit those tokens.
        """
        return list(self.body) if self.ended(completion_ids, stop_ids) else [*self.close,
                                                                              *self.body]

    def ended(self, completion_ids: Sequence[int], stop_ids: Sequence[int] = ()) -> bool:
        """Whether the completion ended its turn itself (see :meth:`ids_after`)."""
        if not completion_ids:
            return False
        return int(completion_ids[-1]) in self.stops.union(map(int, stop_ids))


def observation_turn(
    tokenizer: Any,
    observation: Sequence[Mapping[str, Any]],
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    template_kwargs: Mapping[str, Any] | None = None,
) -> ObservationTurn:
    """The tokens the tokenizer's own chat template renders after an assistant turn's content
    when ``observation`` (the env's message(s), usually one ``user`` turn) follows it.

    The rule every token-level adapter shares: the policy's ids are kept as generated, and the
    ids after them are found by *rendering*, never by matching text of the history. The
    template renders a stand-in conversation (a user turn, an assistant turn whose content is
    a marker, then ``observation``) with the generation prompt; everything after the marker is
    the end of the assistant turn, the observation turn as the template writes it (trimmed,
    escaped or wrapped as it does) and the next assistant header. It starts at the template's
    end-of-turn special token, so tokenising it alone gives the ids the full rendering has.
    Because the history is a stand-in, templates that rewrite earlier turns (drop reasoning)
    or that close a turn differently in history than at the end (gpt-oss) give the ids a
    rollout appends, and what the policy saw stays what it generated.

    ``close`` is the first of those ids when it is a special token (``<|im_end|>``,
    ``<|eot_id|>``, ``<end_of_turn>``, gpt-oss' ``<|end|>``); the tokenizer's EOS also counts
    as a turn end (gpt-oss' ``<|return|>``), see :meth:`ObservationTurn.ids_after`.
    """
    probe = [{"role": "user", "content": "."}, {"role": "assistant", "content": _STUB},
             *(dict(m) for m in observation)]
    text = tokenizer.apply_chat_template(probe, tools=tools, tokenize=False,
                                         add_generation_prompt=True, **(template_kwargs or {}))
    at = text.find(_STUB)
    if at < 0:
        raise ContextDriftError("the chat template does not render assistant content as is; its "
                                "observations cannot be appended token by token")
    tail = text[at + len(_STUB) :]
    ids = tuple(int(t) for t in tokenizer.encode(tail, add_special_tokens=False))
    special = set(getattr(tokenizer, "all_special_ids", ())) | _added_special_ids(tokenizer)
    cut = 1 if ids and ids[0] in special else 0
    eos = getattr(tokenizer, "eos_token_id", None)
    stops = frozenset({*ids[:cut], *([int(eos)] if eos is not None else [])})
    return ObservationTurn(ids[:cut], ids[cut:], stops)


def _added_special_ids(tokenizer: Any) -> set[int]:
    """Ids of tokens added to the vocabulary as special (chat-template markers)."""
    decoder = getattr(tokenizer, "added_tokens_decoder", None) or {}
    return {int(i) for i, tok in decoder.items() if getattr(tok, "special", False)}


def observation_ids(
    tokenizer: Any,
    observation: Sequence[Mapping[str, Any]],
    completion_ids: Sequence[int],
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    template_kwargs: Mapping[str, Any] | None = None,
    stop_ids: Sequence[int] = (),
) -> list[int]:
    """The ids (loss mask 0) to append after ``completion_ids`` for the env's ``observation``:
    :func:`observation_turn` then :meth:`ObservationTurn.ids_after`."""
    turn = observation_turn(tokenizer, observation, tools=tools, template_kwargs=template_kwargs)
    return turn.ids_after(completion_ids, stop_ids)


def shared_prefix_len(ids: Any, loss_mask: Any) -> int:
    """How many leading tokens every row of a ``(rows, length)`` batch of token ids shares
    before the first policy token (``loss_mask`` 1) of any row.

    That prefix (a task's prompt for a GRPO group, an env's instructions for an SFT batch) can
    be encoded once and its KV cache repeated over the rows. Takes torch tensors; imports
    nothing.
    """
    first = int(loss_mask.float().argmax(dim=1).min())
    same = (ids[:, :first] == ids[:1, :first]).all(dim=0)
    return first if bool(same.all()) else int((~same).float().argmax())


def _policy_turn(
    out: EpisodeTokens, tokenizer: Any, rendered: str, ids: list[int] | None, i: int
) -> str:
    """Append policy turn ``i`` (mask 1) and return the text it covers.

    ``rendered`` is what the template writes for the turn: the policy's text, possibly its
    end-of-turn token, then template glue (a newline) that belongs to the next context.
    """
    if ids is None:
        eos = tokenizer.eos_token or ""
        cut = rendered.find(eos) + len(eos) if eos and eos in rendered else len(rendered)
        text = rendered[:cut]
        ids = tokenizer.encode(text, add_special_tokens=False)
    else:
        text = tokenizer.decode(ids, skip_special_tokens=False)
        if not rendered.startswith(text):
            raise ContextDriftError(
                f"assistant message {i}: its completion ids decode to {text[:80]!r}, which the "
                f"chat template does not render as written (it renders {rendered[:80]!r})"
            )
    start = len(out.input_ids)
    out.input_ids += ids
    out.loss_mask += [1] * len(ids)
    if out.logprobs is not None:
        out.logprobs += [0.0] * len(ids)
    out.turn_spans.append((start, len(out.input_ids)))
    return text


def _extend(out: EpisodeTokens, tokenizer: Any, text: str, mask: int) -> None:
    """Append the tokens of ``text`` with loss-mask value ``mask``."""
    ids = tokenizer.encode(text, add_special_tokens=False) if text else []
    out.input_ids += ids
    out.loss_mask += [mask] * len(ids)
    if out.logprobs is not None:
        out.logprobs += [0.0] * len(ids)


def _render(
    tokenizer: Any,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None,
    generation_prompt: bool = False,
) -> str:
    """The chat template's text for ``messages``."""
    return tokenizer.apply_chat_template(
        list(messages), tools=tools, tokenize=False, add_generation_prompt=generation_prompt
    )


def _suffix(prefix: str, text: str, i: int, what: str) -> str:
    """``text`` minus ``prefix``; raises if the template rewrote what was already there."""
    if not text.startswith(prefix):
        at = next((j for j, (a, b) in enumerate(zip(prefix, text)) if a != b), len(text))
        raise ContextDriftError(
            f"the chat template rewrites history at message {i} ({what}): the text rendered "
            f"so far is not a prefix of the next rendering; they differ at character {at}: "
            f"{prefix[at : at + 40]!r} became {text[at : at + 40]!r}"
        )
    return text[len(prefix) :]


def _check_context(
    tokenizer: Any,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None,
    built: list[int],
    k: int,
) -> None:
    """Raise unless tokenising the context of policy turn ``k`` gives exactly ``built``."""
    fresh = tokenizer.apply_chat_template(
        list(messages), tools=tools, tokenize=True, add_generation_prompt=True, return_dict=False
    )
    fresh = list(fresh)
    if fresh == built:
        return
    shorter = min(len(built), len(fresh))
    at = next((j for j, (a, b) in enumerate(zip(built, fresh)) if a != b), shorter)
    raise ContextDriftError(
        f"re-tokenisation drift before policy turn {k}: the context re-tokenised by the chat "
        f"template differs from the tokens so far at position {at} "
        f"({tokenizer.decode(built[at : at + 8])!r} vs {tokenizer.decode(fresh[at : at + 8])!r}); "
        f"the policy's completion ids are not what the tokenizer gives for its text"
    )
