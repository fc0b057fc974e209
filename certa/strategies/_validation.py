"""Argument checks shared by the strategies."""
from __future__ import annotations

import numbers


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
