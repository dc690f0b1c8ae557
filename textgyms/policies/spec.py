"""The ``--policy SPEC`` parser: builds any policy from a CLI spec string.

It lives apart from :mod:`textgyms.policies.base` because it imports every policy module,
while every policy module imports the shared types from ``base``.
"""

from __future__ import annotations

import inspect
from typing import Any
from urllib.parse import parse_qsl

from textgyms.errors import ConfigError
from textgyms.policies.base import Policy

POLICY_SPECS = ("oracle", "random", "blind", "openai:MODEL@URL", "hf:PATH", "vllm:MODEL")


def make_policy(spec: str, seed: int = 0) -> Policy:
    """Build a policy from a CLI spec.

    ``oracle`` | ``random`` | ``blind`` | ``openai:MODEL@URL`` (any OpenAI-compatible server, e.g.
    ``openai:Qwen/Qwen3-8B@http://127.0.0.1:8000/v1``) | ``hf:PATH`` (a local transformers
    directory, or ``hf:tiny-random``) | ``vllm:MODEL``. Keyword options of the policy's
    constructor follow a ``?``, e.g. ``openai:m@http://h:8000/v1?temperature=0&concurrency=16``
    or ``hf:smollm2-135m?device=cuda&dtype=bfloat16&batch_size=256`` (``device`` and ``dtype``:
    :mod:`textgyms.devices`; an unavailable device fails before the model loads).
    """
    from textgyms.policies.scripted import ScriptedPolicy

    if spec in ("oracle", "random", "blind"):
        return ScriptedPolicy(spec, seed=seed)
    kind, sep, rest = spec.partition(":")
    body, _, query = rest.partition("?")
    if not sep or not body or kind not in ("openai", "hf", "vllm"):
        raise ConfigError(f"unknown policy {spec!r}; choose one of: {', '.join(POLICY_SPECS)}")
    if kind == "openai":
        from textgyms.policies.openai_chat import OpenAIChatPolicy

        model, at, url = body.partition("@")
        if not at or not model or not url:
            raise ConfigError(f"policy {spec!r}: write openai:MODEL@URL, e.g. openai:m@http://h:8000/v1")
        return OpenAIChatPolicy(url, model, **_options(OpenAIChatPolicy, query, seed))
    if kind == "hf":
        from textgyms.policies.hf import HFPolicy

        return HFPolicy(body, **_options(HFPolicy, query, seed))
    from textgyms.policies.vllm import VLLMPolicy

    return VLLMPolicy(body, **_options(VLLMPolicy, query, seed))


def _options(cls: type, query: str, seed: int) -> dict[str, Any]:
    """Constructor kwargs from a spec's query string, typed and checked against ``cls``."""
    params = inspect.signature(cls.__init__).parameters
    valid = [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY]
    options: dict[str, Any] = {"seed": seed} if "seed" in valid else {}
    for key, value in parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)):
        if key not in valid:
            raise ConfigError(
                f"unknown option {key!r} for {cls.__name__}; valid options: {', '.join(valid)}"
            )
        options[key] = _typed(value)
    return options


def _typed(value: str) -> Any:
    """A query-string value as bool, int, float or str."""
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value
