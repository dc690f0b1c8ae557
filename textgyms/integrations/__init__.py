"""Adapters that plug textgyms envs into the RL trainers people run.

One module per trainer, each imported lazily behind its extra; this package itself imports no
trainer. :mod:`textgyms.integrations.episode` is what they share: the task row every adapter
reads (the rows ``textgyms export tasks`` writes) and one episode played turn by turn.
"""

from textgyms.integrations.episode import Episode, TaskRow

__all__ = ["Episode", "TaskRow"]
