"""Where a model runs: the ``device`` and ``dtype`` choices, and what a run records about them.

Every place that runs a model (``textgyms.models.load_model``, ``hf:`` policy specs, the
baselines' ``--device`` / ``--dtype``) resolves its choices here, with the same rules:

* ``device``: ``auto`` (CUDA when ``torch.cuda.is_available()``, else the CPU), ``cpu``,
  ``cuda`` or ``cuda:N``; asking for CUDA where there is none is a :class:`ConfigError` at once;
* ``dtype``: ``auto`` (bfloat16 on CUDA, float32 on the CPU), ``float32``, ``bfloat16`` or
  ``float16``.

So on a CPU machine the defaults are what textgyms always did: float32 on the CPU. Training
(``baselines/``) keeps float32 weights whatever ``dtype`` says and runs the forward passes under
:func:`autocast` (mixed precision: a bfloat16 weight cannot take a 1e-5 learning-rate step),
while inference (``load_model``, ``HFPolicy``) casts the weights themselves.

Nothing here imports torch until a function needs it, so the evaluation metadata can record the
device of any policy.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from textgyms.errors import ConfigError, DeviceMemoryError

DEVICES = ("auto", "cpu", "cuda", "cuda:N")
DTYPES = ("auto", "float32", "bfloat16", "float16")

__all__ = ["DEVICES", "DTYPES", "autocast", "device_info", "out_of_memory_hint",
           "peak_gpu_mem_gb", "reset_peak_memory", "resolve_device"]


def _check_device(device: Any) -> str:
    """``device`` as a lower-case string, or a ConfigError naming the valid choices."""
    text = str(device).strip().lower()
    head, colon, index = text.partition(":")
    if text in ("auto", "cpu", "cuda") or (head == "cuda" and colon and index.isdigit()):
        return text
    raise ConfigError(f"unknown device {device!r}; choose one of: {', '.join(DEVICES)}")


def _check_dtype(dtype: Any) -> str:
    """``dtype`` (a name or a ``torch.dtype``) as one of :data:`DTYPES`, or a ConfigError."""
    text = str(dtype).strip().lower().removeprefix("torch.")
    text = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}.get(text, text)
    if text in DTYPES:
        return text
    raise ConfigError(f"unknown dtype {dtype!r}; choose one of: {', '.join(DTYPES)}")


def resolve_device(device: Any = "auto", dtype: Any = "auto") -> tuple[Any, Any]:
    """``(torch.device, torch.dtype)`` for a device and dtype choice (see the module docstring).

    Raises :class:`ConfigError` for a value outside :data:`DEVICES` / :data:`DTYPES`, and for
    ``cuda`` / ``cuda:N`` when torch sees no CUDA device (or fewer than N + 1): the message
    names CUDA and says what to pass instead. Both are checked before torch is imported.
    """
    name, kind = _check_device(device), _check_dtype(dtype)
    import torch

    cuda = torch.cuda.is_available()
    if name == "auto":
        name = "cuda" if cuda else "cpu"
    if name.startswith("cuda"):
        if not cuda:
            raise ConfigError(
                f"device {device!r} needs CUDA, but torch sees no CUDA GPU here (torch "
                f"{torch.__version__}); use device=cpu (or auto)"
            )
        index = int(name.partition(":")[2] or torch.cuda.current_device())
        if index >= torch.cuda.device_count():
            raise ConfigError(f"device {device!r}: CUDA has {torch.cuda.device_count()} "
                              f"device(s), numbered from 0")
        name = f"cuda:{index}"
    if kind == "auto":
        kind = "bfloat16" if name.startswith("cuda") else "float32"
    return torch.device(name), getattr(torch, kind)


def dtype_name(dtype: Any) -> str:
    """``torch.bfloat16`` -> ``"bfloat16"``."""
    return str(dtype).removeprefix("torch.")


@contextlib.contextmanager
def autocast(device: Any, dtype: Any) -> Iterator[None]:
    """Mixed precision for training: nothing at all in float32 (so CPU runs stay bit for bit
    what they were), ``torch.autocast`` to ``dtype`` otherwise. float16 needs loss scaling,
    which the baselines do not do, so they refuse it before getting here."""
    import torch

    if dtype == torch.float32:
        yield
        return
    with torch.autocast(device_type=torch.device(device).type, dtype=dtype):
        yield


def device_info(device: Any = None) -> dict[str, Any]:
    """What a run records about where it ran: ``device`` (``"cpu"``, ``"cuda:0"``, or
    ``None`` where the model runs elsewhere, e.g. a server) and ``gpu_name`` (the CUDA
    device's name, ``None`` on the CPU)."""
    if device is None:
        return {"device": None, "gpu_name": None}
    text = str(device)
    if not text.startswith("cuda"):
        return {"device": text, "gpu_name": None}
    import torch

    index = torch.device(text).index
    index = torch.cuda.current_device() if index is None else index
    return {"device": f"cuda:{index}", "gpu_name": torch.cuda.get_device_name(index)}


def _cuda_index(device: Any) -> int | None:
    """The CUDA device index of ``device`` when it is a CUDA device this process has already
    initialised CUDA for, else None (never imports torch, never initialises CUDA)."""
    torch = sys.modules.get("torch")
    if (device is None or not str(device).startswith("cuda") or torch is None
            or not torch.cuda.is_available() or not torch.cuda.is_initialized()):
        return None
    index = torch.device(str(device)).index
    return torch.cuda.current_device() if index is None else index


def reset_peak_memory(device: Any) -> None:
    """Start a new peak-memory window on ``device`` (no-op off CUDA)."""
    index = _cuda_index(device)
    if index is not None:
        import torch

        torch.cuda.reset_peak_memory_stats(index)


def peak_gpu_mem_gb(device: Any) -> float | None:
    """Peak memory held by tensors on ``device`` since the last :func:`reset_peak_memory`, in
    GiB (``torch.cuda.max_memory_allocated``); ``None`` off CUDA (a CPU run in a process that
    also used a GPU reports none)."""
    index = _cuda_index(device)
    if index is None:
        return None
    import torch

    return round(torch.cuda.max_memory_allocated(index) / 2**30, 3)


@contextlib.contextmanager
def out_of_memory_hint(what: str, lower: str) -> Iterator[None]:
    """Turn CUDA out-of-memory inside the block into a :class:`DeviceMemoryError` that says
    what ran out (``what``) and which setting to lower (``lower``); the cache torch keeps is
    freed first, so a caller that catches it can retry smaller."""
    try:
        yield
    except Exception as exc:
        torch = sys.modules.get("torch")
        if torch is None or not isinstance(exc, torch.OutOfMemoryError):
            raise
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        raise DeviceMemoryError(f"CUDA ran out of memory while {what}; lower {lower}") from exc
