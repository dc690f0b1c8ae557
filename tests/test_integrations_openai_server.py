"""The one fix textgyms applies to ``transformers serve``: event streams end with ``[DONE]``.

The server itself is exercised by ``test_integrations_llm.py``; here the ASGI wrapper runs on
small ASGI apps, so each case is exact and fast.
"""

from __future__ import annotations

import asyncio

import pytest

from textgyms.errors import ConfigError
from textgyms.integrations.openai_server import DONE, ModelServer, SseDone


def _app(content_type: bytes, chunks: list[bytes]):
    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", content_type)]})
        for i, chunk in enumerate(chunks):
            await send({"type": "http.response.body", "body": chunk,
                        "more_body": i < len(chunks) - 1})
    return app


def _body(app) -> bytes:
    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request"}

    asyncio.run(SseDone(app)({"type": "http"}, receive, send))
    assert sent[-1]["more_body"] is False
    return b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def test_a_stream_without_done_gets_one():
    chunks = [b'data: {"choices": []}\n\n', b'data: {"usage": {}}\n\n', b""]
    assert _body(_app(b"text/event-stream", chunks)) == b"".join(chunks) + DONE


def test_a_stream_that_ends_with_done_is_unchanged():
    chunks = [b'data: {"choices": []}\n\n', b"data: [DO", b"NE]\n\n"]  # split across messages
    assert _body(_app(b"text/event-stream; charset=utf-8", chunks)) == b"".join(chunks)


def test_other_replies_are_unchanged():
    assert _body(_app(b"application/json", [b'{"ok": true}'])) == b'{"ok": true}'


def test_model_server_threads_must_be_a_positive_int():
    """A bad ``threads`` is refused before any process starts."""
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ConfigError, match="threads must be a positive int"):
            ModelServer(threads=bad)
