"""OpenAIChatPolicy against a real OpenAI-compatible HTTP server on 127.0.0.1.

The server (stdlib ``http.server`` in a thread, real sockets and HTTP) implements
``POST /v1/chat/completions``; each test gives it a responder: a scripted one, one that fails
first, one that stalls, or one that serves the tiny local transformers model.
"""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import gymnasium as gym
import pytest

import textgyms
from textgyms.errors import ConfigError
from textgyms.policies import InferenceError, OpenAIChatPolicy, make_policy

WORDLE = "textgyms/Wordle-v0"


class ChatServer:
    """A chat-completions server; ``responder(request, n) -> (status, headers, body)`` where
    ``n`` counts requests from 1. Records every request body."""

    def __init__(self, responder):
        self.responder, self.requests, self.lock = responder, [], threading.Lock()
        self.in_flight = self.max_in_flight = 0
        self.release = threading.Event()  # lets stalled handlers end quickly at shutdown
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's naming)
                if self.path != "/v1/chat/completions":
                    self.send_error(404)
                    return
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append(body)
                    n = len(server.requests)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    status, headers, reply = server.responder(body, n, server)
                finally:
                    with server.lock:
                        server.in_flight -= 1
                data = json.dumps(reply).encode()
                try:
                    self.send_response(status)
                    for k, v in {**headers, "Content-Type": "application/json"}.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)


def completion(content="", tool_calls=None, prompt_tokens=11, completion_tokens=7):
    message = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {
        "id": "cmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def tool_call(name, arguments):
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}


def guess_crane(body, n, server):
    return 200, {}, completion(tool_calls=[tool_call("guess", '{"word": "crane"}')])


def test_native_tool_calls_become_env_json_actions():
    env = gym.make(WORDLE)
    obs, info = env.reset(seed=0)
    with ChatServer(guess_crane) as server:
        policy = OpenAIChatPolicy(server.url, "tiny", native_tools=True, temperature=0.0)
        actions = policy.act([obs], [info])
        obs2, _, _, _, info2 = env.step(actions[0])
        actions2 = policy.act([obs2], [info2])  # later step: tools come from the cache
    assert json.loads(actions[0]) == {"name": "guess", "arguments": {"word": "crane"}}
    assert info2["error"] is None and obs2.startswith("1. C R A N E")
    first, second = server.requests
    assert first["tools"] == info["tools"] and second["tools"] == info["tools"]
    assert first["messages"] == [{"role": "user", "content": obs}]
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    assert second["messages"][1]["content"] == actions[0]
    assert first["model"] == "tiny" and first["temperature"] == 0.0
    assert actions2 == actions
    assert policy.usage == {"prompt_tokens": 22, "completion_tokens": 14, "requests": 2,
                            "retries": 0}
    assert policy.last[0].usage["total_tokens"] == 18 and policy.last[0].finish_reason == "stop"


def test_text_and_several_tool_calls_and_bad_arguments():
    calls = [tool_call("guess", {"word": "slate"}), tool_call("guess", "{not json")]

    def responder(body, n, server):
        return 200, {}, completion("thinking...", calls if n == 1 else calls[1:])

    env = gym.make(WORDLE)
    obs, info = env.reset(seed=1)
    with ChatServer(responder) as server:
        policy = OpenAIChatPolicy(server.url, "m")
        (action,) = policy.act([obs], [info])
        lines = action.split("\n")
        assert lines[0] == "thinking..."
        assert json.loads(lines[1]) == {"name": "guess", "arguments": {"word": "slate"}}
        assert json.loads(lines[2]) == {"name": "guess", "arguments": "{not json"}
        obs, _, _, _, info = env.step(action)
        assert info["error"] is None and obs.startswith("1. S L A T E")
        (action,) = policy.act([obs], [info])  # only the broken call: env feedback, no crash
        obs, _, terminated, _, info = env.step(action)
    assert info["error"] == "invalid" and "not valid JSON" in obs and not terminated
    assert "tools" not in server.requests[0]  # native_tools is off by default


def test_retries_503_and_429_with_backoff():
    def flaky(body, n, server):
        if n == 1:
            return 503, {}, {"error": {"message": "overloaded"}}
        if n == 2:
            return 429, {"Retry-After": "0"}, {"error": {"message": "slow down"}}
        return guess_crane(body, n, server)

    with ChatServer(flaky) as server:
        policy = OpenAIChatPolicy(server.url, "m", backoff=0.01, max_retries=3)
        (action,) = policy.act(["guess"], [{}])
    assert json.loads(action)["arguments"] == {"word": "crane"}
    assert len(server.requests) == 3
    assert policy.usage["retries"] == 2 and policy.usage["requests"] == 3


def test_gives_up_after_max_retries_and_does_not_retry_400():
    def always_503(body, n, server):
        return 503, {}, {"error": {"message": "down for maintenance"}}

    with ChatServer(always_503) as server:
        policy = OpenAIChatPolicy(server.url, "m", backoff=0.001, max_retries=2)
        with pytest.raises(InferenceError, match="3 attempts.*HTTP 503.*maintenance"):
            policy.act(["hi"], [{}])
    assert len(server.requests) == 3

    def bad_request(body, n, server):
        return 400, {}, {"error": {"message": "unknown model 'm'"}}

    with ChatServer(bad_request) as server:
        with pytest.raises(InferenceError, match="HTTP 400.*unknown model"):
            OpenAIChatPolicy(server.url, "m", backoff=0.001).act(["hi"], [{}])
    assert len(server.requests) == 1


def test_connection_refused_is_retried_then_named():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    policy = OpenAIChatPolicy(f"http://127.0.0.1:{port}/v1", "m", backoff=0.001, max_retries=2)
    with pytest.raises(InferenceError, match=f"3 attempts.*127.0.0.1:{port}"):
        policy.act(["hi"], [{}])


def test_timeout_is_retried():
    def stall_first(body, n, server):
        if n == 1:
            server.release.wait(timeout=5)  # longer than the client's timeout
        return guess_crane(body, n, server)

    with ChatServer(stall_first) as server:
        policy = OpenAIChatPolicy(server.url, "m", timeout=0.5, backoff=0.001)
        (action,) = policy.act(["hi"], [{}])
    assert json.loads(action)["name"] == "guess"
    assert policy.usage["retries"] == 1 and len(server.requests) == 2


def test_concurrency_limit_and_parallelism():
    barrier = threading.Barrier(3, timeout=10)

    def meet(body, n, server):
        barrier.wait()  # passes only if 3 requests are in flight together
        reply = completion(body["messages"][-1]["content"].upper())
        reply["choices"][0]["logprobs"] = {"content": [{"token": "OBS", "logprob": -0.25}]}
        return 200, {}, reply

    with ChatServer(meet) as server:
        policy = OpenAIChatPolicy(server.url, "m", concurrency=3, extra_body={"logprobs": True})
        out = policy.act([f"obs {i}" for i in range(6)], [{}] * 6)
    assert out == [f"OBS {i}" for i in range(6)]  # order kept
    assert all(r["logprobs"] is True for r in server.requests)
    assert [g.logprobs for g in policy.last] == [[-0.25]] * 6
    assert server.max_in_flight == 3


def test_serves_the_tiny_transformers_model_over_http():
    from textgyms.policies import HFPolicy

    local = HFPolicy("tiny-random", max_new_tokens=12, temperature=0.0, return_tokens=True)

    def serve_model(body, n, server):
        prompt = local.tokenizer.apply_chat_template(
            body["messages"], tools=body.get("tools"), tokenize=False, add_generation_prompt=True
        )
        (gen,) = local.generate([prompt])
        reply = completion(gen.text, None, len(gen.prompt_ids), len(gen.completion_ids))
        reply["choices"][0]["finish_reason"] = gen.finish_reason
        return 200, {}, reply

    envs = [gym.make(i) for i in textgyms.env_ids()]
    resets = [env.reset(seed=0) for env in envs]
    with ChatServer(serve_model) as server:
        policy = OpenAIChatPolicy(server.url, "tiny-random", native_tools=True, temperature=0.0)
        actions = policy.act([o for o, _ in resets], [i for _, i in resets])
    for env, action, gen in zip(envs, actions, policy.last):
        *_, info = env.step(action)  # random text: feedback, never an exception
        assert info["turn"] == 1
        assert gen.usage["completion_tokens"] <= 12 and gen.usage["prompt_tokens"] > 20
    assert policy.usage["completion_tokens"] == sum(g.usage["completion_tokens"] for g in policy.last)


def test_make_policy_specs():
    policy = make_policy("openai:Qwen/Qwen3-8B@http://127.0.0.1:9/v1?temperature=0&concurrency=4")
    assert isinstance(policy, OpenAIChatPolicy)
    assert policy.url == "http://127.0.0.1:9/v1/chat/completions" and policy.concurrency == 4
    assert policy.spec()["temperature"] == 0 and policy.spec()["model"] == "Qwen/Qwen3-8B"
    assert make_policy("openai:m@http://127.0.0.1:9").url.endswith("/v1/chat/completions")
    with pytest.raises(ConfigError, match="valid options: .*temperature"):
        make_policy("openai:m@http://127.0.0.1:9/v1?temprature=0")
    with pytest.raises(ConfigError, match="openai:MODEL@URL"):
        make_policy("openai:m")
    with pytest.raises(ConfigError, match="choose one of: oracle, random, blind, openai"):
        make_policy("gpt4")
    assert make_policy("oracle").spec()["name"] == "oracle"


def test_leaderboard_eval_through_the_server(tmp_path):
    from textgyms.evaluate import evaluate

    words = ["crane", "slate", "pious", "dumpy", "while", "knock"]

    def player(body, n, server):  # one word per turn, as native tool calls
        turn = sum(m["role"] == "assistant" for m in body["messages"])
        args = json.dumps({"word": words[turn % len(words)]})
        return 200, {}, completion(tool_calls=[tool_call("guess", args)])

    with ChatServer(player) as server:
        policy = make_policy(f"openai:scripted@{server.url}?native_tools=true&concurrency=2")
        aggregates = evaluate(policy, [WORDLE], episodes=2, out=tmp_path, concurrency=2,
                              progress=False)
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and aggregates[WORDLE]["n"] == 2
    for row in rows:
        assert [json.loads(a)["arguments"]["word"] for a in row["actions"]] == words[: row["turns"]]
        assert row["invalid"] == 0
        # The scripted server reports 11 prompt and 7 completion tokens per request.
        assert row["tokens"] == {"prompt": 11 * row["turns"], "completion": 7 * row["turns"]}
    meta = json.loads((tmp_path / "metadata.json").read_text())
    assert meta["policy"]["model"] == "scripted" and meta["policy"]["native_tools"] is True
    assert len(server.requests) == sum(r["turns"] for r in rows)


def test_chat_history_observations_and_system_prompt():
    from textgyms.wrappers import ChatHistory

    env = ChatHistory(gym.make(WORDLE))
    messages, info = env.reset(seed=3)
    with ChatServer(guess_crane) as server:
        policy = OpenAIChatPolicy(server.url, "m", system="Be brief.")
        (action,) = policy.act([messages], [info])
        messages, *_ = env.step(action)
        policy.act([messages], [info])
    first, second = server.requests
    assert first["messages"][0] == {"role": "system", "content": "Be brief."}
    assert first["messages"][1:] == messages[:1]
    assert second["messages"][1:] == messages and len(messages) == 3
