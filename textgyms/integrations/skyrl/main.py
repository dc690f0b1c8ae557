"""``python -m textgyms.integrations.skyrl.main [SkyRL config overrides]``: SkyRL's standard
experiment with the textgyms env registered.

SkyRL builds its envs inside a Ray task, so the registration must happen there, not in the
driver: the entrypoint below registers :class:`~textgyms.integrations.skyrl.env.TextgymsEnv`
as ``textgyms`` and then runs SkyRL's own ``BasePPOExp`` with the user's config (the same
overrides ``python -m skyrl.train.entrypoints.main_base`` takes, e.g.
``data.train_data=['data/train.parquet'] trainer.policy.model.path=...``).

SkyRL 0.4's typed config accepts no field it does not declare, and its generator passes
``environment.skyrl_gym.<env_class>`` to each env as ``env_config``: :func:`load_config`
parses the overrides into SkyRL's config extended by one section,
``environment.skyrl_gym.textgyms.env_kwargs`` (kwargs every row's env gets unless the row sets
them), and makes ``textgyms`` the default ``environment.env_class``.
"""

from __future__ import annotations

import functools
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from textgyms.errors import ConfigError
from textgyms.integrations.skyrl import ENV_CLASS, register_env

__all__ = ["config_class", "entrypoint", "load_config", "main"]

SKYRL_INSTALL = ("SkyRL's trainer needs Python >= 3.12; there, pip install "
                 "'textgyms[skyrl,skyrl-run]' (it brings skyrl 0.4.0)")


@functools.cache  # one class per process: configs parsed twice compare and pickle alike
def config_class() -> type:
    """SkyRL's ``SkyRLTrainConfig`` with an ``environment.skyrl_gym.textgyms`` section (the
    env's ``env_config``) and ``textgyms`` as the default env class."""
    from dataclasses import field, make_dataclass

    from skyrl.train.config import SkyRLTrainConfig
    from skyrl.train.config.config import BaseConfig, EnvironmentConfig, SkyRLGymConfig

    def section(name: str, base: type, **fields: tuple[type, Any]) -> type:
        # make_dataclass keeps the field types as classes (this module's annotations are
        # strings), which SkyRL's builder needs to parse a nested section from the CLI
        return make_dataclass(name, [(k, t, field(default_factory=f) if callable(f) else
                                      field(default=f)) for k, (t, f) in fields.items()],
                              bases=(base,))

    env = section("TextgymsEnvConfig", BaseConfig, env_kwargs=(dict, dict))
    gym = section("TextgymsGymConfig", SkyRLGymConfig, textgyms=(env, env))
    environment = section("TextgymsEnvironmentConfig", EnvironmentConfig,
                          env_class=(str, ENV_CLASS), skyrl_gym=(gym, gym))
    return section("TextgymsTrainConfig", SkyRLTrainConfig, environment=(environment, environment))


def load_config(argv: Sequence[str]) -> Any:
    """SkyRL's own parse (``from_cli_overrides``) and checks (``validate_cfg``) of ``argv``;
    a config SkyRL refuses raises :class:`ConfigError` with SkyRL's reason."""
    try:
        from skyrl.train.entrypoints.main_base import BasePPOExp  # noqa: F401  (fail here, early)
        from skyrl.train.utils import validate_cfg
    except Exception as exc:  # ImportError, or pydantic refusing skyrl's types on Python 3.11
        raise ConfigError(f"SkyRL's trainer does not import here ({exc!r}); {SKYRL_INSTALL}"
                          ) from exc
    try:
        cfg = config_class().from_cli_overrides(list(argv))
        validate_cfg(cfg)
    except (ValueError, TypeError, AssertionError, KeyError) as exc:
        # SkyRL's checks are often bare asserts: their source line is the reason
        reason = str(exc) or traceback.extract_tb(exc.__traceback__)[-1].line
        raise ConfigError(f"SkyRL refuses the config: {reason}") from exc
    return cfg


def entrypoint(cfg: Any) -> None:
    """What runs inside the Ray task: register the env, then SkyRL's own experiment."""
    from skyrl.train.entrypoints.main_base import BasePPOExp

    register_env()
    BasePPOExp(cfg).run()


def main(argv: Sequence[str] | None = None) -> None:
    """Parse SkyRL's config overrides, start Ray and run :func:`entrypoint` as a Ray task."""
    cfg = load_config(sys.argv[1:] if argv is None else argv)
    import ray
    from skyrl.train.utils.utils import initialize_ray

    initialize_ray(cfg)
    ray.get(ray.remote(num_cpus=1)(entrypoint).remote(cfg))


if __name__ == "__main__":
    try:
        main()
    except ConfigError as exc:
        print(f"textgyms.integrations.skyrl.main: error: {exc}", file=sys.stderr)
        sys.exit(2)
