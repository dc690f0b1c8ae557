"""Each recipe in ``examples/<trainer>/`` loads through that trainer's own config loader.

The recipes are GPU runs (Qwen3-1.7B on Search and Code); what runs here is everything up to
the training itself:

* verl: the Hydra config composed on verl's ``ppo_trainer`` with Hydra's compose API, as
  ``verl.trainer.main_ppo`` composes it, then verl's ``validate_config``;
* SkyRL: the overrides through skyrl 0.3.0's ``SkyRLTrainConfig`` key validation and dataclass
  building, section by section (the top-level ``__post_init__`` imports ``skyrl.backends``,
  which does not import on Python 3.11, so only that last step is left out);
* verifiers: ``vf-eval @ eval.toml --dry-run`` in ``.venv-verifiers`` (verifiers resolves and
  validates the file with its own config types, then exits);
* OpenRLHF: ``openrlhf.cli.train_ppo_ray`` imports vLLM and Ray at the top, so its argument
  parser (built under ``if __name__ == "__main__"``) is taken from its source: the statements
  that build the parser and those that validate the parsed arguments run as written, all but
  the final ``train(args)``;
* TRL: the YAML through TRL's ``TrlParser`` into ``GRPOConfig``;
* ART: the recipe's ``art.TrainableModel``, and its training arguments bound to
  ``LocalBackend.train``'s signature.

Each check also feeds the loader a misspelt key and expects it refused, so a passing check
means the loader validates keys. The env kwargs each ``run.sh`` exports with make real envs.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from types import ModuleType

import gymnasium as gym
import pytest

import textgyms  # noqa: F401  (registers the ids the recipes name)
from textgyms.integrations.cli import shipped_path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
TRAINERS = ("verl", "skyrl", "verifiers", "openrlhf", "art", "trl")
VF_BIN = ROOT / ".venv-verifiers" / "bin"


def _lines(path: Path) -> list[str]:
    """The non-comment, non-blank lines of an arguments file (as run.sh reads it)."""
    return [line.strip() for line in path.read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def _load(path: Path, name: str) -> ModuleType:
    """Import an example script as a module (its ``main`` does not run)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("trainer", TRAINERS)
def test_each_trainer_has_a_launch_script_that_parses(trainer):
    script = EXAMPLES / trainer / "run.sh"
    assert os.access(script, os.X_OK), f"{script} is not executable"
    subprocess.run(["bash", "-n", str(script)], check=True)


@pytest.mark.parametrize("trainer", ["verl", "skyrl", "openrlhf"])
def test_the_exported_env_kwargs_make_real_envs(trainer):
    text = (EXAMPLES / trainer / "run.sh").read_text()
    (kwargs,) = re.findall(r"^KWARGS='(.*)'$", text, re.MULTILINE)
    for env_id, env_kwargs in json.loads(kwargs).items():
        assert f"{env_id}," in text or f",{env_id}" in text, env_id  # exported envs
        gym.make(env_id, **env_kwargs).close()


# ---------------------------------------------------------------- verl


def _verl_compose(config_dir: Path, name: str, overrides: list[str]):
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        return compose(name, overrides=overrides)


def _leaves(node, prefix: str = "") -> list[str]:
    """Dotted paths of the leaves of a YAML mapping (lists count as leaves)."""
    if not isinstance(node, dict):
        return [prefix]
    return [leaf for key, value in node.items()
            for leaf in _leaves(value, f"{prefix}.{key}" if prefix else str(key))]


def _known(base: dict, path: str) -> bool:
    """Whether ``path`` names a key of ``base``, or a key inside one of its free-form mappings
    (an empty mapping in the defaults, such as ``apply_chat_template_kwargs``)."""
    *parents, last = path.split(".")
    node = base
    for part in parents:
        node = node.get(part) if isinstance(node, dict) else None
    return isinstance(node, dict) and (last in node or not node)


def test_verl_recipe_composes_on_verls_config_and_validates():
    pytest.importorskip("verl")
    import yaml
    from omegaconf import OmegaConf
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    loop = shipped_path("verl")
    cfg = _verl_compose(EXAMPLES / "verl", "textgyms_grpo",
                        [f"actor_rollout_ref.rollout.agent.agent_loop_config_path={loop}"])
    validate_config(cfg, use_reference_policy=need_reference_policy(cfg),
                    use_critic=need_critic(cfg))
    assert cfg.algorithm.adv_estimator == "grpo" and cfg.data.return_raw_chat
    assert cfg.actor_rollout_ref.rollout.agent.agent_loop_config_path == str(loop)
    assert cfg.actor_rollout_ref.model.path == "Qwen/Qwen3-1.7B"
    # Composition merges new keys silently: every key the recipe sets must be one of verl's.
    verl_dir = Path(importlib.util.find_spec("verl").submodule_search_locations[0])
    base = OmegaConf.to_container(_verl_compose(verl_dir / "trainer" / "config", "ppo_trainer",
                                                []))
    recipe = yaml.safe_load((EXAMPLES / "verl" / "textgyms_grpo.yaml").read_text())
    recipe = {k: v for k, v in recipe.items() if k not in ("hydra", "defaults")}
    assert [k for k in _leaves(recipe) if not _known(base, k)] == []
    with pytest.raises(Exception, match="max_assistant_turnz"):  # Hydra refuses unknown keys
        _verl_compose(EXAMPLES / "verl", "textgyms_grpo",
                      ["actor_rollout_ref.rollout.multi_turn.max_assistant_turnz=3"])


# ---------------------------------------------------------------- SkyRL


def _skyrl_build(overrides: list[str]) -> dict:
    """SkyRL 0.3.0's ``from_cli_overrides`` up to the top-level ``__post_init__``: each section
    of the parsed overrides built (and its keys validated) by SkyRL's own dataclass builder."""
    import dataclasses

    from omegaconf import OmegaConf
    from skyrl.train.config import SkyRLTrainConfig
    from skyrl.train.config.config import _resolve_class_type, build_nested_dataclass

    raw = OmegaConf.to_container(OmegaConf.from_cli(overrides), resolve=True)
    fields = {f.name: f for f in dataclasses.fields(SkyRLTrainConfig)}
    unknown = set(raw) - set(fields)
    if unknown:
        raise ValueError(f"Invalid fields {unknown} for SkyRLTrainConfig")
    return {name: build_nested_dataclass(_resolve_class_type(fields[name].type), section)
            for name, section in raw.items()}


def test_skyrl_recipe_builds_skyrls_typed_config():
    pytest.importorskip("skyrl.train.config")
    overrides = _lines(EXAMPLES / "skyrl" / "overrides.txt")
    cfg = _skyrl_build(overrides)
    assert cfg["environment"].env_class == "textgyms"
    assert cfg["generator"].max_turns == 8 and cfg["generator"].use_conversation_multi_turn
    assert cfg["generator"].batched is False
    assert cfg["trainer"].algorithm.advantage_estimator == "grpo"
    assert cfg["trainer"].policy.model.path == "Qwen/Qwen3-1.7B"
    assert list(cfg["data"].train_data) == ["data/skyrl/train.parquet"]
    with pytest.raises(ValueError, match="max_turnz"):
        _skyrl_build([*overrides, "generator.max_turnz=3"])


# ---------------------------------------------------------------- OpenRLHF


def _openrlhf_args(argv: list[str]):
    """``train_ppo_ray``'s own parser and argument checks, run from its source."""
    spec = importlib.util.find_spec("openrlhf")
    if spec is None:
        pytest.skip("openrlhf is not installed")
    source = Path(spec.submodule_search_locations[0]) / "cli" / "train_ppo_ray.py"
    tree = ast.parse(source.read_text())
    (main,) = [node for node in tree.body
               if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)]
    body = main.body
    (parse,) = [i for i, node in enumerate(body) if "parser.parse_args()" in ast.unparse(node)]
    assert ast.unparse(body[-1]) == "train(args)"  # the one statement that is not run

    def run(statements: list[ast.stmt], namespace: dict) -> None:
        exec(compile(ast.Module(body=statements, type_ignores=[]), str(source), "exec"),
             namespace)

    namespace = {"__name__": "train_ppo_ray", "argparse": __import__("argparse"), "os": os,
                 "datetime": datetime}
    run(body[:parse], namespace)
    namespace["args"] = namespace["parser"].parse_args(argv)
    run(body[parse + 1:-1], namespace)
    return namespace["args"]


def test_openrlhf_recipe_parses_with_train_ppo_rays_parser():
    pytest.importorskip("openrlhf.utils.config")  # hierarchize, which the checks import
    agent = str(shipped_path("openrlhf"))
    argv = [*_lines(EXAMPLES / "openrlhf" / "args.txt"), "--train.agent_func_path", agent]
    args = _openrlhf_args(argv)
    assert args.train.agent_func_path == agent and args.reward.remote_url == ["agent"]
    assert args.actor.model_name_or_path == "Qwen/Qwen3-1.7B"
    assert args.data.label_key == "extra_info" and args.data.apply_chat_template
    assert args.algo.advantage.estimator == "group_norm"
    assert args.rollout.n_samples_per_prompt == 8
    with pytest.raises(SystemExit):  # argparse: unrecognized arguments
        _openrlhf_args([*argv, "--data.max_lenn", "3"])


# ---------------------------------------------------------------- TRL


def test_trl_recipe_loads_into_grpoconfig_with_trls_parser():
    pytest.importorskip("trl")
    from trl import GRPOConfig

    example = _load(EXAMPLES / "trl" / "train.py", "textgyms_trl_example")
    # bf16 needs a GPU, which transformers checks while building the config: off here only.
    script, config = example.parse(["--config", str(EXAMPLES / "trl" / "grpo.yaml"),
                                    "--bf16", "false"])
    assert isinstance(config, GRPOConfig)
    assert (script.model, script.env_id) == ("Qwen/Qwen3-1.7B", "textgyms/Search-v1")
    assert config.num_generations == 8 and config.use_vllm and config.vllm_mode == "colocate"
    assert config.max_tool_calling_iterations == 6
    assert config.chat_template_kwargs == {"enable_thinking": False}
    assert "bf16: true" in (EXAMPLES / "trl" / "grpo.yaml").read_text()
    env_class = example_env(script)
    assert env_class().reset(seed=0).startswith(gym.make(script.env_id).reset(seed=0)[0][:40])
    with pytest.raises((SystemExit, ValueError)):
        example.parse(["--config", str(EXAMPLES / "trl" / "grpo.yaml"), "--bf16", "false",
                       "--num_generationz", "4"])


def example_env(script):
    """The env class the TRL recipe trains on."""
    from textgyms.wrappers.trl import environment_factory

    return environment_factory(script.env_id, **json.loads(script.env_kwargs))


# ---------------------------------------------------------------- ART


def test_art_recipe_builds_arts_model_and_binds_its_train_call():
    pytest.importorskip("textgyms.integrations.art")
    from art.local import LocalBackend

    from textgyms.integrations.art import Scenario, scenarios

    example = _load(EXAMPLES / "art" / "train.py", "textgyms_art_example")
    recipe = example.RECIPE
    model = recipe.model()
    assert (model.base_model, model.trainable) == ("Qwen/Qwen3-1.7B", True)
    inspect.signature(LocalBackend.train).bind(None, model, [], **recipe.train)
    with pytest.raises(TypeError):
        inspect.signature(LocalBackend.train).bind(None, model, [], learning_rat=1e-5)
    drawn = scenarios(recipe.envs, 4, kwargs=recipe.env_kwargs, max_tokens=recipe.max_tokens)
    assert all(isinstance(s, Scenario) and s.max_tokens == recipe.max_tokens for s in drawn)
    assert {s.env_id for s in drawn} <= {"textgyms/Search-v1", "textgyms/Code-v0"}


# ---------------------------------------------------------------- verifiers


def test_verifiers_recipe_resolves_with_vf_evals_own_loader(tmp_path):
    if not (VF_BIN / "vf-eval").exists():
        pytest.skip("no .venv-verifiers (run `make test`, which makes it)")
    env = {**os.environ, "OPENAI_API_KEY": "local", "PATH": f"{VF_BIN}:{os.environ['PATH']}"}

    def dry_run(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(VF_BIN / "vf-eval"), "@", str(EXAMPLES / "verifiers" /
                                                               "eval.toml"), "--dry-run", *extra],
                              capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)

    done = dry_run()
    assert done.returncode == 0, done.stderr[-3000:]
    # --dry-run writes the resolved config (every default filled in) and exits.
    (written,) = tmp_path.glob("runs/verifiers/*/configs/resolved/eval.json")
    resolved = json.loads(written.read_text())
    taskset, player = resolved["env"]["taskset"], resolved["env"]["player"]
    assert (taskset["id"], taskset["envs"]) == ("textgyms_env",
                                                "textgyms/Search-v1,textgyms/Code-v0")
    assert taskset["kwargs"] == {"max_turns": 6} and taskset["interleave"] is True
    assert resolved["model"] == "Qwen/Qwen3-1.7B" and resolved["num_rollouts"] == 8
    assert "subprocess" in json.dumps(player) and resolved["push"] is False
    bad = dry_run("--env.taskset.interleavz", "true")
    assert bad.returncode != 0 and "interleavz" in bad.stdout + bad.stderr
