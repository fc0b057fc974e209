"""Resampling tests on paired scores: sign-flip permutation test and paired bootstrap."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri

from certa.stats._result import ConfidenceInterval, TestResult
from certa.stats._validation import (
    ZERO_SPREAD_RTOL,
    check_alternative,
    check_confidence,
    check_positive_int,
    is_zero_spread,
    paired_scores,
)

__all__ = ["paired_bootstrap_ci", "paired_permutation_test"]

MAX_EXACT_PAIRS = 40  # 2 x 2^20 half-sums: exact enumeration stays cheap up to here
AUTO_EXACT_PAIRS = 20
_MAX_BATCH_ELEMENTS = 2**22  # bound the memory of one block of resampled indices


def _half_sums(values: np.ndarray) -> np.ndarray:
    """All 2^m signed sums sum_i s_i v_i, s_i in {-1, +1}."""
    sums = np.zeros(1)
    for v in values:
        sums = np.concatenate((sums + v, sums - v))
    return sums


def _count_exact(d: np.ndarray, observed: float, tol: float, alternative: str) -> int:
    """Number of the 2^n sign vectors s whose sum(s * d) is as or more extreme.

    Meet in the middle: the 2^n sums are a + b with a from the first half's 2^(n/2)
    signed sums and b from the second half's, so counting needs only sorting and
    ``searchsorted`` (O(2^(n/2) log) instead of O(2^n)).
    """
    half = d.size // 2
    a = _half_sums(d[:half])
    b = np.sort(_half_sums(d[half:]))
    nb = b.size

    def count_ge(c: float) -> int:  # #{(a, b): a + b >= c}
        return int(np.sum(nb - np.searchsorted(b, c - a, side="left")))

    def count_le(c: float) -> int:  # #{(a, b): a + b <= c}
        return int(np.sum(np.searchsorted(b, c - a, side="right")))

    if alternative == "greater":
        return count_ge(observed - tol)
    if alternative == "less":
        return count_le(observed + tol)
    c = abs(observed)
    if c <= tol:
        return a.size * nb
    return count_ge(c - tol) + count_le(-c + tol)


def paired_permutation_test(
    a: Any,
    b: Any,
    *,
    n_resamples: int = 9999,
    random_state: Any = None,
    method: str = "auto",
    alternative: str = "two-sided",
    bounds: tuple[float, float] | None = None,
) -> TestResult:
    """Paired (sign-flip) permutation test of the mean difference ``mean(a - b)``.

    Under H0 each pair is exchangeable, so every difference ``d_i = a_i - b_i`` is
    equally likely to have either sign. The p-value is the share of the ``2^n`` sign
    vectors ``s`` whose ``|mean(s * d)|`` is at least the observed ``|mean(d)|``
    (one-sided: ``mean(s * d) >= / <= mean(d)``). This is the null of
    :func:`scipy.stats.permutation_test` with ``permutation_type="samples"``.

    Parameters
    ----------
    a, b : array-like of shape (n,)
        Paired scores, ``n >= 2``.
    n_resamples : int, default 9999
        Monte Carlo sign vectors when the test is not exact.
    random_state : None, int, SeedSequence or Generator
        Seed of the Monte Carlo draws (unused when exact).
    method : {"auto", "exact", "monte-carlo"}, default "auto"
        ``"auto"`` is exact when ``n <= 20`` or ``2^n <= n_resamples``, Monte Carlo
        otherwise. Exact enumeration is allowed up to ``n = 40``.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        ``"greater"``: ``a`` scores higher on average.
    bounds : (low, high), optional
        Known range of the metric; scores outside raise ``ValueError``.

    Returns
    -------
    TestResult
        ``statistic`` and ``estimate`` are ``mean(a - b)``. Exact: p = count / 2^n
        (the identity is among the 2^n vectors, so p >= 2^-n, and all differences
        zero gives p = 1; all equal to ``c != 0`` gives ``p = 2 / 2^n``). Monte Carlo:
        ``p = (1 + count) / (1 + n_resamples)`` (Phipson & Smyth 2010), never 0.
        Sums within ``1e-10 * sum|d|`` of the observed one count as ties (as extreme),
        so exactly tied differences are not split by rounding.

    Examples
    --------
    >>> r = paired_permutation_test([0.81, 0.79, 0.84, 0.80], [0.78, 0.77, 0.80, 0.79])
    >>> r.pvalue  # 2 of the 16 sign vectors are as extreme
    0.125
    """
    x, y = paired_scores(a, b, bounds=bounds)
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    alternative = check_alternative(alternative)
    if method not in ("auto", "exact", "monte-carlo"):
        raise ValueError(f"method must be 'auto', 'exact' or 'monte-carlo', got {method!r}")
    d = x - y
    n = d.size
    if method == "exact" and n > MAX_EXACT_PAIRS:
        raise ValueError(
            f"method='exact' enumerates 2^n sign flips; n={n} pairs is above the limit "
            f"{MAX_EXACT_PAIRS}: use method='monte-carlo'"
        )
    exact = method == "exact" or (
        method == "auto" and (n <= AUTO_EXACT_PAIRS or 2.0**n <= n_resamples)
    )
    observed = float(np.sum(d))
    tol = 1e-10 * float(np.sum(np.abs(d)))
    if exact:
        count = _count_exact(d, observed, tol, alternative)
        total = 2**n
        p = count / total
        details = {"exact": True, "n_resamples": total}
    else:
        rng = np.random.default_rng(random_state)
        count = 0
        rows = max(1, _MAX_BATCH_ELEMENTS // n)
        done = 0
        while done < n_resamples:
            m = min(rows, n_resamples - done)
            signs = rng.integers(0, 2, size=(m, n), dtype=np.int8) * 2 - 1
            sums = signs @ d
            if alternative == "greater":
                count += int(np.sum(sums >= observed - tol))
            elif alternative == "less":
                count += int(np.sum(sums <= observed + tol))
            else:
                count += int(np.sum(np.abs(sums) >= abs(observed) - tol))
            done += m
        p = (1 + count) / (1 + n_resamples)
        details = {"exact": False, "n_resamples": n_resamples}
    mean = observed / n
    kind = f"exact, 2^{n} sign flips" if exact else f"Monte Carlo, {n_resamples} sign flips"
    return TestResult(
        test=f"paired permutation test ({kind})",
        statistic=mean,
        pvalue=float(min(1.0, p)),
        alternative=alternative,
        assumptions="pairs independent; under H0 each difference is symmetric about 0 "
        "(exchangeable within its pair). Not valid for CV folds, which are dependent",
        estimate=mean,
        n=n,
        details=details,
    )


def paired_bootstrap_ci(
    a: Any,
    b: Any,
    *,
    confidence: float = 0.95,
    n_resamples: int = 9999,
    random_state: Any = None,
    method: str = "percentile",
    bounds: tuple[float, float] | None = None,
) -> ConfidenceInterval:
    """Paired bootstrap confidence interval of the mean difference ``mean(a - b)``.

    Resamples the ``n`` PAIRS with replacement (keeping each ``a_i`` with its ``b_i``),
    which is the same as resampling the differences ``d_i = a_i - b_i``. Draws the
    indices exactly as :func:`scipy.stats.bootstrap` with ``paired=True`` does
    (``rng.integers(0, n, (n_resamples, n))`` from ``numpy.random.default_rng``), so the
    two agree for the same seed.

    Parameters
    ----------
    a, b : array-like of shape (n,)
        Paired scores, ``n >= 2`` (per test example, or per fold).
    confidence : float in (0, 1), default 0.95
    n_resamples : int, default 9999
    random_state : None, int, SeedSequence or Generator
    method : {"percentile", "bca"}, default "percentile"
        Percentile interval, or bias-corrected and accelerated (Efron 1987; jackknife
        acceleration, as scipy).
    bounds : (low, high), optional
        Known range of the metric; scores outside raise ``ValueError``.

    Returns
    -------
    ConfidenceInterval
        If all differences are equal to ``c``, the bootstrap distribution is a point
        and the interval is ``[c, c]`` for both methods (scipy's BCa returns NaN).

    Examples
    --------
    >>> ci = paired_bootstrap_ci([0.81, 0.79, 0.84, 0.80, 0.83], [0.78, 0.77, 0.80, 0.79, 0.80],
    ...                          random_state=0)
    >>> ci.low > 0
    True
    """
    x, y = paired_scores(a, b, bounds=bounds)
    confidence = check_confidence(confidence)
    n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=2)
    if method not in ("percentile", "bca"):
        raise ValueError(f"method must be 'percentile' or 'bca', got {method!r}")
    d = x - y
    n = d.size
    scale = float(max(np.max(np.abs(x)), np.max(np.abs(y))))
    theta_hat = float(np.mean(d))
    rng = np.random.default_rng(random_state)
    rows = max(1, _MAX_BATCH_ELEMENTS // n)
    parts = []
    for start in range(0, n_resamples, rows):
        m = min(rows, n_resamples - start)
        idx = rng.integers(0, n, (m, n))
        parts.append(np.mean(d[idx], axis=-1))
    theta_b = np.concatenate(parts)
    se = float(np.std(theta_b, ddof=1))
    if is_zero_spread(d, scale):
        return ConfidenceInterval(
            theta_hat, theta_hat, theta_hat, confidence, method, n, n_resamples, se
        )
    alpha = (1.0 - confidence) / 2.0
    lo_q, hi_q = alpha, 1.0 - alpha
    if method == "bca":
        tol = ZERO_SPREAD_RTOL * scale
        below = np.count_nonzero(theta_b < theta_hat - tol)
        ties = np.count_nonzero(np.abs(theta_b - theta_hat) <= tol)
        z0 = ndtri((2 * below + ties) / (2.0 * n_resamples))
        jack = (np.sum(d) - d) / (n - 1)  # leave-one-out means
        u = (n - 1) * (np.mean(jack) - jack)
        acc = (np.sum(u**3) / n**3) / (np.sum(u**2) / n**2) ** 1.5 / 6.0
        z_lo = ndtri(alpha)
        z_hi = -z_lo
        lo_q = float(ndtr(z0 + (z0 + z_lo) / (1 - acc * (z0 + z_lo))))
        hi_q = float(ndtr(z0 + (z0 + z_hi) / (1 - acc * (z0 + z_hi))))
        if not (np.isfinite(lo_q) and np.isfinite(hi_q)):  # pragma: no cover - defensive
            lo_q, hi_q = alpha, 1.0 - alpha
    low, high = np.quantile(theta_b, [lo_q, hi_q])
    return ConfidenceInterval(
        float(low), float(high), theta_hat, confidence, method, n, n_resamples, se
    )
