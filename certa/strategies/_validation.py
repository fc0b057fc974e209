"""Argument checks shared by the strategies."""
from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np


def check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return int(value)


def check_confidence(confidence) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real) or not 0 < confidence < 1:
        raise ValueError(f"confidence must be a number in (0, 1), e.g. 0.95, got {confidence!r}")
    return float(confidence)


def check_choice(name: str, value, choices) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


def check_beta(beta) -> float | str:
    """A top-two ``beta``: a probability in (0, 1), or ``"ids"`` (information-directed selection)."""
    if isinstance(beta, str):
        if beta != "ids":
            raise ValueError(f'beta must be a number in (0, 1) or "ids", got {beta!r}')
        return beta
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real) or not 0 < beta < 1:
        raise ValueError(f'beta must be a number in (0, 1) or "ids", got {beta!r}')
    return float(beta)


def as_score_list(scores_per_candidate: Any, min_n: int) -> list[np.ndarray]:
    name = "scores_per_candidate"
    if isinstance(scores_per_candidate, (str, bytes)) or not isinstance(
        scores_per_candidate, (Sequence, np.ndarray)
    ):
        raise TypeError(
            f"{name} must be a sequence with one array-like of scores per candidate, "
            f"got {type(scores_per_candidate).__name__}"
        )
    if len(scores_per_candidate) < 1:
        raise ValueError(f"{name} must hold at least one candidate")
    out = []
    for k, s in enumerate(scores_per_candidate):
        if isinstance(s, (str, bytes)) or np.ndim(s) != 1:
            raise TypeError(
                f"{name}[{k}] must be a 1-D array-like of scores, got {type(s).__name__}"
            )
        try:
            arr = np.asarray(s, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"{name}[{k}] must contain numbers") from None
        if arr.size < min_n:
            raise ValueError(
                f"{name}[{k}] has {arr.size} score(s); every candidate needs at least "
                f"{min_n}"
            )
        if not np.isfinite(arr).all():
            raise ValueError(f"{name}[{k}] contains NaN or infinite scores")
        out.append(arr)
    return out


def finite_1d_arrays(**named: Any) -> list[np.ndarray]:
    """Each argument as a non-empty, finite 1-D float array, or a TypeError/ValueError naming it."""
    arrays = []
    for name, value in named.items():
        if isinstance(value, (str, bytes)):
            raise TypeError(f"{name} must be a 1-D array-like of numbers")
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a 1-D array-like of numbers") from None
        if arr.ndim != 1 or arr.size < 1:
            raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} contains NaN or infinite values")
        arrays.append(arr)
    return arrays
