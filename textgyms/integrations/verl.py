"""textgyms in verl: an agent loop that plays any textgyms env, token in and token out.

verl (0.8 and later) runs multi-turn rollouts as *agent loops*: subclasses of
``verl.experimental.agent_loop.AgentLoopBase`` registered by name, chosen per dataset row by
its ``agent_name`` column and loaded from the YAML file at
``actor_rollout_ref.rollout.agent.agent_loop_config_path``. :class:`TextgymsAgentLoop` is
registered as ``textgyms``; ``textgyms integrations path verl`` prints the shipped YAML, and
``textgyms export tasks --for verl`` writes rows that name it.

Per row the loop makes the row's env (:class:`~textgyms.integrations.episode.TaskRow`: any env
id, kwargs and seed, so a mixture is just a dataset), and per turn

1. asks verl's ``server_manager`` for a completion of the token ids so far (at most the tokens
   left of ``rollout.response_length``);
2. appends the generated ids exactly as returned, with mask 1 and their log-probs;
3. steps the env with the completion decoded without special tokens;
4. appends the env's answer as the chat template renders it, tokenised once, with mask 0
   (the observation-token rule below).

It stops when the env terminates or truncates, at ``multi_turn.max_assistant_turns`` (model
turns) or ``multi_turn.max_user_turns`` (env answers appended), or when the response budget is
spent (an observation that would not fit is not appended). The reward
is the episode's (:meth:`Episode.reward`: the env's summed rewards, sparse or dense as the env
is configured; an episode the trainer cut short is paid the score as things stand), and the
env's score, solved flag, turns and return go to ``extra_fields["reward_extra_info"]``, which
verl copies into the batch per sample (``AgentLoopOutput.metrics`` keeps only verl's own
timing fields).

**The observation-token rule.** The model's ids are never re-tokenised. After each turn the
loop appends what the tokenizer's chat template renders for the env's answer as a user turn,
through the next generation prompt, found by rendering (:func:`textgyms.tokens.observation_turn`,
the rule every token-level adapter shares); when the model did not end its turn (a completion
cut by length), the template's end-of-turn token comes first, with mask 0. Where verl registers
a Continuous Token builder for the model family (``config.json`` ``model_type``: Qwen, gpt-oss,
Gemma 4, DeepSeek, ...), the answer is merged by verl's own builder after that end-of-turn
token, so the sequence is what verl's tool agent loop would build; the generic builder and
families whose builder would remove tokens the model generated use the shared rule. Templates
that rewrite earlier turns (Qwen3 drops earlier reasoning) still append: the sequence keeps
what the model generated and saw. ``tests/test_chat_templates.py`` checks the rule over the
chat templates TRL ships.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import (
    AgentLoopBase,
    AgentLoopMetrics,
    AgentLoopOutput,
    register,
)
from verl.utils.tokenizer.continuous_token import ContinuousTokenBuilder

from textgyms.errors import ConfigError
from textgyms.integrations.episode import (
    COMMON_METRICS,
    Episode,
    TaskRow,
    cut_observation,
    obs_token_limit,
)
from textgyms.tokens import observation_turn

__all__ = ["AGENT_NAME", "TextgymsAgentLoop"]

AGENT_NAME = "textgyms"


@register(AGENT_NAME)
class TextgymsAgentLoop(AgentLoopBase):
    """verl agent loop that plays the textgyms env a dataset row names (module docstring)."""

    def __init__(self, *args: Any, tools: Any = None, max_obs_tokens: int | None = None,
                 **kwargs: Any) -> None:
        # verl hands every loop its configured tool list; a textgyms env brings its own tools.
        super().__init__(*args, **kwargs)
        # An env answer longer than this is cut with a marker (a key of the agent-loop YAML
        # entry, else $TEXTGYMS_MAX_OBS_TOKENS).
        self.max_obs_tokens = obs_token_limit(max_obs_tokens)
        self.response_length = int(self.rollout_config.response_length)
        multi_turn = self.rollout_config.multi_turn
        self.max_turns = multi_turn.max_assistant_turns or 0  # 0: the env's own limit only
        self.max_answers = multi_turn.max_user_turns or 0  # env answers appended

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        """Play one episode of the row in ``kwargs`` (every column of the dataset row)."""
        row = TaskRow.from_row(kwargs)
        episode = await Episode.aopen(row)  # env work runs off verl's event loop
        try:
            return await self._play(episode, sampling_params, kwargs)
        finally:
            await episode.aclose()

    async def _play(self, episode: Episode, sampling_params: dict[str, Any],
                    kwargs: dict[str, Any]) -> AgentLoopOutput:
        """The turn loop; returns verl's output for the finished or cut episode."""
        messages = self._prompt(episode, kwargs.get("raw_prompt"))
        ids = self.tokenizer.apply_chat_template(messages, tokenize=True, return_dict=False,
                                                 add_generation_prompt=True,
                                                 **self.apply_chat_template_kwargs)
        seq = _Sequence([int(t) for t in self._cap_text_prompt_length(list(ids))])
        request_id = uuid4().hex
        while len(seq.mask) < self.response_length:
            params = dict(sampling_params)
            params["max_tokens"] = min(int(params.get("max_tokens") or self.response_length),
                                       self.response_length - len(seq.mask))
            out = await self.server_manager.generate(
                request_id=request_id, prompt_ids=seq.prompt_ids + seq.ids, sampling_params=params)
            generated = seq.add(out.token_ids, 1, out.log_probs)
            text = self.tokenizer.decode(generated, skip_special_tokens=True)
            result = await episode.astep(text)
            seq.turns += 1
            if result.done or self._limit_reached(seq):
                break
            observation = cut_observation(result.observation, self.max_obs_tokens, self.tokenizer)
            messages += [{"role": "assistant", "content": text},
                         {"role": "user", "content": observation}]
            obs = self._observation_ids(messages, seq.prompt_ids + seq.ids)
            if len(seq.mask) + len(obs) >= self.response_length:
                break  # no room for the observation and a reply to it
            seq.add(obs, 0)
            seq.answers += 1
        # The response budget ended an episode the env and the turn limits had not: say so.
        episode.context_cut = not episode.done and not self._limit_reached(seq)
        return self._output(episode, seq, has_logprobs=bool(sampling_params.get("logprobs")))

    def _observation_ids(self, messages: list[dict[str, Any]], runtime: list[int]) -> list[int]:
        """The ids (mask 0) to append after the model's last turn for the env's answer, the last
        of ``messages``; ``runtime`` is the sequence so far (module docstring)."""
        turn = observation_turn(self.tokenizer, messages[-1:],
                                template_kwargs=self.apply_chat_template_kwargs)
        builder = getattr(self, "continuous_token_builder", None)
        if builder is None or type(builder) is ContinuousTokenBuilder:
            return turn.ids_after(runtime)
        close = [] if turn.ended(runtime) else list(turn.close)
        merged = builder.merge_context_tokens(messages[:-1], messages, runtime + close)
        if merged.removed_prefix_token_count:  # it would drop ids the model generated
            return turn.ids_after(runtime)
        return close + merged.token_ids[len(runtime) + len(close):]

    def _limit_reached(self, seq: _Sequence) -> bool:
        """The trainer's turn limits: model turns, or env answers appended."""
        return bool((self.max_turns and seq.turns >= self.max_turns)
                    or (self.max_answers and seq.answers >= self.max_answers))

    def _prompt(self, episode: Episode, raw_prompt: Any) -> list[dict[str, Any]]:
        """The row's prompt messages, checked against the env's own first messages (a dataset
        exported by another textgyms version, or for other kwargs, would train on prompts the
        env never shows); a system message the dataset added is kept."""
        env_messages = episode.messages
        if raw_prompt is None or len(raw_prompt) == 0:
            return env_messages
        messages = [{"role": m["role"], "content": m["content"]} for m in raw_prompt]
        body = [m for m in messages if m["role"] != "system"]
        if body != [m for m in env_messages if m["role"] != "system"]:
            raise ConfigError(
                f"the row's prompt is not what {episode.row.env_id} (seed {episode.row.seed}) "
                "shows; re-export the dataset with `textgyms export tasks`")
        return messages

    def _output(self, episode: Episode, seq: _Sequence, has_logprobs: bool) -> AgentLoopOutput:
        """verl's output: the response cut to ``response_length``, the episode's reward, and
        the env's numbers in ``reward_extra_info``. ``num_turns`` counts as verl's own tool
        loop does: model turns + env answers appended + 1."""
        n = self.response_length
        return AgentLoopOutput(
            prompt_ids=seq.prompt_ids,
            response_ids=seq.ids[:n],
            response_mask=seq.mask[:n],
            response_logprobs=seq.logprobs[:n] if has_logprobs else None,
            reward_score=episode.reward(),
            num_turns=seq.turns + seq.answers + 1,
            metrics=AgentLoopMetrics(),
            extra_fields={"reward_extra_info": self._metrics(episode), "turn_scores": [],
                          "tool_rewards": []},
        )


    @staticmethod
    def _metrics(episode: Episode) -> dict[str, Any]:
        """The episode's metrics under the dataset's fixed keys (verl builds its arrays from
        the first sample's keys). Other envs' keys are None: verl's validation metrics skip
        None, so each ``data_source`` averages its own env's numbers only."""
        return episode.metrics(episode.row.metric_keys or COMMON_METRICS, fill=None)


@dataclass
class _Sequence:
    """The token sequence of one episode: the prompt, then the response (model turns, mask 1;
    env answers, mask 0) with the log-probs of the model's tokens (0.0 elsewhere)."""

    prompt_ids: list[int]
    ids: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    turns: int = 0
    answers: int = 0

    def add(self, ids: Any, mask: int, logprobs: Any = None) -> list[int]:
        """Append ``ids`` (exactly as given) with loss-mask value ``mask``; return them."""
        ids = [int(t) for t in ids]
        self.ids += ids
        self.mask += [mask] * len(ids)
        self.logprobs += [float(x) for x in logprobs] if logprobs else [0.0] * len(ids)
        return ids
