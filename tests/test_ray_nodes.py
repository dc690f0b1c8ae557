"""Code and NetConfig vectors spread over the CPU nodes of a Ray cluster (issue: a GPU node's
trainer runs its envs on other machines). A real multi-node Ray cluster on this machine
(``ray.cluster_utils.Cluster``: a head that offers no CPU for envs, as a GPU node's would not,
and two CPU nodes that each offer one ``env_node`` resource), not a mock."""

from __future__ import annotations

import time

import numpy as np
import pytest

ray = pytest.importorskip("ray")
cluster_utils = pytest.importorskip("ray.cluster_utils")

import textgyms  # noqa: E402
from textgyms.policies import ScriptedPolicy  # noqa: E402
from textgyms.vector.ray import RayVecEnv  # noqa: E402


@pytest.fixture(scope="module")
def cpu_nodes():
    """A head with no env resource and two CPU nodes with one ``env_node`` each."""
    if ray.is_initialized():  # another module's local instance: this one needs its own
        ray.shutdown()
    cluster = cluster_utils.Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    for _ in range(2):
        cluster.add_node(num_cpus=1, resources={"env_node": 1})
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    yield cluster
    ray.shutdown()
    cluster.shutdown()


def _node_of(actor) -> str:
    """The id of the node an actor runs on, asked of the actor itself (Ray's ``__ray_call__``
    runs a function in the actor's process)."""
    return ray.get(actor.__ray_call__.remote(lambda _self: ray.get_runtime_context().get_node_id()))


@pytest.mark.parametrize("env_id", ["textgyms/Code-v0", "textgyms/NetConfig-v4"])
def test_heavy_family_runs_on_the_cpu_nodes(cpu_nodes, env_id):
    head = ray.get_runtime_context().get_node_id()
    with (
        RayVecEnv(env_id, 4, num_workers=2, actor_options={"resources": {"env_node": 1}}) as vec,
        textgyms.make_vec(env_id, 4, backend="serial") as ref,
    ):
        # Each CPU node offers one env_node: the two actors hold both, one per node.
        assert ray.available_resources().get("env_node", 0) == 0
        nodes = {_node_of(h.actor) for h in vec._handles}
        assert len(nodes) == 2 and head not in nodes
        obs, infos = vec.reset(seed=5)
        assert (obs, infos) == ref.reset(seed=5)
        policy = ScriptedPolicy("oracle", seed=0)
        for _ in range(3):
            actions = policy.act(obs, infos, envs=vec)
            batch, want = vec.step(actions), ref.step(actions)
            assert batch.observations == want.observations and batch.infos == want.infos
            assert np.array_equal(batch.rewards, want.rewards)
            obs, infos = batch.observations, batch.infos
    deadline = time.monotonic() + 60  # Ray returns an actor's resources asynchronously
    while ray.available_resources().get("env_node", 0) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ray.available_resources().get("env_node", 0) == 2  # closing freed the nodes
