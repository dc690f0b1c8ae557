"""The wire formats of the sandbox: length-prefixed JSON messages between the client and the
fork server, and the tagged-JSON encoding of Python values that cross the boundary.

Values are plain JSON, with two tags for what JSON cannot say: ``{"__tuple__": [...]}`` and
``{"__dict__": [[key, value], ...]}`` (a dict whose keys are not all strings). Anything else
(sets, custom classes, ``int``/``str`` subclasses with a rigged ``__eq__``) is either reduced to
its plain JSON value by the encoder or refused: the parent only ever compares plain data. A
numpy scalar (``np.int64``, ``np.bool_``, ...) is reduced to the Python value its ``item()``
gives, which is what a test's ``==`` compares it as; arrays are refused.
"""

from __future__ import annotations

import json
import math
import os
import struct
import sys
from typing import Any

__all__ = ["send", "recv", "encode_value", "decode_value", "values_equal", "MAX_MESSAGE"]

MAX_MESSAGE = 256 << 20  # a message larger than this is a protocol fault
_HEADER = struct.Struct(">I")


def send(fd: int, message: dict[str, Any]) -> None:
    """Write one message: a 4-byte big-endian length, then UTF-8 JSON."""
    body = json.dumps(message, separators=(",", ":")).encode()
    data = _HEADER.pack(len(body)) + body
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def recv(fd: int) -> dict[str, Any] | None:
    """Read one message; None at a clean end of stream (the other side closed)."""
    head = _read_exact(fd, _HEADER.size)
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
    if size > MAX_MESSAGE:
        raise OSError(f"sandbox protocol: message of {size} bytes exceeds {MAX_MESSAGE}")
    body = _read_exact(fd, size)
    if body is None:
        raise EOFError("sandbox protocol: stream closed in the middle of a message")
    return json.loads(body)


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks, got = [], 0
    while got < size:
        chunk = os.read(fd, min(size - got, 1 << 20))
        if not chunk:
            if got == 0:
                return None
            raise EOFError("sandbox protocol: stream closed in the middle of a message")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def encode_value(value: Any, depth: int = 0) -> Any:
    """A JSON-able form of ``value`` (see the module docstring); raises TypeError otherwise.

    Subclasses of the plain types are reduced to the plain type, so an object with a rigged
    ``__eq__`` can never reach the comparison in the parent."""
    if depth > 100:
        raise TypeError("value nested more than 100 levels deep")
    if value is None or type(value) is bool:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, list):
        return [encode_value(v, depth + 1) for v in list.__iter__(value)]
    if isinstance(value, tuple):
        return {"__tuple__": [encode_value(v, depth + 1) for v in tuple.__iter__(value)]}
    if isinstance(value, dict):
        items = list(dict.items(value))
        if all(type(k) is str for k, _ in items):
            return {str(k): encode_value(v, depth + 1) for k, v in items}
        return {"__dict__": [[encode_value(k, depth + 1), encode_value(v, depth + 1)]
                             for k, v in items]}  # fmt: skip
    plain = _numpy_scalar(value)
    if plain is not None:
        return encode_value(plain, depth + 1)
    raise TypeError(f"values of type {type(value).__name__} cannot be returned")


def _numpy_scalar(value: Any) -> bool | int | float | str | None:
    """The plain Python value of a numpy scalar, None for anything else. (numpy is looked up,
    not imported: a value of its types exists only where the code imported it. Its integer
    and bool scalars are no subclasses of ``int`` and ``bool``, its float64 is one of
    ``float``.)"""
    numpy = sys.modules.get("numpy")
    if numpy is None or not isinstance(value, numpy.generic):
        return None
    plain = value.item()
    return plain if type(plain) in (bool, int, float, str) else None


def decode_value(data: Any) -> Any:
    """The inverse of :func:`encode_value`."""
    if isinstance(data, list):
        return [decode_value(v) for v in data]
    if isinstance(data, dict):
        if len(data) == 1 and "__tuple__" in data and isinstance(data["__tuple__"], list):
            return tuple(decode_value(v) for v in data["__tuple__"])
        if len(data) == 1 and "__dict__" in data and isinstance(data["__dict__"], list):
            return _dict_from_pairs(data["__dict__"])
        return {k: decode_value(v) for k, v in data.items()}
    return data


_SAME_HASH = 8  # distinct keys sharing one hash: more than this in one dict is crafted


def _dict_from_pairs(pairs: list[Any]) -> dict[Any, Any]:
    """A dict from ``[key, value]`` pairs whose keys may be any hashable value, built in linear
    time. JSON object keys are strings (hashed with this process's secret seed), but ints,
    floats and tuples hash predictably: ``k * (2**61 - 1)`` all hash to 0, and a dict of such
    keys is quadratic to build. More than :data:`_SAME_HASH` keys with one hash raise
    ValueError (the caller reports an unreadable value); no real answer has that."""
    keys = [_hashable(decode_value(k)) for k, _ in pairs]
    seen: dict[int, int] = {}  # hash -> keys with it (hashes of hashes never collide)
    for key in keys:
        h = hash(key)
        seen[h] = seen.get(h, 0) + 1
        if seen[h] > _SAME_HASH:
            raise ValueError("dict keys with colliding hashes")
    return {k: decode_value(v) for k, (_, v) in zip(keys, pairs)}


def _hashable(key: Any) -> Any:
    if isinstance(key, list):
        return tuple(_hashable(k) for k in key)
    return key


def values_equal(got: Any, expected: Any, rel: float = 1e-6, abs_tol: float = 1e-9) -> bool:
    """Compare decoded values with type checks and float tolerance.

    ``bool`` never equals a number; an expected ``int`` is matched exactly (by an int or an
    integral float, as Python's ``==`` in the original checks); an expected ``float`` with
    tolerance; lists and tuples must match in kind; NaN equals NaN."""
    if type(expected) is bool or type(got) is bool:
        return type(got) is type(expected) and got == expected
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)):
        if isinstance(expected, int):
            # Not within tolerance: 826600539.0 is not 826600538 (a float answer off by one
            # passed the relative tolerance of a large integer).
            return got == expected
        if math.isnan(expected) or math.isnan(got):
            return math.isnan(expected) and math.isnan(got)
        return math.isclose(got, expected, rel_tol=rel, abs_tol=abs_tol)
    if type(got) is not type(expected):
        return False
    if isinstance(expected, (list, tuple)):
        return len(got) == len(expected) and all(
            values_equal(g, e, rel, abs_tol) for g, e in zip(got, expected)
        )
    if isinstance(expected, dict):
        return got.keys() == expected.keys() and all(
            values_equal(got[k], expected[k], rel, abs_tol) for k in expected
        )
    return got == expected
