"""verifiers taskset id ``textgyms_netconfig``: textgyms/NetConfig-v3.

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

__all__ = ["NetConfigConfig", "NetConfigTaskset", "TextgymsEnv"]


class NetConfigConfig(TextgymsConfig):
    """A textgyms taskset config whose env defaults to textgyms/NetConfig-v3."""

    envs: str | list[Any] = "textgyms/NetConfig-v3"


class NetConfigTaskset(TextgymsTaskset, vf.Taskset[TextgymsTask, NetConfigConfig]):
    """Procedural tasks of textgyms/NetConfig-v3 (or of ``--env.taskset.envs``)."""
