"""verifiers taskset id ``textgyms_env``: any textgyms id or mixture, set with
``--env.taskset.envs`` (e.g. ``"textgyms/Wordle-v0*2,textgyms/Code-v0"``).

verifiers imports a taskset id as a top-level module, so textgyms installs this one beside its
package (see :mod:`textgyms.integrations.verifiers`).
"""

from textgyms.integrations.verifiers import TextgymsConfig, TextgymsEnv, TextgymsTaskset

__all__ = ["TextgymsConfig", "TextgymsTaskset", "TextgymsEnv"]
