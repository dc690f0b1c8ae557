"""The Ray backend: the same env runners as ``multiprocessing``, hosted by Ray actors.

``make_vec(env_id, n, backend="ray")`` starts ``num_workers`` actors, each running
``num_envs // num_workers`` envs with the very code the other backends use (``_EnvRunner``), so
the batches are identical to ``serial``'s for the same seeds. Rollouts spread over whatever Ray
cluster the driver is connected to:

    import ray, textgyms
    ray.init(address="auto")            # or "ray://head:10001"; RAY_ADDRESS works too
    vec = textgyms.make_vec("textgyms/Wordle-v0", 256, backend="ray", num_workers=32)

Without a prior ``ray.init`` a local Ray instance is started (Ray's own default, which also
honours ``RAY_ADDRESS``). On a remote cluster textgyms must be importable by the workers:
install it on the nodes or pass ``runtime_env={"py_modules": [textgyms]}`` to ``ray.init``.

Imports in this package are absolute, so ``import ray`` below is the Ray package.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import ray

from textgyms.errors import BackendError, ConfigError, WorkerDiedError
from textgyms.vector.base import (
    AHEAD_SETTLE_S,
    Batch,
    EnvFactory,
    VecEnv,
    _EnvRunner,
    _make_batch,
    _reset_runners,
    _Result,
    _step_runners,
    choose_workers,
    split_by_worker,
)
from textgyms.vector.collector import QuietCollector, worker_gc_mode

__all__ = ["RayVecEnv"]

IDLE_COLLECT_S = 1.0  # an idle actor in wait mode still runs a due collection this often


class _Worker:
    """The body of one actor: ``count`` env runners and the commands on them.

    ``ahead`` (reset-ahead, after a step or reset) only wakes the actor's drawing thread, a
    plain thread of its own (not a Ray concurrency group: an actor with one aborted inside
    Ray's task execution in a benchmark run), which draws the envs' next tasks. A lock keeps
    the runners to one thread at a time, and a command that comes in raises ``_wanted`` so
    that the drawing stops after the task it is drawing; after a ``call`` in the model's turn
    (a policy reading its env) the drawing goes on.

    ``gc_mode="wait"``: the same thread runs the cyclic garbage collector's due collection
    after each step or reset (and, while the actor idles, every ``IDLE_COLLECT_S``), automatic
    collection being off (:class:`~textgyms.vector.collector.QuietCollector`)."""

    def __init__(self, make_env: EnvFactory, count: int, stride: int, autoreset: str,
                 gc_mode: str = "auto") -> None:
        self.error: Exception | None = None
        self._lock = threading.Lock()
        self._wanted = 0  # commands waiting for the lock (the drawing yields to them)
        self._wake = threading.Event()
        self._stop = False
        self._drawer: threading.Thread | None = None
        self._ahead = False  # from a step or reset with ``ahead`` to the next one
        # ahead()'s requests to draw (not only to collect), and those the thread has taken:
        # each written by one thread only, so none is lost between a read and a write
        self._draw_requests = self._draw_taken = 0
        self.runners: list[_EnvRunner] = []
        try:
            for _ in range(count):
                self.runners.append(_EnvRunner(make_env(), autoreset, stride))
        except Exception as exc:  # noqa: BLE001  (reported by spaces(), with its own type)
            self.error = exc
        self._collector = QuietCollector()
        if gc_mode == "wait":
            self._collector.start()

    def spaces(self) -> tuple[gym.Space, gym.Space, str]:
        """The env's spaces and this actor's id, or the error building the envs raised."""
        if self.error is not None:
            raise self.error
        env = self.runners[0].env
        return env.observation_space, env.action_space, ray.get_runtime_context().get_actor_id()

    @contextlib.contextmanager
    def _turn(self) -> Iterator[None]:
        """The runners, for a command: ``ahead`` stops drawing and lets it in."""
        self._wanted += 1
        try:
            with self._lock:
                yield
        finally:
            self._wanted -= 1

    def reset(self, seeds: list[int | None], options: dict | None, mask: list[bool],
              ahead: bool = False) -> _Result:
        """Reset this actor's slice (see ``_reset_runners``); ``ahead``: then draw ahead."""
        self._ahead = False  # set again only once it has succeeded
        with self._turn():
            result = _reset_runners(self.runners, seeds, options, mask)
        self._ahead = ahead
        if ahead:
            self.ahead()
        self._quiet()
        return result

    def step(self, actions: list[str], ahead: bool = False) -> _Result:
        """Step this actor's slice; ``ahead``: then draw the next tasks while the driver
        computes the next actions (no extra call: a Ray call costs about a millisecond)."""
        self._ahead = False  # set again only once it has succeeded
        with self._turn():
            result = _step_runners(self.runners, actions)
        self._ahead = ahead
        if ahead:
            self.ahead()
        self._quiet()
        return result

    def call(self, index: int, method: str, args: tuple) -> Any:
        """``env.unwrapped.<method>(*args)`` on one env of the slice (in the model's turn,
        the drawing goes on after it)."""
        try:
            with self._turn():
                return getattr(self.runners[index].env.unwrapped, method)(*args)
        finally:
            if self._ahead:
                self.ahead()

    def ahead(self) -> None:
        """Reset-ahead: wake the drawing thread (started on first use) if an env has a next
        task to draw, and return at once."""
        if not any(r.wants_prepare() or r.wants_warm() for r in self.runners):
            return
        self._draw_requests += 1
        self._wake_thread()

    def _quiet(self) -> None:
        """After a command: wake the thread to run the collector's due collection."""
        if self._collector.active:
            self._wake_thread()

    def _wake_thread(self) -> None:
        if self._drawer is None:
            self._drawer = threading.Thread(target=self._draw, name="textgyms-ahead",
                                            daemon=True)
            self._drawer.start()
        self._wake.set()

    def _draw(self) -> None:
        """The actor's own thread: on each wake-up, the collector's due collection (``wait``
        mode), then, if :meth:`ahead` asked, each env's next task
        (``_EnvRunner.prepare_next``), then each one warmed (``warm_next``), until a command
        comes in."""
        idle = IDLE_COLLECT_S if self._collector.active else None
        while True:
            self._wake.wait(idle)
            self._wake.clear()
            time.sleep(AHEAD_SETTLE_S)  # a driver that steps again at once finds us idle
            if self._collector.active and not self._stop:
                with self._lock:  # (a command that comes in waits for this one collection)
                    self._collector.collect_due()
            requests = self._draw_requests
            drawing, self._draw_taken = requests != self._draw_taken, requests
            for work in (_EnvRunner.prepare_next, _EnvRunner.warm_next):  # all draws first
                for runner in self.runners if drawing else ():
                    if self._wanted or self._stop:
                        break
                    with self._lock:
                        if not (self._wanted or self._stop):
                            work(runner)
            if self._stop:
                return

    def pid(self) -> int:
        """The actor's process id (for monitoring, and for tests that kill it)."""
        return os.getpid()

    def collector_state(self) -> tuple[bool, list[int]]:
        """Whether automatic garbage collection is on in the actor's process, and the
        collections per generation run in its wait (for monitoring and tests)."""
        return gc.isenabled(), list(self._collector.collections)

    def close(self) -> None:
        """Close this actor's envs (e.g. a sandbox server), then end the actor gracefully."""
        self._stop = True
        self._wake.set()
        with self._turn():
            for runner in self.runners:
                with contextlib.suppress(Exception):
                    runner.env.close()
        ray.actor.exit_actor()


_RemoteWorker: Any = None


def _remote_worker() -> Any:
    """The actor class, built on first use (so importing this module starts nothing)."""
    global _RemoteWorker
    if _RemoteWorker is None:
        # A dead actor is never restarted: its envs' episodes are lost, so the VecEnv raises
        # WorkerDiedError rather than silently replaying from a fresh env.
        _RemoteWorker = ray.remote(max_restarts=0, max_task_retries=0)(_Worker)
    return _RemoteWorker


# Options textgyms sets itself or that cannot hold for several actors: a restarted actor would
# silently replay from fresh envs (a dead one must raise WorkerDiedError), and one name cannot
# belong to every actor.
_RESERVED_OPTIONS = ("max_restarts", "max_task_retries", "name", "get_if_exists")


def actor_class(actor_options: Mapping[str, Any] | None) -> Any:
    """The actor class with ``actor_options`` applied (``ActorClass.options``), checked before
    Ray starts anything. Raises ConfigError for a non-mapping, an option textgyms reserves, or
    an option Ray refuses (an unknown name, a bad value)."""
    if actor_options is None:
        return _remote_worker()
    if not isinstance(actor_options, Mapping) or not all(isinstance(k, str) for k in actor_options):
        raise ConfigError(
            "actor_options must be a dict of Ray actor options, e.g. {'num_cpus': 1} or "
            f"{{'resources': {{'env_node': 1}}}}, got {actor_options!r}"
        )
    reserved = sorted(set(actor_options) & set(_RESERVED_OPTIONS))
    if reserved:
        raise ConfigError(
            f"actor_options {reserved} cannot be set: textgyms never restarts an actor (its "
            "envs' episodes would be lost) and starts several actors, so one name cannot fit"
        )
    try:
        return _remote_worker().options(**actor_options)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"Ray refused actor_options {dict(actor_options)!r}: {exc}") from exc


@dataclass(eq=False)
class _Handle:
    """Driver-side handle of one actor and its request in flight."""

    index: int
    start: int  # first env id
    actor: Any
    pending: Any = None  # ObjectRef of the request in flight
    seq: int = 0
    actor_id: str = "?"  # known once the actor has started


class RayVecEnv(VecEnv):
    """Envs spread over ``num_workers`` Ray actors, ``num_envs // num_workers`` envs each.

    ``actor_options`` go to ``ActorClass.options`` (e.g. ``{"num_cpus": 1}`` to reserve a CPU
    per actor, ``{"resources": {"env_node": 1}}`` to place actors on the nodes offering that
    custom resource, or a ``scheduling_strategy``; checked by :func:`actor_class`); by default
    an actor reserves no CPU while it runs (Ray's default), so more actors than CPUs still
    start. ``startup_timeout``: seconds to
    wait for every actor to build its envs before raising :class:`BackendError`.
    With ``batch_size < num_envs`` (a multiple of the envs per actor), ``recv`` returns the
    first actors to answer; pass the batch's ``env_ids`` back to ``send``.

    ``reset_ahead`` (default on) is the multiprocessing backend's (see
    :class:`~textgyms.vector.MultiprocessingVecEnv`), with one difference: an actor starts
    drawing its envs' next tasks (on a thread of its own, until the next command comes) as soon
    as it has answered a step or reset, 3 ms later, since a separate call from the driver
    would cost about a millisecond per actor and step.

    Garbage collection in the wait (``TEXTGYMS_WORKER_GC``) is the multiprocessing backend's
    too: the same thread runs the collector's due collection after each step or reset, and
    every ``IDLE_COLLECT_S`` while the actor idles (Ray's own Python code runs in the actor's
    process, and its garbage must go even when no command comes).
    """

    def __init__(
        self,
        env_id: Any,
        num_envs: int,
        *,
        num_workers: int | None = None,
        actor_options: dict[str, Any] | None = None,
        startup_timeout: float = 120.0,
        reset_ahead: bool = True,
        **common: Any,
    ) -> None:
        """``common``: the :class:`VecEnv` options (group_size, autoreset, batch_size,
        env_kwargs, ladders). ``reset_ahead``: see the class docstring."""
        if not isinstance(reset_ahead, bool):
            raise ConfigError(f"reset_ahead must be True or False, got {reset_ahead!r}")
        self.reset_ahead = reset_ahead
        self.gc_mode = worker_gc_mode()  # (a bad TEXTGYMS_WORKER_GC raises before Ray starts)
        self._handles: list[_Handle] = []
        actor_cls = actor_class(actor_options)  # a bad option fails here, before Ray starts
        super().__init__(env_id, num_envs, **common)
        if not ray.is_initialized():
            ray.init()  # a local instance, or the cluster named by RAY_ADDRESS
        cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
        self.num_workers = choose_workers(self.num_envs, num_workers, cpus)
        self.envs_per_worker = self.num_envs // self.num_workers
        if self.batch_size % self.envs_per_worker:
            raise ConfigError(
                f"batch_size={self.batch_size} must be a multiple of the envs per "
                f"worker ({self.envs_per_worker} = num_envs / num_workers)"
            )
        self._seq = itertools.count()
        try:
            self._start(actor_cls, startup_timeout)
        except BaseException:
            self._close()
            raise
        self._closed = False

    def _start(self, cls: Any, timeout: float) -> None:
        epw = self.envs_per_worker
        args = (self.make_env, epw, self.num_groups, self.autoreset, self.gc_mode)
        for index in range(self.num_workers):
            self._handles.append(_Handle(index, index * epw, cls.remote(*args)))
        refs = [h.actor.spaces.remote() for h in self._handles]
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=timeout)
        if len(ready) < len(refs):
            raise BackendError(
                f"{len(refs) - len(ready)} of {len(refs)} Ray actors did not start within "
                f"{timeout:g}s; does the cluster have room for them (ray.cluster_resources())?"
            )
        for h, ref in zip(self._handles, refs):
            obs_space, action_space, h.actor_id = self._get(h, ref)
        self.single_observation_space, self.single_action_space = obs_space, action_space

    @property
    def actors(self) -> list[Any]:
        """The actor handles, in worker order (worker ``w`` runs envs ``w * envs_per_worker``
        to ``(w + 1) * envs_per_worker - 1``)."""
        return [h.actor for h in self._handles]

    # -- primitives ---------------------------------------------------------------------------
    def _async_reset(self, seeds: list[int | None], options: dict | None, mask: np.ndarray) -> None:
        self._drain()
        for h in self._handles:
            part = slice(h.start, h.start + self.envs_per_worker)
            self._post(h, h.actor.reset.remote(seeds[part], options, mask[part].tolist(),
                                               self.reset_ahead))

    def _send(self, actions: list[str], env_ids: np.ndarray) -> None:
        chunks = self._split(actions, env_ids)
        for h, _ in chunks:  # check all first: nothing is sent if any actor is not ready
            if h.pending is not None:
                raise BackendError(f"worker {h.index} has results not yet received; call recv()")
        for h, chunk in chunks:
            self._post(h, h.actor.step.remote(chunk, self.reset_ahead))

    def _recv(self) -> Batch:
        busy = [h for h in self._handles if h.pending is not None]
        need = self.batch_size // self.envs_per_worker
        if len(busy) < need:
            raise BackendError(
                f"recv() needs {need} workers' results but only {len(busy)} have requests "
                "in flight: send() the envs of the last batch (or async_reset) first"
            )
        ready = self._wait(busy, need)
        # Every ready reply is read before raising, so no reply is left behind a failure.
        results, errors = [], []
        for h in sorted(ready, key=lambda h: h.index):
            ref, h.pending = h.pending, None
            try:
                results.append((h.start, self._get(h, ref)))
            except WorkerDiedError:
                raise
            except Exception as exc:  # noqa: BLE001  (an env error: re-raised below)
                errors.append(exc)
        if errors:
            raise errors[0]
        return _make_batch(results)

    def _call(self, env_id: int, method: str, args: tuple) -> Any:
        h = self._handles[env_id // self.envs_per_worker]
        if h.pending is not None:
            raise BackendError(f"env {env_id} has results not yet received; call recv() first")
        return self._get(h, h.actor.call.remote(env_id - h.start, method, args))

    def _close(self) -> None:
        # Ask each actor to close its envs and exit (ray.kill alone skips the envs' close and
        # makes every worker print a SIGTERM stack dump); kill whatever has not gone in time.
        refs = []
        for h in self._handles:
            with contextlib.suppress(Exception):  # already dead, or Ray shut down
                refs.append(h.actor.close.remote())
        with contextlib.suppress(Exception):
            ray.wait(refs, num_returns=len(refs), timeout=10)
        for h in self._handles:
            with contextlib.suppress(Exception):
                ray.kill(h.actor, no_restart=True)
        self._handles = []

    # -- helpers ------------------------------------------------------------------------------
    def _post(self, h: _Handle, ref: Any) -> None:
        h.pending, h.seq = ref, next(self._seq)

    def _wait(self, busy: list[_Handle], need: int) -> list[_Handle]:
        """The ``need`` actors to answer first, oldest request first among the ready ones.

        A dead actor's reply is ready at once (as an error), so this never blocks on it.
        """
        by_ref = {h.pending: h for h in busy}
        refs = list(by_ref)
        ray.wait(refs, num_returns=need)  # block until enough are ready, then take them all
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
        return sorted((by_ref[r] for r in ready), key=lambda h: h.seq)[:need]

    def _get(self, h: _Handle, ref: Any) -> Any:
        """``ray.get`` with Ray's errors turned into textgyms' (a dead actor, an env error)."""
        try:
            return ray.get(ref)
        except ray.exceptions.RayActorError as exc:
            raise self._died(h, exc) from None
        except ray.exceptions.RayTaskError as exc:
            raise _env_error(exc, f"ray worker {h.index} ({self._envs_of(h)})") from None

    def _drain(self) -> None:
        """Discard replies still in flight so a reset starts clean (a dead actor still raises)."""
        for h in self._handles:
            if h.pending is not None:
                ref, h.pending = h.pending, None
                with contextlib.suppress(ray.exceptions.RayTaskError):
                    self._get(h, ref)

    def _split(self, actions: list[str], env_ids: np.ndarray) -> list[tuple[_Handle, list[str]]]:
        """Group actions by actor; ``env_ids`` must cover whole actors."""
        split = split_by_worker(actions, env_ids, self.envs_per_worker)
        return [(self._handles[w], acts) for w, acts in split]

    def _envs_of(self, h: _Handle) -> str:
        return f"envs {h.start}..{h.start + self.envs_per_worker - 1}"

    def _died(self, h: _Handle, exc: Exception) -> WorkerDiedError:
        """Record and return the error for an actor that died."""
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        self._broken = WorkerDiedError(
            f"ray worker {h.index} (actor {h.actor_id[:16]}, {self._envs_of(h)}) of "
            f"{self.env_id} died: {reason}; the VecEnv cannot continue: close it and make a new "
            "one"
        )
        return self._broken


def _env_error(exc: Any, where: str) -> BaseException:
    """Rebuild the exception an env raised inside an actor, with the same type where possible."""
    cause = getattr(exc, "cause", None)
    if not isinstance(cause, BaseException):
        return BackendError(f"{where}: {exc}")
    message = f"{type(cause).__qualname__}: {cause}\n(raised in {where})"
    try:
        return type(cause)(message)
    except Exception:  # noqa: BLE001  (a constructor wanting other arguments)
        return BackendError(message)
