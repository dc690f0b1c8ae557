"""Start ``textgyms serve`` as a child process and wait until it listens.

For tests, benchmarks, notebooks and a Ray actor that owns a server::

    with ServerProcess("textgyms/Wordle-v0") as server:   # --port 0: a free port
        env = RemoteEnv(server.url)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import IO, Any

from textgyms.errors import ServerError

START_TIMEOUT = 180.0  # seconds; importing the server's libraries is slow on a loaded machine


class ServerProcess:
    """``python -m textgyms.cli serve ENV_ID ...`` in a child process.

    ``url`` is ``http://HOST:PORT`` once the constructor returns. ``stop()`` (or leaving the
    ``with`` block) sends SIGTERM and waits for the clean exit; ``returncode`` is then set.
    Raises :class:`ServerError` (with the server's stderr) if it exits before it listens.
    """

    def __init__(
        self,
        env_id: str,
        kwargs: dict[str, Any] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        args: Sequence[str] = (),
        timeout: float = START_TIMEOUT,
    ) -> None:
        cmd = [sys.executable, "-m", "textgyms.cli", "serve", env_id, "--host", host]
        cmd += ["--port", str(port), "--kwargs", json.dumps(kwargs or {}), *args]
        env = dict(os.environ)
        if token is not None:
            env["TEXTGYMS_TOKEN"] = token  # not on the command line, where `ps` shows it
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        self.stderr_lines: list[str] = []
        self._stderr = threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True)
        self._stderr.start()
        self.url = self._read_url(timeout)

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        """The exit status once the server has exited, else None."""
        return self.proc.poll()

    def stop(self, timeout: float = 60.0) -> int:
        """SIGTERM, then wait (SIGKILL after ``timeout`` s); returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._stderr.join(timeout=5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        if self.proc.stderr is not None and not self._stderr.is_alive():
            self.proc.stderr.close()  # drained to its end: the server has exited
        return int(self.proc.returncode)

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def stderr(self) -> str:
        """What the server wrote to stderr so far."""
        return "".join(self.stderr_lines)

    def _drain(self, stream: IO[str]) -> None:
        for line in stream:
            self.stderr_lines.append(line)

    def _read_url(self, timeout: float) -> str:
        """The first stdout line (the server prints its URL once it listens)."""
        box: list[str] = []
        reader = threading.Thread(target=lambda: box.append(self.proc.stdout.readline()))
        reader.daemon = True
        reader.start()
        reader.join(timeout)
        line = box[0].strip() if box else ""
        if not line.startswith("http"):
            self.stop(timeout=10)
            self._stderr.join(timeout=5)
            raise ServerError(
                f"textgyms serve did not start within {timeout:g} s "
                f"(exit status {self.proc.returncode}): {self.stderr.strip()[-2000:]}"
            )
        return line
