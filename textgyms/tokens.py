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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from textgyms.errors import TextgymsError

__all__ = ["ContextDriftError", "EpisodeTokens", "episode_tokens", "next_turn_ids"]


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
    Returns the tokens of the text the chat template writes after that assistant content up to
    and including the next generation prompt (the end-of-turn token is left out when the policy
    emitted it itself, ``eos_emitted``), so ``previous ids + completion ids + these ids`` is the
    next context, token-in/token-out, as :func:`episode_tokens` builds it.
    """
    i = max(j for j, m in enumerate(messages) if m["role"] == "assistant")
    context = _render(tokenizer, messages[:i], tools, generation_prompt=True)
    content = messages[i].get("content") or ""
    if not _suffix(context, _render(tokenizer, messages[: i + 1], tools), i, "turn").startswith(
        content
    ):
        raise ContextDriftError(f"the chat template does not render assistant message {i} as is")
    rest = _suffix(context + content, _render(tokenizer, messages, tools, True), i, "context")
    eos = tokenizer.eos_token or ""
    if eos_emitted and eos and rest.startswith(eos):
        rest = rest[len(eos) :]
    return tokenizer.encode(rest, add_special_tokens=False) if rest else []


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
