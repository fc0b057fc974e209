"""Paired t tests over cross-validation folds, corrected for overlapping training sets.

References
----------
- Dietterich, T. G. (1998). Approximate statistical tests for comparing supervised
  classification learning algorithms. Neural Computation 10(7), 1895-1923.
- Alpaydin, E. (1999). Combined 5 x 2 cv F test for comparing supervised classification
  learning algorithms. Neural Computation 11(8), 1885-1892.
- Nadeau, C. & Bengio, Y. (2003). Inference for the generalization error. Machine
  Learning 52(3), 239-281.
- Bouckaert, R. R. & Frank, E. (2004). Evaluating the replicability of significance
  tests for comparing learning algorithms. PAKDD 2004, LNCS 3056, 3-12.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from certa.stats._result import TestResult
from certa.stats._validation import (
    ZERO_SPREAD_RTOL,
    as_float_array,
    check_alternative,
    check_confidence,
    check_positive_int,
    check_positive_number,
    degenerate_t,
    is_zero_spread,
    paired_scores,
    t_interval,
    t_pvalue,
)

__all__ = [
    "corrected_repeated_kfold_ttest",
    "corrected_resampled_ttest",
    "differences_5x2cv",
    "ftest_5x2cv",
    "paired_ttest",
    "ttest_5x2cv",
]


def _t_result(
    d: np.ndarray,
    scale: float,
    var_factor: float,
    df: float,
    alternative: str,
    confidence: float,
    test: str,
    assumptions: str,
    details: dict[str, Any],
) -> TestResult:
    """t = mean(d) / sqrt(var_factor * s^2), s^2 the sample variance (ddof=1)."""
    mean = float(np.mean(d))
    if is_zero_spread(d, scale):
        t, p = degenerate_t(mean, scale, alternative)
        ci = (mean, mean)
    else:
        se = float(np.sqrt(var_factor * np.var(d, ddof=1)))
        t = mean / se
        p = t_pvalue(t, df, alternative)
        ci = t_interval(mean, se, df, confidence, alternative)
    return TestResult(
        test=test,
        statistic=float(t),
        pvalue=p,
        df=float(df),
        alternative=alternative,
        assumptions=assumptions,
        estimate=mean,
        ci=ci,
        confidence=confidence,
        n=int(d.size),
        details=details,
    )


def paired_ttest(
    a: Any,
    b: Any,
    *,
    alternative: str = "two-sided",
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = None,
) -> TestResult:
    """Plain paired t test on per-fold (or per-split) scores.

    Same statistic as :func:`scipy.stats.ttest_rel`: ``t = mean(d) / (s / sqrt(n))``
    with ``d = a - b``, ``s`` the sample standard deviation and ``n - 1`` df.

    Warning: over cross-validation folds this test is anti-conservative (too many false
    "significant" results, Dietterich 1998; Nadeau & Bengio 2003) because folds share
    training data and are not independent. Use it only for genuinely independent pairs
    (e.g. scores on independent test sets); for repeated CV use
    :func:`corrected_repeated_kfold_ttest`.

    Parameters
    ----------
    a, b : array-like of shape (n,)
        Paired scores of the two candidates (higher is better for the sign of
        ``estimate``), ``n >= 2``.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        ``"greater"``: mean of ``a - b`` is positive.
    confidence : float, default 0.95
        Level of the t interval of the mean difference (one-sided for one-sided
        alternatives, as scipy).
    bounds : (low, high), optional
        Known range of the metric (e.g. ``(0, 1)`` for accuracy); scores outside it
        raise ``ValueError``.

    Returns
    -------
    TestResult
        If all differences are equal (zero variance): differences all zero give
        ``statistic=0, pvalue=1``; a common non-zero difference ``c`` gives
        ``statistic=sign(c)*inf`` and ``pvalue=0`` (1 for the opposite one-sided
        alternative), and ``ci=(c, c)``. scipy returns NaN for the all-zero case.

    Examples
    --------
    >>> r = paired_ttest([0.81, 0.79, 0.84, 0.80], [0.78, 0.77, 0.80, 0.79])
    >>> round(r.statistic, 3), r.df
    (3.873, 3.0)
    """
    x, y = paired_scores(a, b, bounds=bounds)
    alternative = check_alternative(alternative)
    confidence = check_confidence(confidence)
    n = x.size
    return _t_result(
        x - y,
        _scale(x, y),
        1.0 / n,
        n - 1,
        alternative,
        confidence,
        "paired t test",
        "the n differences are independent and roughly normal (NOT true for CV folds, "
        "which share training data)",
        {},
    )


def _scale(x: np.ndarray, y: np.ndarray) -> float:
    return float(max(np.max(np.abs(x)), np.max(np.abs(y))))


def _check_sizes(n_train: Any, n_test: Any) -> tuple[float, float]:
    return (
        check_positive_number(n_train, "n_train"),
        check_positive_number(n_test, "n_test"),
    )


def corrected_resampled_ttest(
    a: Any,
    b: Any,
    n_train: float,
    n_test: float,
    *,
    alternative: str = "two-sided",
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = None,
) -> TestResult:
    """Corrected resampled t test of Nadeau & Bengio (2003).

    For ``n`` random train/test splits (each with ``n_train`` training and ``n_test``
    test examples) and differences ``d_i = a_i - b_i``,

    ``t = mean(d) / sqrt((1/n + n_test/n_train) * s^2)``, ``s^2 = var(d, ddof=1)``,

    referred to Student's t with ``n - 1`` df (Nadeau & Bengio 2003, Machine Learning
    52:239-281, the "corrected resampled t-test"). The extra ``n_test/n_train`` term
    estimates the correlation between splits caused by overlapping training sets; the
    plain test (factor ``1/n``) ignores it and rejects far too often.

    Parameters
    ----------
    a, b : array-like of shape (n,)
        Scores of the two candidates on the same ``n >= 2`` splits.
    n_train, n_test : float
        Training- and test-set sizes of each split (average sizes if they vary).
    alternative, confidence, bounds
        As in :func:`paired_ttest`.

    Returns
    -------
    TestResult
        ``details["variance_factor"]`` is ``1/n + n_test/n_train``. Zero-variance
        differences are handled as in :func:`paired_ttest`.

    Examples
    --------
    >>> r = corrected_resampled_ttest([0.81, 0.79, 0.84, 0.80], [0.78, 0.77, 0.80, 0.79],
    ...                               n_train=90, n_test=10)
    >>> round(r.statistic, 3)
    3.223
    """
    x, y = paired_scores(a, b, bounds=bounds)
    alternative = check_alternative(alternative)
    confidence = check_confidence(confidence)
    n_tr, n_te = _check_sizes(n_train, n_test)
    n = x.size
    factor = 1.0 / n + n_te / n_tr
    return _t_result(
        x - y,
        _scale(x, y),
        factor,
        n - 1,
        alternative,
        confidence,
        "corrected resampled t test (Nadeau & Bengio 2003)",
        "differences roughly normal; their correlation across splits is about "
        "n_test/(n_train + n_test) (the Nadeau-Bengio heuristic)",
        {"variance_factor": factor, "n_train": n_tr, "n_test": n_te},
    )


def corrected_repeated_kfold_ttest(
    a: Any,
    b: Any,
    n_repeats: int,
    n_splits: int,
    n_train: float | None = None,
    n_test: float | None = None,
    *,
    alternative: str = "two-sided",
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = None,
) -> TestResult:
    """Corrected repeated k-fold cv t test of Bouckaert & Frank (2004).

    For J repetitions of K-fold CV (``n_repeats=J``, ``n_splits=K``) and the ``J*K``
    fold differences ``d_jk = a_jk - b_jk``,

    ``t = mean(d) / sqrt((1/(J*K) + n_test/n_train) * s^2)``, ``s^2 = var(d, ddof=1)``
    over all ``J*K`` differences, on ``J*K - 1`` df

    (Bouckaert & Frank 2004, PAKDD, "corrected repeated k-fold cv test"; the Nadeau &
    Bengio 2003 correction applied to the J*K folds). For K-fold CV
    ``n_test/n_train = 1/(K-1)``, which is used when ``n_train``/``n_test`` are omitted.

    Parameters
    ----------
    a, b : array-like of shape (J*K,) or (J, K)
        Per-fold scores of the two candidates on the same J random K-fold partitions
        (row ``j`` = repetition ``j`` when 2-D; 1-D input is repetition-major).
    n_repeats, n_splits : int
        J >= 1 and K >= 2.
    n_train, n_test : float, optional
        Training- and test-fold sizes; both or neither. Default ratio ``1/(K-1)``.
    alternative, confidence, bounds
        As in :func:`paired_ttest`.

    Returns
    -------
    TestResult
        Zero-variance differences are handled as in :func:`paired_ttest`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a = 0.80 + 0.02 * rng.standard_normal((10, 10))
    >>> b = a - 0.01 + 0.02 * rng.standard_normal((10, 10))
    >>> r = corrected_repeated_kfold_ttest(a, b, n_repeats=10, n_splits=10)
    >>> r.df
    99.0
    """
    j = check_positive_int(n_repeats, "n_repeats")
    k = check_positive_int(n_splits, "n_splits", minimum=2)
    flat = []
    for name, v in (("a", a), ("b", b)):
        if isinstance(v, (str, bytes)):
            raise TypeError(f"{name} must be an array-like of numbers, got {type(v).__name__}")
        try:
            arr = np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be an array-like of numbers") from None
        shape = arr.shape
        if len(shape) == 2:
            if shape != (j, k):
                raise ValueError(
                    f"{name} has shape {shape}, expected (n_repeats, n_splits) = ({j}, {k})"
                )
            arr = np.reshape(arr, -1)
        elif len(shape) == 1 and shape[0] != j * k:
            raise ValueError(
                f"{name} has {shape[0]} scores, expected n_repeats * n_splits = {j * k}"
            )
        flat.append(arr)
    x, y = paired_scores(flat[0], flat[1], bounds=bounds)
    alternative = check_alternative(alternative)
    confidence = check_confidence(confidence)
    if (n_train is None) != (n_test is None):
        raise ValueError("give both n_train and n_test, or neither (ratio 1/(K-1))")
    if n_train is None:
        ratio, n_tr, n_te = 1.0 / (k - 1), None, None
    else:
        n_tr, n_te = _check_sizes(n_train, n_test)
        ratio = n_te / n_tr
    n = j * k
    factor = 1.0 / n + ratio
    return _t_result(
        x - y,
        _scale(x, y),
        factor,
        n - 1,
        alternative,
        confidence,
        "corrected repeated k-fold cv t test (Bouckaert & Frank 2004)",
        "fold differences roughly normal; correlation between folds about "
        "n_test/(n_train + n_test) (Nadeau-Bengio correction)",
        {
            "variance_factor": factor,
            "n_repeats": j,
            "n_splits": k,
            "n_train": n_tr,
            "n_test": n_te,
        },
    )


def _5x2_parts(diffs: Any) -> tuple[np.ndarray, np.ndarray, float, float]:
    """The checked (5, 2) differences ``d``, their ``s_i^2``, their largest magnitude, and
    the level at or below which a sum of ``s_i^2`` counts as zero (rounding, not spread)."""
    d = as_float_array(diffs, "diffs must be a (5, 2) array-like of score differences")
    if d.shape != (5, 2):
        raise ValueError(
            f"diffs must have shape (5, 2) (5 replications x 2 folds), got {d.shape}"
        )
    if not np.isfinite(d).all():
        raise ValueError("diffs contains NaN or infinite values")
    # s_i^2 = sum over the two folds of (d_ij - mean_i)^2 (Dietterich 1998, eq. for s_i^2)
    s2 = np.sum((d - d.mean(axis=1, keepdims=True)) ** 2, axis=1)
    scale = float(np.max(np.abs(d)))
    return d, s2, scale, (ZERO_SPREAD_RTOL * max(scale, np.finfo(float).tiny)) ** 2


def ttest_5x2cv(diffs: Any, *, alternative: str = "two-sided") -> TestResult:
    """Dietterich's (1998) 5x2cv paired t test.

    ``t = d_11 / sqrt((1/5) * sum_i s_i^2)`` on 5 df, where ``d_ij`` is the score
    difference (A - B) on fold ``j`` of replication ``i`` of 2-fold CV and
    ``s_i^2 = (d_i1 - dbar_i)^2 + (d_i2 - dbar_i)^2`` (Dietterich 1998, Neural
    Computation 10:1895-1923). Only the first difference enters the numerator, as in
    the paper and in ``mlxtend.evaluate.paired_ttest_5x2cv``.

    Parameters
    ----------
    diffs : array-like of shape (5, 2)
        Score differences A - B; row i = replication, column j = fold.
        :func:`differences_5x2cv` runs the protocol on two scikit-learn estimators.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"

    Returns
    -------
    TestResult
        When every ``s_i^2`` is zero: ``d_11 == 0`` gives ``statistic=0, pvalue=1``;
        otherwise ``statistic=sign(d_11)*inf`` and ``pvalue=0`` (1 for the opposite
        one-sided alternative).

    Examples
    --------
    >>> d = [[0.02, 0.01], [0.03, -0.01], [0.00, 0.02], [0.01, 0.01], [0.02, 0.00]]
    >>> round(ttest_5x2cv(d).statistic, 3)
    1.265
    """
    d, s2, scale, zero = _5x2_parts(diffs)
    alternative = check_alternative(alternative)
    num = float(d[0, 0])
    if float(np.sum(s2)) <= zero:
        t, p = degenerate_t(num, scale, alternative)
    else:
        t = num / float(np.sqrt(np.mean(s2)))
        p = t_pvalue(t, 5, alternative)
    return TestResult(
        test="5x2cv paired t test (Dietterich 1998)",
        statistic=float(t),
        pvalue=p,
        df=5.0,
        alternative=alternative,
        assumptions="fold differences roughly normal; the 5 variance estimates "
        "independent of each other and of d_11",
        estimate=float(np.mean(d)),
        n=10,
        details={"s2": s2.tolist()},
    )


def ftest_5x2cv(diffs: Any) -> TestResult:
    """Alpaydin's (1999) combined 5x2cv F test.

    ``F = sum_ij d_ij^2 / (2 * sum_i s_i^2)`` referred to F(10, 5), with ``d_ij`` and
    ``s_i^2`` as in :func:`ttest_5x2cv` (Alpaydin 1999, Neural Computation
    11:1885-1892). Uses all ten differences, so it is more robust than the 5x2cv t test.
    Two-sided by construction (large ``F`` means a difference in either direction).

    Parameters
    ----------
    diffs : array-like of shape (5, 2)
        Score differences A - B.

    Returns
    -------
    TestResult
        All differences zero: ``statistic=0, pvalue=1``. All ``s_i^2`` zero but some
        difference non-zero: ``statistic=inf, pvalue=0``.

    Examples
    --------
    >>> d = [[0.02, 0.01], [0.03, -0.01], [0.00, 0.02], [0.01, 0.01], [0.02, 0.00]]
    >>> round(ftest_5x2cv(d).statistic, 3)
    1.0
    """
    d, s2, scale, zero = _5x2_parts(diffs)
    num = float(np.sum(d**2))
    den = 2.0 * float(np.sum(s2))
    if den <= zero:
        if scale == 0.0:
            f, p = 0.0, 1.0
        else:
            f, p = float("inf"), 0.0
    else:
        from scipy import stats as _sps  # here: the strategies import this room, and scipy.stats takes a second

        f = num / den
        p = float(_sps.f.sf(f, 10, 5))
    return TestResult(
        test="combined 5x2cv F test (Alpaydin 1999)",
        statistic=float(f),
        pvalue=p,
        df=(10.0, 5.0),
        alternative="two-sided",
        assumptions="fold differences roughly normal with mean 0 under H0; the "
        "variance estimates independent of the squared differences",
        estimate=float(np.mean(d)),
        n=10,
        details={"s2": s2.tolist()},
    )


def differences_5x2cv(
    estimator_a: Any,
    estimator_b: Any,
    X: Any,
    y: Any,
    *,
    scoring: Any = None,
    random_state: Any = None,
    stratify: bool = False,
) -> np.ndarray:
    """Run Dietterich's 5x2cv protocol and return the (5, 2) score differences A - B.

    Replication ``i`` splits the data into two random halves with
    :func:`sklearn.model_selection.train_test_split` (seed ``s_i``); fold 1 trains on the
    first half and scores on the second, fold 2 the reverse. Each fit uses a fresh
    :func:`sklearn.base.clone`. The five split seeds are
    ``numpy.random.default_rng(random_state).integers(0, 2**31 - 1, size=5)``.

    Parameters
    ----------
    estimator_a, estimator_b : scikit-learn estimators
    X, y : array-like
        Data and targets.
    scoring : str or callable, optional
        scikit-learn scoring (default: the estimator's ``score``, i.e. accuracy for
        classifiers).
    random_state : None, int, SeedSequence or Generator
        Seed of the five splits.
    stratify : bool, default False
        Stratify the halves by ``y`` (False reproduces Dietterich's protocol).

    Returns
    -------
    ndarray of shape (5, 2)
        Pass it to :func:`ttest_5x2cv` or :func:`ftest_5x2cv`.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.neighbors import NearestCentroid
    >>> X, y = make_classification(200, random_state=0)
    >>> d = differences_5x2cv(LogisticRegression(), NearestCentroid(), X, y, random_state=0)
    >>> d.shape
    (5, 2)
    """
    from sklearn.base import clone
    from sklearn.metrics import check_scoring
    from sklearn.model_selection import train_test_split

    for name, est in (("estimator_a", estimator_a), ("estimator_b", estimator_b)):
        if not (hasattr(est, "fit") and hasattr(est, "get_params")):
            raise TypeError(f"{name} must be a scikit-learn estimator, got {type(est).__name__}")
    if not isinstance(stratify, bool):
        raise TypeError(f"stratify must be a bool, got {stratify!r}")
    scorer_a = check_scoring(estimator_a, scoring=scoring)
    scorer_b = check_scoring(estimator_b, scoring=scoring)
    seeds = np.random.default_rng(random_state).integers(0, 2**31 - 1, size=5)
    diffs = np.empty((5, 2))
    for i, seed in enumerate(seeds):
        X1, X2, y1, y2 = train_test_split(
            X, y, test_size=0.5, random_state=int(seed), stratify=y if stratify else None
        )
        for j, (Xtr, ytr, Xte, yte) in enumerate(((X1, y1, X2, y2), (X2, y2, X1, y1))):
            ma = clone(estimator_a).fit(Xtr, ytr)
            mb = clone(estimator_b).fit(Xtr, ytr)
            diffs[i, j] = scorer_a(ma, Xte, yte) - scorer_b(mb, Xte, yte)
    return diffs
