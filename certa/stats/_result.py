"""Small immutable result objects returned by :mod:`certa.stats`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

__all__ = ["ConfidenceInterval", "TestResult"]


def _plain(value: Any) -> Any:
    """Convert numpy scalars / tuples to plain Python types for JSON."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            return value.item()
        except (TypeError, ValueError):
            pass
    return value


def _fmt(x: float) -> str:
    if isinstance(x, float) and (math.isinf(x) or math.isnan(x)):
        return str(x)
    return f"{x:.4g}"


@dataclass(frozen=True)
class TestResult:
    """Outcome of a significance test.

    Attributes
    ----------
    test : str
        Name of the test, e.g. ``"McNemar (exact)"``.
    statistic : float
        Test statistic (``t``, ``F``, ``chi2``, the smaller discordant count for the
        exact McNemar test, or the observed mean difference for a permutation test).
    pvalue : float
        p-value in ``[0, 1]``.
    df : float, tuple of float or None
        Degrees of freedom of the reference distribution, when there is one
        (a pair ``(d1, d2)`` for an F test).
    alternative : str
        ``"two-sided"``, ``"greater"`` (first candidate better) or ``"less"``.
    assumptions : str
        One-line statement of what the p-value assumes.
    estimate : float or None
        Point estimate of the effect (mean score difference ``a - b``, or the
        accuracy difference for McNemar).
    ci : tuple of float or None
        Confidence interval of ``estimate`` at level ``confidence``.
    confidence : float or None
        Level of ``ci``.
    n : int or None
        Number of pairs (folds, resamples or test examples) the test used.
    details : dict
        Extra, test-specific numbers (discordant counts, number of resamples, ...).

    Examples
    --------
    >>> r = TestResult(test="demo", statistic=2.0, pvalue=0.1, df=4)
    >>> r.to_dict()["pvalue"]
    0.1
    """

    __test__ = False  # not a pytest test class, despite the name

    test: str
    statistic: float
    pvalue: float
    df: float | tuple[float, float] | None = None
    alternative: str = "two-sided"
    assumptions: str = ""
    estimate: float | None = None
    ci: tuple[float, float] | None = None
    confidence: float | None = None
    n: int | None = None
    details: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """Return the result as a dict of plain Python values (JSON-friendly).

        Non-finite floats stay ``float('inf')`` / ``float('nan')``; Python's
        :func:`json.dumps` writes them as ``Infinity`` / ``NaN``.
        """
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}

    def __str__(self) -> str:
        parts = [f"{self.test}: statistic={_fmt(self.statistic)}"]
        if self.df is not None:
            df = self.df if isinstance(self.df, tuple) else (self.df,)
            parts.append("df=" + ",".join(_fmt(float(d)) for d in df))
        parts.append(f"p={_fmt(self.pvalue)} ({self.alternative})")
        if self.estimate is not None:
            parts.append(f"estimate={_fmt(self.estimate)}")
        if self.ci is not None:
            level = f"{100 * self.confidence:g}% " if self.confidence else ""
            parts.append(f"{level}CI=[{_fmt(self.ci[0])}, {_fmt(self.ci[1])}]")
        if self.n is not None:
            parts.append(f"n={self.n}")
        text = ", ".join(parts)
        if self.assumptions:
            text += f"\n  assumes: {self.assumptions}"
        return text


@dataclass(frozen=True)
class ConfidenceInterval:
    """A bootstrap confidence interval of a mean score difference.

    Attributes
    ----------
    low, high : float
        Interval bounds.
    estimate : float
        Observed mean difference ``mean(a - b)``.
    confidence : float
        Nominal coverage, e.g. ``0.95``.
    method : str
        ``"percentile"`` or ``"bca"``.
    n : int
        Number of pairs.
    n_resamples : int
        Number of bootstrap resamples.
    standard_error : float
        Standard deviation (``ddof=1``) of the bootstrap distribution.

    Examples
    --------
    >>> ci = ConfidenceInterval(0.01, 0.05, 0.03, 0.95, "percentile", 10, 999, 0.01)
    >>> ci.contains(0.0)
    False
    """

    low: float
    high: float
    estimate: float
    confidence: float
    method: str
    n: int
    n_resamples: int
    standard_error: float

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies in the closed interval ``[low, high]``."""
        return bool(self.low <= value <= self.high)

    def to_dict(self) -> dict[str, Any]:
        """Return the interval as a dict of plain Python values."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}

    def __str__(self) -> str:
        return (
            f"paired bootstrap ({self.method}) {100 * self.confidence:g}% CI of the mean "
            f"difference: [{_fmt(self.low)}, {_fmt(self.high)}], "
            f"estimate={_fmt(self.estimate)}, n={self.n}, resamples={self.n_resamples}"
        )
