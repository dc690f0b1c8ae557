"""The textgyms exception hierarchy.

Agent mistakes are never exceptions (they become a ``Verdict.error`` and a feedback
observation). Exceptions are for API misuse and configuration (raised at once, with a
message that says what to change) and for infrastructure faults (named, with the cause).
"""

import gymnasium


class TextgymsError(Exception):
    """Base class of every error raised by textgyms."""


class ConfigError(TextgymsError, ValueError):
    """A bad kwarg, value or option given by the user; the message names the valid choices."""


class ResetNeeded(TextgymsError, gymnasium.error.ResetNeeded):
    """``step`` was called before ``reset`` or after the episode ended (a Gymnasium
    ``ResetNeeded`` too, which is what ``gym.make``'s order check raises before a reset)."""


class DataError(TextgymsError):
    """A shipped data file is missing or does not match its recorded sha256."""


class VerifierError(TextgymsError):
    """A bug inside a verifier; never turned into a score."""


class WorkerDiedError(TextgymsError):
    """A vector-env worker process or actor died; the message names it and its exit code."""


class BackendError(TextgymsError):
    """A vector backend or optional dependency is unavailable or misused."""


class MissingExtraError(TextgymsError, ImportError):
    """An optional dependency is not installed; the message names the pip extra that has it.
    (An ``ImportError`` too, so code that tolerates a missing module keeps working.)"""


class IndexCorruptError(TextgymsError):
    """A search index is missing, unreadable or corrupt; the message names its path."""


class SearchBackendError(TextgymsError):
    """A search backend cannot serve queries (e.g. an unreachable Elasticsearch cluster)."""


class SandboxError(TextgymsError):
    """The code sandbox failed (cannot start, cannot confine, protocol fault); not agent code."""


class RunCancelled(SandboxError):
    """A queued sandbox run was given up because the session that asked for it ended."""


class ServerError(WorkerDiedError):
    """A ``textgyms serve`` (OpenEnv) server refused, broke or lost a session; names its URL."""


class DeviceMemoryError(TextgymsError, MemoryError):
    """The GPU ran out of memory running a model; the message names the setting to lower
    (a batch size, a group count, a micro-batch)."""
