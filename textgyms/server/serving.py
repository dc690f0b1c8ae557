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
from textgyms.server.protocols import Limits, protocol_classes
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
    config = _config(app, args)
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


def _config(app: Guard, args: argparse.Namespace) -> uvicorn.Config:
    http, ws = protocol_classes(Limits(connection_cap(args), args.request_timeout))
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


def connection_cap(args: argparse.Namespace) -> int:
    """``--max-connections`` (default sessions + 64), kept below the descriptor limit, which
    is first raised to its hard maximum."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    wanted = args.max_connections or args.max_sessions + 64
    return max(1, min(wanted, soft - FD_RESERVE))


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
