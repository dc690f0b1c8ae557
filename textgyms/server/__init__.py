"""``textgyms serve``: any textgyms id as a network service speaking the OpenEnv protocol.

Built on OpenEnv's server library (``openenv.core.env_server``): its FastAPI app, its
WebSocket ``/ws`` sessions (one env instance per connection), ``/health`` and its HTTP
endpoints, so the stock OpenEnv client drives it with no textgyms code::

    textgyms serve textgyms/Wordle-v0 --port 8000

    from openenv.core import GenericEnvClient
    with GenericEnvClient(base_url="http://127.0.0.1:8000").sync() as env:
        result = env.reset(seed=7)            # result.observation == {"text": ..., "info": ...}
        result = env.step({"text": "<guess>crane</guess>"})

``env`` holds the wire types and the per-session adapter; ``sessions`` the session rules
(slots, owners, idle deadlines, the SIGTERM drain); ``ws`` the WebSocket protocols (``/ws``,
``/mcp``, ``/mux``); ``app`` the guarded ASGI app (token, body limits, the HTTP routes that hold
envs, ``/capacity``); ``protocols`` uvicorn's protocols with connection limits; ``serving`` and
``workers`` the running server and its forked workers; ``package`` the OpenEnv environment
directory; ``cli`` the command. Importing this package imports none of them (the server is
the optional ``[serve]`` extra).
"""

from __future__ import annotations

import importlib
import sys


def load_openenv() -> None:
    """Import OpenEnv's client and server modules without importing Gradio.

    OpenEnv's ``env_server`` package imports its Gradio web UI inside ``except
    ModuleNotFoundError``; that import was 7.6 s of OpenEnv's 9.8 s import time on a loaded
    2-core machine, and textgyms never enables the web UI. Gradio is hidden for the duration
    of the import only (OpenEnv's ``create_web_interface_app`` is then ``None``; its own
    ``create_app`` still imports the UI on demand). A process that already imported OpenEnv
    or Gradio is left as it is. Raises ImportError when OpenEnv is not installed.
    """
    if "openenv.core.env_server" in sys.modules or "gradio" in sys.modules:
        importlib.import_module("openenv.core.generic_client")
        return
    sys.modules["gradio"] = None  # type: ignore[assignment]  # `import gradio` -> not found
    try:
        importlib.import_module("openenv.core.env_server")
        importlib.import_module("openenv.core.generic_client")
    finally:
        if sys.modules.get("gradio", 0) is None:
            del sys.modules["gradio"]
