"""Policies: a batch of observations (and infos) in, a batch of action strings out.

``ScriptedPolicy("oracle")`` plays each env's ``solve()`` actions; ``ScriptedPolicy("random")``
plays each env's ``sample_action`` (a random valid move where the family defines one). Both
need to reach the envs: pass ``envs`` to :meth:`Policy.act`, either a list of Gymnasium envs or
a textgyms ``VecEnv`` (which forwards ``call`` to its workers).

Model-backed policies ignore ``envs``; they build each prompt from the env's transcript
(``info["messages"]``) and keep the details of their last batch in ``policy.last`` (one
:class:`Generation` each: token usage, and token ids and log-probs where the backend has them):

* :class:`OpenAIChatPolicy` -- any OpenAI-compatible ``/v1/chat/completions`` server (vLLM,
  SGLang, llama.cpp, hosted APIs), stdlib HTTP, with concurrency, retries and native tool calls;
* :class:`HFPolicy` -- a local transformers model, batched generation (``hf:tiny-random`` is a
  random model built offline, for smoke runs);
* :class:`VLLMPolicy` -- offline ``vllm.LLM`` (GPU only; vllm is imported lazily).

``make_policy(spec)`` builds any of them from a CLI spec (see :data:`POLICY_SPECS`).
"""

from typing import Any

from textgyms.policies.base import Generation, InferenceError, Policy, chat_messages
from textgyms.policies.scripted import ScriptedPolicy
from textgyms.policies.spec import POLICY_SPECS, make_policy

__all__ = [
    "POLICY_SPECS",
    "Generation",
    "HFPolicy",
    "InferenceError",
    "OpenAIChatPolicy",
    "Policy",
    "ScriptedPolicy",
    "VLLMPolicy",
    "chat_messages",
    "make_policy",
]

_LAZY = {
    "OpenAIChatPolicy": "textgyms.policies.openai_chat",
    "HFPolicy": "textgyms.policies.hf",
    "VLLMPolicy": "textgyms.policies.vllm",
}


def __getattr__(name: str) -> Any:
    # Model-backed policies are imported on first use: `import textgyms.policies` stays cheap.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'textgyms.policies' has no attribute {name!r}")
