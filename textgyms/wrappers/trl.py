"""TRL: any textgyms env as a ``GRPOTrainer(environment_factory=...)`` environment.

``environment_factory(env_id, **kwargs)`` returns a class; TRL calls it with no arguments, one
instance per rollout, and drives it through the protocol of ``trl.GRPOTrainer`` (trl 1.x):

* ``reset(**row) -> str``: starts an episode and returns the env's prompt, which TRL appends to
  the last user message of the dataset row. A ``seed`` column in the row picks the task, so the
  ``num_generations`` rollouts of a GRPO group (the same row repeated) play the same task;
  without one, tasks come from a counter starting at ``seed``.
* one public method per env tool (``guess``, ``search``, ``answer``, ...), with a Google-style
  docstring and type hints built from the tool schemas the env publishes in ``info["tools"]``
  for these kwargs, which TRL turns back into the same JSON schema. A call becomes the env's
  JSON action ``{"name": ..., "arguments": {...}}`` and returns the env's observation. Bad
  arguments are the agent's mistake: the env answers with feedback, nothing raises.
* ``get_reward() -> float``: the episode's return (the final score, less any invalid-action
  penalties); for an episode the model left unfinished, the score the env gives when an episode
  is cut short (as at the turn limit).

:func:`metrics_reward` logs the episodes' metrics (score, solved, turns, return, invalid
actions, the verdict's parts per env) through TRL's ``log_metric``. Tool results longer than
``$TEXTGYMS_MAX_OBS_TOKENS`` UTF-8 bytes come back cut with a marker; an episode TRL cuts at
``max_completion_length`` is paid the score as things stand by ``get_reward``.

Everything else on the class is private, because TRL exposes every public method as a tool.
The class pickles (it is rebuilt from its env id and kwargs), as TRL's async GRPO needs.
Only native tool calls reach the env under TRL (the chat template's tool-call format, parsed by
the tokenizer's response template); the tag form of textgyms actions is for other loops.
:func:`trl_dataset` builds the matching dataset (an empty user message and a ``seed`` per task).
"""

from __future__ import annotations

import copyreg
import inspect
import itertools
import json
from typing import Any

import gymnasium as gym

from textgyms.core import TOOLS
from textgyms.errors import ConfigError
from textgyms.integrations.episode import (
    Episode,
    TaskRow,
    cut_observation,
    metric_keys,
    obs_token_limit,
    size_sandbox_pool,
)

__all__ = ["TextgymsTRLEnv", "environment_factory", "metrics_reward", "trl_dataset"]

_PY_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list,
             "object": dict}
_RESERVED = ("reset", "get_reward")


class _FactoryClass(type):
    """The metaclass of the built classes: it remembers how a class was made, so the class
    pickles by recipe (TRL's async GRPO sends ``environment_factory`` to spawned workers)."""

    _recipe: tuple[str, int, dict[str, Any]] | None = None


def _rebuild(env_id: str, seed: int, env_kwargs: dict[str, Any]) -> type[TextgymsTRLEnv]:
    """Unpickle a built class by building it again."""
    return environment_factory(env_id, seed=seed, **env_kwargs)


def _reduce_class(cls: _FactoryClass) -> Any:
    if cls._recipe is None:  # the base class itself pickles by reference
        return cls.__qualname__
    return _rebuild, cls._recipe


copyreg.pickle(_FactoryClass, _reduce_class)


class TextgymsTRLEnv(metaclass=_FactoryClass):
    """Base of the classes :func:`environment_factory` builds (one per env id and kwargs)."""

    _env_id: str = ""
    _env_kwargs: dict[str, Any] = {}
    _seeds: Any = None  # itertools.count shared by the instances of one class

    def __init__(self) -> None:
        size_sandbox_pool()  # TRL plays a batch's Code tools side by side
        self._env = gym.make(self._env_id, **self._env_kwargs)
        self._episode: Episode | None = None

    def reset(self, **row: Any) -> str:
        """Start a new episode (on the row's ``seed`` if it has one) and return its prompt."""
        seed = row.get("seed")
        seed = next(type(self)._seeds) if seed is None else int(seed)
        task = TaskRow(self._env_id, dict(self._env_kwargs), seed)
        self._episode = Episode(task, env=self._env)
        return self._episode.prompt

    def get_reward(self) -> float:
        """The episode's reward (see the module docstring)."""
        return self._episode.reward() if self._episode is not None else 0.0

    @property
    def info(self) -> dict[str, Any]:
        """The env's info after the last reset or tool call (transcript in ``messages``)."""
        return self._episode.info if self._episode is not None else {}

    def _metrics(self, keys: tuple[str, ...]) -> dict[str, float]:
        """The episode's metrics under ``keys`` (other envs' keys 0.0)."""
        if self._episode is None:
            return dict.fromkeys(keys, 0.0)
        return {k: float(v) for k, v in self._episode.metrics(keys, fill=0.0).items()}

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        """Play one tool call as the env's JSON action; return the observation (cut to
        ``$TEXTGYMS_MAX_OBS_TOKENS`` UTF-8 bytes, with a marker)."""
        if self._episode is None:
            return "No episode is running: the environment was not reset."
        if self._episode.done:
            return "The episode is over; no more tool calls are needed."
        action = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
        return cut_observation(self._episode.step(action).observation, obs_token_limit())


def environment_factory(env_id: str, *, seed: int = 0, **env_kwargs: Any) -> type[TextgymsTRLEnv]:
    """A class for ``GRPOTrainer(environment_factory=...)`` playing ``env_id`` with ``env_kwargs``.

    The kwargs are checked now (an unknown one raises ``ConfigError``). ``seed`` starts the
    task counter used when dataset rows carry no ``seed`` column.
    """
    import textgyms  # noqa: F401  (registers the ids)

    probe = gym.make(env_id, **env_kwargs)
    # The reset info lists this configuration's tools (a family may enable tools per kwargs).
    tools = [t["function"] for t in probe.reset(seed=seed)[1][TOOLS]]
    probe.close()
    namespace: dict[str, Any] = {
        "_env_id": env_id,
        "_env_kwargs": dict(env_kwargs),
        "_seeds": itertools.count(seed),
        "_recipe": (env_id, seed, dict(env_kwargs)),
        "__doc__": f"``{env_id}`` as a TRL environment (tools: "
        f"{', '.join(t['name'] for t in tools)}).",
    }
    for fn in tools:
        name = fn["name"]
        if name in _RESERVED or name.startswith("_") or not name.isidentifier():
            raise ConfigError(f"{env_id}: tool name {name!r} cannot be a TRL tool method")
        namespace[name] = _tool_method(fn)
    name = "".join(c for c in env_id.split("/")[-1].title() if c.isalnum()) + "Env"
    return type(name, (TextgymsTRLEnv,), namespace)


def _tool_method(fn: dict[str, Any]) -> Any:
    """A method named after the tool (``fn``: the OpenAI function schema the env publishes),
    whose signature, type hints and docstring describe the tool's parameters."""
    name = fn["name"]

    def tool(self: TextgymsTRLEnv, **arguments: Any) -> str:
        return self._call(name, arguments)

    props = fn.get("parameters", {}).get("properties", {})
    required = set(fn.get("parameters", {}).get("required", []))
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    for arg, prop in props.items():
        kind = _PY_TYPES.get(prop.get("type", "string"), str)
        default = inspect.Parameter.empty if arg in required else prop.get("default")
        params.append(inspect.Parameter(arg, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        default=default, annotation=kind))
        annotations[arg] = kind
    annotations["return"] = str
    tool.__name__ = tool.__qualname__ = name
    tool.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    tool.__annotations__ = annotations
    tool.__doc__ = _docstring(fn)
    return tool


def _docstring(fn: dict[str, Any]) -> str:
    """A Google-style docstring (what transformers' ``get_json_schema`` reads)."""
    lines = [" ".join(fn.get("description", "").split()) or f"Call the {fn['name']} tool.", ""]
    props = fn.get("parameters", {}).get("properties", {})
    if props:
        lines.append("Args:")
        lines += [f"    {arg}: {_describe(arg, prop)}" for arg, prop in props.items()]
        lines.append("")
    lines += ["Returns:", "    The environment's response."]
    return "\n".join(lines)


def _describe(arg: str, prop: dict[str, Any]) -> str:
    """One argument's description, with its choices in the form the schema parser reads."""
    text = " ".join(str(prop.get("description", "")).split()) or f"the {arg}"
    if prop.get("enum") is not None:
        text += f" (choices: {json.dumps(list(prop['enum']))})"
    return text


def trl_dataset(num_tasks: int, seed: int = 0) -> Any:
    """A ``datasets.Dataset`` of ``num_tasks`` rows: an empty user message (the env's prompt is
    appended by ``reset``) and ``seed`` (so a GRPO group shares its task)."""
    from datasets import Dataset

    if num_tasks < 1:
        raise ConfigError(f"num_tasks must be >= 1, got {num_tasks}")
    return Dataset.from_dict(
        {
            "prompt": [[{"role": "user", "content": ""}] for _ in range(num_tasks)],
            "seed": [seed + i for i in range(num_tasks)],
        }
    )


def metrics_reward(envs: Any) -> Any:
    """A TRL reward function that logs the episodes' metrics and scores nothing: pass it in
    ``reward_funcs`` beside an ``environment_factory`` of ``envs`` (an id or a mixture).

    Every call logs, through TRL's ``log_metric``, the batch mean of each of
    :func:`~textgyms.integrations.episode.metric_keys` ``(envs)``: the same keys on every
    rank and step (TRL gathers them in order), other envs' keys counted as 0.0, so divide an
    ``<env>/...`` mean by ``<env>/episodes`` for that env's own mean. It returns None per
    completion, which TRL leaves out of the reward (its column logs NaN)."""
    keys = metric_keys(envs)

    def textgyms_metrics(prompts: list[Any], completions: list[Any] | None = None,
                         environments: list[Any] | None = None, log_metric: Any = None,
                         **kwargs: Any) -> list[None]:
        played = [e for e in environments or [] if isinstance(e, TextgymsTRLEnv)]
        if log_metric is not None and played:
            rows = [e._metrics(keys) for e in played]
            for key in keys:
                log_metric(key, sum(r[key] for r in rows) / len(rows))
        return [None] * len(prompts)

    return textgyms_metrics
