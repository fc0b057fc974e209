"""certa's own bounds (``bound="certa"``, the default everywhere since issue 24).

Written before the paper's text was available and proven from first principles
(``docs/quantification.md``): the deterministic caps of Balikas et al. (IDA 2015) with
confidence terms that are proven for the realised labels of ``S`` and much tighter in accuracy
(an L1 Hoeffding radius instead of Theorem 1's ``|Y| (t + eps)``, for which see
:mod:`certa.quantification.theorem1`): :func:`accuracy_bound`, :func:`macro_precision_bound`,
:func:`macro_recall_bound`, :func:`macro_f1_bound`, their confidence terms
:func:`l1_confidence_radius` and :func:`true_proportion_intervals`, and the quantifier slack
:func:`quantification_epsilon` with its fallback :func:`resolve_quantifier`.

Setting of certa's bounds: classes ``1..K``; a labelled training set of ``N`` examples with
class proportions ``p_hat``; an unlabeled set ``S`` of ``M`` examples whose true (unknown)
proportions are ``pi``; a classifier ``h`` whose hard predictions on ``S`` have proportions
``q`` (Classify and Count). Assumption A: the training labels and the labels of ``S`` are
i.i.d. draws from one class distribution (no prior shift); ``S`` may have any size.

Deterministic facts (no probability): with ``TP_y <= min(M pi_y, M q_y)``,
accuracy ``<= sum_y min(pi_y, q_y) = 1 - ||pi - q||_1 / 2``,
precision_y ``<= min(1, pi_y / q_y)``, recall_y ``<= min(1, q_y / pi_y)``,
F1_y ``<= 2 min(pi_y, q_y) / (pi_y + q_y)``.
The probabilistic part only replaces the unknown ``pi`` by ``p_hat`` plus a confidence
term; the event it uses concerns labels only, so it holds for every candidate
classifier at once (no union bound over candidates is needed to select among them).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy import stats

from ._common import (
    Measure,
    _check_count,
    _check_delta,
    _check_measure,
    _check_n_classes,
    _check_proportions,
    _check_quantified,
    _harmonic,
)

__all__ = [
    "accuracy_bound",
    "l1_confidence_radius",
    "macro_f1_bound",
    "macro_precision_bound",
    "macro_recall_bound",
    "quantification_epsilon",
    "resolve_quantifier",
    "true_proportion_intervals",
]


def _check_epsilon(epsilon: float) -> float:
    e = float(epsilon)
    if not np.isfinite(e) or e < 0 or e > 2:
        raise ValueError(
            f"epsilon: expected an L1 slack in [0, 2], got {epsilon!r} "
            "(a negative quantifier error means: fall back to CC with epsilon = 0, "
            "see resolve_quantifier)"
        )
    return e


def _train_counts(train_proportions: np.ndarray, n_train: int) -> np.ndarray:
    counts = train_proportions * n_train
    rounded = np.rint(counts)
    if not np.allclose(counts, rounded, atol=1e-6 * max(1, n_train)):
        raise ValueError(
            "train_proportions: expected proportions of a training set of n_train examples "
            "(train_proportions * n_train must be whole counts)"
        )
    return rounded.astype(np.int64)


# --------------------------------------------------------------------- confidence terms
def l1_confidence_radius(
    n_classes: int, n_train: int, delta: float, n_unlabeled: int | None = None
) -> float:
    """Radius ``lambda`` with ``P(||p_hat - pi||_1 > lambda) <= delta`` under assumption A.

    ``lambda = sqrt(2 (1/N + 1/M) ln((2^K - 2) / delta))``; ``M = None`` means ``1/M = 0``
    (``pi`` is the population distribution itself). Proof: for a set ``A`` of classes,
    ``p_hat(A) - pi(A)`` is a sum of ``N + M`` independent terms of ranges ``1/N`` and
    ``1/M`` with mean 0, so Hoeffding gives ``P(>= t) <= exp(-2 t^2 / (1/N + 1/M))``;
    ``||p_hat - pi||_1 = 2 max_A (p_hat(A) - pi(A))`` over the ``2^K - 2`` non-trivial
    ``A``; a union bound with ``t = lambda / 2`` gives the claim (the two-sample form of
    the Bretagnolle-Huber-Carol / Weissman et al. 2003 inequality).

    Examples
    --------
    >>> round(l1_confidence_radius(2, 100, 0.05), 6)  # sqrt(2/100 * ln(2/0.05))
    0.27162
    """
    k = _check_n_classes(n_classes)
    n = _check_count(n_train, "n_train")
    m = _check_count(n_unlabeled, "n_unlabeled", allow_none=True)
    d = _check_delta(delta)
    # ln(2^K - 2) without overflow for large K
    log_sets = k * np.log(2.0) + np.log1p(-(2.0 ** (1 - k)))
    inv = 1.0 / n + (0.0 if m is None else 1.0 / m)
    return float(np.sqrt(2.0 * inv * (log_sets - np.log(d))))


def true_proportion_intervals(
    train_proportions, n_train: int, delta: float, n_unlabeled: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Simultaneous intervals ``[L_y, U_y]`` containing every ``pi_y`` w.p. >= 1 - delta.

    ``M = None``: exact one-sided Clopper-Pearson limits for the population proportion
    ``p_y`` from ``N_y = N p_hat_y`` at level ``delta / (2K)`` each (``pi = p``).
    ``M`` given: Clopper-Pearson limits ``p_L, p_U`` at ``delta / (4K)`` each, widened to
    the binomial quantiles of the unlabeled set: ``U_y = F^{-1}(1 - delta/(4K); M, p_U) / M``,
    ``L_y = F^{-1}(delta/(4K); M, p_L) / M`` (``F`` the Binomial(M, .) cdf); valid because
    the binomial quantile increases with its probability. Bonferroni over the ``2K`` or
    ``4K`` one-sided events gives the joint level.

    Examples
    --------
    >>> lo, hi = true_proportion_intervals([0.5, 0.5], 100, 0.05)
    >>> bool(lo[0] < 0.5 < hi[0])
    True
    """
    p = _check_proportions(train_proportions, "train_proportions")
    n = _check_count(n_train, "n_train")
    m = _check_count(n_unlabeled, "n_unlabeled", allow_none=True)
    d = _check_delta(delta)
    counts = _train_counts(p, n)
    k = p.size
    alpha = d / (2 * k) if m is None else d / (4 * k)
    # Clopper-Pearson one-sided limits; beta.ppf is nan at a = 0 / b = 0, hence the where
    with np.errstate(invalid="ignore"):
        lo = np.where(counts == 0, 0.0, stats.beta.ppf(alpha, counts, n - counts + 1))
        hi = np.where(counts == n, 1.0, stats.beta.ppf(1 - alpha, counts + 1, n - counts))
    if m is not None:
        lo = stats.binom.ppf(alpha, m, lo) / m
        hi = stats.binom.ppf(1 - alpha, m, hi) / m
    return np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)


# ------------------------------------------------------------------------------ bounds
def _certa_inputs(train_proportions, predicted_proportions, epsilon):
    p = _check_proportions(train_proportions, "train_proportions")
    q = _check_proportions(predicted_proportions, "predicted_proportions", p.size)
    return p, q, _check_epsilon(epsilon)


def accuracy_bound(
    train_proportions,
    predicted_proportions,
    n_train: int,
    delta: float = 0.05,
    epsilon: float = 0.0,
    n_unlabeled: int | None = None,
) -> float:
    """certa's own upper bound ``B_A`` on the accuracy of a classifier on ``S`` (``bound="certa"``).

    ``B_A = 1 - max(0, ||p_hat - q||_1 - epsilon - lambda) / 2`` with ``lambda`` from
    :func:`l1_confidence_radius`. Holds with probability >= 1 - delta under assumption A
    whenever ``epsilon >= ||p_hat - q||_1 - ||p_hat - q_h||_1`` (``q_h`` the classifier's
    hard-prediction proportions; ``q = q_h`` with ``epsilon = 0`` is CC). Proof:
    ``acc <= 1 - ||pi - q_h||_1 / 2`` and ``||pi - q_h||_1 >= ||p_hat - q_h||_1 - ||p_hat - pi||_1``.

    Parameters
    ----------
    train_proportions : array-like (K,)
        Class proportions ``p_hat`` of the training set.
    predicted_proportions : array-like (K,)
        Quantified distribution ``q`` of the classifier's predictions on ``S``.
    n_train : int
        Training-set size ``N``.
    delta : float, default 0.05
        The bound fails with probability at most ``delta``.
    epsilon : float, default 0.0
        Quantifier slack, in [0, 2] (see :func:`quantification_epsilon`).
    n_unlabeled : int or None
        Size ``M`` of ``S``; None bounds against the population proportions.

    Examples
    --------
    >>> # gap ||(.5,.5) - (.8,.2)||_1 = 0.6; without confidence term 1 - 0.3 = 0.7
    >>> round(accuracy_bound([.5, .5], [.8, .2], n_train=10**12), 4)
    0.7
    """
    p, q, eps = _certa_inputs(train_proportions, predicted_proportions, epsilon)
    lam = l1_confidence_radius(p.size, n_train, delta, n_unlabeled)
    gap = float(np.abs(p - q).sum())
    return float(1.0 - max(0.0, gap - eps - lam) / 2.0)


def _caps(upper: np.ndarray, lower: np.ndarray, q: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-class caps ``min(1, U_y / (q_y - eps/2))`` on precision, ``min(1, (q_y + eps/2) / L_y)`` on recall.

    A term is 1 where its denominator is 0 (an undefined precision or recall is bounded by 1).
    """
    # ||q' - q||_1 <= eps with both summing to 1 moves any single coordinate by <= eps/2
    q_lo = np.maximum(q - eps / 2.0, 0.0)
    q_hi = np.minimum(q + eps / 2.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(q_lo > 0, np.minimum(1.0, upper / np.where(q_lo > 0, q_lo, 1.0)), 1.0)
        rec = np.where(lower > 0, np.minimum(1.0, q_hi / np.where(lower > 0, lower, 1.0)), 1.0)
    return prec, rec


def _macro_mean(prec: np.ndarray, rec: np.ndarray, measure: str) -> float:
    """Macro-precision, macro-recall or the mean of per-class F1 from per-class caps."""
    if measure == "macro_precision":
        return float(prec.mean())
    if measure == "macro_recall":
        return float(rec.mean())
    return float(np.mean([_harmonic(a, b) for a, b in zip(prec, rec)]))


def _per_class_caps(train_proportions, predicted_proportions, n_train, delta, epsilon, n_unlabeled):
    p, q, eps = _certa_inputs(train_proportions, predicted_proportions, epsilon)
    lo, hi = true_proportion_intervals(p, n_train, delta, n_unlabeled)
    return _caps(hi, lo, q, eps)


def macro_precision_bound(
    train_proportions,
    predicted_proportions,
    n_train: int,
    delta: float = 0.05,
    epsilon: float = 0.0,
    n_unlabeled: int | None = None,
) -> float:
    """certa's own upper bound ``B_MaP`` on the macro-averaged precision on ``S`` (``bound="certa"``).

    ``B_MaP = (1/K) sum_y min(1, U_y / (q_y - epsilon/2))`` (a term is 1 when
    ``q_y - epsilon/2 <= 0``: an unpredicted class has undefined precision, bounded by 1
    whatever the zero-division convention). ``[L_y, U_y]`` from
    :func:`true_proportion_intervals`. Holds with probability >= 1 - delta under
    assumption A whenever ``||q - q_h||_1 <= epsilon``.

    Examples
    --------
    >>> # class 2 predicted twice as often as it occurs: precision_2 <= 0.5 (N huge)
    >>> round(macro_precision_bound([.8, .2], [.6, .4], n_train=10**9), 3)
    0.75
    """
    caps = _per_class_caps(train_proportions, predicted_proportions, n_train, delta, epsilon, n_unlabeled)
    return _macro_mean(*caps, "macro_precision")


def macro_recall_bound(
    train_proportions,
    predicted_proportions,
    n_train: int,
    delta: float = 0.05,
    epsilon: float = 0.0,
    n_unlabeled: int | None = None,
) -> float:
    """certa's own upper bound ``B_MaR`` on the macro-averaged recall on ``S`` (``bound="certa"``).

    ``B_MaR = (1/K) sum_y min(1, (q_y + epsilon/2) / L_y)`` (a term is 1 when ``L_y = 0``).
    Same event and conditions as :func:`macro_precision_bound`.

    Examples
    --------
    >>> # class 1 predicted for 60 % of a set where it is 80 %: recall_1 <= 0.75
    >>> round(macro_recall_bound([.8, .2], [.6, .4], n_train=10**9), 3)
    0.875
    """
    caps = _per_class_caps(train_proportions, predicted_proportions, n_train, delta, epsilon, n_unlabeled)
    return _macro_mean(*caps, "macro_recall")


def macro_f1_bound(
    train_proportions,
    predicted_proportions,
    n_train: int,
    delta: float = 0.05,
    epsilon: float = 0.0,
    n_unlabeled: int | None = None,
    definition: Literal["per_class", "harmonic"] = "per_class",
) -> float:
    """certa's own upper bound on macro-F1 on ``S`` (``bound="certa"``).

    ``definition="per_class"`` (scikit-learn's ``f1_score(average="macro")``, the mean
    of per-class F1): ``(1/K) sum_y H(P_y, R_y)`` with ``P_y, R_y`` the per-class caps of
    :func:`macro_precision_bound` / :func:`macro_recall_bound` and ``H(a, b) = 2ab/(a+b)``.
    ``definition="harmonic"`` (F1 of macro-precision and macro-recall, the form of the
    paper's inequality (3)): ``H(B_MaP, B_MaR)``. Since ``H`` is concave and increasing, the
    per-class value never exceeds the harmonic one, and the harmonic one bounds both
    definitions. Same event as the macro-precision / recall bounds.

    Examples
    --------
    >>> # per class caps (P, R): (1, .75) and (.5, 1): mean(6/7, 2/3)
    >>> round(macro_f1_bound([.8, .2], [.6, .4], n_train=10**9), 4)
    0.7619
    """
    if definition not in ("per_class", "harmonic"):
        raise ValueError(f"definition: expected 'per_class' or 'harmonic', got {definition!r}")
    prec, rec = _per_class_caps(train_proportions, predicted_proportions, n_train, delta, epsilon, n_unlabeled)
    if definition == "harmonic":
        return _harmonic(prec.mean(), rec.mean())
    return _macro_mean(prec, rec, "macro_f1")


def _certa_point_macro(p, q, eps, measure):
    """certa's macro caps with ``pi`` replaced by ``p_hat`` (no confidence term)."""
    return _macro_mean(*_caps(p, p, q, eps), measure)


# ------------------------------------------------------------------ quantifier epsilon
def quantification_epsilon(
    train_proportions,
    cc_proportions,
    quantified_proportions,
    measure: Measure = "accuracy",
) -> float:
    """Smallest quantifier slack ``epsilon`` that keeps the bound valid (may be < 0).

    certa's own rule (``bound="certa"``); the paper's Algorithm 1 step 5 is
    :func:`algorithm1_epsilon`. For ``measure="accuracy"``: ``epsilon = ||p_hat - q_Q||_1 - ||p_hat - q_CC||_1``, the
    amount by which the quantifier's gap to the training distribution overstates the
    hard predictions' gap. It is 0 for CC and negative when the quantifier's distribution
    is closer to ``p_hat`` than the hard predictions; then :func:`resolve_quantifier` falls
    back to CC with ``epsilon = 0``. With ``epsilon >= 0``, ``B_A(q_Q, epsilon)`` equals
    ``B_A(q_CC, 0)`` exactly: made rigorous, PCC cannot tighten the accuracy bound.
    For the macro measures: ``epsilon = ||q_Q - q_CC||_1`` (>= 0), the L1 radius the
    per-class caps need.

    Examples
    --------
    >>> quantification_epsilon([.5, .5], [.7, .3], [.7, .3])
    0.0
    >>> round(quantification_epsilon([.5, .5], [.7, .3], [.6, .4]), 12)
    -0.2
    """
    _check_measure(measure)
    p, cc, qq = _check_quantified(train_proportions, cc_proportions, quantified_proportions)
    if measure == "accuracy":
        return float(np.abs(p - qq).sum() - np.abs(p - cc).sum())
    return float(np.abs(qq - cc).sum())


def resolve_quantifier(
    train_proportions,
    cc_proportions,
    quantified_proportions,
    measure: Measure = "accuracy",
) -> tuple[np.ndarray, float, bool]:
    """Apply the fallback rule: the proportions and epsilon to feed the bound.

    Returns ``(proportions, epsilon, fell_back)``: ``(q_CC, 0.0, True)`` when
    :func:`quantification_epsilon` is negative, else ``(q_Q, epsilon, False)``.

    Examples
    --------
    >>> q, eps, fell_back = resolve_quantifier([.5, .5], [.7, .3], [.6, .4])
    >>> q.tolist(), eps, fell_back
    ([0.7, 0.3], 0.0, True)
    """
    eps = quantification_epsilon(train_proportions, cc_proportions, quantified_proportions, measure)
    if eps < 0:
        return np.asarray(cc_proportions, dtype=float), 0.0, True
    # clip rounding noise (|eps| ~ 1e-16) so _check_epsilon's range holds
    return np.asarray(quantified_proportions, dtype=float), float(min(max(eps, 0.0), 2.0)), False
