"""Input checks shared by the tests in :mod:`certa.stats`."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

ALTERNATIVES = ("two-sided", "greater", "less")

# Score differences whose spread is below this fraction of the scores' magnitude are
# treated as exactly constant: floating-point subtraction (0.8 - 0.7 vs 0.7 - 0.6)
# must not turn "all differences equal" into a t statistic of 1e16.
ZERO_SPREAD_RTOL = 1e-12


def as_float_array(value: Any, message: str) -> np.ndarray:
    """Return ``value`` as a float array, or raise ``TypeError(message)`` (for a string too)."""
    if isinstance(value, (str, bytes)):
        raise TypeError(message)
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(message) from None


def as_1d_float(x: Any, name: str, *, min_size: int = 1) -> np.ndarray:
    """Return ``x`` as a finite 1-D float array or raise naming ``name``."""
    if isinstance(x, (str, bytes)) or np.ndim(x) == 0:
        raise TypeError(f"{name} must be a 1-D array-like of numbers, got {type(x).__name__}")
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a 1-D array-like of numbers: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size < min_size:
        raise ValueError(f"{name} must have at least {min_size} values, got {arr.size}")
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    if np.isinf(arr).any():
        raise ValueError(f"{name} contains infinite values")
    return arr


def check_bounds(bounds: Any) -> tuple[float, float] | None:
    if bounds is None:
        return None
    try:
        lo, hi = (float(v) for v in bounds)
    except (TypeError, ValueError):
        raise TypeError("bounds must be None or a pair (low, high) of numbers") from None
    if not lo < hi:
        raise ValueError(f"bounds must satisfy low < high, got {bounds!r}")
    return lo, hi


def paired_scores(
    a: Any,
    b: Any,
    *,
    bounds: Any = None,
    min_pairs: int = 2,
    names: tuple[str, str] = ("a", "b"),
) -> tuple[np.ndarray, np.ndarray]:
    """Validate two paired score vectors (same length, >= ``min_pairs``, in bounds)."""
    x = as_1d_float(a, names[0])
    y = as_1d_float(b, names[1])
    if x.size != y.size:
        raise ValueError(
            f"{names[0]} and {names[1]} must have the same length (paired scores), "
            f"got {x.size} and {y.size}"
        )
    if x.size < min_pairs:
        raise ValueError(f"need at least {min_pairs} pairs of scores, got {x.size}")
    lim = check_bounds(bounds)
    if lim is not None:
        for arr, nm in ((x, names[0]), (y, names[1])):
            bad = (arr < lim[0]) | (arr > lim[1])
            if bad.any():
                raise ValueError(
                    f"{nm} has {int(bad.sum())} score(s) outside bounds {lim}, "
                    f"e.g. {arr[bad][0]!r}"
                )
    return x, y


def check_alternative(alternative: Any) -> str:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    return alternative


def check_confidence(confidence: Any) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real):
        raise TypeError(f"confidence must be a number in (0, 1), got {confidence!r}")
    c = float(confidence)
    if not 0.0 < c < 1.0:
        raise ValueError(f"confidence must be in the open interval (0, 1), got {confidence!r}")
    return c


def check_positive_int(value: Any, name: str, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return int(value)


def check_positive_number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive number, got {value!r}")
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def is_zero_spread(d: np.ndarray, scale: float) -> bool:
    """True when all values of ``d`` are equal up to rounding at magnitude ``scale``."""
    return float(np.ptp(d)) <= ZERO_SPREAD_RTOL * max(scale, np.finfo(float).tiny)


def t_pvalue(t: float, df: float, alternative: str) -> float:
    """p-value of a Student t statistic (same conventions as scipy.stats.ttest_rel)."""
    from scipy import stats as _sps  # here: the strategies import this module, and scipy.stats takes a second

    dist = _sps.t(df)
    if alternative == "greater":
        p = dist.sf(t)
    elif alternative == "less":
        p = dist.cdf(t)
    else:
        p = 2.0 * dist.sf(abs(t))
    return float(min(max(p, 0.0), 1.0))


def degenerate_t(mean: float, scale: float, alternative: str) -> tuple[float, float]:
    """Statistic and p-value of a t test whose differences have zero spread.

    All differences zero -> ``(0.0, 1.0)``: no evidence of any difference.
    All equal to ``c != 0`` -> ``(sign(c) * inf, p)`` with ``p = 0`` when the sign agrees
    with ``alternative`` (or two-sided) and ``p = 1`` otherwise: the limit of the t test as
    the variance goes to zero.
    """
    if abs(mean) <= ZERO_SPREAD_RTOL * max(scale, np.finfo(float).tiny):
        return 0.0, 1.0
    t = float(np.copysign(np.inf, mean))
    if alternative == "two-sided":
        return t, 0.0
    agrees = (mean > 0) == (alternative == "greater")
    return t, 0.0 if agrees else 1.0


def t_interval(
    mean: float, se: float, df: float, confidence: float, alternative: str
) -> tuple[float, float]:
    """Confidence interval ``mean +- t_q * se`` (one-sided for one-sided alternatives)."""
    from scipy import stats as _sps

    if alternative == "two-sided":
        q = _sps.t.ppf(0.5 + confidence / 2.0, df)
        return float(mean - q * se), float(mean + q * se)
    q = _sps.t.ppf(confidence, df)
    if alternative == "greater":
        return float(mean - q * se), float("inf")
    return float("-inf"), float(mean + q * se)
