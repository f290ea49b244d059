"""Payload encoding for values crossing federates.

* numpy arrays (and CPU torch tensors) travel as a small header plus their raw buffer,
  sent and received without a pickling copy; they arrive as read-only arrays over the
  received frame (copy one to write to it).
* plain data (None, bool, int, float, str, bytes, lists, tuples, dicts of those) go as
  msgpack.
* anything else needs ``trusted_pickle=True`` on both sides: pickle runs code while
  loading, so only turn it on where every federate is trusted. Without it, such a value
  is refused when sent, and a pickled payload is refused when received.
* a connection with its own serializer (``connect(..., serializer=...)``,
  :mod:`reactorfed.model.serializer`) sends its bytes whatever the value (CUSTOM).
"""

from __future__ import annotations

import pickle
import sys
from typing import Any

import msgpack
import numpy as np

__all__ = ["CUSTOM", "CodecError", "decode", "decode_custom", "encode", "encode_custom", "flat_array"]

MSGPACK = 0
NUMPY = 1
PICKLE = 2
TORCH = 3
#: the bytes of a connection's own serializer
CUSTOM = 4

_SCALARS = frozenset({int, float, bool, str, bytes, type(None)})

_MAX_DIMS = 32


class CodecError(ValueError):
    """A value that cannot be sent, or a payload that cannot be decoded."""


def encode(value: Any, trusted_pickle: bool = False) -> tuple[int, Any, list[Any]]:
    """Return (codec, meta, frames). ``frames`` may hold buffers that are sent without copying."""
    if value.__class__ in _SCALARS:  # an action, a reward: no other type to look for
        try:
            return MSGPACK, None, [msgpack.packb(value, use_bin_type=True)]
        except OverflowError:
            pass  # an int beyond 64 bits: the general path says so
    if isinstance(value, np.ndarray):
        return NUMPY, _array_meta(value), [_raw(value)]
    torch = sys.modules.get("torch")  # a tensor means torch is imported; never import it here
    if torch is not None and isinstance(value, torch.Tensor):  # Parameter too
        t = value.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        arr = t.contiguous().numpy()
        return TORCH, _array_meta(arr), [_raw(arr)]
    try:
        return MSGPACK, None, [msgpack.packb(value, use_bin_type=True, strict_types=False)]
    except (TypeError, ValueError, OverflowError) as e:
        if not trusted_pickle:
            raise CodecError(
                f"cannot send a {type(value).__name__} between federates without pickle "
                "(send numpy arrays, tensors or plain data, or opt in with trusted_pickle for trusted federations)"
            ) from e
        return PICKLE, None, [pickle.dumps(value, protocol=5)]


def encode_custom(serializer: Any, value: Any) -> tuple[int, Any, list[Any]]:
    """(codec, meta, frames) of ``value`` through a connection's own serializer."""
    try:
        data = serializer.serialize(value)
    except Exception as e:
        raise CodecError(f"its serializer failed on a {type(value).__name__}: {e!r}") from e
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise CodecError(f"its serializer returned a {type(data).__name__}, not bytes")
    return CUSTOM, None, [bytes(data)]


def decode_custom(serializer: Any, frame: Any) -> Any:
    """Inverse of :func:`encode_custom`."""
    try:
        return serializer.deserialize(bytes(frame))
    except Exception as e:
        raise CodecError(f"its serializer failed to deserialize {memoryview(frame).nbytes} bytes: {e!r}") from e


def decode(codec: int, meta: Any, frames: list[Any], trusted_pickle: bool = False) -> Any:
    """Inverse of :func:`encode`; validates everything it reads."""
    if len(frames) != 1:
        raise CodecError(f"expected one payload frame, got {len(frames)}")
    buf = frames[0]
    if codec == MSGPACK:
        try:
            return msgpack.unpackb(buf, raw=False, strict_map_key=False)
        except Exception as e:
            raise CodecError(f"bad msgpack payload: {e}") from e
    if codec in (NUMPY, TORCH):
        arr = _array_from(meta, buf)
        if codec == TORCH:
            try:
                import torch
            except ImportError as e:  # pragma: no cover - only without torch
                raise CodecError("received a torch tensor but torch is not installed") from e
            try:
                return torch.from_numpy(arr.copy() if not arr.flags.writeable else arr)
            except (TypeError, ValueError, RuntimeError) as e:
                raise CodecError(f"bad tensor payload: {e}") from None
        return arr
    if codec == PICKLE:
        if not trusted_pickle:
            raise CodecError("refused a pickled payload: this federate does not trust pickle (trusted_pickle is off)")
        try:
            return pickle.loads(buf)
        except Exception as e:
            raise CodecError(f"bad pickled payload: {type(e).__name__}: {e}") from None
    raise CodecError(f"unknown payload codec {codec!r}")


def _raw(a: np.ndarray) -> np.ndarray:
    """The array's bytes as a flat uint8 view (a copy only when it is not C-contiguous):
    every dtype (datetime64 has no buffer interface) and every shape (zeros in it) sends."""
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    return a.reshape(-1).view(np.uint8)


def _array_meta(a: np.ndarray) -> list[Any]:
    if a.dtype.hasobject:
        raise CodecError("cannot send a numpy array of Python objects between federates")
    # A string for plain dtypes ("<f4"), a list of fields for structured ones.
    descr: Any = _DESCRS.get(a.dtype)
    if descr is None:
        descr = np.lib.format.dtype_to_descr(a.dtype)
        if len(_DESCRS) < 256:
            _DESCRS[a.dtype] = descr  # a structured dtype's list too: shared, never changed
    return [descr, list(a.shape)]


# numpy's descr <-> dtype conversions cost microseconds a message (a structured dtype's,
# a whole step of a rollout in one record, 26 us to encode and 9 to decode): they recur.
_DESCRS: dict[np.dtype[Any], Any] = {}
_DTYPES: dict[str | bytes, np.dtype[Any]] = {}


def _key(descr: Any) -> bytes | None:
    """A structured descr's cache key: its msgpack bytes (one C call, ~1 us for a rollout
    record's six fields; walking the lists in Python cost 2.5), or None if it does not
    pack (it is then never cached: :func:`_dtype` still judges it). Distinct descrs pack
    to distinct bytes."""
    try:
        return msgpack.packb(descr, use_bin_type=True)
    except Exception:
        return None


def _dtype(descr: Any) -> np.dtype[Any]:
    """The dtype a header names; never one of Python objects or of zero-sized items."""
    key = descr if type(descr) is str else _key(descr)
    dtype = _DTYPES.get(key) if key is not None else None
    if dtype is None:
        try:
            dtype = np.lib.format.descr_to_dtype(descr)
        except Exception as e:
            raise CodecError(f"bad array dtype {descr!r}") from e
        if key is not None and len(_DTYPES) < 256 and not dtype.hasobject and dtype.itemsize:
            _DTYPES[key] = dtype
    if dtype.hasobject:
        raise CodecError("refused an array of Python objects")
    if dtype.itemsize == 0:
        raise CodecError(f"bad array dtype {descr!r}: zero-sized items")
    return dtype


def flat_array(meta: Any) -> tuple[np.dtype[Any], int] | None:
    """For the header of a one-dimensional array (of a plain or a structured dtype: a
    rollout's records): the dtype and the payload's size in bytes, with which
    ``np.frombuffer(payload, dtype)`` is what :func:`decode` returns for it (a receiver
    that sees the same header again keeps these). None for any other header (or a bad
    one: :func:`decode` says what is wrong)."""
    if not (type(meta) is list and len(meta) == 2 and type(meta[0]) in (str, list) and type(meta[1]) is list
            and len(meta[1]) == 1 and type(meta[1][0]) is int and meta[1][0] >= 0):
        return None
    try:
        dtype = _dtype(meta[0])
    except CodecError:
        return None
    return dtype, meta[1][0] * dtype.itemsize


def _array_from(meta: Any, buf: Any) -> np.ndarray:
    plan = flat_array(meta)  # the usual header: one dimension (an observation), a plain dtype
    if plan is not None:
        mv = memoryview(buf)
        if plan[1] == mv.nbytes:
            return np.frombuffer(mv, dtype=plan[0])
    if not (isinstance(meta, (list, tuple)) and len(meta) == 2 and isinstance(meta[0], (str, list))
            and isinstance(meta[1], (list, tuple))):
        raise CodecError("bad array header")
    descr, shape = meta
    if len(shape) > _MAX_DIMS or not all(type(d) is int and d >= 0 for d in shape):
        raise CodecError("bad array shape")
    dtype = _dtype(descr)
    n = 1
    for d in shape:
        n *= d
    mv = memoryview(buf)
    if n * dtype.itemsize != mv.nbytes:
        raise CodecError(f"array payload has {mv.nbytes} bytes, header says {n * dtype.itemsize}")
    try:
        return np.frombuffer(mv, dtype=dtype).reshape(shape)
    except ValueError as e:  # e.g. more elements along an axis than numpy can index
        raise CodecError(f"bad array shape {shape}: {e}") from None
