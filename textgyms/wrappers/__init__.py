"""Wrappers over textgyms environments: ``ChatHistory`` and ``EpisodeStats``."""

from textgyms.wrappers.chat import ChatHistory
from textgyms.wrappers.stats import EpisodeStats

__all__ = ["ChatHistory", "EpisodeStats"]
