"""verifiers taskset id ``textgyms_code``: textgyms/Code-v0.

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

__all__ = ["CodeConfig", "CodeTaskset", "TextgymsEnv"]


class CodeConfig(TextgymsConfig):
    """A textgyms taskset config whose env defaults to textgyms/Code-v0."""

    envs: str | list[Any] = "textgyms/Code-v0"


class CodeTaskset(TextgymsTaskset, vf.Taskset[TextgymsTask, CodeConfig]):
    """Procedural tasks of textgyms/Code-v0 (or of ``--env.taskset.envs``)."""
