"""Wrappers over textgyms environments: ``ChatHistory``, ``EpisodeStats`` and ``TokenizeText``.

``textgyms.wrappers.puffer`` (PufferLib) is imported on its own, so that ``pufferlib`` stays an
optional dependency.
"""

from textgyms.wrappers.chat import ChatHistory
from textgyms.wrappers.stats import EpisodeStats
from textgyms.wrappers.tokenize import TokenizeText, get_tokenizer

__all__ = ["ChatHistory", "EpisodeStats", "TokenizeText", "get_tokenizer"]
