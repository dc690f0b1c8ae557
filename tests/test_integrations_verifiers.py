"""The verifiers tasksets through verifiers' own plug-in loader (verifiers 0.4, no model needed).

verifiers lives in its own venv (``.venv-verifiers``, made by ``make test``: it pins mcp 2, the
openenv of this venv needs mcp<2), so the checks run there as a script and report JSON; the
episodes themselves are in ``test_integrations_llm.py``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import textgyms
from textgyms.integrations.episode import Episode, TaskRow

ROOT = Path(__file__).resolve().parents[1]
VF_PY = ROOT / ".venv-verifiers" / "bin" / "python"

SCRIPT = r'''
import json
import verifiers.v1 as vf
from verifiers.v1.utils.loaders import environment_class, taskset_class, taskset_config_type
from textgyms.integrations.verifiers import FAMILIES, TextgymsEnv, TextgymsTaskset, taskset

out = {"families": {}}
for module, env_id in [*FAMILIES.items(), ("textgyms_env", "")]:
    cls = taskset_class(module)
    config = taskset_config_type(module)(id=module)
    out["families"][module] = {
        "subclass": issubclass(cls, TextgymsTaskset), "infinite": cls.INFINITE,
        "env": environment_class(module) is TextgymsEnv, "default": config.envs}
ts = taskset_class("textgyms_wordle")(taskset_config_type("textgyms_wordle")(
    id="textgyms_wordle", kwargs={"max_turns": 3}, split="test", seed=5))
out["wordle"] = [{**t.data.model_dump(include={"idx", "id", "name", "prompt", "info"}),
                  "key": t.key, "hash": t.hash} for t in ts.take(3)]
mix = taskset_class("textgyms_env")(taskset_config_type("textgyms_env")(
    id="textgyms_env", envs="textgyms/Wordle-v0,textgyms/Code-v0", interleave=True))
out["interleave"] = [t.data.info["env_id"] for t in mix.take(4)]
weighted = taskset_class("textgyms_env")(taskset_config_type("textgyms_env")(
    id="textgyms_env", envs="textgyms/Wordle-v0*3,textgyms/Code-v0", seed=100))
out["weighted"] = [t.data.info["env_id"] for t in weighted.take(40)]
out["factory"] = [(t.data.info["env_id"], t.data.info["seed"], t.data.info["split"])
                  for t in taskset("textgyms/Code-v0", split="all", seed=3).take(2)]
try:
    list(taskset_class("textgyms_env")(taskset_config_type("textgyms_env")(
        id="textgyms_env")).take(1))
except vf.TaskError as exc:
    out["no_envs"] = str(exc)
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def report() -> dict:
    if not VF_PY.exists():
        pytest.skip("no .venv-verifiers (run `make test`, which makes it)")
    done = subprocess.run([str(VF_PY), "-c", SCRIPT], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_family_module_resolves_as_a_taskset_id(report):
    families = report["families"]
    assert set(families) == {"textgyms_wordle", "textgyms_search", "textgyms_code",
                             "textgyms_netconfig", "textgyms_iso20022", "textgyms_env"}
    for module, found in families.items():
        assert found["subclass"] and found["infinite"] and found["env"], module
    defaults = {found["default"] for m, found in families.items() if m != "textgyms_env"}
    assert defaults <= set(textgyms.env_ids())  # each family plays a registered id
    assert families["textgyms_env"]["default"] == ""


def test_tasks_are_the_envs_prompts_on_consecutive_seeds(report):
    tasks = report["wordle"]
    assert [t["idx"] for t in tasks] == [0, 1, 2]
    for i, task in enumerate(tasks):
        row = TaskRow.from_row(task["info"])
        assert (row.env_id, row.seed, row.split) == ("textgyms/Wordle-v0", 5 + i, "test")
        assert row.env_kwargs == {"max_turns": 3, "split": "test"}
        episode = Episode(row)
        assert task["prompt"] == episode.prompt and task["id"] == episode.info["task_id"]
        assert task["key"] == episode.info["task_id"] != task["hash"]  # keyed by our task_id
        assert task["name"] == f"textgyms/Wordle-v0#{5 + i}"
        episode.close()


def test_mixtures_interleave_or_draw_by_weight(report):
    assert report["interleave"] == ["textgyms/Wordle-v0", "textgyms/Code-v0"] * 2
    drawn = report["weighted"]
    assert 20 <= drawn.count("textgyms/Wordle-v0") <= 38 and "textgyms/Code-v0" in drawn


def test_the_factory_makes_a_taskset_for_any_id(report):
    assert report["factory"] == [["textgyms/Code-v0", 3, "all"], ["textgyms/Code-v0", 4, "all"]]


def test_a_taskset_without_an_env_says_what_to_set(report):
    assert "--env.taskset.envs" in report["no_envs"]
