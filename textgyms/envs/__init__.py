"""Every ``gymnasium.register`` call of textgyms, and nothing else.

Entry points are strings, so an env's module is imported only when it is made. ``TextEnv``
enforces reset-before-step itself (raising ``textgyms.errors.ResetNeeded``, a Gymnasium
``ResetNeeded``) and the conformance suite runs ``check_env`` on every id, so the two wrappers
``gym.make`` would add for that (order enforcing, passive checker) are left out: each costs a
Python call on every step.
"""

import gymnasium

gymnasium.register(
    id="textgyms/Wordle-v0",
    entry_point="textgyms.envs.wordle.env:WordleEnv",
    kwargs={},
    order_enforce=False,
    disable_env_checker=True,
)

gymnasium.register(
    id="textgyms/ISO20022-MT103-v4",
    entry_point="textgyms.envs.iso20022.env:Iso20022Env",
    kwargs={},
    order_enforce=False,
    disable_env_checker=True,
)

gymnasium.register(
    id="textgyms/MT103ToISO20022-v3",
    entry_point="textgyms.envs.iso20022.env:Mt103ToIsoEnv",
    kwargs={},
    order_enforce=False,
    disable_env_checker=True,
)

gymnasium.register(
    id="textgyms/Search-v1",
    entry_point="textgyms.envs.search.env:SearchEnv",
    kwargs={},
    order_enforce=False,
    disable_env_checker=True,
)

gymnasium.register(
    id="textgyms/NetConfig-v4",
    entry_point="textgyms.envs.netconfig.env:NetConfigEnv",
    kwargs={},
    order_enforce=False,
    disable_env_checker=True,
)

gymnasium.register(
    id="textgyms/Code-v0",
    entry_point="textgyms.envs.code.env:CodeEnv",
    kwargs={},
    order_enforce=False,
    disable_env_checker=True,
)
