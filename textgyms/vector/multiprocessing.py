"""The multiprocessing backend: envs spread over worker processes, one duplex pipe each.

Imports in this package are absolute, so ``import multiprocessing`` below is the standard
library, not this module.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing as mp
import os
import pickle
import signal
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any

import numpy as np

from textgyms.cpus import usable_cpus
from textgyms.errors import BackendError, ConfigError, WorkerDiedError
from textgyms.vector.base import (
    AHEAD_SETTLE_S,
    Batch,
    EnvFactory,
    VecEnv,
    _EnvRunner,
    _make_batch,
    _reset_runners,
    _step_runners,
    choose_workers,
    split_by_worker,
)
from textgyms.vector.collector import QuietCollector, worker_gc_mode
from textgyms.vector.mainguard import check_main_guard

# ----------------------------------------------------------------------------------------------
# Multiprocessing backend.
#
# Protocol (one duplex pipe per worker, pickled tuples):
#   parent -> worker: ("step", [action, ...])           one message for all the worker's envs
#                     ("reset", (seeds, options, mask))  per-env seeds and mask for its slice
#                     ("call", (local env index, method, args))
#                     ("close", None)
#   worker -> parent: ("ok", payload) | ("err", (pickled exception type, summary, traceback))
# The first message a worker sends is ("ok", (observation_space, action_space)) or the
# error that building its envs raised (e.g. ConfigError from a bad kwarg).


def _pack_exception(exc: BaseException) -> tuple[bytes | None, str, str]:
    """Make an exception sendable: its type by reference plus its text and traceback."""
    try:
        cls_blob: bytes | None = pickle.dumps(type(exc))
    except Exception:  # noqa: BLE001  (a type the parent could not import anyway)
        cls_blob = None
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return cls_blob, f"{type(exc).__qualname__}: {exc}", tb


def _unpack_exception(packed: tuple[bytes | None, str, str], where: str) -> BaseException:
    """Rebuild a worker's exception with the same type and the traceback in its message."""
    cls_blob, summary, tb = packed
    message = f"{summary}\n(raised in {where}; worker traceback follows)\n{tb}"
    try:
        return pickle.loads(cls_blob)(message)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001  (unknown type, or a constructor wanting other args)
        return BackendError(message)


def _worker_main(
    conn: Connection,
    make_env: EnvFactory,
    count: int,
    stride: int,
    autoreset: str,
    inherited: list[Connection],
    threads: int = 1,
    gc_mode: str = "auto",
) -> None:
    """Entry point of a worker process: build ``count`` envs, then serve commands.
    ``threads``: this worker's share of the cores, the ``TEXTGYMS_THREADS`` its envs may use
    for batched work (unless the user set that variable). ``gc_mode``: ``"wait"`` runs the
    cyclic garbage collector after each reply instead of inside the commands
    (:class:`~textgyms.vector.collector.QuietCollector`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle (it closes us)
    os.environ.setdefault("TEXTGYMS_THREADS", str(threads))
    for other in inherited:  # fork only: parent ends of pipes must not keep each other alive
        other.close()
    runners: list[_EnvRunner] = []
    try:
        try:
            for _ in range(count):
                runners.append(_EnvRunner(make_env(), autoreset, stride))
            env = runners[0].env
            conn.send(("ok", (env.observation_space, env.action_space)))
        except Exception as exc:  # noqa: BLE001  (any env error goes back to the caller)
            conn.send(("err", _pack_exception(exc)))
        # Serve even after a failed start (the parent only closes us then): exiting on our own
        # would look like a crash to the parent.
        collector = QuietCollector()
        if gc_mode == "wait":
            collector.start()
        _serve(conn, runners, collector)
    finally:
        for runner in runners:
            with contextlib.suppress(Exception):  # exiting anyway; close the rest
                runner.env.close()
        conn.close()


def _serve(conn: Connection, runners: list[_EnvRunner],
           collector: QuietCollector | None = None) -> None:
    """Answer commands until told to close or the parent goes away. ``ahead`` (no reply):
    the parent has the whole batch, so draw the next episodes' tasks until a command comes;
    a ``call`` in that time (a policy reading its env) stops the drawing only while it runs.
    ``collector`` (started): its due collection runs after each reply, before any drawing
    (none given: an inactive one, which never collects)."""
    collect = (collector or QuietCollector()).collect_due
    ahead = False  # from the parent's "ahead" to the next step or reset: the model's turn
    while True:
        try:
            command, payload = conn.recv()
        except (EOFError, OSError):  # the parent died or closed the pipe
            return
        if command == "close":
            return
        if command == "ahead":
            ahead = True
            _prepare_while_idle(conn, runners)
            continue
        ahead = ahead and command == "call"  # a step or reset (failed ones too) ends it
        try:
            if command == "step":
                result = _step_runners(runners, payload)
            elif command == "call":
                index, method, args = payload
                result = getattr(runners[index].env.unwrapped, method)(*args)
            else:
                result = _reset_runners(runners, *payload)
            conn.send(("ok", result))  # inside the try: an unpicklable info is an error too
        except Exception as exc:  # noqa: BLE001  (any env error goes back to the caller)
            conn.send(("err", _pack_exception(exc)))
        collect()  # the parent has the reply: the garbage of this command goes now
        if ahead:  # still the model's turn: draw on
            _prepare_while_idle(conn, runners)


def _prepare_while_idle(conn: Connection, runners: list[_EnvRunner]) -> None:
    """Draw each env's next task (:meth:`_EnvRunner.prepare_next`), then warm each
    (:meth:`_EnvRunner.warm_next`), until a command arrives: the time the parent spends on
    the model's turn. A command waits at most for the one task being drawn or warmed when it
    came. Drawing starts only after ``AHEAD_SETTLE_S`` with no command."""
    if not any(r.wants_prepare() or r.wants_warm() for r in runners):
        return
    if conn.poll(AHEAD_SETTLE_S):
        return
    for work in (_EnvRunner.prepare_next, _EnvRunner.warm_next):
        for runner in runners:
            if conn.poll():
                return
            work(runner)


@dataclass(eq=False)
class _Worker:
    """Parent-side handle of one worker process."""

    index: int
    start: int  # first env id
    process: BaseProcess
    conn: Connection
    busy: bool = True  # a reply is expected; the first one is the startup reply
    seq: int = 0  # when the pending request was sent (oldest ready results go first)


def _start_method(context: str | None) -> mp.context.BaseContext:
    """The multiprocessing context; see the comment in ``MultiprocessingVecEnv``."""
    methods = mp.get_all_start_methods()
    if context is None:
        context = "forkserver" if "forkserver" in methods else "spawn"
    if context not in methods:
        raise ConfigError(f"unknown context {context!r}; choose one of: {', '.join(methods)}")
    ctx = mp.get_context(context)
    if context == "forkserver":
        # Preloaded in the server once, so each worker forks with textgyms, gymnasium and numpy
        # already imported. "__main__" is multiprocessing's own default preload.
        ctx.set_forkserver_preload(["__main__", "textgyms"])
    return ctx


class MultiprocessingVecEnv(VecEnv):
    """Envs spread over ``num_workers`` processes, ``num_envs // num_workers`` envs each.

    With ``batch_size < num_envs`` (a multiple of the envs per worker), ``recv`` returns the
    first workers to answer, EnvPool-style; pass the batch's ``env_ids`` back to ``send``.

    Start method (``context``): the default is ``"forkserver"`` (``"spawn"`` where it does not
    exist). ``fork`` is the fastest but copies a parent that may already run threads (CUDA,
    tokenizers, vLLM, gRPC): a lock held by another thread at fork time deadlocks the child.
    A fork server is started once, single-threaded, with ``textgyms`` preloaded, so workers
    start almost as fast as with fork and safely. Pass ``context="fork"`` to trade safety for
    startup time, or ``"spawn"`` for the most isolated workers.

    Reset-ahead (``reset_ahead=True``, the default): once ``recv`` has a worker's results, the
    worker is told to use the wait for its next actions (the model's turn) to draw the task of
    each of its envs' next episode, whose seed the seed schedule already fixes
    (:meth:`TextEnv.pregenerate`). The autoreset that starts that
    episode then only looks the task up, so a turn's env side no longer pays for task
    generation (most of a NetConfig reset) whenever the model's turn is long enough to hide
    it. Results are the same with it or without it; a command that arrives while a task is
    being drawn waits for that one task. It costs CPU only for a schedule left unused (a
    reset to a new seed), and assumes, as Gymnasium does, that an env's settings do not
    change after it is made (after such a change, ``call`` each env's
    ``forget_pregenerated``).

    Garbage collection in the wait (``TEXTGYMS_WORKER_GC=wait``, the default): a worker turns
    Python's automatic cyclic garbage collection off and, after each reply, runs the
    collection CPython would have run by then (:mod:`textgyms.vector.collector`), so the
    collector's scans of everything the worker holds land in the model's turn, not inside a
    step. ``TEXTGYMS_WORKER_GC=auto`` keeps CPython's automatic collection.
    """

    _join_timeout = 2.0  # seconds close() waits for workers before terminating them

    def __init__(
        self,
        env_id: Any,
        num_envs: int,
        *,
        num_workers: int | None = None,
        context: str | None = None,
        reset_ahead: bool = True,
        **common: Any,
    ) -> None:
        """``common``: the :class:`VecEnv` options (group_size, autoreset, batch_size,
        env_kwargs, ladders). ``reset_ahead``: see the class docstring."""
        if not isinstance(reset_ahead, bool):
            raise ConfigError(f"reset_ahead must be True or False, got {reset_ahead!r}")
        self.reset_ahead = reset_ahead
        self.gc_mode = worker_gc_mode()  # (a bad TEXTGYMS_WORKER_GC raises before any start)
        self._workers: list[_Worker] = []
        super().__init__(env_id, num_envs, **common)
        self.num_workers = choose_workers(self.num_envs, num_workers, usable_cpus())
        self.envs_per_worker = self.num_envs // self.num_workers
        if self.batch_size % self.envs_per_worker:
            raise ConfigError(
                f"batch_size={self.batch_size} must be a multiple of the envs per "
                f"worker ({self.envs_per_worker} = num_envs / num_workers)"
            )
        ctx = _start_method(context)
        self.context = ctx.get_start_method()
        check_main_guard(self.context)  # an unguarded script: say what to add, start nothing
        self._seq = itertools.count()
        try:
            self._start_workers(ctx)
            replies, error = self._collect(None)
            if error is not None:
                raise error
        except BaseException:
            self._close()
            raise
        self.single_observation_space, self.single_action_space = replies[0][1]
        self._closed = False

    @property
    def worker_pids(self) -> list[int]:
        """Process ids of the workers, in worker order (worker ``w`` runs envs
        ``w * envs_per_worker`` to ``(w + 1) * envs_per_worker - 1``)."""
        return [w.process.pid for w in self._workers]

    def _start_workers(self, ctx: mp.context.BaseContext) -> None:
        fork = self.context == "fork"
        for index in range(self.num_workers):
            parent_conn, child_conn = ctx.Pipe()
            # Under fork the child inherits every parent end created so far; it closes them so
            # that each worker sees EOF when the parent dies.
            inherited = [w.conn for w in self._workers] + [parent_conn] if fork else []
            process = ctx.Process(
                target=_worker_main,
                name=f"textgyms-vec-worker-{index}",
                daemon=True,
                args=(
                    child_conn,
                    self.make_env,
                    self.envs_per_worker,
                    self.num_groups,
                    self.autoreset,
                    inherited,
                    max(1, usable_cpus() // self.num_workers),
                    self.gc_mode,
                ),
            )
            process.start()
            child_conn.close()
            self._workers.append(_Worker(index, index * self.envs_per_worker, process, parent_conn))

    # -- primitives ---------------------------------------------------------------------------
    def _async_reset(self, seeds: list[int | None], options: dict | None, mask: np.ndarray) -> None:
        self._drain()
        for w in self._workers:
            part = slice(w.start, w.start + self.envs_per_worker)
            self._post(w, ("reset", (seeds[part], options, mask[part].tolist())))

    def _send(self, actions: list[str], env_ids: np.ndarray) -> None:
        messages = list(self._split(actions, env_ids))
        for w, _ in messages:  # check all first: nothing is sent if any worker is not ready
            if w.busy:
                raise BackendError(f"worker {w.index} has results not yet received; call recv()")
        for w, chunk in messages:
            self._post(w, ("step", chunk))

    def _recv(self) -> Batch:
        replies, error = self._collect(self.batch_size // self.envs_per_worker)
        if error is not None:
            raise error
        if self.reset_ahead:  # their batch is in: they wait for the model's turn from now
            for w, _ in replies:
                with contextlib.suppress(OSError, ValueError):  # a dead one: the next post says
                    w.conn.send(("ahead", None))
        return _make_batch([(w.start, result) for w, result in replies])

    def _call(self, env_id: int, method: str, args: tuple) -> Any:
        w = self._workers[env_id // self.envs_per_worker]
        if w.busy:
            raise BackendError(f"env {env_id} has results not yet received; call recv() first")
        self._post(w, ("call", (env_id - w.start, method, args)))
        ok, value = self._read_when_ready(w)
        if not ok:
            raise value
        return value

    def _read_when_ready(self, w: _Worker) -> tuple[bool, Any]:
        """Wait for one worker's reply (or its death) and read it."""
        while not w.conn.poll():
            if w.process.sentinel in wait([w.conn, w.process.sentinel]) and not w.conn.poll():
                raise self._died(w)
        return self._read(w)

    def _close(self) -> None:
        for w in self._workers:
            with contextlib.suppress(OSError, ValueError):  # dead already: terminate() below
                w.conn.send(("close", None))
        for w in self._workers:
            w.process.join(self._join_timeout)
            if w.process.is_alive():
                w.process.terminate()
                w.process.join(1.0)
            if w.process.is_alive():
                w.process.kill()
                w.process.join()
            w.conn.close()

    # -- pipe helpers ---------------------------------------------------------------------------
    def _split(self, actions: list[str], env_ids: np.ndarray) -> Iterator[tuple[_Worker, list]]:
        """Group actions by worker; ``env_ids`` must cover whole workers."""
        for w, acts in split_by_worker(actions, env_ids, self.envs_per_worker):
            yield self._workers[w], acts

    def _post(self, w: _Worker, message: tuple) -> None:
        try:
            w.conn.send(message)
        except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
            raise self._died(w) from None
        w.busy, w.seq = True, next(self._seq)

    def _read(self, w: _Worker) -> tuple[bool, Any]:
        """Take the reply of a readable worker: ``(True, payload)`` or ``(False, its error)``."""
        try:
            status, payload = w.conn.recv()
        except (EOFError, OSError):
            raise self._died(w) from None
        w.busy = False
        if status == "ok":
            return True, payload
        where = f"worker {w.index} (envs {w.start}..{w.start + self.envs_per_worker - 1})"
        return False, _unpack_exception(payload, where)

    def _wait_ready(self) -> list[_Worker]:
        """Block until some busy worker has replied; return those, oldest request first.

        Process sentinels are waited on together with the pipes, so a worker that dies (even
        an idle one) wakes us up instead of leaving us blocked forever.
        """
        busy = [w for w in self._workers if w.busy]
        if not busy:
            raise BackendError("recv() without a pending send() or async_reset()")
        sentinels = {w.process.sentinel: w for w in self._workers}
        ready = wait([w.conn for w in busy] + list(sentinels))
        for item in ready:
            # A worker may exit right after its last reply (e.g. its envs failed to build):
            # that reply is still read; only a worker with nothing left to say has died.
            if isinstance(item, int) and item in sentinels:
                w = sentinels[item]
                if not (w.busy and w.conn.poll()):
                    raise self._died(w)
        return sorted((w for w in busy if w.conn.poll()), key=lambda w: w.seq)

    def _collect(self, need: int | None) -> tuple[list[tuple[_Worker, Any]], BaseException | None]:
        """Read ``need`` replies (``None``: every busy worker's), sorted by worker.

        Returns the successful payloads and the error of the lowest-numbered worker that
        failed, if any: all replies are read first, so the pipes stay in step and the error
        raised does not depend on which worker was quicker.
        """
        in_flight = sum(w.busy for w in self._workers)
        if need is not None and need > in_flight:  # would wait for replies that never come
            raise BackendError(
                f"recv() needs {need} workers' results but only {in_flight} have "
                "requests in flight: send() the envs of the last batch first"
            )
        need = in_flight if need is None else need
        replies: list[tuple[_Worker, Any]] = []
        errors: list[tuple[_Worker, BaseException]] = []
        while len(replies) + len(errors) < need:
            for w in self._wait_ready()[: need - len(replies) - len(errors)]:
                ok, value = self._read(w)
                (replies if ok else errors).append((w, value))
        replies.sort(key=lambda reply: reply[0].index)
        first_error = min(errors, key=lambda e: e[0].index)[1] if errors else None
        return replies, first_error

    def _drain(self) -> None:
        """Discard replies still in flight (e.g. after an error) so a reset starts clean."""
        self._collect(None)

    def _died(self, w: _Worker) -> WorkerDiedError:
        """Record and return the error for a worker that exited."""
        w.process.join(1.0)
        code = w.process.exitcode
        signalled = code is not None and code < 0 and -code in signal.valid_signals()
        how = f" (killed by {signal.Signals(-code).name})" if signalled else ""
        self._broken = WorkerDiedError(
            f"vector worker {w.index} (pid {w.process.pid}, envs {w.start}.."
            f"{w.start + self.envs_per_worker - 1}) of {self.env_id} died with exit code "
            f"{code}{how}; "
            "the VecEnv cannot continue: close it and make a new one"
        )
        return self._broken
