"""textgyms envs as ART rollouts (OpenPipe ART, ``pip install "textgyms[art]"``).

ART trains from a user rollout function that plays one scenario with ``model.openai_client()``
and returns an ``art.Trajectory``; trajectories of one scenario form an ``art.TrajectoryGroup``
(GRPO compares them). Here the scenario is a textgyms task row::

    import art
    from textgyms.integrations.art import Scenario, rollout, trajectory_groups

    model = art.Model(name="smollm2", project="textgyms", inference_model_name="m",
                      inference_base_url="http://127.0.0.1:8000/v1", inference_api_key="x")
    trajectory = await rollout(model, Scenario("textgyms/Wordle-v0", seed=3))
    groups = await trajectory_groups("textgyms/Wordle-v0", 8, model=model, group_size=4)

:func:`rollout` sends the transcript to the model each turn and plays its reply in the env.
With ``tool_calls=True`` (the default) the env's tool schemas go in ``tools`` and native tool
calls become the env's JSON action (tool results go back as ``tool`` messages); with
``tool_calls=False`` the model writes the env's tags in its text and observations go back as
user turns. Every reply is kept as its ``Choice`` object in ``messages_and_choices`` (ART reads
the log-probs from it), the reward is the episode's return (``Episode.reward()``), and the
metrics are the episode's (:meth:`Episode.metrics`: score, solved, turns, return, finished,
invalid actions, and ``<env>/...`` keys with the verdict's parts). ``Scenario.max_context_tokens``
ends an episode whose next request could overflow the model's context (paid the score as things
stand, ``context_cut`` 1) rather than letting the server refuse it and fail the step. The
metadata is the task row (``env_id``, ``env_kwargs`` as JSON text, ``seed``, ``split``,
``task_id``), so ``Scenario.from_row(trajectory.metadata)`` replays a trajectory's task.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from collections.abc import Mapping
from typing import Any

from textgyms.integrations.episode import (
    ContextBudget,
    Episode,
    TaskRow,
    cut_observation,
    message_tokens,
    obs_token_limit,
)
from textgyms.mixture import Mixture
from textgyms.policies.openai_chat import tool_call_action

__all__ = ["Scenario", "rollout", "scenarios", "trajectory_groups"]


def _import_art() -> Any:
    """``import art`` without litellm's network fetch, and without breaking transformers.

    openpipe-art 0.5.18 replaces ``transformers.masking_utils._preprocess_mask_arguments`` on
    import with a wrapper written for the signature of an older transformers. Where the
    installed transformers has another signature, every causal-LM forward in the process would
    fail with a TypeError, so :func:`_undo_mismatched_patch` puts the original back then, and
    only then (whoever imported art first); where the signatures match, ART's patch stays.
    """
    # ART imports litellm, which fetches a model price table from the network on import unless
    # told to use the copy it ships: textgyms never downloads at run time.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import art

    try:
        from art.transformers import patches
        from transformers import masking_utils
    except ImportError:  # no transformers here (or another ART layout): nothing was patched
        return art
    _undo_mismatched_patch(masking_utils, patches)
    return art


def _undo_mismatched_patch(masking_utils: Any, patches: Any) -> bool:
    """Restore transformers' own ``_preprocess_mask_arguments`` if ART's wrapper is installed
    and its parameters (names, in order) differ from the original's; True if it restored."""
    wrapper = patches._patched_preprocess_mask_arguments
    original = patches._preprocess_mask_arguments  # transformers' function, kept by ART
    if masking_utils._preprocess_mask_arguments is not wrapper:
        return False
    if list(inspect.signature(wrapper).parameters) == list(inspect.signature(original).parameters):
        return False  # written for this transformers: ART's patch does what ART meant
    masking_utils._preprocess_mask_arguments = original
    return True


art = _import_art()


@dataclasses.dataclass(frozen=True)
class Scenario:
    """One episode for ART: a task row plus how the model is asked."""

    env_id: str
    env_kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    seed: int = 0
    split: str = "train"
    tool_calls: bool = True
    """Send the env's tools as ``tools`` (native calls) rather than asking for tags."""
    max_tokens: int = 512
    temperature: float = 1.0
    max_turns: int | None = None
    """Stop after this many model turns (the env's own ``max_turns`` also ends an episode)."""
    max_obs_tokens: int | None = None
    """Cut env answers to this many UTF-8 bytes, an upper bound on tokens, with a marker
    (default ``$TEXTGYMS_MAX_OBS_TOKENS``, else no limit)."""
    max_context_tokens: int | None = None
    """The model's context: an episode whose next request could exceed it (the server's last
    token count plus the new messages' bytes, plus ``max_tokens``) ends as truncated and is
    paid the score as things stand, instead of sending a request the server refuses."""

    @classmethod
    def from_row(cls, row: Mapping[str, Any], **options: Any) -> Scenario:
        """A scenario from a task row (``textgyms export tasks``) or its ``extra_info``."""
        task = TaskRow.from_row(row)
        return cls(task.env_id, task.env_kwargs, task.seed, task.split, **options)

    @property
    def row(self) -> TaskRow:
        """The task row this scenario plays."""
        return TaskRow.from_row({"env_id": self.env_id, "env_kwargs": dict(self.env_kwargs),
                                 "seed": self.seed, "split": self.split})


def _action(message: Any) -> str:
    """The env action of a reply: its text, then each native tool call as JSON."""
    calls = [tool_call_action(c.model_dump()) for c in (message.tool_calls or [])]
    return "\n".join(p for p in [message.content or "", *calls] if p)


def _answer(message: Any, observation: str) -> list[dict[str, Any]]:
    """The env's observation as the next message(s): one tool message per native call
    (each gets the observation, which answers the calls together), else a user turn."""
    if message.tool_calls:
        return [{"role": "tool", "tool_call_id": c.id, "content": observation}
                for c in message.tool_calls]
    return [{"role": "user", "content": observation}]


async def rollout(model: art.Model, scenario: Scenario | Mapping[str, Any]) -> art.Trajectory:
    """Play one episode with ``model``'s OpenAI-compatible client; the ART trajectory.

    The env is built, stepped and closed off the event loop, so the other rollouts of a
    gather keep running while one steps (a Code run, a search)."""
    if not isinstance(scenario, Scenario):
        scenario = Scenario.from_row(scenario)
    episode = await Episode.aopen(scenario.row)
    client = model.openai_client()
    tools = episode.tools if scenario.tool_calls else None
    trajectory = art.Trajectory(
        messages_and_choices=[{"role": "user", "content": episode.prompt}], tools=tools,
        # The whole task row (env_kwargs as JSON text: ART's metadata holds scalars), so a
        # trajectory replays from itself: Scenario.from_row(trajectory.metadata).
        metadata={**scenario.row.columns(), "task_id": episode.info.get("task_id", "")})
    prompt = message_tokens(trajectory.messages(), tools)
    budget = ContextBudget(scenario.max_context_tokens, prompt)
    limit = obs_token_limit(scenario.max_obs_tokens)
    try:
        turns = 0
        while not episode.done and (scenario.max_turns is None or turns < scenario.max_turns):
            max_tokens = budget.room(scenario.max_tokens)
            if max_tokens < 1:
                episode.context_cut = True  # the next request would not fit the context
                break
            completion = await client.chat.completions.create(
                model=model.get_inference_name(), messages=trajectory.messages(),
                max_tokens=max_tokens, temperature=scenario.temperature,
                logprobs=True, **({"tools": tools} if tools else {}))
            choice = completion.choices[0]
            trajectory.messages_and_choices.append(choice)
            result = await episode.astep(_action(choice.message))
            turns += 1
            if not result.done:
                answer = _answer(choice.message, cut_observation(result.observation, limit))
                trajectory.messages_and_choices.extend(answer)
                budget.used(_counted(completion.usage), trajectory.messages(), answer)
        trajectory.reward = episode.reward()
        # ART averages each metric over the trajectories that report it: this env's keys only.
        trajectory.metrics = episode.metrics(fill=None)
        trajectory.metrics = {k: v for k, v in trajectory.metrics.items() if v is not None}
    finally:
        await episode.aclose()
    return trajectory.finish()


def _counted(usage: Any) -> int | None:
    """The server's count of a request and its reply (None: the server sent no usage)."""
    if usage is None or getattr(usage, "prompt_tokens", None) is None:
        return None
    return usage.prompt_tokens + (usage.completion_tokens or 0)


def scenarios(envs: str | list[Any], n: int, *, kwargs: Mapping[str, Any] | None = None,
              split: str = "train", seed: int = 0, **options: Any) -> list[Scenario]:
    """``n`` scenarios of an id or mixture, seeds ``seed .. seed + n - 1`` (a mixture picks
    the entry from the seed, as :class:`textgyms.mixture.Mixture` does)."""
    mixture = Mixture.parse(envs)
    out = []
    for s in range(seed, seed + n):
        entry = mixture.entries[mixture.pick(s)]
        env_kwargs = {**(kwargs or {}), **entry.kwargs}
        out.append(Scenario(entry.env_id, env_kwargs, s, split, **options))
    return out


async def trajectory_groups(envs: str | list[Any], n: int, *, model: art.Model,
                            group_size: int = 4, max_exceptions: int | float = 0,
                            pbar_desc: str | None = None, **options: Any,
                            ) -> list[art.TrajectoryGroup]:
    """``n`` groups of ``group_size`` rollouts each (one scenario per group, so GRPO compares
    replies to the same task), gathered with ``art.gather_trajectory_groups``; ``options`` are
    :func:`scenarios`' (``kwargs``, ``split``, ``seed``) and :class:`Scenario`'s fields."""
    groups = (
        art.TrajectoryGroup(rollout(model, scenario) for _ in range(group_size))
        for scenario in scenarios(envs, n, **options)
    )
    return await art.gather_trajectory_groups(groups, pbar_desc=pbar_desc,
                                              max_exceptions=max_exceptions)
