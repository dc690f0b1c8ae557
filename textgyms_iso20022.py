"""verifiers taskset id ``textgyms_iso20022``: textgyms/ISO20022-MT103-v3.

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

__all__ = ["Iso20022Config", "Iso20022Taskset", "TextgymsEnv"]


class Iso20022Config(TextgymsConfig):
    """A textgyms taskset config whose env defaults to textgyms/ISO20022-MT103-v3."""

    envs: str | list[Any] = "textgyms/ISO20022-MT103-v3"


class Iso20022Taskset(TextgymsTaskset, vf.Taskset[TextgymsTask, Iso20022Config]):
    """Procedural tasks of textgyms/ISO20022-MT103-v3 (or of ``--env.taskset.envs``)."""
