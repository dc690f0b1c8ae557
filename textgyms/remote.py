"""``RemoteEnv``: a ``gymnasium.Env`` whose episodes run on a ``textgyms serve`` server.

It talks the OpenEnv protocol through the stock OpenEnv client (``GenericEnvClient``), one
WebSocket session per ``RemoteEnv``, and gives the same spaces, observations, rewards,
terminated/truncated flags and info as the local env of the id the server serves::

    env = RemoteEnv("http://127.0.0.1:8000")
    obs, info = env.reset(seed=7)
    obs, reward, terminated, truncated, info = env.step("<guess>crane</guess>")

Every client call runs on one background event loop per process, so a thousand ``RemoteEnv``s
cost one thread, not a thousand. Errors: API misuse raises the same textgyms class as the local
env would (``ResetNeeded``, ``ConfigError``, ...); a server that refuses the session, closes the
connection, dies or does not answer within ``timeout`` raises :class:`ServerError` naming the URL.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import gymnasium as gym

from textgyms import errors
from textgyms.core import TextSpace
from textgyms.errors import BackendError, ConfigError, ServerError
from textgyms.server import load_openenv

__all__ = ["RemoteEnv", "MuxConnection", "MuxEnv"]

_GRACE = 5.0  # seconds past the client's own timeout before a call is declared hung


class RemoteEnv(gym.Env[str, str]):
    """One session on the server at ``url`` (``http://HOST:PORT``), as a Gymnasium env.

    ``token``: the server's bearer token, if it has one. ``timeout``: seconds to wait for one
    answer (a step of a slow env included) before raising :class:`ServerError`.
    Attributes ``env_id`` and ``kwargs`` say what the server serves.
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        timeout: float = 60.0,
        connect_timeout: float = 10.0,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://", "ws")):
            raise ConfigError(f"url must look like 'http://HOST:PORT', got {url!r}")
        try:  # imported here: the client is in the optional [serve] extra
            load_openenv()
            from openenv.core.generic_client import GenericEnvClient
        except ImportError as exc:
            raise BackendError("RemoteEnv needs `pip install textgyms[serve]`") from exc
        self.url, self.timeout = url, float(timeout)
        self._client = GenericEnvClient(
            base_url=url,
            headers={"Authorization": f"Bearer {token}"} if token else None,
            connect_timeout_s=connect_timeout,
            message_timeout_s=self.timeout,
        )
        self._open = False
        self._run(lambda: self._client.connect(), "open a session")
        self._open = True
        state = self.remote_state()
        self.env_id, self.kwargs = _adopt(self, state)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode on the server (``options`` must be JSON: a ``Task`` cannot travel)."""
        super().reset(seed=seed)
        data = _reset_data(seed, options)
        result = self._run(lambda: self._client.reset(**data), "reset")
        return result.observation["text"], result.observation["info"]

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Send the completion; the server's env steps it."""
        action = _text(action)
        result = self._run(lambda: self._client.step({"text": str(action)}), "step")
        ends = result.metadata or result.observation.get("metadata", {})
        terminated, truncated = bool(ends["terminated"]), bool(ends["truncated"])
        reward = float(result.reward or 0.0)
        return result.observation["text"], reward, terminated, truncated, result.observation["info"]

    def remote_state(self) -> dict[str, Any]:
        """The session's OpenEnv state: episode id, step count, env id, kwargs, space sizes."""
        return self._run(lambda: self._client.state(), "read the state")

    def close(self) -> None:
        """End the session (the server closes its env at once); safe to call more than once."""
        if getattr(self, "_open", False):
            self._open = False
            try:
                self._run(lambda: self._client.close(), "close the session")
            except ServerError:
                pass  # a server that is already gone has nothing left to close

    def __repr__(self) -> str:
        return f"RemoteEnv({self.url!r}, env_id={getattr(self, 'env_id', None)!r})"

    def _run(self, call: Callable[[], Awaitable[Any]], what: str) -> Any:
        """Run one client call on the background loop and translate its errors.

        ``call`` makes the awaitable on the loop's thread: the OpenEnv client binds its socket
        to the loop it is first used from.
        """
        future = asyncio.run_coroutine_threadsafe(_awaited(call), _loop())
        try:
            return future.result(timeout=self.timeout + _GRACE)
        except (TimeoutError, concurrent.futures.TimeoutError) as exc:
            future.cancel()
            raise ServerError(f"{self.url}: no answer within {self.timeout:g} s to {what}") from exc
        except RuntimeError as exc:
            raise _translate(self.url, what, exc) from exc
        except (OSError, ConnectionError, asyncio.TimeoutError) as exc:
            raise ServerError(f"{self.url}: cannot {what}: {exc}") from exc
        except Exception as exc:  # websockets' ConnectionClosed and other transport faults
            if type(exc).__module__.startswith("websockets"):
                raise ServerError(f"{self.url}: connection lost ({exc}) during {what}") from exc
            raise


async def _awaited(call: Callable[[], Awaitable[Any]]) -> Any:
    return await call()


def _translate(url: str, what: str, exc: RuntimeError) -> Exception:
    """An OpenEnv error reply as the textgyms error it carries, else a ``ServerError``.

    The client raises ``RuntimeError("Server error: <message> (code: <CODE>)")``; the server puts
    the textgyms class name first in the message of an env error (``"ResetNeeded: ..."``).
    """
    text = str(exc)
    if not text.startswith("Server error: "):
        return ServerError(f"{url}: cannot {what}: {text}")
    message = text[len("Server error: ") :].rsplit(" (code: ", 1)[0]
    name, _, rest = message.partition(": ")
    cls = getattr(errors, name, None)
    if isinstance(cls, type) and issubclass(cls, errors.TextgymsError) and cls is not ServerError:
        return cls(rest)
    return ServerError(f"{url} refused to {what}: {message}")


# --- many envs over one connection (the server's /mux route) ---------------------------------


class MuxConnection:
    """One WebSocket to a server's ``/mux`` route, carrying the sessions of many
    :class:`MuxEnv` (a remote vector of N envs over a few connections, not N).

    Thread-safe: each env's calls wait for their own reply, matched by env number, while
    other envs' calls on the same connection are in flight.
    """

    def __init__(self, url: str, token: str | None = None, *, timeout: float = 60.0) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigError(f"url must look like 'http://HOST:PORT', got {url!r}")
        self.url, self.timeout = url, float(timeout)
        self._headers = {"Authorization": f"Bearer {token}"} if token else None
        self._waiting: dict[int, asyncio.Future] = {}
        self._ws: Any = None
        self._reader: Any = None
        self._next_env = 0
        self._lock = threading.Lock()
        self._call(self._connect(), "connect")

    async def _connect(self) -> None:
        from websockets.asyncio.client import connect

        ws_url = "ws" + self.url[len("http"):].rstrip("/") + "/mux"
        self._ws = await connect(ws_url, additional_headers=self._headers, max_size=None)
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        try:
            async for frame in self._ws:
                reply = json.loads(frame)
                future = self._waiting.pop(reply.get("env"), None)
                if future is not None and not future.done():
                    future.set_result(reply)
        except Exception:  # noqa: BLE001 - the connection broke: every caller is told below
            pass
        for future in list(self._waiting.values()):
            if not future.done():
                future.set_exception(ServerError(f"{self.url}: the /mux connection closed"))
        self._waiting.clear()

    def new_env(self) -> int:
        """A fresh env number on this connection."""
        with self._lock:
            self._next_env += 1
            return self._next_env - 1

    def request(self, env: int, kind: str, data: dict[str, Any] | None, what: str) -> dict:
        """Send one message of env ``env`` and wait for its reply (error replies raise)."""
        reply = self._call(self._request(env, kind, data), what)
        if reply.get("type") == "error":
            message, code = reply["data"].get("message", ""), reply["data"].get("code", "")
            carried = RuntimeError(f"Server error: {message} (code: {code})")
            raise _translate(self.url, what, carried)
        return reply

    async def _request(self, env: int, kind: str, data: dict[str, Any] | None) -> dict:
        if self._reader is None or self._reader.done():
            raise ServerError(f"{self.url}: the /mux connection is closed")
        future = asyncio.get_running_loop().create_future()
        self._waiting[env] = future
        message: dict[str, Any] = {"env": env, "type": kind}
        if data is not None:
            message["data"] = data
        await self._ws.send(json.dumps(message))
        return await future

    def _call(self, coroutine: Awaitable[Any], what: str) -> Any:
        future = asyncio.run_coroutine_threadsafe(_awaited(lambda: coroutine), _loop())
        try:
            return future.result(timeout=self.timeout + _GRACE)
        except (TimeoutError, concurrent.futures.TimeoutError) as exc:
            future.cancel()
            raise ServerError(f"{self.url}: no answer within {self.timeout:g} s to {what}") from exc
        except (OSError, asyncio.TimeoutError) as exc:
            raise ServerError(f"{self.url}: cannot {what}: {exc}") from exc
        except Exception as exc:  # websockets' handshake and transport errors
            if type(exc).__module__.startswith("websockets"):
                raise ServerError(f"{self.url}: cannot {what}: {exc}") from exc
            raise

    def close(self) -> None:
        """Close the connection (the server closes every session on it)."""
        if self._ws is not None:
            ws, self._ws = self._ws, None
            try:
                self._call(ws.close(), "close the /mux connection")
            except ServerError:
                pass


class MuxEnv(gym.Env[str, str]):
    """One session on a :class:`MuxConnection`: the same env as :class:`RemoteEnv` gives."""

    metadata = {"render_modes": []}

    def __init__(self, connection: MuxConnection) -> None:
        self.connection, self.url = connection, connection.url
        self.number = connection.new_env()
        state = connection.request(self.number, "open", None, "open a session")["data"]
        self._open = True
        self.env_id, self.kwargs = _adopt(self, state)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode on the server (``options`` must be JSON)."""
        super().reset(seed=seed)
        data = _reset_data(seed, options)
        observation = self.connection.request(self.number, "reset", data, "reset")["data"]
        return observation["observation"]["text"], observation["observation"]["info"]

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Send the completion; the server's env steps it."""
        action = _text(action)
        data = self.connection.request(self.number, "step", {"text": action}, "step")["data"]
        observation = data["observation"]
        ends = observation["metadata"]
        reward = float(data.get("reward") or 0.0)
        terminated, truncated = bool(ends["terminated"]), bool(ends["truncated"])
        return observation["text"], reward, terminated, truncated, observation["info"]

    def close(self) -> None:
        """End this session (the connection stays for the others)."""
        if getattr(self, "_open", False):
            self._open = False
            try:
                self.connection.request(self.number, "close", None, "close the session")
            except ServerError:
                pass


def _adopt(env: gym.Env, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Give ``env`` the spaces of the server's env from its session ``state``; return the
    server env's id and kwargs."""
    env.observation_space = TextSpace(int(state["observation_max_chars"]))
    env.action_space = TextSpace(int(state["action_max_chars"]))
    return str(state["env_id"]), dict(state["kwargs"])


def _reset_data(seed: int | None, options: dict[str, Any] | None) -> dict[str, Any]:
    """The reset request's payload; options must be JSON (a ``Task`` cannot travel)."""
    data: dict[str, Any] = {} if seed is None else {"seed": int(seed)}
    if options is not None:
        try:
            json.dumps(options)
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"remote reset options must be JSON-serialisable ({exc}); to replay a "
                "task, reset with the seed that produced it"
            ) from exc
        data["options"] = options
    return data


def _text(action: Any) -> str:
    """The completion as text: bytes are decoded, anything but str and bytes is an error."""
    if isinstance(action, (bytes, bytearray)):
        return bytes(action).decode("utf-8", errors="replace")
    if not isinstance(action, str):
        raise TypeError(
            f"an action must be a str (the model's completion), got {type(action).__name__}"
        )
    return action


# --- one event loop per process for every client call ---------------------------------------
_state: dict[str, Any] = {"pid": None, "loop": None}
_lock = threading.Lock()


def _loop() -> asyncio.AbstractEventLoop:
    """This process's client loop (a forked child starts its own)."""
    with _lock:
        if _state["pid"] != os.getpid():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(
                target=loop.run_forever, name="textgyms-remote", daemon=True
            )
            thread.start()
            _state.update(pid=os.getpid(), loop=loop)
        return _state["loop"]
