"""Run inside ``.venv-skyrl`` (Python 3.12, skyrl 0.4) by ``test_integrations_skyrl.py``:
SkyRL's own data path (``PromptDataset`` -> ``prepare_generator_input``) and generator
(``SkyRLGymGenerator``) play every textgyms id through ``textgyms.integrations.skyrl``, with a
config parsed by ``textgyms.integrations.skyrl.main.load_config`` and a scripted inference client
in place of vLLM. Prints one JSON report on its last line; the test compares it with the local
envs (of the main venv)."""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

from skyrl.backends.skyrl_train.inference_servers.base import InferenceEngineInterface
from skyrl.backends.skyrl_train.inference_servers.engine_utils import (
    get_sampling_params_for_backend,
)
from skyrl.train.dataset import PromptDataset
from skyrl.train.generators.skyrl_gym_generator import SkyRLGymGenerator
from skyrl.train.generators.utils import prepare_generator_input

import textgyms
from textgyms.errors import ConfigError
from textgyms.export_sources import parse_sources
from textgyms.export_tasks import export_tasks
from textgyms.integrations.episode import TaskRow
from textgyms.integrations.skyrl import register_env
from textgyms.integrations.skyrl.main import load_config
from textgyms.models import save_tiny_random

JUNK = ["", "hello", "<guess>zzzzz</guess>", '{"name": "nope", "arguments": {}}'] * 30


class ScriptedClient(InferenceEngineInterface):
    """SkyRL's inference-engine interface answering from a script per session (SkyRL's
    ``<uid>_<repetition>``): the completion's text, its ids from the real tokenizer plus EOS
    (what vLLM returns when the model stops), and log-probability 0 (the script is certain)."""

    def __init__(self, tokenizer, scripts: dict[str, list[str]]) -> None:
        self.tok, self.scripts = tokenizer, {k: list(v) for k, v in scripts.items()}
        self.generated: dict[str, list[list[int]]] = {}
        self.finished: list[str] = []

    @property
    def model_name(self) -> str:
        return "scripted"

    async def generate(self, input_batch, model=None):
        (session,) = input_batch["session_ids"]
        text = self.scripts[session].pop(0)
        ids = self.tok.encode(text, add_special_tokens=False) + [self.tok.eos_token_id]
        self.generated.setdefault(session, []).append(ids)
        return {"responses": [text], "response_ids": [ids], "stop_reasons": ["stop"],
                "response_logprobs": [[0.0] * len(ids)]}

    async def finish_session(self, session_id: str) -> None:
        self.finished.append(session_id)


def _unused(name: str):
    async def method(self, *args, **kwargs):
        raise AssertionError(f"SkyRL's generator called {name}, which the script does not serve")
    return method


for _name in InferenceEngineInterface.__abstractmethods__ - set(vars(ScriptedClient)):
    setattr(ScriptedClient, _name, _unused(_name))
ScriptedClient.__abstractmethods__ = frozenset()


def oracle(extras: dict) -> list[str]:
    """The oracle's actions for the row's task (what the scripted model answers)."""
    env = TaskRow.from_row(extras).make()
    env.reset(seed=TaskRow.from_row(extras).seed)
    actions = list(env.unwrapped.solve(env.unwrapped.task))
    env.close()
    return actions


def segments(ids: list[int], mask: list[int], bit: int) -> list[list[int]]:
    """The maximal runs of ``ids`` whose mask is ``bit``."""
    runs, run = [], []
    for i, m in zip(ids, mask, strict=True):
        if m == bit:
            run.append(i)
        elif run:
            runs, run = runs + [run], []
    return runs + [run] if run else runs


def generate(cfg, tok, rows, scripts, n=1) -> tuple[dict, ScriptedClient]:
    """One SkyRL generate call over ``rows`` (PromptDataset items), as its trainer makes it."""
    client = ScriptedClient(tok, scripts)
    generator = SkyRLGymGenerator(cfg.generator, cfg.environment.skyrl_gym, client, tok)
    batch = [{"prompt": p, "env_class": c, "env_extras": e, "uid": u} for p, c, e, u in rows]
    params = get_sampling_params_for_backend(cfg.generator.inference_engine.backend,
                                             cfg.generator.sampling_params)
    gen_input, _ = prepare_generator_input(batch, n, params, cfg.environment.env_class, "train", 0)
    return asyncio.run(generator.generate(gen_input, disable_tqdm=True)), client


def overrides(data: Path, model: Path, **more: str) -> list[str]:
    base = {"data.train_data": f"['{data}']", "trainer.policy.model.path": str(model),
            "trainer.max_prompt_length": "100000", "generator.max_input_length": "1000000",
            "generator.max_turns": "50", "trainer.logger": "console"}
    return [f"{k}={v}" for k, v in {**base, **more}.items()]


def main(out: dict) -> None:
    tmp = Path(tempfile.mkdtemp())
    model = save_tiny_random(tmp / "model")  # a real tokenizer (and model dir) built offline
    data = tmp / "tasks.parquet"
    export_tasks(parse_sources(",".join(textgyms.env_ids())), 1, data, "skyrl")
    register_env()
    cfg = load_config(overrides(data, model))
    out["config"] = {"env_class": cfg.environment.env_class, "max_turns": cfg.generator.max_turns,
                     "env_kwargs": cfg.environment.skyrl_gym.textgyms.env_kwargs,
                     "backend": cfg.generator.inference_engine.backend}
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model), local_files_only=True)
    dataset = PromptDataset(cfg.data.train_data, tok, cfg.trainer.max_prompt_length, num_workers=1)
    rows = [dataset[i] for i in range(len(dataset))]
    # repetition 0 plays the oracle's answers, repetition 1 junk until the env ends the episode
    scripts = {}
    for _, _, extras, uid in rows:
        scripts[f"{uid}_0"], scripts[f"{uid}_1"] = oracle(extras), list(JUNK)
    output, client = generate(cfg, tok, rows, scripts, n=2)
    out["trajectories"] = []
    for i, (prompt_ids, response, mask, reward) in enumerate(zip(
            output["prompt_token_ids"], output["response_ids"], output["loss_masks"],
            output["rewards"], strict=True)):
        _, _, extras, uid = rows[i // 2]
        session = f"{uid}_{i % 2}"
        played = client.generated[session]
        out["trajectories"].append({
            "row": {k: extras[k] for k in ("env_id", "seed", "split", "env_kwargs", "task_id")
                    if k in extras} | {"extra_info": extras.get("extra_info")},
            "actions": [tok.decode(ids[:-1]) for ids in played],
            "scripted": (oracle(extras) if i % 2 == 0 else JUNK)[:len(played)],
            "generated_verbatim": segments(response, mask, 1) == played,
            "observations": [tok.decode(s) for s in segments(response, mask, 0)],
            "prompt_is_template": prompt_ids == tok.apply_chat_template(
                rows[i // 2][0], add_generation_prompt=True, tokenize=True, return_dict=False),
            "reward_sum": sum(reward), "stop_reason": output["stop_reasons"][i]})
    out["finished_sessions"] = sorted(client.finished)
    out["rollout_metrics"] = {k: float(v) for k, v in output["rollout_metrics"].items()}
    env_kwargs_and_refusals(out, data, model, tok, rows)


def env_kwargs_and_refusals(out, data, model, tok, rows) -> None:
    """``environment.skyrl_gym.textgyms.env_kwargs`` reaches the env; SkyRL's refusals surface."""
    wordle = [r for r in rows if r[2]["env_id"] == "textgyms/Wordle-v0"]
    cfg = load_config(overrides(data, model, **{
        "environment.skyrl_gym.textgyms.env_kwargs": "{max_invalid: 1}"}))
    output, client = generate(cfg, tok, wordle, {f"{wordle[0][3]}_0": list(JUNK)})
    out["strict_wordle"] = {"turns": len(client.generated[f"{wordle[0][3]}_0"]),
                            "reward_sum": sum(output["rewards"][0])}
    out["refused"] = {}
    for name, argv in {"unknown": ["environment.skyrl_gym.textgyms.nope=1"],
                       "plus": ["+trainer.x=1"],
                       "batch": ["trainer.train_batch_size=1"]}.items():  # a bare assert
        try:
            load_config(overrides(data, model) + argv)
        except ConfigError as exc:
            out["refused"][name] = str(exc)


if __name__ == "__main__":
    report: dict = {"python": list(sys.version_info[:2])}
    main(report)
    print(json.dumps(report))
