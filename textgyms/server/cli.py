"""``textgyms serve ENV_ID``: run the OpenEnv server of one id until SIGTERM or Ctrl-C."""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
from typing import Any

from textgyms.errors import BackendError, ConfigError
from textgyms.server import load_openenv

TOKEN_ENV = "TEXTGYMS_TOKEN"
DEFAULT_MAX_SESSIONS = 256
GRACE_SECONDS = 30.0  # SIGTERM: how long in-flight steps may take before they are cancelled
IDLE_SECONDS = 900.0  # a session whose client neither sends nor reads for this long is closed
REQUEST_SECONDS = 10.0  # a request (or a silent new connection) must arrive whole within this
AUTH_SECONDS = 5.0  # a new connection must make a request with the token within this
MAX_UNAUTH = 1024  # unauthenticated connections kept (lowered to fit the descriptor limit)
MAX_UNAUTH_PER_PEER = 256  # per peer: one remote vector env opens up to 256 sessions at once


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``serve`` to the textgyms CLI's subparsers."""
    p = subparsers.add_parser(
        "serve", help="serve an env id over the OpenEnv protocol (WebSocket /ws sessions)"
    )
    p.add_argument("env_id", help="e.g. textgyms/Wordle-v0")
    p.add_argument("--kwargs", default="{}", help="env kwargs as JSON, applied to every session")
    p.add_argument("--host", default="127.0.0.1", help="bind address (default: loopback only)")
    p.add_argument("--port", type=int, default=8000, help="TCP port; 0 picks a free one")
    p.add_argument(
        "--token",
        default=None,
        help=f"bearer token clients must send (default: ${TOKEN_ENV}); required off loopback",
    )
    p.add_argument(
        "--max-sessions",
        type=int,
        default=DEFAULT_MAX_SESSIONS,
        help=f"concurrent sessions (envs) before new clients are refused ({DEFAULT_MAX_SESSIONS})",
    )
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=IDLE_SECONDS,
        help="close a session whose client neither sent a message nor took a reply for this "
        f"many seconds ({IDLE_SECONDS:g})",
    )
    p.add_argument(
        "--request-timeout",
        type=float,
        default=REQUEST_SECONDS,
        help="drop a connection whose request (headers and body, or the WebSocket handshake) "
        f"has not arrived whole within this many seconds ({REQUEST_SECONDS:g})",
    )
    p.add_argument(
        "--max-connections",
        type=int,
        default=None,
        help="authenticated connections (those that sent the token) before new ones get 503 "
        "(default: --max-sessions + 64, and always below the descriptor limit)",
    )
    p.add_argument(
        "--auth-deadline",
        type=float,
        default=AUTH_SECONDS,
        help="close a connection that has not made a request with the token (without --token: "
        f"any whole request) within this many seconds of connecting ({AUTH_SECONDS:g})",
    )
    p.add_argument(
        "--max-unauth",
        type=int,
        default=MAX_UNAUTH,
        help="unauthenticated connections kept in all; a new one over the cap closes the oldest "
        f"of the peer holding the most ({MAX_UNAUTH}, lowered if need be to stay below the "
        "descriptor limit beside --max-connections)",
    )
    p.add_argument(
        "--max-unauth-per-peer",
        type=int,
        default=MAX_UNAUTH_PER_PEER,
        help="unauthenticated connections kept per peer address (IPv6: per /64); a new one over "
        f"the cap closes that peer's oldest ({MAX_UNAUTH_PER_PEER})",
    )
    p.add_argument(
        "--grace",
        type=float,
        default=GRACE_SECONDS,
        help="SIGTERM: seconds steps in flight may take to finish and reply before they are "
        f"cancelled ({GRACE_SECONDS:g})",
    )
    p.add_argument(
        "--package",
        metavar="DIR",
        default=None,
        help="write an OpenEnv environment directory (openenv.yaml, Dockerfile running this "
        "command with these options, README for a Hugging Face Space, pinned deps) and exit",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="server processes sharing the port; each serves whole sessions and has its own "
        "--max-sessions (default 1)",
    )
    p.add_argument(
        "--sandbox-servers",
        type=int,
        default=None,
        help="Code: sandbox servers per process, so runs of different sessions go in parallel "
        "(default: $TEXTGYMS_SANDBOX_WORKERS, else the usable cores)",
    )
    p.add_argument(
        "--max-message-bytes",
        type=int,
        default=1024 * 1024,
        help="refuse (without closing the session) messages larger than this (default: 1 MiB)",
    )
    return p


def check_bind(host: str, token: str | None) -> None:
    """Refuse to listen off loopback without a token: anyone who can reach it could use it."""
    if token is not None and not token.strip():
        raise ConfigError("--token must not be empty")
    if token is None and not _is_loopback(host):
        raise ConfigError(
            f"--host {host} is not a loopback address, so any machine that can reach it could "
            f"open sessions: pass --token T (or set {TOKEN_ENV}) and have clients send "
            "'Authorization: Bearer T', or serve on 127.0.0.1"
        )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _check_limits(args: argparse.Namespace) -> dict[str, Any]:
    try:
        kwargs = json.loads(args.kwargs)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--kwargs is not valid JSON ({exc}): {args.kwargs!r}") from exc
    if not isinstance(kwargs, dict):
        raise ConfigError(f"--kwargs must be a JSON object, got {args.kwargs!r}")
    if args.max_sessions < 1:
        raise ConfigError(f"--max-sessions must be >= 1, got {args.max_sessions}")
    for name in ("idle_timeout", "request_timeout", "auth_deadline"):
        if not getattr(args, name) > 0:
            flag = "--" + name.replace("_", "-")
            raise ConfigError(f"{flag} must be > 0 seconds, got {getattr(args, name)}")
    if not args.grace >= 0:
        raise ConfigError(f"--grace must be >= 0 seconds, got {args.grace}")
    if args.workers < 1:
        raise ConfigError(f"--workers must be >= 1, got {args.workers}")
    for name in ("max_connections", "sandbox_servers", "max_unauth", "max_unauth_per_peer"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    if args.max_message_bytes < 1024:
        raise ConfigError(f"--max-message-bytes must be >= 1024, got {args.max_message_bytes}")
    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be in 0..65535, got {args.port}")
    return kwargs


def _check_id(env_id: str, kwargs: dict[str, Any]) -> None:
    """Build the env once, so a package is never written for an id or kwargs that fail."""
    import gymnasium as gym

    import textgyms  # noqa: F401  (registers the ids)

    try:
        gym.make(env_id, **kwargs).close()
    except gym.error.Error as exc:
        raise ConfigError(f"cannot package {env_id}: {exc}") from exc


def _serve_args(args: argparse.Namespace) -> list[str]:
    """The serving options of ``args``, as command-line arguments for the packaged server."""
    out = ["--max-sessions", str(args.max_sessions), "--idle-timeout", f"{args.idle_timeout:g}",
           "--max-message-bytes", str(args.max_message_bytes),
           "--request-timeout", f"{args.request_timeout:g}", "--grace", f"{args.grace:g}",
           "--auth-deadline", f"{args.auth_deadline:g}", "--max-unauth", str(args.max_unauth),
           "--max-unauth-per-peer", str(args.max_unauth_per_peer),
           "--workers", str(args.workers)]  # fmt: skip
    for name in ("max_connections", "sandbox_servers"):
        if getattr(args, name) is not None:
            out += ["--" + name.replace("_", "-"), str(getattr(args, name))]
    return out


def run(args: argparse.Namespace) -> int:
    """Run ``textgyms serve``; returns the exit code (0 after SIGTERM or Ctrl-C)."""
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV)
    kwargs = _check_limits(args)
    if args.package is not None:
        from pathlib import Path

        from textgyms.server.package import write_env_dir

        _check_id(args.env_id, kwargs)
        print(write_env_dir(args.env_id, kwargs, _serve_args(args), Path(args.package)))
        return 0
    check_bind(args.host, token)
    try:  # imported here: the server is an optional extra (textgyms[serve])
        load_openenv()
        from textgyms.server.serving import serve
    except ImportError as exc:
        raise BackendError("textgyms serve needs `pip install textgyms[serve]`") from exc
    return serve(args, kwargs, token)
