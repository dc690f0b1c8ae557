"""textgyms envs as verifiers v1 tasksets (``pip install "textgyms[verifiers]"``).

verifiers 0.4 (the v1 API that prime-rl trains on) loads an environment by **taskset id**: it
imports the id as a top-level module and takes the one ``Taskset`` subclass (and the ``Env``
subclass, if any) that the module's ``__all__`` exports. textgyms installs one such module per
family, each a thin alias of the classes here:

=====================  ==========================================================
taskset id             plays
=====================  ==========================================================
``textgyms_wordle``    ``textgyms/Wordle-v0``
``textgyms_search``    ``textgyms/Search-v1``
``textgyms_code``      ``textgyms/Code-v0``
``textgyms_netconfig`` ``textgyms/NetConfig-v4``
``textgyms_iso20022``  ``textgyms/ISO20022-MT103-v4``
``textgyms_env``       any id or mixture (``--env.taskset.envs`` is required)
=====================  ==========================================================

Every taskset takes the same config (``--env.taskset.*``): ``envs`` (one id, a mixture such as
``"textgyms/Wordle-v0*2,textgyms/Code-v0"`` or a JSON list of ``{"id", "kwargs", "weight"}``),
``kwargs`` (for every entry), ``split`` (``train``/``test``/``all``), ``seed`` (task ``i``
plays seed ``seed + i``; a mixture picks the entry from the seed, as
:class:`textgyms.mixture.Mixture` does) and ``interleave`` (play the entries in turn
instead). Tasks are procedural, so the taskset is ``INFINITE``: bound a run with ``-n`` or
``take(n)``.

:class:`TextgymsEnv` plays an episode turn by turn: the env's prompt is the task prompt, each
assistant reply is one ``env.step``, and each observation goes back as the next user turn,
until the env ends the episode (solved, failed, or its own ``max_turns``) or the agent's own
limit (``--env.player.max-turns``) cuts it short. The trace records the episode's return as the
reward ``textgyms`` (so ``Trace.reward`` is the env's return) and the taskset's fixed metric
keys (:func:`~textgyms.integrations.episode.metric_keys` of ``envs``; other envs' keys 0.0);
``trace.info["textgyms"]`` keeps the task row and the actions. The env is made and stepped off
verifiers' event loop; answers are cut to ``max_obs_tokens`` UTF-8 bytes with a marker. With
``max_context_tokens`` (the model's context) an episode whose next request could overflow it
(:class:`~textgyms.integrations.episode.ContextBudget`: the server's count of the last request
and reply plus the answer's bytes, plus the run's ``max_tokens``) ends before it is sent, as
truncated: paid the score as things stand, metric ``context_cut`` 1, trace stop condition
``context_cut``, never a server error. An episode that verifiers' own token caps
(``--env.player.max-total-tokens`` and the like) end, or whose request the server refused as
too long for the context (verifiers' chat program then ends its run), is a context cut too.
verifiers 0.4 no longer loads the legacy ``load_environment(**kwargs)`` modules, so there is
no such entry.
"""

from __future__ import annotations

import itertools
import types
from collections.abc import Iterator
from typing import Any, Literal

import verifiers.v1 as vf
from pydantic import Field
from verifiers.v1.harnesses.utils.compaction import CONTEXT_OVERFLOW_MARKERS

from textgyms.integrations.episode import (
    ContextBudget,
    Episode,
    TaskRow,
    cut_observation,
    metric_keys,
    obs_token_limit,
)
from textgyms.mixture import Mixture

__all__ = ["FAMILIES", "TextgymsConfig", "TextgymsData", "TextgymsEnv", "TextgymsEnvConfig",
           "TextgymsTask", "TextgymsTaskset", "family", "taskset"]

REWARD = "textgyms"  # the reward name on the trace; Trace.reward sums the recorded rewards
CONTEXT_CUT = "context_cut"  # the trace's stop condition when the context budget ended it
# verifiers' own per-run token caps (RolloutLimits): a stop on one of them is a context cut.
TOKEN_CAPS = frozenset({"max_input_tokens", "max_output_tokens", "max_total_tokens"})

# taskset module (top-level, installed with textgyms) -> the env id it plays by default.
FAMILIES: dict[str, str] = {
    "textgyms_wordle": "textgyms/Wordle-v0",
    "textgyms_search": "textgyms/Search-v1",
    "textgyms_code": "textgyms/Code-v0",
    "textgyms_netconfig": "textgyms/NetConfig-v4",
    "textgyms_iso20022": "textgyms/ISO20022-MT103-v4",
}


class TextgymsConfig(vf.TasksetConfig):
    """Which textgyms env(s) a taskset plays (``--env.taskset.*``)."""

    envs: str | list[Any] = ""
    """An env id, a mixture ``"A*2,B"``, or a JSON list of ``{"id", "kwargs", "weight"}``."""
    kwargs: dict[str, Any] = Field(default_factory=dict)
    """Kwargs for every entry (an entry's own kwargs win), e.g. ``{"max_turns": 4}``."""
    split: Literal["train", "test", "all"] = "train"
    """The split tasks are drawn from (the env's ``split`` kwarg)."""
    seed: int = 0
    """The seed of task 0; task ``i`` plays seed ``seed + i``."""
    interleave: bool = False
    """Play a mixture's entries in turn (task ``i`` plays entry ``i`` mod their number) instead
    of drawing one by weight: an evaluation over every env, e.g. ``-n 6`` over six ids."""
    max_obs_tokens: int | None = None
    """Cut env answers to this many UTF-8 bytes (an upper bound on tokens) with a marker
    (default ``$TEXTGYMS_MAX_OBS_TOKENS``, else no limit)."""
    max_context_tokens: int | None = Field(default=None, ge=1)
    """The model's context (e.g. vLLM's ``--max-model-len``): an episode whose next request
    could exceed it with the run's ``max_tokens`` ends as truncated, paid the score as things
    stand (``context_cut`` 1), instead of sending a request the server refuses (default: no
    limit; the first request, the task prompt, is always sent)."""


class TextgymsData(vf.TaskData):
    """A task: the env's prompt plus the task row that replays it (``TaskData`` has no info)."""

    info: dict[str, Any]
    """The task row: ``env_id``, ``env_kwargs`` (JSON text), ``seed``, ``split``, ``task_id``."""


class TextgymsTask(vf.Task[TextgymsData]):
    """One textgyms episode to play."""

    @property
    def key(self) -> str:
        """The env's ``task_id``: the task's own identity, the same whichever seed, position or
        run draws it (verifiers' default, a hash of the task data, changes with ``idx`` and
        ``name``), so ``--select.keys`` and the traces' ``task.key`` name textgyms tasks."""
        return str(self.data.info.get("task_id") or super().key)


class TextgymsTaskset(vf.Taskset[TextgymsTask, TextgymsConfig]):
    """Procedural tasks of one env id or a mixture, over the train or test split."""

    INFINITE = True

    def rows(self) -> Iterator[TaskRow]:
        """The task rows, seed ``seed + i`` for task ``i`` (endless)."""
        config = self.config
        if not config.envs:
            raise vf.TaskError(
                "textgyms taskset needs an env: set --env.taskset.envs to an id such as "
                "textgyms/Wordle-v0, or a mixture such as 'textgyms/Wordle-v0*2,textgyms/Code-v0'"
            )
        mixture = Mixture.parse(config.envs)
        keys = list(metric_keys(mixture))  # one key set for every task of the taskset
        for i in itertools.count():
            seed = config.seed + i
            pick = i % len(mixture.entries) if config.interleave else mixture.pick(seed)
            entry = mixture.entries[pick]
            row = {"env_id": entry.env_id, "seed": seed, "split": config.split,
                   "env_kwargs": {**config.kwargs, **entry.kwargs}, "metric_keys": keys}
            yield TaskRow.from_row(row)

    def load(self) -> Iterator[TextgymsTask]:
        """Reset each row's env to read its prompt (one env per distinct id and kwargs)."""
        envs: dict[str, Any] = {}
        try:
            for row in self.rows():
                key = row.columns()["env_kwargs"] + row.env_id
                if key not in envs:
                    envs[key] = row.make()
                env = envs[key]
                prompt, info = env.reset(seed=row.seed)
                row = TaskRow(row.env_id, row.env_kwargs, row.seed, row.split, info["task_id"],
                              row.metric_keys)
                limit = obs_token_limit(self.config.max_obs_tokens)
                context = self.config.max_context_tokens
                data = TextgymsData(name=f"{row.env_id}#{row.seed}", id=row.task_id,
                                    prompt=prompt, info={**row.columns(), "max_obs_tokens": limit,
                                                     "max_context_tokens": context})
                yield TextgymsTask(data, self.config.task)
        finally:
            for env in envs.values():
                env.close()


class TextgymsEnvConfig(vf.EnvConfig):
    """The env's one seat: ``--env.player.*`` (model, runtime, harness, ``max_turns``)."""

    player: vf.AgentConfig = vf.AgentConfig()


def _reply(segment: vf.Segment) -> str:
    """The model's raw completion of a segment (unstripped: the env sees what it wrote)."""
    for message in reversed(segment.messages):
        if isinstance(message, vf.AssistantMessage):
            return message.content if isinstance(message.content, str) else segment.last_reply
    return segment.last_reply


def _counted(trace: vf.Trace) -> int | None:
    """The server's count of the trace's last request and its reply (prefix-cache hits
    included: they are in the context all the same); None if the server sent no usage."""
    usage = next((c.usage for c in reversed(trace.calls) if c.usage is not None), None)
    return None if usage is None else usage.total_tokens


def _overflowed(trace: vf.Trace) -> bool:
    """Whether the server refused the trace's last request as longer than the model's context
    (verifiers' chat program then ends its run cleanly; the refusal stays on the call)."""
    error = trace.calls[-1].error if trace.calls else None
    if error is None or error.status_code not in (400, 413):
        return False
    return any(marker in error.message.casefold() for marker in CONTEXT_OVERFLOW_MARKERS)


class TextgymsEnv(vf.Env[TextgymsEnvConfig]):
    """Plays a textgyms episode turn by turn through the player's interaction."""

    async def run(self, task: TextgymsTask, agents: vf.Agents) -> None:
        """Reset on the task's seed, step each reply, send each observation back (unless the
        next request would overflow the context: then the episode ends as truncated)."""
        row = TaskRow.from_row(task.data.info)
        limit = task.data.info.get("max_obs_tokens")
        budget = ContextBudget(task.data.info.get("max_context_tokens"))
        max_tokens = getattr(agents.player.config.sampling, "max_tokens", None)
        episode = await Episode.aopen(row)  # env work runs off verifiers' event loop
        actions: list[str] = []
        try:
            async with agents.player.interaction(task) as interaction:
                trace = interaction.trace
                segment = await interaction.turn()  # the task's prompt opens the exchange
                while not segment.terminated:
                    actions.append(_reply(segment))
                    result = await episode.astep(actions[-1])
                    if result.done:
                        break
                    answer = cut_observation(result.observation, limit)
                    budget.used(_counted(trace), [m.model_dump() for m in trace.messages],
                                [{"role": "user", "content": answer}])
                    if not budget.fits(max_tokens):
                        episode.context_cut = True  # a request the server would refuse
                        trace.stop(CONTEXT_CUT)
                        break
                    segment = await interaction.turn(answer)
            if not episode.done and (trace.stop_condition in TOKEN_CAPS or _overflowed(trace)):
                episode.context_cut = True  # verifiers' token caps or the server's context
            trace.record_reward(REWARD, episode.reward())
            trace.record_metrics(episode.metrics(fill=0.0))  # the taskset's fixed keys
            trace.info["textgyms"] = {**row.columns(), "actions": actions}
        finally:
            await episode.aclose()


def taskset(envs: str | list[Any], **config: Any) -> TextgymsTaskset:
    """A taskset for any id or mixture, e.g. ``taskset("textgyms/Wordle-v0", kwargs={...})``;
    ``config`` takes the other :class:`TextgymsConfig` fields (``kwargs``, ``split``, ``seed``)."""
    return TextgymsTaskset(TextgymsConfig(envs=envs, **config))


def family(module: str, stem: str) -> tuple[type[TextgymsConfig], type[TextgymsTaskset]]:
    """The config and taskset classes ``{stem}Config`` and ``{stem}Taskset`` of the family
    module ``module`` (a key of :data:`FAMILIES`): :class:`TextgymsConfig` with ``envs``
    defaulting to the family's id, and
    a taskset typed with that config, both owned by ``module`` (verifiers reads the config
    class from the taskset's generic parameters, so the class is built the way a class
    statement builds it)."""
    env_id = FAMILIES[module]
    config = types.new_class(f"{stem}Config", (TextgymsConfig,), exec_body=lambda ns: ns.update(
        __module__=module, __annotations__={"envs": str | list[Any]}, envs=env_id,
        __doc__=f"A textgyms taskset config whose env defaults to {env_id}."))
    bases = (TextgymsTaskset, vf.Taskset[TextgymsTask, config])
    tasks = types.new_class(f"{stem}Taskset", bases, exec_body=lambda ns: ns.update(
        __module__=module,
        __doc__=f"Procedural tasks of {env_id} (or of ``--env.taskset.envs``)."))
    return config, tasks
