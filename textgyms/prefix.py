"""Work on a batch whose rows share a token prefix, with that prefix encoded once.

In RL on a textgyms env every episode of a batch starts with the same tokens: the chat
template's system turn and the env's rules (167 of a Wordle game's ~280 tokens with SmolLM2).
A left-padded batch encodes that prefix once per row; :func:`generate_shared` encodes it once
per batch, repeats its key/value cache over the rows and lays each row out as
``prefix + left padding + own tail``. Positions come from the attention mask, so every row
sees exactly the positions and the keys it would see alone: the output distribution is the
plain batch's (equal up to floating-point rounding; tests/test_generation.py checks it).
On a CPU the prefill is most of a short turn's cost, so this is what makes evaluation and
GRPO rollouts of small models affordable. :func:`prefix_hidden` is the same saving for a
training forward pass, and :func:`output_head` lets a loss run the vocabulary projection only
where it has targets (for a 135M model that projection is a fifth of the compute).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MIN_SHARED = 8  # below this, one more forward call costs more than it saves


def common_prefix_len(rows: Sequence[Sequence[int]]) -> int:
    """Tokens every row starts with, at most the shortest row's length minus one (each row
    keeps at least one token of its own to feed the model)."""
    if not rows:
        return 0
    limit = min(map(len, rows)) - 1
    first = rows[0]
    n = 0
    while n < limit and all(r[n] == first[n] for r in rows):
        n += 1
    return max(n, 0)


def cache_keyword(model: Any) -> str:
    """The name under which ``model`` takes a key/value cache: ``cache`` in transformers 5.x
    (``past_key_values`` is deprecated there), ``past_key_values`` before."""
    import inspect

    params = inspect.signature(model.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def generate_shared(model: Any, contexts: Sequence[Sequence[int]], pad_id: int,
                    share: bool = True, **generate_kwargs: Any
                    ) -> tuple[Any, list[list[int]], int]:
    """``model.generate(**generate_kwargs)`` on ``contexts`` (lists of token ids).

    ``share=False`` left-pads the rows as they are, with no prefix cache (what a static
    key/value cache, ``cache_implementation="static"``, needs: it allocates its own).
    Returns ``(output, prompt_ids, width)``: generate's output (new tokens start at column
    ``width`` of its sequences), each row's prompt ids as given, and ``width``.
    """
    import torch

    device = model.device
    rows = [list(c) for c in contexts]
    shared = common_prefix_len(rows) if len(rows) > 1 and share else 0
    if shared < MIN_SHARED:
        shared = 0
    tails = [r[shared:] for r in rows]
    tail_width = max(map(len, tails))
    prefix = rows[0][:shared]
    ids = torch.tensor([prefix + [pad_id] * (tail_width - len(t)) + t for t in tails],
                       device=device)
    attn = torch.tensor([[1] * shared + [0] * (tail_width - len(t)) + [1] * len(t)
                         for t in tails], device=device)
    if shared:
        with torch.no_grad():
            cache = model(input_ids=ids[:1, :shared], use_cache=True,
                          logits_to_keep=1).past_key_values
        cache.batch_repeat_interleave(len(rows))
        generate_kwargs[cache_keyword(model)] = cache
    out = model.generate(input_ids=ids, attention_mask=attn, **generate_kwargs)
    return out, rows, ids.shape[1]


def output_head(model: Any) -> Any:
    """The model's output layer when it is a single linear layer over ``model.base_model``
    (then logits can be computed only where a loss needs them), else None (e.g. Gemma's
    logit soft-capping, or a model without a separate base)."""
    import torch

    head = model.get_output_embeddings()
    if (model.base_model is model or not isinstance(head, torch.nn.Linear)
            or getattr(model.config, "final_logit_softcapping", None) is not None):
        return None
    return head


def prefix_hidden(model: Any, ids: Any, attn: Any, start: int) -> Any:
    """Final hidden states ``(rows, width - start, hidden)`` of ``ids[:, start:]``, where
    ``ids[:, :start]`` is the same in every row and is encoded once, its key/value cache
    repeated over the rows. Gradients flow through that cache, so the result (and its
    gradient) equals a forward pass of every full row. ``attn`` covers all ``width`` columns.
    """
    base, extra = model.base_model, {"use_cache": False}
    if start > 0:
        cache = base(input_ids=ids[:1, :start], use_cache=True).past_key_values
        cache.batch_repeat_interleave(ids.shape[0])
        extra = {cache_keyword(base): cache, "use_cache": True}
    return base(input_ids=ids[:, start:], attention_mask=attn, **extra).last_hidden_state
