"""``python -m textgyms.integrations.skyrl.main [SkyRL config overrides]``: SkyRL's standard
experiment with the textgyms env registered.

SkyRL builds its envs inside a Ray task, so the registration must happen there, not in the
driver: the entrypoint below registers :class:`~textgyms.integrations.skyrl.env.TextgymsEnv`
as ``textgyms`` and then runs SkyRL's own ``BasePPOExp`` with the user's config (the same
overrides ``python -m skyrl.train.entrypoints.main_base`` takes, e.g.
``data.train_data=['data/train.parquet'] trainer.policy.model.path=...``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from textgyms.errors import ConfigError
from textgyms.integrations.skyrl import register_env

__all__ = ["entrypoint", "main"]

SKYRL_INSTALL = ("SkyRL's trainer needs Python >= 3.12; there, pip install 'textgyms[skyrl]' "
                 "(it brings skyrl 0.4.0)")


def entrypoint(cfg: Any) -> None:
    """What runs inside the Ray task: register the env, then SkyRL's own experiment."""
    from skyrl.train.entrypoints.main_base import BasePPOExp

    register_env()
    BasePPOExp(cfg).run()


def main(argv: Sequence[str] | None = None) -> None:
    """Parse SkyRL's config overrides, start Ray and run :func:`entrypoint` as a Ray task."""
    try:
        import ray
        from skyrl.train.config import SkyRLTrainConfig
        from skyrl.train.entrypoints.main_base import BasePPOExp  # noqa: F401  (fail here, early)
        from skyrl.train.utils import validate_cfg
        from skyrl.train.utils.utils import initialize_ray
    except Exception as exc:  # ImportError, or pydantic refusing skyrl's types on Python 3.11
        raise ConfigError(f"SkyRL's trainer does not import here ({exc!r}); {SKYRL_INSTALL}"
                          ) from exc
    cfg = SkyRLTrainConfig.from_cli_overrides(list(sys.argv[1:] if argv is None else argv))
    validate_cfg(cfg)
    initialize_ray(cfg)
    ray.get(ray.remote(num_cpus=1)(entrypoint).remote(cfg))


if __name__ == "__main__":
    try:
        main()
    except ConfigError as exc:
        print(f"textgyms.integrations.skyrl.main: error: {exc}", file=sys.stderr)
        sys.exit(2)
