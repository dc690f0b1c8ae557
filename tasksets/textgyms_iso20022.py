"""verifiers taskset id ``textgyms_iso20022``: textgyms/ISO20022-MT103-v4.

Episodes are played by :class:`textgyms.integrations.verifiers.TextgymsEnv`.
verifiers imports a taskset id as a top-level module, so textgyms installs this one beside its
package. Any other id or a mixture: set ``--env.taskset.envs`` (see
:mod:`textgyms.integrations.verifiers`).
"""

from textgyms.integrations.verifiers import TextgymsEnv, family

Iso20022Config, Iso20022Taskset = family("textgyms_iso20022", "Iso20022")

__all__ = ["Iso20022Config", "Iso20022Taskset", "TextgymsEnv"]
