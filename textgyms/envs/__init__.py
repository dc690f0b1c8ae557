"""Every ``gymnasium.register`` call of textgyms, and nothing else.

Entry points are strings, so an env's module is imported only when it is made.
"""

import gymnasium

gymnasium.register(
    id="textgyms/Wordle-v0",
    entry_point="textgyms.envs.wordle.env:WordleEnv",
    kwargs={},
)
