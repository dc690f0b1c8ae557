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

from textgyms.core import ERROR, TOOLS
from textgyms.errors import ConfigError

__all__ = ["TextgymsTRLEnv", "environment_factory", "trl_dataset"]

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
        self._env = gym.make(self._env_id, **self._env_kwargs)
        self._done = False
        self._return = 0.0
        self._penalties = 0.0
        self._info: dict[str, Any] = {}

    def reset(self, **row: Any) -> str:
        """Start a new episode (on the row's ``seed`` if it has one) and return its prompt."""
        seed = row.get("seed")
        seed = next(type(self)._seeds) if seed is None else int(seed)
        obs, self._info = self._env.reset(seed=seed)
        self._done, self._return, self._penalties = False, 0.0, 0.0
        return obs

    def get_reward(self) -> float:
        """The episode's reward (see the module docstring)."""
        if self._done or not self._info:
            return self._return
        env = self._env.unwrapped
        return float(env.final_verdict(env.state).score) - self._penalties

    @property
    def info(self) -> dict[str, Any]:
        """The env's info after the last reset or tool call (transcript in ``messages``)."""
        return self._info

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        """Play one tool call as the env's JSON action; return the observation."""
        if not self._info:
            return "No episode is running: the environment was not reset."
        if self._done:
            return "The episode is over; no more tool calls are needed."
        action = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
        obs, reward, terminated, truncated, self._info = self._env.step(action)
        self._return += float(reward)
        if self._info.get(ERROR) is not None:
            self._penalties += self._env.unwrapped.invalid_penalty
        self._done = bool(terminated or truncated)
        return obs


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
