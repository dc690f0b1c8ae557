"""``HFPolicy``: a local transformers causal LM as a policy, with batched generation.

Prompts are the env transcripts rendered with the tokenizer's chat template (with the env's
tools when ``tools_in_prompt``), generated ``batch_size`` at a time with the prefix they share
encoded once. With ``return_tokens=True`` each :class:`Generation` in ``policy.last`` carries
the prompt ids, the completion ids (up to and including the end-of-turn token) and the log-prob
of every completion token under the model's raw distribution (temperature 1), which is what the
token-level contract (:func:`textgyms.tokens.episode_tokens`) and policy-gradient losses
consume. Sampling is reproducible: each call draws from ``seed`` and a call counter, without
touching torch's global random stream.

``device`` and ``dtype`` say where the model runs (:mod:`textgyms.devices`: ``auto`` is CUDA
in bfloat16 when torch sees a GPU, else the CPU in float32); an ``hf:`` spec takes them as
options, e.g. ``hf:smollm2-135m?device=cuda&dtype=bfloat16&batch_size=256``. A model object
stays where it is unless they are given. ``batch_size`` is the number of prompts per
``generate`` call: raise it on a GPU (a CUDA out-of-memory error names it). ``static_cache``
generates with transformers' static key/value cache (``cache_implementation="static"``, which
lets PyTorch compile the decoding step on CUDA) instead of encoding the shared prefix once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textgyms.devices import dtype_name, out_of_memory_hint, resolve_device
from textgyms.errors import ConfigError
from textgyms.policies.base import Generation, ToolCache, chat_messages


class HFPolicy:
    """``model``: a ``PreTrainedModel``, a local directory or a preset of
    :func:`textgyms.models.load_model` (``"tiny-random"``, ``"smollm2-135m"``)."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any = None,
        *,
        max_new_tokens: int = 256,
        temperature: float = 1.0,
        top_p: float = 1.0,
        batch_size: int = 8,
        system: str | None = None,
        tools_in_prompt: bool = True,
        return_tokens: bool = False,
        seed: int = 0,
        device: str = "auto",
        dtype: str = "auto",
        static_cache: bool = False,
    ) -> None:
        from textgyms.extras import require

        require("train", "torch", "transformers")  # without them: name the extra, not torch
        from textgyms.models import load_model

        if batch_size < 1 or max_new_tokens < 1 or temperature < 0:
            raise ConfigError("need batch_size >= 1, max_new_tokens >= 1 and temperature >= 0")
        where, kind = resolve_device(device, dtype)  # before loading: a bad device fails at once
        if isinstance(model, str):
            self.name = model
            model, loaded_tok = load_model(model, seed=seed, device=where, dtype=kind)
            tokenizer = tokenizer or loaded_tok
        else:
            self.name = getattr(model.config, "name_or_path", "") or type(model).__name__
            if device != "auto" or dtype != "auto":
                model = model.to(device=where if device != "auto" else model.device,
                                 dtype=kind if dtype != "auto" else model.dtype)
        if tokenizer is None:
            raise ConfigError("HFPolicy needs a tokenizer when given a model object")
        self.static_cache = bool(static_cache)
        self.model, self.tokenizer = model, tokenizer
        self.sampling = {"max_new_tokens": max_new_tokens, "temperature": temperature,
                         "top_p": top_p}
        self.batch_size, self.system, self.seed = batch_size, system, seed
        self.tools_in_prompt, self.return_tokens = tools_in_prompt, return_tokens
        self.last: list[Generation] = []
        self._tools = ToolCache()
        self._calls = 0

    def spec(self) -> dict[str, Any]:
        """Run metadata."""
        return {"name": f"hf:{self.name}", "type": "hf", "seed": self.seed, **self.sampling,
                "dtype": dtype_name(self.model.dtype)}

    @property
    def device(self) -> str:
        """Where the model runs, e.g. ``"cpu"`` or ``"cuda:0"`` (recorded by evaluations)."""
        return str(self.model.device)

    def act(
        self, observations: Sequence[Any], infos: Sequence[dict[str, Any]], envs: Any = None
    ) -> list[str]:
        """One completion per observation (``envs`` is ignored)."""
        prompts = [self._prompt(obs, info) for obs, info in zip(observations, infos)]
        self.last = []
        for start in range(0, len(prompts), self.batch_size):
            self.last += self.generate(prompts[start : start + self.batch_size])
        return [g.text for g in self.last]

    def _prompt(self, observation: Any, info: dict[str, Any]) -> str:
        """The chat-templated prompt text for one env."""
        tools = self._tools.get(info) if self.tools_in_prompt else None
        return self.tokenizer.apply_chat_template(
            chat_messages(observation, info, self.system),
            tools=tools or None,
            tokenize=False,
            add_generation_prompt=True,
        )

    def generate(self, prompts: Sequence[str]) -> list[Generation]:
        """Generate from already-templated prompt texts as one batch; the prefix every prompt
        shares (chat template and env rules) is encoded once (:mod:`textgyms.prefix`)."""
        import torch

        from textgyms.prefix import generate_shared

        tok = self.tokenizer
        contexts = tok(list(prompts), add_special_tokens=False)["input_ids"]
        temperature = self.sampling["temperature"]
        kwargs = {
            "max_new_tokens": self.sampling["max_new_tokens"],
            "do_sample": temperature > 0,
            "pad_token_id": tok.pad_token_id,
            "eos_token_id": tok.eos_token_id,
            "return_dict_in_generate": True,
            "output_logits": self.return_tokens,
        }
        if temperature > 0:
            kwargs.update(temperature=temperature, top_p=self.sampling["top_p"], top_k=0)
        if self.static_cache:
            kwargs["cache_implementation"] = "static"
        self._calls += 1
        device = self.model.device
        cuda = [device.index or 0] if device.type == "cuda" else []
        lower = f"batch_size (now {self.batch_size}) or max_new_tokens"
        with (torch.random.fork_rng(devices=cuda), torch.no_grad(),
              out_of_memory_hint(f"generating {len(contexts)} completions", lower)):
            torch.manual_seed(self.seed * 1_000_003 + self._calls)
            out, rows, width = generate_shared(self.model, contexts, tok.pad_token_id,
                                               share=not self.static_cache, **kwargs)
        logps = None
        if self.return_tokens:
            # (batch, new_tokens, vocab) raw logits -> log-prob of each chosen token.
            logits = torch.stack(out.logits, dim=1).float()
            chosen = out.sequences[:, width:]
            logps = torch.log_softmax(logits, -1).gather(-1, chosen.unsqueeze(-1)).squeeze(-1)
        return [self._one(rows[i], out.sequences[i, width:].tolist(), logps, i)
                for i in range(len(prompts))]

    def _one(self, prompt_ids: list[int], completion: list[int], logps: Any, i: int
             ) -> Generation:
        """The Generation of row ``i``: completion cut after the end-of-turn token."""
        tok = self.tokenizer
        finish = "length"
        if tok.eos_token_id in completion:
            completion = completion[: completion.index(tok.eos_token_id) + 1]
            finish = "stop"
        gen = Generation(
            tok.decode(completion, skip_special_tokens=True),
            finish,
            {"prompt_tokens": len(prompt_ids), "completion_tokens": len(completion)},
        )
        if self.return_tokens:
            gen.prompt_ids, gen.completion_ids = prompt_ids, completion
            gen.logprobs = logps[i, : len(completion)].tolist()
        return gen
