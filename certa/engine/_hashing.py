"""A hash of any value that identifies it across processes and runs."""
from __future__ import annotations

import hashlib
from typing import Any

from joblib import hash as joblib_hash


def stable_hash(obj: Any) -> str:
    """``joblib.hash(obj)``; for what joblib cannot pickle (a local function), the hash of its cloudpickle.

    cloudpickle pickles a function by value (its code, defaults and closure), so an
    edited function hashes differently; the last resort is the hash of ``repr(obj)``.
    """
    try:
        return joblib_hash(obj)
    except Exception:  # noqa: BLE001 - e.g. a local function among fit parameters
        import cloudpickle

        try:
            return hashlib.sha256(cloudpickle.dumps(obj)).hexdigest()
        except Exception:  # noqa: BLE001
            return joblib_hash(repr(obj))
