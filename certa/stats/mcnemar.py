"""McNemar's test for two classifiers evaluated on the same test examples."""

from __future__ import annotations

from typing import Any

import numpy as np

from certa.stats._result import TestResult
from certa.stats._validation import as_float_array, check_alternative

__all__ = ["mcnemar", "mcnemar_table"]

METHODS = ("exact", "mid-p", "chi2", "chi2-cc")

_ASSUME = (
    "test examples are independent draws; both models are fixed (trained once), so the "
    "test concerns these two trained models, not the learning algorithms"
)


def _check_table(table: Any) -> np.ndarray:
    arr = as_float_array(table, "table must be a 2x2 array-like of counts")
    if arr.shape != (2, 2):
        raise ValueError(f"table must have shape (2, 2), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError("table contains NaN or infinite counts")
    if (arr < 0).any():
        raise ValueError(f"table counts must be non-negative, got {arr.tolist()}")
    if (arr != np.round(arr)).any():
        raise ValueError(f"table counts must be integers, got {arr.tolist()}")
    return arr.astype(np.int64)


def mcnemar_table(
    table: Any, method: str = "exact", alternative: str = "two-sided"
) -> TestResult:
    """McNemar's test from a 2x2 table of paired outcomes.

    ``table[0][1]`` (= ``b``) counts examples model A gets right and model B wrong,
    ``table[1][0]`` (= ``c``) the reverse; the diagonal (both right / both wrong) does
    not enter the test. Under H0 both models have the same error rate, i.e. a discordant
    example is equally likely to favour either model: ``b ~ Binomial(b + c, 1/2)``.

    Parameters
    ----------
    table : array-like of shape (2, 2)
        Non-negative integer counts ``[[both right, A right & B wrong],
        [A wrong & B right, both wrong]]``.
    method : {"exact", "mid-p", "chi2", "chi2-cc"}, default "exact"
        ``"exact"``: two-sided binomial test on the discordant pairs,
        ``p = min(1, 2 P(X <= min(b, c)))`` (McNemar 1947; recommended by Dietterich
        1998 for small counts). ``"mid-p"``: ``p_exact - P(X = min(b, c))``
        (Fagerland, Lydersen & Laake 2013), less conservative. ``"chi2"``:
        ``(b - c)^2 / (b + c)`` on 1 df, no continuity correction. ``"chi2-cc"``:
        Edwards' continuity correction ``max(|b - c| - 1, 0)^2 / (b + c)``.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        ``"greater"``: A is more accurate than B (``b > c``). Only the binomial
        methods (``"exact"``, ``"mid-p"``) support one-sided alternatives.

    Returns
    -------
    TestResult
        ``statistic`` is ``min(b, c)`` for the binomial methods (as statsmodels) and the
        chi-square value otherwise; ``estimate`` is the accuracy difference
        ``(b - c) / n``; ``details`` holds ``b`` and ``c``. With no discordant pairs
        (``b + c == 0``) the p-value is 1 and the statistic 0, whatever the method.

    Examples
    --------
    >>> r = mcnemar_table([[50, 9], [2, 39]])
    >>> round(r.pvalue, 4)
    0.0654
    """
    arr = _check_table(table)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    alternative = check_alternative(alternative)
    if alternative != "two-sided" and method in ("chi2", "chi2-cc"):
        raise ValueError(
            f"alternative={alternative!r} needs method 'exact' or 'mid-p'; the chi-square "
            "approximations are two-sided only"
        )
    from scipy import stats as _sps  # here: the strategies import this room, and scipy.stats takes a second

    b, c = int(arr[0, 1]), int(arr[1, 0])
    n_total = int(arr.sum())
    m = b + c
    df: float | None = None
    if m == 0:
        statistic, pvalue = 0.0, 1.0
        df = 1.0 if method.startswith("chi2") else None
    elif method in ("exact", "mid-p"):
        if alternative == "two-sided":
            k = min(b, c)
            statistic = float(k)
            p = 2.0 * _sps.binom.cdf(k, m, 0.5)
            if method == "mid-p":
                p -= _sps.binom.pmf(k, m, 0.5)
        else:
            statistic = float(min(b, c))
            # P(X >= b) for "greater", P(X <= b) for "less", X ~ Bin(m, 1/2)
            if alternative == "greater":
                p = _sps.binom.sf(b - 1, m, 0.5)
            else:
                p = _sps.binom.cdf(b, m, 0.5)
            if method == "mid-p":
                p -= 0.5 * _sps.binom.pmf(b, m, 0.5)
        pvalue = float(min(1.0, p))
    else:
        diff = abs(b - c)
        if method == "chi2-cc":
            diff = max(diff - 1, 0)
        statistic = diff**2 / m
        df = 1.0
        pvalue = float(_sps.chi2.sf(statistic, 1))
    return TestResult(
        test=f"McNemar ({method})",
        statistic=float(statistic),
        pvalue=pvalue,
        df=df,
        alternative=alternative,
        assumptions=_ASSUME,
        estimate=(b - c) / n_total if n_total else 0.0,
        n=n_total,
        details={"b": b, "c": c, "table": arr.tolist()},
    )


def mcnemar(
    y_true: Any,
    pred_a: Any,
    pred_b: Any,
    method: str = "exact",
    alternative: str = "two-sided",
) -> TestResult:
    """McNemar's test from two classifiers' predictions on the same test examples.

    Builds the 2x2 table of (A correct, B correct) and calls :func:`mcnemar_table`.

    Parameters
    ----------
    y_true, pred_a, pred_b : array-like of shape (n,)
        True labels and the two models' predicted labels (any comparable labels).
    method : {"exact", "mid-p", "chi2", "chi2-cc"}, default "exact"
        See :func:`mcnemar_table`.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        ``"greater"``: model A is more accurate.

    Returns
    -------
    TestResult

    Examples
    --------
    >>> y = [0, 1, 1, 0, 1, 0, 1, 1]
    >>> r = mcnemar(y, [0, 1, 1, 0, 1, 0, 1, 0], [1, 0, 1, 0, 0, 0, 1, 0])
    >>> r.details["b"], r.details["c"], r.pvalue
    (3, 0, 0.25)
    """
    arrays = []
    for name, v in (("y_true", y_true), ("pred_a", pred_a), ("pred_b", pred_b)):
        if isinstance(v, (str, bytes)) or np.ndim(v) == 0:
            raise TypeError(f"{name} must be a 1-D array-like of labels")
        arr = np.asarray(v)
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
        if arr.size == 0:
            raise ValueError(f"{name} is empty")
        if arr.dtype.kind in "fc" and np.isnan(arr).any():
            raise ValueError(f"{name} contains NaN")
        arrays.append(arr)
    y, pa, pb = arrays
    if not (y.size == pa.size == pb.size):
        raise ValueError(
            "y_true, pred_a and pred_b must have the same length, got "
            f"{y.size}, {pa.size} and {pb.size}"
        )
    ok_a = pa == y
    ok_b = pb == y
    table = [
        [int(np.sum(ok_a & ok_b)), int(np.sum(ok_a & ~ok_b))],
        [int(np.sum(~ok_a & ok_b)), int(np.sum(~ok_a & ~ok_b))],
    ]
    return mcnemar_table(table, method=method, alternative=alternative)
