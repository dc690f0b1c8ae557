"""verifiers taskset id ``textgyms_search``: textgyms/Search-v1.

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

__all__ = ["SearchConfig", "SearchTaskset", "TextgymsEnv"]


class SearchConfig(TextgymsConfig):
    """A textgyms taskset config whose env defaults to textgyms/Search-v1."""

    envs: str | list[Any] = "textgyms/Search-v1"


class SearchTaskset(TextgymsTaskset, vf.Taskset[TextgymsTask, SearchConfig]):
    """Procedural tasks of textgyms/Search-v1 (or of ``--env.taskset.envs``)."""
