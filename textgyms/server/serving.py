"""Running the server: uvicorn with textgyms' protocols, the SIGTERM drain, and workers."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any

import uvicorn

from textgyms.cpus import sandbox_workers
from textgyms.sandbox import set_pool_size
from textgyms.server.app import Guard, create_app, summarise
from textgyms.server.gate import Gate, Limits
from textgyms.server.protocols import protocol_classes
from textgyms.server.workers import Table, bind, listen, supervise

FD_RESERVE = 128  # descriptors kept for envs, sandboxes and logs beyond the connections


def url_of(host: str, port: int) -> str:
    """``http://HOST:PORT`` (IPv6 addresses in brackets)."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def serve(args: argparse.Namespace, kwargs: dict[str, Any], token: str | None) -> int:
    """Serve until SIGTERM or Ctrl-C (one process, or ``--workers`` forked ones); exit 0."""

    set_pool_size(args.sandbox_servers or sandbox_workers())
    table = Table(args.workers) if args.workers > 1 else None
    capacity = None
    if table is not None:
        def capacity() -> dict[str, Any]:
            return summarise(table.report(), args.max_sessions)

    app = create_app(
        args.env_id,
        kwargs,
        token=token,
        max_sessions=args.max_sessions,
        max_message_bytes=args.max_message_bytes,
        idle_timeout=args.idle_timeout,
        capacity=capacity,
    )
    config = _config(app, args, _gate(app, args))
    if table is None:
        return _run(config, app, args.grace, None, lambda port: print(url_of(args.host, port)))
    reserved = bind(args.host, args.port)  # keeps the port while workers come and go
    port = reserved.getsockname()[1]

    def worker(index: int, ready_fd: int) -> None:
        reserved.close()
        sock = listen(args.host, port)
        slots = app.factory.slots
        slots.watch = lambda used: table.write(index, os.getpid(), used, slots.limit)
        slots.watch(0)

        def ready(port: int) -> None:
            try:
                os.write(ready_fd, b"1")
            except OSError:  # a restarted worker: the parent no longer waits for it
                pass
            os.close(ready_fd)

        _run(config, app, args.grace, [sock], ready)

    def announce() -> None:
        print(url_of(args.host, port), flush=True)

    try:
        return supervise(args.workers, worker, announce)
    finally:
        reserved.close()


def _gate(app: Guard, args: argparse.Namespace) -> Gate:
    """The connection gate of ``args``; ``GET /capacity`` reports it under "connections"."""
    gate = Gate(limits_of(args))
    local = app.capacity

    def report() -> dict[str, Any]:
        return {**local(), "connections": gate.report()}

    app.capacity = report
    return gate


def _config(app: Guard, args: argparse.Namespace, gate: Gate) -> uvicorn.Config:
    http, ws = protocol_classes(gate)
    return uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        http=http,
        ws=ws,
        # Frames up to this size reach the session, which refuses those over the limit and
        # keeps the session; larger ones are cut off by the WebSocket layer (connection closed).
        ws_max_size=max(16 * 1024 * 1024, 4 * args.max_message_bytes),
        timeout_graceful_shutdown=5.0,  # after the drain, for what is left
    )


def _run(config: uvicorn.Config, app: Guard, grace: float, sockets: Any, ready: Any) -> int:
    # uvicorn re-raises the SIGTERM/SIGINT it handled once it has drained the sessions and
    # closed every env; this handler turns that (or one arriving during startup) into exit 0.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _exit_cleanly)
    try:
        _server(config, app, grace, ready).run(sockets=sockets)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def limits_of(args: argparse.Namespace) -> Limits:
    """The connection limits of ``args``, after raising the soft descriptor limit to the hard
    one: the authenticated (``--max-connections``, default sessions + 64) and unauthenticated
    caps together stay :data:`FD_RESERVE` below it, so accepting never runs out."""
    soft, hard = raise_descriptor_limit()
    budget = max(2, soft - FD_RESERVE)
    authenticated = max(1, min(args.max_connections or args.max_sessions + 64, budget - 1))
    unauth = max(1, min(args.max_unauth, budget - authenticated))
    per_peer = min(args.max_unauth_per_peer, unauth)
    return Limits(authenticated, args.request_timeout, args.auth_deadline, unauth, per_peer,
                  (soft, hard))  # fmt: skip


def raise_descriptor_limit() -> tuple[int, int]:
    """Raise the soft RLIMIT_NOFILE to the hard one (65536 if that is unlimited); returns the
    (soft, hard) limits then in force."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = max(soft, 65536) if hard == resource.RLIM_INFINITY else hard
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):  # e.g. a sandbox that forbids it: keep what we have
            pass
    return soft, hard


def _exit_cleanly(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def _server(config: uvicorn.Config, app: Guard, grace: float, ready: Any) -> uvicorn.Server:
    """uvicorn's server, calling ``ready(port)`` once it listens (``--port 0`` resolved), and
    draining the sessions on SIGTERM before uvicorn's own shutdown."""

    class ReadyServer(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets=sockets)
            if self.started:
                ready(self.servers[0].sockets[0].getsockname()[1])
                sys.stdout.flush()

        async def shutdown(self, sockets: Any = None) -> None:
            for server in self.servers:  # stop accepting first
                server.close()
            cancelled = await app.registry.drain(grace)
            if cancelled:
                print(
                    f"textgyms serve: {cancelled} step(s) still running after the {grace:g} s "
                    "grace were cancelled (their clients got no reply)",
                    file=sys.stderr,
                    flush=True,
                )
            await super().shutdown(sockets=sockets)

    return ReadyServer(config)
