"""What a confined sandbox child does: execute the agent's code, then (for ``call`` requests)
call its entry point on each input under a per-call alarm, writing one JSON line per call to
the result descriptor.

Nothing here is trusted by the parent: the agent's code runs in this very process and may
rewrite any of it. The parent only takes plain JSON values from the result pipe and compares
them itself with expected outputs the child never sees.
"""

from __future__ import annotations

import builtins
import io
import json
import linecache
import os
import signal
import sys
import time
import traceback
from typing import Any

from textgyms.sandbox.protocol import decode_value, encode_value

FILENAME = "<solution>"
TIMEOUT_EXIT = 124  # the exit status of a run stopped by its alarm


class _Alarm(BaseException):
    """Raised by SIGALRM; a BaseException so that ``except Exception`` does not swallow it."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Alarm()


def _arm(seconds: float) -> None:
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))


def _disarm() -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)


def _write_line(fd: int, record: dict[str, Any]) -> None:
    _write_lines(fd, [record])


def _write_lines(fd: int, records: list[dict[str, Any]]) -> None:
    if not records:
        return
    data = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _print_exception(exc: BaseException) -> None:
    """The traceback as Python prints it, minus this harness's frame."""
    tb = exc.__traceback__.tb_next if exc.__traceback__ else None
    sys.stderr.write("".join(traceback.format_exception(type(exc), exc, tb)))


def _describe(exc: BaseException) -> str:
    """``Type: message`` of an agent exception, safe against a hostile ``__str__``."""
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 - agent objects may raise anything
        text = "<unprintable>"
    return f"{type(exc).__name__}: {text}"[:500]


def prepare() -> None:
    """What does not depend on the request: the standard streams on descriptors 0-2 and the
    alarm handler. Called before the request arrives, so that a child forked ahead does it
    while the previous run is still going, off the path of the next one."""
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), "utf-8", "backslashreplace")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), "utf-8", "backslashreplace")
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), "utf-8")
    sys.argv = [FILENAME]
    signal.signal(signal.SIGALRM, _on_alarm)


def run(request: dict[str, Any], result_fd: int) -> int:
    """Execute ``request`` (op ``run`` or ``call``) in a :func:`prepare`d process; return the
    exit status."""
    code = request["code"]
    linecache.cache[FILENAME] = (len(code), None, code.splitlines(True), FILENAME)
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    budget = float(request.get("module_timeout", request["timeout"]))
    status = _exec_module(code, namespace, budget, result_fd)
    if status == 0 and request["op"] == "call":
        status = _calls(request, namespace, result_fd)
    _flush()
    return status


def _exec_module(code: str, namespace: dict[str, Any], timeout: float, result_fd: int) -> int:
    try:
        compiled = compile(code, FILENAME, "exec")
    except (SyntaxError, ValueError) as exc:  # ValueError: NUL bytes in the source
        sys.stderr.write("".join(traceback.format_exception_only(type(exc), exc)))
        return 1
    try:
        _arm(timeout)
        exec(compiled, namespace)
        _disarm()
    except _Alarm:
        sys.stderr.write(f"\nTimeoutError: execution took longer than {timeout:g} s\n")
        _write_line(result_fd, {"event": "timeout"})
        return TIMEOUT_EXIT
    except SystemExit as exc:
        _disarm()
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:  # noqa: BLE001 - any agent exception is an agent outcome
        _disarm()
        _print_exception(exc)
        _note_memory(exc, result_fd)
        return 1
    return 0


def _note_memory(exc: BaseException, result_fd: int) -> None:
    """Report a ``MemoryError`` (the address-space limit refused an allocation), so that the
    outcome reads as the memory limit, not as a wrong answer. The agent could write this event
    itself: it would only relabel its own failure."""
    if isinstance(exc, MemoryError):
        _write_line(result_fd, {"event": "memory"})


def _calls(request: dict[str, Any], namespace: dict[str, Any], result_fd: int) -> int:
    entry = request["entry"]
    fn = namespace.get(entry)
    if not callable(fn):
        _write_line(result_fd, {"event": "missing", "entry": entry})
        return 1
    per_call, by_name = float(request["test_timeout"]), bool(request.get("kwargs"))
    # Results are sent in batches: one write (and one wake-up of the server) per execution
    # for fast calls, and at least every 50 ms so a later hang loses little.
    batch: list[dict[str, Any]] = []
    last = time.monotonic()
    for i, raw in enumerate(request["inputs"]):
        batch.append(_one_call(fn, i, decode_value(raw), by_name, per_call, result_fd))
        if time.monotonic() - last > 0.05:
            _write_lines(result_fd, batch)
            batch, last = [], time.monotonic()
    _write_lines(result_fd, batch)
    return 0


def _one_call(
    fn: Any, i: int, args: Any, by_name: bool, timeout: float, result_fd: int
) -> dict[str, Any]:
    try:
        _arm(timeout)
        out = fn(**args) if by_name else fn(*args)
        _disarm()
        return {"i": i, "ok": True, "out": encode_value(out)}
    except _Alarm:
        _write_line(result_fd, {"event": "timeout"})  # the run's outcome: a timeout
        return {"i": i, "ok": False, "error": f"TimeoutError: call took longer than {timeout:g} s"}
    except BaseException as exc:  # noqa: BLE001 - an agent exception fails this call only
        _disarm()
        _note_memory(exc, result_fd)
        return {"i": i, "ok": False, "error": _describe(exc)}


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - the agent may have replaced or closed them
            pass
