"""GRPO with ART (openpipe-art 0.5) on textgyms Search and Code: Qwen3-1.7B on one GPU.

    python examples/art/train.py          # or examples/art/run.sh

ART's ``LocalBackend`` serves the model with vLLM and trains LoRA adapters with Unsloth;
:func:`textgyms.integrations.art.trajectory_groups` plays each group's episodes through the
model's OpenAI-compatible client. :data:`RECIPE` holds every setting; tests/test_examples.py
builds ART's own ``TrainableModel`` from it and binds the training arguments to
``LocalBackend.train``'s signature.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # ART's litellm: no download


@dataclasses.dataclass(frozen=True)
class Recipe:
    """One ART run: the model, the envs, the rollouts and ``backend.train``'s arguments."""

    name: str = "qwen3-1.7b-search-code"
    project: str = "textgyms"
    base_model: str = "Qwen/Qwen3-1.7B"
    envs: str = "textgyms/Search-v1,textgyms/Code-v0"
    env_kwargs: dict[str, Any] = dataclasses.field(default_factory=lambda: {"max_turns": 6})
    steps: int = 200
    groups_per_step: int = 8       # tasks per step
    group_size: int = 8            # rollouts per task: a GRPO group
    max_tokens: int = 1024         # per model turn
    max_exceptions: float = 0.05   # a failed rollout costs its group, not the whole step
    train: dict[str, Any] = dataclasses.field(default_factory=lambda: {
        "learning_rate": 1e-5, "loss_fn": "cispo", "kl_penalty_coef": 0.0})

    def model(self) -> Any:
        """ART's trainable model for this recipe."""
        import art

        return art.TrainableModel(name=self.name, project=self.project,
                                  base_model=self.base_model)


RECIPE = Recipe()


async def main(recipe: Recipe = RECIPE) -> None:
    """Register the model with a local backend, then gather groups and train, step by step."""
    from art.local import LocalBackend

    from textgyms.integrations.art import trajectory_groups

    model = recipe.model()
    backend = LocalBackend()
    await model.register(backend)
    for step in range(await model.get_step(), recipe.steps):
        groups = await trajectory_groups(
            recipe.envs, recipe.groups_per_step, model=model, group_size=recipe.group_size,
            kwargs=recipe.env_kwargs, seed=step * recipe.groups_per_step,
            max_tokens=recipe.max_tokens, max_exceptions=recipe.max_exceptions)
        await backend.train(model, groups, **recipe.train)


if __name__ == "__main__":
    asyncio.run(main())
