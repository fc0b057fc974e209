"""Payloads: what an evaluation keeps besides its score, stored as data that cannot run code.

A **payload** (the ``"payload"`` entry of what an evaluator returns) may contain only

* JSON values: ``None``, ``bool``, ``int``, ``float``, ``str``, lists/tuples of them, dicts with
  ``str`` keys (numpy scalars are turned into Python numbers);
* numpy arrays of a non-object dtype (numbers, booleans, fixed-width strings). An object array
  whose elements are all ``str`` (e.g. the predictions of a text classifier) is turned into a
  fixed-width unicode array; any other object array is refused;

nested in dicts and lists to any depth. Anything else (a fitted model, a DataFrame, a custom
object) is refused with a ``TypeError`` naming where it sits: the evaluation is then recorded as
failed with that message. Objects that must travel from a worker to the calling process without
being stored go in the ``"transient"`` entry instead (never written to a store).

In a :class:`~certa.engine.store.SQLiteStore` a payload is one ``.npz`` archive (numpy's
format, read back with ``allow_pickle=False``): the arrays, plus the structure as UTF-8 JSON in
which each array is a ``{"__ndarray__": "a<i>"}`` reference. Reading it never unpickles
anything, so a crafted store cannot execute code.
"""
from __future__ import annotations

import io
import json
import math
from typing import Any

import numpy as np

_ARRAY_KEY = "__ndarray__"
_STRUCTURE = "__structure__"
NPZ_MAGIC = b"PK\x03\x04"


def normalize_payload(value: Any, where: str = "payload") -> Any:
    """``value`` with numpy scalars as Python numbers and string object arrays as unicode arrays.

    Raises
    ------
    TypeError
        If ``value`` holds something that is not a JSON value or a non-object numpy array.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, np.generic):
        if value.dtype.kind in "biuf":
            return value.item()
        if value.dtype.kind == "U":
            return str(value)
        raise TypeError(f"{where}: numpy scalar of dtype {value.dtype} cannot be stored")
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            flat = value.ravel().tolist()
            if all(isinstance(v, str) for v in flat):
                return np.asarray(value, dtype=str) if flat else np.zeros(value.shape, dtype="<U1")
            bad = next(type(v).__name__ for v in flat if not isinstance(v, str))
            raise TypeError(f"{where}: an object array (holding {bad}) cannot be stored; a payload holds numpy "
                            "arrays of numbers, booleans or strings")
        if value.dtype.kind not in "biufcUSmM":
            raise TypeError(f"{where}: arrays of dtype {value.dtype} cannot be stored")
        return value
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"{where}: dict keys must be str, got {k!r}")
            if k == _ARRAY_KEY:
                raise TypeError(f"{where}: the key {_ARRAY_KEY!r} is reserved")
            out[k] = normalize_payload(v, f"{where}[{k!r}]")
        return out
    if isinstance(value, (list, tuple)):
        return [normalize_payload(v, f"{where}[{i}]") for i, v in enumerate(value)]
    raise TypeError(f"{where}: a {type(value).__module__}.{type(value).__qualname__} cannot be stored; a payload "
                    "holds JSON values and numpy arrays of non-object dtype (put objects that need not be "
                    "stored under 'transient')")


def normalize_details(details: dict[str, Any]) -> dict[str, Any]:
    """``details`` as JSON-able values (numpy scalars to Python numbers); ``TypeError`` otherwise."""
    out = {}
    for k, v in details.items():
        if not isinstance(k, str):
            raise TypeError(f"details: keys must be str, got {k!r}")
        v = normalize_payload(v, f"details[{k!r}]")
        if isinstance(v, np.ndarray) or _has_array(v):
            raise TypeError(f"details[{k!r}]: arrays belong in 'payload', details hold JSON values")
        out[k] = v
    return out


def _has_array(v: Any) -> bool:
    if isinstance(v, np.ndarray):
        return True
    if isinstance(v, dict):
        return any(_has_array(x) for x in v.values())
    if isinstance(v, list):
        return any(_has_array(x) for x in v)
    return False


def _json_default(v: Any) -> Any:
    raise TypeError(f"{type(v).__name__} is not JSON-able")


def encode_payload(payload: Any) -> bytes:
    """The ``.npz`` bytes of a (normalised) payload."""
    arrays: dict[str, np.ndarray] = {}

    def walk(v: Any) -> Any:
        if isinstance(v, np.ndarray):
            name = f"a{len(arrays)}"
            arrays[name] = v
            return {_ARRAY_KEY: name}
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, float) and not math.isfinite(v):
            return {"__float__": repr(v)}
        return v

    structure = json.dumps(walk(normalize_payload(payload)), default=_json_default, allow_nan=False)
    buf = io.BytesIO()
    np.savez(buf, **{_STRUCTURE: np.frombuffer(structure.encode("utf-8"), dtype=np.uint8)}, **arrays)
    return buf.getvalue()


def decode_payload(blob: bytes) -> Any:
    """A payload from :func:`encode_payload`'s bytes, read without unpickling anything.

    Raises
    ------
    ValueError
        If ``blob`` is not such an archive (e.g. a pickle written by an older certa, or a
        crafted one): it is never unpickled.
    """
    blob = bytes(blob)
    if not blob.startswith(NPZ_MAGIC):
        kind = "a pickle" if blob[:1] == b"\x80" else "not a certa payload archive"
        raise ValueError(f"payload is {kind}; certa reads payloads only as numpy .npz data "
                         "(never unpickles: a pickle can run code)")
    try:
        with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except Exception as exc:  # noqa: BLE001 - object arrays (pickle) and corrupt archives alike
        raise ValueError(f"payload archive cannot be read without pickle: {exc}") from None
    if _STRUCTURE not in arrays:
        raise ValueError("payload archive has no structure entry")
    try:
        structure = json.loads(arrays.pop(_STRUCTURE).tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"payload structure is not valid JSON: {exc}") from None

    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            if set(v) == {_ARRAY_KEY}:
                if v[_ARRAY_KEY] not in arrays:
                    raise ValueError(f"payload refers to a missing array {v[_ARRAY_KEY]!r}")
                return arrays[v[_ARRAY_KEY]]
            if set(v) == {"__float__"}:
                return float(v["__float__"])
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v

    return walk(structure)
