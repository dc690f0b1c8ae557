"""textgyms in SkyRL: a ``skyrl_gym`` text env that plays any textgyms env id.

SkyRL's generator makes one env per dataset row with
``skyrl_gym.make(row["env_class"], env_config=..., extras=<the row's other columns>)``.
:class:`~textgyms.integrations.skyrl.env.TextgymsEnv` is that env for every textgyms id: the
row's ``extra_info`` (what ``textgyms export tasks --for skyrl`` writes) names the env id, its
kwargs and the seed. :func:`register_env` registers it under ``textgyms`` in SkyRL's registry;
``python -m textgyms.integrations.skyrl.main`` does so inside the Ray entrypoint and starts
SkyRL's standard PPO/GRPO experiment. Needs the ``[skyrl]`` extra.
"""

from __future__ import annotations

__all__ = ["ENV_CLASS", "register_env"]

ENV_CLASS = "textgyms"


def register_env(name: str = ENV_CLASS) -> None:
    """Register :class:`TextgymsEnv` in ``skyrl_gym``'s registry as ``name`` (once per
    process; SkyRL refuses a second registration of a name)."""
    import skyrl_gym

    if name not in skyrl_gym.registry:
        skyrl_gym.register(id=name, entry_point="textgyms.integrations.skyrl.env:TextgymsEnv")
