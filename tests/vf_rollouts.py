"""Run inside ``.venv-verifiers`` by ``test_integrations_verifiers_rollouts.py``: rollouts of
the textgyms tasksets through verifiers' own machinery (``load_environment``,
``Env.serving``, ``Env.run_slot``, the ``null`` harness's chat program in the ``subprocess``
runtime, verifiers' interception server), with a scripted OpenAI-compatible server in place of
vLLM. ``python tests/vf_rollouts.py loop|budget`` prints one JSON report on its last line.

* ``loop``: one Code rollout whose run sleeps 2 s in the sandbox and four Wordle rollouts of
  three turns on the same event loop, with a heartbeat coroutine; the server holds the Code
  rollout's reply until every Wordle rollout has asked for its last turn, so all of them are
  under way (their last env step and their close still to come) when the run starts.
* ``budget``: Wordle rollouts whose every reply is about 2000 characters of reasoning and a
  guess, against a server that refuses a request longer than its context (as vLLM does):
  without a budget, with ``max_context_tokens``, and with verifiers' own ``max_total_tokens``.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from verifiers.v1.clients import ModelContext
from verifiers.v1.configs.cli.eval import EvalConfig
from verifiers.v1.env import RunSlot
from verifiers.v1.utils.loaders import load_environment

SLEEP = ("<run>import time\nprint('START', time.time(), flush=True)\ntime.sleep(2)\n"
         "print('END', time.time())</run>")
GUESS = "<guess>zzzzz</guess>"
GUESSES = ("crane", "stale", "pious", "dough", "wimpy", "fjord")
CONTEXT = 1500  # the scripted server's context, in its tokens (JSON bytes / 4)
MAX_TOKENS = 64


class ScriptedServer:
    """``/v1/chat/completions``, streamed as verifiers' chat program asks (SSE ending in
    ``[DONE]``) or not: ``reply(messages, their JSON text)`` gives the text. Tokens are
    counted as a request's JSON bytes / 4; a request whose prompt plus ``max_tokens`` exceeds
    ``context`` is refused with 400, as vLLM refuses it. Records each request's time and text."""

    def __init__(self, reply, context: int | None = None) -> None:
        self.reply, self.context = reply, context
        self.requests: list[tuple[float, str]] = []
        self.refused = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's naming)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.answer(self, body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def answer(self, handler: BaseHTTPRequestHandler, body: dict) -> None:
        text = json.dumps(body["messages"], ensure_ascii=False)
        prompt = len(text.encode()) // 4
        limit = body.get("max_tokens") or body.get("max_completion_tokens") or 0
        if self.context is not None and prompt + limit > self.context:
            with self.lock:
                self.refused += 1
            error = {"error": {"message": f"maximum context length is {self.context} tokens, "
                                          f"the request has {prompt + limit}",
                               "type": "BadRequestError", "code": 400}}
            return _send(handler, 400, "application/json", json.dumps(error).encode())
        with self.lock:
            self.requests.append((time.time(), text))
            n = len(self.requests)
        content = self.reply(body["messages"], text)
        usage = {"prompt_tokens": prompt, "completion_tokens": len(content) // 4,
                 "total_tokens": prompt + len(content) // 4}
        base = {"id": f"chatcmpl-{n}", "created": int(time.time()), "model": body["model"]}
        if not body.get("stream"):
            message = {"role": "assistant", "content": content}
            done = {**base, "object": "chat.completion", "usage": usage,
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
            return _send(handler, 200, "application/json", json.dumps(done).encode())
        chunk = {**base, "object": "chat.completion.chunk"}
        events = [
            {**chunk, "choices": [{"index": 0, "finish_reason": None,
                                   "delta": {"role": "assistant", "content": content}}]},
            {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {**chunk, "choices": [], "usage": usage},
        ]
        data = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        _send(handler, 200, "text/event-stream", data.encode())


def _send(handler: BaseHTTPRequestHandler, status: int, kind: str, data: bytes) -> None:
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", kind)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):
        pass


def _env(url: str, envs: list[dict], taskset: dict | None = None, player: dict | None = None):
    """verifiers' env and model context for a ``vf-eval`` config of the ``textgyms_env``
    taskset, parsed by verifiers' own config types."""
    config = EvalConfig.model_validate({
        "model": "scripted", "push": False,
        "client": {"base_url": url, "api_key_var": "OPENAI_API_KEY"},
        "sampling": {"max_tokens": MAX_TOKENS},
        "env": {"taskset": {"id": "textgyms_env", "envs": envs, "interleave": True,
                            **(taskset or {})},
                "player": {"runtime": {"type": "subprocess"}, "harness": {"id": "null"},
                           **(player or {})}},
    })
    env = load_environment(config.env)
    return env, ModelContext(client=config.client, model=config.model, sampling=config.sampling)


def _summary(episode) -> dict:
    """What the tests check of an episode's one trace."""
    (trace,) = episode.traces
    return {"ok": episode.ok, "reward": trace.reward, "metrics": trace.metrics,
            "stop": trace.stop_condition, "turns": trace.num_turns,
            "errors": [e.message for e in trace.errors], "info": trace.info["textgyms"],
            "call_errors": [c.error.message for c in trace.calls if c.error is not None]}


async def loop_report() -> dict:
    """Four Wordle rollouts and a Code rollout sleeping 2 s in its run, on one loop."""
    go = threading.Event()
    last_turns = []  # Wordle requests after two guesses: each rollout's last model turn

    def reply(messages: list[dict], text: str) -> str:
        if "Wordle" in text:
            if sum(m["role"] == "assistant" for m in messages) == 2:
                last_turns.append(text)
            if len(last_turns) >= 4:
                go.set()
            return GUESS
        if "START" in text:  # the Code rollout's second turn: its run's output came back
            return "<submit>def lis_length(nums):\n    return 0</submit>"
        go.wait(300)  # the four Wordle rollouts are all under way when the run starts
        return SLEEP

    server = ScriptedServer(reply)
    envs = [{"id": "textgyms/Code-v0", "kwargs": {"max_turns": 2, "run_timeout": 30.0}},
            {"id": "textgyms/Wordle-v0", "kwargs": {"max_guesses": 3}}]
    env, ctx = _env(server.url, envs)
    tasks = list(env.taskset.take(8))
    code = tasks[0]
    wordle = [t for t in tasks if t.data.info["env_id"] == "textgyms/Wordle-v0"]
    finished: list[tuple[str, float]] = []
    ticks: list[float] = []
    stop = asyncio.Event()

    async def heartbeat() -> None:
        while not stop.is_set():
            ticks.append(time.time())
            await asyncio.sleep(0.02)

    async def play(task, name: str):
        episode = await env.run_slot(RunSlot(task), ctx)
        finished.append((name, time.time()))
        return episode

    async with env.serving():
        beat = asyncio.create_task(heartbeat())
        episodes = await asyncio.gather(play(code, "code"),
                                        *(play(t, f"wordle{i}") for i, t in enumerate(wordle)))
        stop.set()
        await beat
    run = next((t for _, t in server.requests if "START" in t), "START 0 END 0")
    start = float(re.search(r"START ([0-9.]+)", run).group(1))
    end = float(re.search(r"END ([0-9.]+)", run).group(1))
    return {"finished": [name for name, _ in finished], "start": start, "end": end,
            "finish_times": dict(finished),
            "ticks": ticks, "requests": [(t, "Wordle" in x) for t, x in server.requests],
            "episodes": [_summary(e) for e in episodes]}


def long_guess(messages: list[dict], text: str) -> str:
    """A long reasoning reply ending in a guess (the next word of GUESSES each turn)."""
    turn = sum(m["role"] == "assistant" for m in messages)
    return "Let me think. " + "hmm " * 500 + f"<guess>{GUESSES[turn % len(GUESSES)]}</guess>"


async def budget_report() -> dict:
    """A Wordle rollout that outgrows the server's context: no budget, ours, verifiers' cap."""
    server = ScriptedServer(long_guess, context=CONTEXT)
    envs = [{"id": "textgyms/Wordle-v0", "kwargs": {"max_guesses": 6}}]
    out = {}
    for name, taskset, player in [("none", {}, {}),
                                  ("budget", {"max_context_tokens": CONTEXT}, {}),
                                  ("cap", {}, {"max_total_tokens": 1000})]:
        env, ctx = _env(server.url, envs, {"seed": 1, **taskset}, player)
        (task,) = env.taskset.take(1)
        before = server.refused
        async with env.serving():
            episode = await env.run_slot(RunSlot(task), ctx)
        out[name] = {**_summary(episode), "refused": server.refused - before}
    return out


if __name__ == "__main__":
    report = {"loop": loop_report, "budget": budget_report}[sys.argv[1]]
    print(json.dumps(asyncio.run(report())))
