"""verifiers taskset id ``textgyms_wordle``: textgyms/Wordle-v0.

Episodes are played by :class:`textgyms.integrations.verifiers.TextgymsEnv`.
verifiers imports a taskset id as a top-level module, so textgyms installs this one beside its
package. Any other id or a mixture: set ``--env.taskset.envs`` (see
:mod:`textgyms.integrations.verifiers`).
"""

from typing import Any

import verifiers.v1 as vf

from textgyms.integrations.verifiers import (
    TextgymsConfig,
    TextgymsEnv,
    TextgymsTask,
    TextgymsTaskset,
)

__all__ = ["WordleConfig", "WordleTaskset", "TextgymsEnv"]


class WordleConfig(TextgymsConfig):
    """A textgyms taskset config whose env defaults to textgyms/Wordle-v0."""

    envs: str | list[Any] = "textgyms/Wordle-v0"


class WordleTaskset(TextgymsTaskset, vf.Taskset[TextgymsTask, WordleConfig]):
    """Procedural tasks of textgyms/Wordle-v0 (or of ``--env.taskset.envs``)."""
