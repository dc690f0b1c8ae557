"""GRPO on a textgyms env with TRL's ``GRPOTrainer(environment_factory=...)``.

    python examples/trl/train.py --config examples/trl/grpo.yaml   # or examples/trl/run.sh

The YAML (and any ``--key value`` after it) is read by TRL's own ``TrlParser`` into
:class:`TextgymsArguments` and ``trl.GRPOConfig``. Each dataset row is one task (a ``seed``),
so the ``num_generations`` rollouts of a GRPO group play the same task; the env class from
``textgyms.wrappers.trl.environment_factory`` gives each rollout its own env, whose tools are
the model's tools, and the episode's return is the reward.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from textgyms.errors import ConfigError


@dataclass
class TextgymsArguments:
    """What to train and on which env (the rest of the YAML is GRPOConfig's)."""

    model: str = field(default="Qwen/Qwen3-1.7B", metadata={"help": "hub id or local directory"})
    env_id: str = field(default="textgyms/Search-v1", metadata={"help": "a textgyms env id"})
    env_kwargs: str = field(default="{}", metadata={"help": "env kwargs as a JSON object"})
    num_tasks: int = field(default=4096, metadata={"help": "dataset rows (one seed each)"})


def parse(argv: list[str] | None = None) -> tuple[TextgymsArguments, object]:
    """The script's arguments and the ``GRPOConfig``, read by TRL's ``TrlParser``."""
    from trl import GRPOConfig, TrlParser

    parser = TrlParser((TextgymsArguments, GRPOConfig))
    script, config = parser.parse_args_and_config(args=argv)
    if not isinstance(json.loads(script.env_kwargs), dict):
        raise ConfigError(f"env_kwargs must be a JSON object, got {script.env_kwargs!r}")
    return script, config


def main(argv: list[str] | None = None) -> None:
    """Build the trainer from the parsed config and train."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # environment_factory is experimental
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOTrainer

    from textgyms.wrappers.trl import environment_factory, trl_dataset

    script, config = parse(argv)
    env_class = environment_factory(script.env_id, seed=config.seed,
                                    **json.loads(script.env_kwargs))
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(script.model, dtype="auto"),
        processing_class=AutoTokenizer.from_pretrained(script.model),
        args=config,
        train_dataset=trl_dataset(script.num_tasks, seed=config.seed),
        environment_factory=env_class,
    )
    trainer.train()
    trainer.save_model(config.output_dir)


if __name__ == "__main__":
    main()
