"""textgyms: real Gymnasium environments for training LLM agents with reinforcement learning.

Importing this package registers every ``textgyms/*`` id with Gymnasium and does nothing else
(no downloads, no seeding, no output). ``gym.make("textgyms:textgyms/Wordle-v0")`` works
without a prior import, because Gymnasium imports the module named before the colon.
"""

from __future__ import annotations

from typing import Any

from textgyms import envs as _envs  # noqa: F401  (registers the ids)
from textgyms.core import INFO_KEYS, Task, TextEnv, TextSpace, Turn, Verdict
from textgyms.errors import ConfigError, ResetNeeded, TextgymsError

__version__ = "0.1.0"
__all__ = [
    "INFO_KEYS",
    "Task",
    "TextEnv",
    "TextSpace",
    "Turn",
    "Verdict",
    "ConfigError",
    "ResetNeeded",
    "TextgymsError",
    "make_vec",
    "Mixture",
    "Curriculum",
    "env_ids",
    "__version__",
]


def env_ids() -> list[str]:
    """Every registered ``textgyms/*`` id, sorted."""
    import gymnasium

    return sorted(i for i in gymnasium.registry if i.startswith("textgyms/"))


def __getattr__(name: str) -> Any:
    # The vector module is imported on first use, so `import textgyms` stays cheap.
    if name == "make_vec":
        from textgyms.vector import make_vec

        return make_vec
    if name == "Mixture":
        from textgyms.mixture import Mixture

        return Mixture
    if name == "Curriculum":
        from textgyms.curriculum import Curriculum

        return Curriculum
    raise AttributeError(f"module 'textgyms' has no attribute {name!r}")
