"""``OpenAIChatPolicy``: any OpenAI-compatible ``/v1/chat/completions`` server as a policy.

Works with vLLM (``vllm serve``), SGLang, llama.cpp's ``llama-server``, TGI and hosted APIs.
Standard library only (``urllib``): no client package to install.

* **Concurrency**: a batch is sent as parallel requests, at most ``concurrency`` in flight.
* **Retries**: HTTP 429 and 5xx, refused or dropped connections and timeouts are retried up to
  ``max_retries`` times with exponential backoff (``backoff * 2**attempt``, capped at
  ``max_backoff``; a ``Retry-After`` header is honoured up to the cap). Other 4xx errors are
  configuration mistakes and raise at once. Exhausted retries raise :class:`InferenceError`.
* **Timeouts**: ``timeout`` seconds per request (connect and each read).
* **Native tool calls**: with ``native_tools=True`` the env's tool schemas (``info["tools"]``)
  are sent as ``tools`` and every returned ``tool_calls`` entry becomes the env's JSON action
  form ``{"name": ..., "arguments": {...}}`` (after any text content), which every textgyms env
  parses. Arguments that are not valid JSON are passed through as a string, so the env answers
  with feedback instead of anything crashing.
* **Usage**: each request's ``usage`` is kept in ``last`` (one :class:`Generation` per action)
  and summed in ``usage`` (``prompt_tokens``, ``completion_tokens``, ``requests``, ``retries``).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

from textgyms.errors import ConfigError
from textgyms.policies.base import Generation, InferenceError, ToolCache, chat_messages

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_NETWORK_ERRORS = (
    urllib.error.URLError,
    http.client.HTTPException,
    ConnectionError,
    TimeoutError,
    socket.timeout,
)


class OpenAIChatPolicy:
    """Chat completions from ``base_url`` (e.g. ``http://127.0.0.1:8000/v1``) with ``model``."""

    device = None  # the model runs behind the server: an evaluation records no device for it

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        temperature: float = 1.0,
        top_p: float = 1.0,
        max_tokens: int = 1024,
        seed: int | None = None,
        system: str | None = None,
        native_tools: bool = False,
        concurrency: int = 8,
        timeout: float = 120.0,
        max_retries: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"base_url must be an http(s) URL, got {base_url!r}")
        if concurrency < 1 or max_retries < 0 or timeout <= 0:
            raise ConfigError("need concurrency >= 1, max_retries >= 0 and timeout > 0")
        base = base_url.rstrip("/")
        self.url = (base if parts.path.strip("/") else base + "/v1") + "/chat/completions"
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.sampling = {"temperature": temperature, "top_p": top_p, "max_tokens": max_tokens}
        if seed is not None:
            self.sampling["seed"] = seed
        self.system, self.native_tools = system, native_tools
        self.concurrency, self.timeout = concurrency, timeout
        self.max_retries, self.backoff, self.max_backoff = max_retries, backoff, max_backoff
        self.extra_body = dict(extra_body or {})
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "requests": 0, "retries": 0}
        self.last: list[Generation] = []
        self._tools = ToolCache()
        self._pool: ThreadPoolExecutor | None = None

    def spec(self) -> dict[str, Any]:
        """Run metadata (the API key is never included)."""
        return {
            "name": f"openai:{self.model}",
            "type": "openai",
            "url": self.url,
            "model": self.model,
            "native_tools": self.native_tools,
            **self.sampling,
        }

    def act(
        self, observations: Sequence[Any], infos: Sequence[dict[str, Any]], envs: Any = None
    ) -> list[str]:
        """One completion per observation, requested in parallel (``envs`` is ignored)."""
        bodies = [self._body(obs, info) for obs, info in zip(observations, infos)]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="textgyms-openai")
        results = list(self._pool.map(self._complete, bodies))
        self.last = [gen for gen, _ in results]
        for gen, retries in results:
            self.usage["prompt_tokens"] += gen.usage.get("prompt_tokens", 0)
            self.usage["completion_tokens"] += gen.usage.get("completion_tokens", 0)
            self.usage["requests"] += 1 + retries
            self.usage["retries"] += retries
        return [gen.text for gen in self.last]

    def close(self) -> None:
        """Stop the request threads."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _body(self, observation: Any, info: dict[str, Any]) -> dict[str, Any]:
        """The JSON request for one env."""
        body = {
            "model": self.model,
            "messages": chat_messages(observation, info, self.system),
            **self.sampling,
            **self.extra_body,
        }
        tools = self._tools.get(info) if self.native_tools else None
        if tools:
            body["tools"] = tools
        return body

    def _complete(self, body: dict[str, Any]) -> tuple[Generation, int]:
        """POST one request with retries; return the generation and how many retries it took."""
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last_error = ""
        for attempt in range(self.max_retries + 1):  # bounded: max_retries + 1 attempts
            request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    payload = json.loads(response.read())
                return to_generation(payload), attempt
            except urllib.error.HTTPError as err:
                detail = err.read()[:300].decode("utf-8", "replace")
                last_error = f"HTTP {err.code} from {self.url}: {detail}"
                if err.code not in RETRY_STATUS:
                    raise InferenceError(last_error) from err
                delay = _retry_after(err.headers.get("Retry-After"))
            except _NETWORK_ERRORS as err:
                last_error = f"{type(err).__name__} talking to {self.url}: {err}"
                delay = None
            except json.JSONDecodeError as err:
                raise InferenceError(f"{self.url} returned invalid JSON: {err}") from err
            if attempt < self.max_retries:
                wait = self.backoff * 2**attempt if delay is None else delay
                time.sleep(min(wait, self.max_backoff))
        raise InferenceError(f"gave up after {self.max_retries + 1} attempts: {last_error}")


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header given in seconds (dates fall back to backoff)."""
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def to_generation(payload: dict[str, Any]) -> Generation:
    """A chat-completions response as a :class:`Generation` whose text is the env action."""
    try:
        choice = payload["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError) as err:
        raise InferenceError(f"not a chat-completions response: {str(payload)[:300]}") from err
    calls = message.get("tool_calls") or []
    actions = [tool_call_action(call) for call in calls]
    text = "\n".join(p for p in [message.get("content") or "", *actions] if p)
    usage = {k: int(v) for k, v in (payload.get("usage") or {}).items() if isinstance(v, int)}
    logprobs = None
    if isinstance(choice.get("logprobs"), dict) and choice["logprobs"].get("content"):
        logprobs = [float(t["logprob"]) for t in choice["logprobs"]["content"]]
    return Generation(text, choice.get("finish_reason"), usage, list(calls), logprobs=logprobs)


def tool_call_action(call: dict[str, Any]) -> str:
    """A native ``tool_calls`` entry as the env's JSON action ``{"name", "arguments"}``."""
    fn = call.get("function") or {}
    args: Any = fn.get("arguments", {})
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            pass  # kept as the raw string: the env explains what is wrong with it
    return json.dumps({"name": fn.get("name", ""), "arguments": args}, ensure_ascii=False)
