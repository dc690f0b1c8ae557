"""``VLLMPolicy``: offline batched inference with ``vllm.LLM`` (GPU only).

vLLM is imported when the policy is built, never at module level, so textgyms works without
it. Each ``act`` is one ``LLM.chat`` call over the whole batch (vLLM schedules it with
continuous batching). With ``return_tokens=True`` each :class:`Generation` in ``policy.last``
carries the prompt ids, the completion ids and the sampled tokens' log-probs. To serve many
trainers or machines, run ``vllm serve`` and use :class:`OpenAIChatPolicy` instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textgyms.errors import BackendError
from textgyms.policies.base import Generation, ToolCache, chat_messages


class VLLMPolicy:
    """``llm``: a ``vllm.LLM`` or a model name/path (extra kwargs go to ``vllm.LLM``)."""

    device = "cuda"  # vLLM runs on the current CUDA device (recorded by evaluations)

    def __init__(
        self,
        llm: Any,
        *,
        temperature: float = 1.0,
        top_p: float = 1.0,
        max_tokens: int = 1024,
        seed: int = 0,
        system: str | None = None,
        tools_in_prompt: bool = True,
        return_tokens: bool = False,
        **llm_kwargs: Any,
    ) -> None:
        try:
            import vllm
        except ImportError as err:
            raise BackendError(
                "VLLMPolicy needs the vllm package and a CUDA GPU (pip install 'textgyms[vllm]'); "
                "on CPU use HFPolicy, or OpenAIChatPolicy against a vLLM server"
            ) from err
        self.name = llm if isinstance(llm, str) else "vllm.LLM"
        self.llm = vllm.LLM(model=llm, seed=seed, **llm_kwargs) if isinstance(llm, str) else llm
        self.params = vllm.SamplingParams(
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            seed=seed,
            logprobs=1 if return_tokens else None,
        )
        self.sampling = {"temperature": temperature, "top_p": top_p, "max_tokens": max_tokens}
        self.seed, self.system = seed, system
        self.tools_in_prompt, self.return_tokens = tools_in_prompt, return_tokens
        self.last: list[Generation] = []
        self._tools = ToolCache()

    def spec(self) -> dict[str, Any]:
        """Run metadata."""
        return {"name": f"vllm:{self.name}", "type": "vllm", "seed": self.seed, **self.sampling}

    def act(
        self, observations: Sequence[Any], infos: Sequence[dict[str, Any]], envs: Any = None
    ) -> list[str]:
        """One completion per observation, as one batched ``LLM.chat`` call."""
        conversations = [chat_messages(o, i, self.system) for o, i in zip(observations, infos)]
        found = [self._tools.get(info) for info in infos] if self.tools_in_prompt else []
        tools = next((t for t in found if t), None)  # one batch, one env family
        outputs = self.llm.chat(conversations, self.params, use_tqdm=False, tools=tools)
        self.last = [self._one(out) for out in outputs]
        return [g.text for g in self.last]

    def _one(self, request_output: Any) -> Generation:
        """A vLLM ``RequestOutput`` as a Generation."""
        out = request_output.outputs[0]
        ids = list(out.token_ids)
        prompt_ids = list(request_output.prompt_token_ids or [])
        gen = Generation(
            out.text,
            out.finish_reason,
            {"prompt_tokens": len(prompt_ids), "completion_tokens": len(ids)},
        )
        if self.return_tokens:
            gen.prompt_ids, gen.completion_ids = prompt_ids, ids
            gen.logprobs = [float(step[t].logprob) for t, step in zip(ids, out.logprobs or [])]
        return gen
