"""verifiers taskset id ``textgyms_search``: textgyms/Search-v1.

Episodes are played by :class:`textgyms.integrations.verifiers.TextgymsEnv`.
verifiers imports a taskset id as a top-level module, so textgyms installs this one beside its
package. Any other id or a mixture: set ``--env.taskset.envs`` (see
:mod:`textgyms.integrations.verifiers`).
"""

from textgyms.integrations.verifiers import TextgymsEnv, family

SearchConfig, SearchTaskset = family("textgyms_search", "Search")

__all__ = ["SearchConfig", "SearchTaskset", "TextgymsEnv"]
