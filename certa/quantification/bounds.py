"""Upper bounds on a classifier's accuracy and macro measures from unlabeled data.

After Balikas, Partalas, Gaussier, Babbar, Amini, "Efficient Model Selection for
Regularized Classification by Exploiting Unlabeled Data", IDA 2015 (LNCS 9385, 25-36),
text in ``../shared/papers/balikas2015-quantification-bounds.txt``. Two families:

``bound="theorem1"`` (for reproducing the paper): the paper's Theorem 1, inequalities (1)-(3),
and Algorithm 1's epsilon (steps 3-6), to the letter, with a :class:`Theorem1Warning` where its
guarantee cannot hold or is void (:func:`theorem1_warnings`): :func:`theorem1_confidence_term`,
:func:`theorem1_point_values`, :func:`theorem1_accuracy_bound`,
:func:`theorem1_macro_precision_bound`, :func:`theorem1_macro_recall_bound`,
:func:`theorem1_macro_f1_bound`, :func:`algorithm1_epsilon`, :func:`max_epsilon`.

``bound="certa"`` (the default everywhere since issue 24): certa's own bounds, written before the paper's text was available and
proven from first principles (``docs/quantification.md``): the same deterministic caps with
confidence terms that are proven for the realised labels of ``S`` and much tighter in
accuracy (an L1 Hoeffding radius instead of ``|Y| (t + eps)``) -- :func:`accuracy_bound`,
:func:`macro_precision_bound`, :func:`macro_recall_bound`, :func:`macro_f1_bound`,
:func:`quantification_epsilon`, :func:`resolve_quantifier`.

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

import warnings
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy import stats

from .quantifiers import (
    choose_sigma,
    classify_and_count,
    decision_to_proba,
    probabilistic_classify_and_count,
)

__all__ = [
    "BOUNDS",
    "Quantification",
    "QuantificationBound",
    "Theorem1Warning",
    "accuracy_bound",
    "algorithm1_epsilon",
    "bound_from_quantification",
    "bounds_for_classifier",
    "l1_confidence_radius",
    "macro_f1_bound",
    "macro_precision_bound",
    "macro_recall_bound",
    "max_epsilon",
    "quantification_epsilon",
    "quantify_classifier",
    "resolve_quantifier",
    "theorem1_accuracy_bound",
    "theorem1_bounds",
    "theorem1_confidence_term",
    "theorem1_macro_f1_bound",
    "theorem1_macro_precision_bound",
    "theorem1_macro_recall_bound",
    "theorem1_point_values",
    "theorem1_warnings",
    "true_proportion_intervals",
]

BOUNDS = ("theorem1", "certa")

Measure = Literal["accuracy", "macro_precision", "macro_recall", "macro_f1"]
_MEASURES = ("accuracy", "macro_precision", "macro_recall", "macro_f1")


# --------------------------------------------------------------------------- validation
def _check_delta(delta: float) -> float:
    d = float(delta)
    if not (0.0 < d < 1.0):
        raise ValueError(f"delta: expected a number strictly between 0 and 1, got {delta!r}")
    return d


def _check_count(value, name: str, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name}: expected an integer >= 1{' or None' if allow_none else ''}, got {value!r}")
    return int(value)


def _check_proportions(p, name: str, n_classes: int | None = None) -> np.ndarray:
    a = np.asarray(p, dtype=float)
    if a.ndim != 1 or a.size < 2:
        raise ValueError(f"{name}: expected a 1-D array of K >= 2 class proportions, got shape {a.shape}")
    if n_classes is not None and a.size != n_classes:
        raise ValueError(f"{name}: expected {n_classes} proportions (one per class), got {a.size}")
    if not np.all(np.isfinite(a)) or np.any(a < 0) or not np.isclose(a.sum(), 1.0, atol=1e-6):
        raise ValueError(f"{name}: expected finite non-negative proportions summing to 1")
    return a


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


# ------------------------------------------------------------------ Theorem 1 (the paper)
def _check_delta_theorem1(delta: float) -> float:
    d = float(delta)
    if not (0.0 < d <= 1.0):
        raise ValueError(f"delta: expected a number in ]0, 1] (Theorem 1), got {delta!r}")
    return d


def _check_theorem1_epsilon(epsilon: float) -> float:
    e = float(epsilon)
    if not np.isfinite(e) or e < 0:
        raise ValueError(
            f"epsilon: expected a finite number >= 0, got {epsilon!r} (Algorithm 1 step 6: a "
            "negative epsilon means falling back to CC with epsilon = 0)"
        )
    return e


def _theorem1_inputs(train_proportions, quantified_proportions, epsilon):
    p = _check_proportions(train_proportions, "train_proportions")
    q = _check_proportions(quantified_proportions, "quantified_proportions", p.size)
    return p, q, _check_theorem1_epsilon(epsilon)


def theorem1_confidence_term(n_classes: int, n_train: int, delta: float = 0.05) -> float:
    """Theorem 1's confidence term ``t = sqrt((log|Y| + log(1/delta)) / (2N))``.

    From the proof sketch: Hoeffding's inequality for each class, union bound over the
    ``|Y|`` classes, "with probability at least (1 - delta): for all y,
    p_y <= p_hat_y + sqrt((log|Y| + log(1/delta)) / (2N))" (natural logarithms).

    Parameters
    ----------
    n_classes : int
        ``|Y|`` (>= 2).
    n_train : int
        ``N``, the size of the labelled training set ``S_train``.
    delta : float in ]0, 1]

    Examples
    --------
    >>> round(theorem1_confidence_term(3, 200, 0.05), 12)  # sqrt(log(60) / 400)
    0.10117243402
    """
    k = _check_count(n_classes, "n_classes")
    if k < 2:
        raise ValueError(f"n_classes: expected at least 2 classes, got {k}")
    n = _check_count(n_train, "n_train")
    d = _check_delta_theorem1(delta)
    return float(np.sqrt((np.log(k) + np.log(1.0 / d)) / (2.0 * n)))


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    # 0/0 happens only for a class with den = 0 (never predicted with epsilon = 0, or absent
    # from the training set); its precision (recall) is undefined: 1 bounds it under any
    # zero-division convention.
    safe = np.where(den > 0, den, 1.0)
    return np.where(den > 0, num / safe, 1.0)


def theorem1_point_values(train_proportions, quantified_proportions, epsilon: float = 0.0) -> dict[str, float]:
    """``B_A``, ``B_MaP(eps)``, ``B_MaR(eps)`` and ``2 B_MaP B_MaR / (B_MaP + B_MaR)`` of Theorem 1.

    The paper's definitions (``|S|`` cancels, so proportions are enough)::

        B_A          = sum_y min{p_hat_y |S|, p_bar_y |S|} / |S|
        B_MaP(eps)   = 1/|Y| sum_y (min{p_hat_y |S|, p_bar_y |S|} + |S| eps) / (p_bar_y |S| + |S| eps)
        B_MaR(eps)   = 1/|Y| sum_y (min{p_hat_y |S|, p_bar_y |S|} + |S| eps) / (p_hat_y |S| + |S| eps)
        macro_f1     = 2 B_MaP(eps) B_MaR(eps) / (B_MaP(eps) + B_MaR(eps))

    (the paper prints ``p_hat_y^{C(S)}`` in B_MaR's denominator; recall divides by the class
    size, estimated by the training prior ``p_hat_y``). ``p_hat`` are the training priors
    ``N_y / N``, ``p_bar`` the quantified proportions of ``C`` on ``S`` (CC: ``M_y / |S|``).
    A term whose denominator is 0 (a class never predicted, with eps = 0) is 1. Note that
    ``epsilon`` enters ``B_A`` only through inequality (1), see :func:`theorem1_accuracy_bound`.

    Returns
    -------
    dict with keys ``"accuracy"`` (B_A), ``"macro_precision"``, ``"macro_recall"``, ``"macro_f1"``.

    Examples
    --------
    >>> v = theorem1_point_values([.5, .5], [.8, .2])
    >>> v["accuracy"], v["macro_precision"], v["macro_recall"]  # .5 + .2; (.5/.8 + 1)/2; (1 + .4)/2
    (0.7, 0.8125, 0.7)
    """
    p, q, eps = _theorem1_inputs(train_proportions, quantified_proportions, epsilon)
    m = np.minimum(p, q)
    b_map = float(np.mean(_ratio(m + eps, q + eps)))
    b_mar = float(np.mean(_ratio(m + eps, p + eps)))
    return {"accuracy": float(m.sum()), "macro_precision": b_map, "macro_recall": b_mar,
            "macro_f1": _harmonic(b_map, b_mar)}


def theorem1_accuracy_bound(
    train_proportions, quantified_proportions, n_train: int, delta: float = 0.05, epsilon: float = 0.0
) -> float:
    """Inequality (1) of Theorem 1, unclipped.

    ``A^{C(S)} <= B_A^{C(S)} + |Y| ( sqrt((log|Y| + log(1/delta)) / (2N)) + eps )`` (1)

    with probability at least ``1 - delta``. The value is returned as computed, possibly
    above 1: selection ranks candidates on it (Algorithm 1 step 10), and for CC the added
    term is the same for every candidate, so the ranking is that of ``B_A``; the guarantee
    is ``min(1, value)``. With many classes ``|Y| t`` is large (58 classes, ``N = 12138``,
    ``delta = 0.05``: 0.989), so the clipped guarantee is 1 for nearly every classifier.

    Examples
    --------
    >>> # B_A = .5 + .2 = .7, |Y| = 2, t = sqrt(log(2 / .05) / 200) = .135810
    >>> round(theorem1_accuracy_bound([.5, .5], [.8, .2], 100), 6)
    0.97162
    """
    p, q, eps = _theorem1_inputs(train_proportions, quantified_proportions, epsilon)
    t = theorem1_confidence_term(p.size, n_train, delta)
    return float(np.minimum(p, q).sum() + p.size * (t + eps))


def theorem1_macro_precision_bound(
    train_proportions, quantified_proportions, n_train: int, delta: float = 0.05, epsilon: float = 0.0
) -> float:
    """Inequality (2) of Theorem 1 for macro-precision, unclipped.

    ``MaP^{C(S)} <= B_MaP^{C(S)}(eps) + sqrt((log|Y| + log(1/delta)) / (2N))`` (2)

    ``B_MaP`` as in :func:`theorem1_point_values`.

    Examples
    --------
    >>> round(theorem1_macro_precision_bound([.5, .5], [.8, .2], 10**16), 6)  # (.5/.8 + 1)/2 + ~0
    0.8125
    """
    p, q, eps = _theorem1_inputs(train_proportions, quantified_proportions, epsilon)
    return theorem1_point_values(p, q, eps)["macro_precision"] + theorem1_confidence_term(p.size, n_train, delta)


def theorem1_macro_recall_bound(
    train_proportions, quantified_proportions, n_train: int, delta: float = 0.05, epsilon: float = 0.0
) -> float:
    """Inequality (2) of Theorem 1 for macro-recall, unclipped.

    ``MaR^{C(S)} <= B_MaR^{C(S)}(eps) + sqrt((log|Y| + log(1/delta)) / (2N))`` (2)

    ``B_MaR`` as in :func:`theorem1_point_values`.

    Examples
    --------
    >>> round(theorem1_macro_recall_bound([.5, .5], [.8, .2], 10**16), 6)  # (1 + .2/.5)/2 + ~0
    0.7
    """
    p, q, eps = _theorem1_inputs(train_proportions, quantified_proportions, epsilon)
    return theorem1_point_values(p, q, eps)["macro_recall"] + theorem1_confidence_term(p.size, n_train, delta)


def theorem1_macro_f1_bound(
    train_proportions, quantified_proportions, n_train: int, delta: float = 0.05, epsilon: float = 0.0
) -> float:
    """Inequality (3) of Theorem 1, unclipped.

    ``MaF^{C(S)} <= 2 B_MaP(eps) B_MaR(eps) / (B_MaP(eps) + B_MaR(eps))
    + sqrt((log|Y| + log(1/delta)) / (2N))`` (3)

    The paper's macro-F1 is the F1 of macro-precision and macro-recall (its bound is their
    harmonic mean), not scikit-learn's mean of per-class F1 (``f1_score(average="macro")``),
    which is never larger (``H`` is concave).

    Examples
    --------
    >>> round(theorem1_macro_f1_bound([.5, .5], [.8, .2], 10**16), 6)  # H(.8125, .7)
    0.752066
    """
    p, q, eps = _theorem1_inputs(train_proportions, quantified_proportions, epsilon)
    return theorem1_point_values(p, q, eps)["macro_f1"] + theorem1_confidence_term(p.size, n_train, delta)


def max_epsilon(quantified_proportions, cc_proportions) -> float:
    """``Max_eps = max_y |p_bar_y - M_y / |S||``: the quantifier's error against CC (Table 2).

    The smallest ``eps`` for which Theorem 1's quantification assumption
    ``for all y: |p_bar_y - M_y/|S|| <= eps`` holds. 0 for CC.

    Examples
    --------
    >>> round(max_epsilon([.6, .3, .1], [.7, .3, .0]), 12)
    0.1
    """
    q = _check_proportions(quantified_proportions, "quantified_proportions")
    cc = _check_proportions(cc_proportions, "cc_proportions", q.size)
    return float(np.max(np.abs(q - cc)))


def algorithm1_epsilon(train_proportions, quantified_proportions, cc_proportions) -> float:
    """Algorithm 1, step 5, as printed: ``eps = max_y min{p_hat_y, p_bar_y} - |p_bar_y - M_y/|S||``.

    Read with ``max_y`` over the whole expression (``y`` is bound by it):
    ``eps = max_y ( min{p_hat_y, p_bar_y} - |p_bar_y - M_y/|S|| )``. Step 6: if ``eps < 0``,
    fall back to CC (``eps = 0``, step 4). This ``eps`` is not ``Max_eps``
    (:func:`max_epsilon`) and need not satisfy the theorem's assumption
    ``|p_bar_y - M_y/|S|| <= eps`` for every ``y``: it is large (about the largest class
    prior) whenever some class is quantified well. The paper's experiments select with CC.

    Examples
    --------
    >>> # min(p_hat, p_bar) - |p_bar - cc| per class: .5 - .1, .3 - 0, .1 - .1 -> max .4
    >>> round(algorithm1_epsilon([.5, .3, .2], [.6, .3, .1], [.7, .3, .0]), 12)
    0.4
    """
    p = _check_proportions(train_proportions, "train_proportions")
    q = _check_proportions(quantified_proportions, "quantified_proportions", p.size)
    cc = _check_proportions(cc_proportions, "cc_proportions", p.size)
    return float(np.max(np.minimum(p, q) - np.abs(q - cc)))


def theorem1_bounds(
    train_proportions,
    cc_proportions,
    quantified_proportions,
    n_train: int,
    delta: float = 0.05,
    quantifier: Literal["cc", "pcc"] = "cc",
) -> dict[str, object]:
    """Algorithm 1 steps 3-8 for one classifier: epsilon, fallback, all four bounds.

    Step 4: CC sets ``eps = 0``. Step 5: any other quantifier sets ``eps`` by
    :func:`algorithm1_epsilon`. Step 6: ``eps < 0`` falls back to CC (its proportions,
    ``eps = 0``). Steps 7-8: inequalities (1)-(3) (and (2) for macro-P / macro-R).

    Returns
    -------
    dict with ``"values"`` (unclipped bounds, keys as :data:`_MEASURES`), ``"point"``
    (:func:`theorem1_point_values`, the bounds without confidence terms), ``"epsilon"``,
    ``"epsilon_step5"`` (before the fallback; 0.0 for CC), ``"fell_back"``, ``"proportions"``
    (what the bounds used), ``"t"``.

    Examples
    --------
    >>> r = theorem1_bounds([.5, .5], [.7, .3], [.7, .3], 10**16)
    >>> r["epsilon"], r["fell_back"], round(r["values"]["accuracy"], 6)
    (0.0, False, 0.8)
    """
    if quantifier not in ("cc", "pcc"):
        raise ValueError(f"quantifier: expected 'cc' or 'pcc', got {quantifier!r}")
    p = _check_proportions(train_proportions, "train_proportions")
    cc = _check_proportions(cc_proportions, "cc_proportions", p.size)
    qq = _check_proportions(quantified_proportions, "quantified_proportions", p.size)
    if quantifier == "cc":
        q, eps, eps5, fell_back = cc, 0.0, 0.0, False
    else:
        eps5 = algorithm1_epsilon(p, qq, cc)
        fell_back = eps5 < 0
        q, eps = (cc, 0.0) if fell_back else (qq, eps5)
    t = theorem1_confidence_term(p.size, n_train, delta)
    point = theorem1_point_values(p, q, eps)
    values = {
        "accuracy": point["accuracy"] + p.size * (t + eps),
        "macro_precision": point["macro_precision"] + t,
        "macro_recall": point["macro_recall"] + t,
        "macro_f1": point["macro_f1"] + t,
    }
    return {"values": values, "point": point, "epsilon": float(eps), "epsilon_step5": float(eps5),
            "fell_back": bool(fell_back), "proportions": np.asarray(q, dtype=float), "t": t}


class Theorem1Warning(UserWarning):
    """Theorem 1's guarantee cannot hold or is void for these inputs (:func:`theorem1_warnings`)."""


def theorem1_warnings(train_proportions, n_train: int, delta: float = 0.05, measure: Measure = "accuracy",
                      epsilon: float = 0.0) -> list[str]:
    """Why Theorem 1's bound of ``measure`` guarantees nothing here (empty list: no such reason found).

    * **Accuracy, void:** inequality (1) adds ``|Y| (t + eps)``; when that is ``>= 1`` the
      bound exceeds 1 for every classifier and its guarantee ``min(1, value)`` is 1.
    * **Macro measures, cannot hold:** the proof's inequality (4) bounds each class's *count*
      within ``|S| (t + eps)``; the macro terms divide counts by class sizes, so a class whose
      training prior ``p_hat_y <= t + eps`` (count error at least its own size) gets no bound
      from that step, while (2)-(3) add only ``t``. With such classes the macro bounds were
      exceeded in 99-100 % of simulated draws even by a perfect classifier
      (``docs/quantification.md``). No warning is not a proof that (2)-(3) hold.

    Examples
    --------
    >>> theorem1_warnings([.5, .3, .2], 150, 0.1, "macro_f1")
    []
    >>> len(theorem1_warnings([.5, .3, .2], 150, 0.1, "accuracy"))  # 3 t = 0.32 < 1
    0
    >>> theorem1_warnings([.9] + [.01] * 10, 10_000, 0.05, "macro_f1")[0][:40]
    'macro_f1: 10 of 11 classes have a traini'
    """
    if measure not in _MEASURES:
        raise ValueError(f"measure: expected one of {_MEASURES}, got {measure!r}")
    p = _check_proportions(train_proportions, "train_proportions")
    eps = _check_theorem1_epsilon(epsilon)
    t = theorem1_confidence_term(p.size, n_train, delta)
    out = []
    if measure == "accuracy":
        term = p.size * (t + eps)
        if term >= 1:
            out.append(f"accuracy: Theorem 1's inequality (1) adds |Y| (t + eps) = {p.size} x {t + eps:.4g} = "
                       f"{term:.3g} >= 1, so its guarantee is 1 (void) for every classifier; bound='certa' adds "
                       "an L1 radius instead")
    else:
        small = int(np.sum(p <= t + eps))
        if small:
            out.append(f"{measure}: {small} of {p.size} classes have a training prior <= t + eps = {t + eps:.4g}: "
                       "the count error of the proof's inequality (4) is at least their size, so Theorem 1's "
                       "macro bounds (2)-(3), which add only t, cannot be trusted (exceeded in 99-100 % of simulated "
                       "draws with many small classes, docs/quantification.md); bound='certa' holds there")
    return out


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
    k = _check_count(n_classes, "n_classes")
    if k < 2:
        raise ValueError(f"n_classes: expected at least 2 classes, got {k}")
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
    p = _check_proportions(train_proportions, "train_proportions")
    q = _check_proportions(predicted_proportions, "predicted_proportions", p.size)
    eps = _check_epsilon(epsilon)
    lam = l1_confidence_radius(p.size, n_train, delta, n_unlabeled)
    gap = float(np.abs(p - q).sum())
    return float(1.0 - max(0.0, gap - eps - lam) / 2.0)


def _per_class_caps(train_proportions, predicted_proportions, n_train, delta, epsilon, n_unlabeled):
    p = _check_proportions(train_proportions, "train_proportions")
    q = _check_proportions(predicted_proportions, "predicted_proportions", p.size)
    eps = _check_epsilon(epsilon)
    lo, hi = true_proportion_intervals(p, n_train, delta, n_unlabeled)
    # ||q' - q||_1 <= eps with both summing to 1 moves any single coordinate by <= eps/2
    q_lo = np.maximum(q - eps / 2.0, 0.0)
    q_hi = np.minimum(q + eps / 2.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(q_lo > 0, np.minimum(1.0, hi / np.where(q_lo > 0, q_lo, 1.0)), 1.0)
        rec = np.where(lo > 0, np.minimum(1.0, q_hi / np.where(lo > 0, lo, 1.0)), 1.0)
    return prec, rec


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
    prec, _ = _per_class_caps(train_proportions, predicted_proportions, n_train, delta, epsilon, n_unlabeled)
    return float(prec.mean())


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
    _, rec = _per_class_caps(train_proportions, predicted_proportions, n_train, delta, epsilon, n_unlabeled)
    return float(rec.mean())


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
    return float(np.mean([_harmonic(a, b) for a, b in zip(prec, rec)]))


def _harmonic(a: float, b: float) -> float:
    return 0.0 if a + b == 0 else float(2.0 * a * b / (a + b))


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
    if measure not in _MEASURES:
        raise ValueError(f"measure: expected one of {_MEASURES}, got {measure!r}")
    p = _check_proportions(train_proportions, "train_proportions")
    cc = _check_proportions(cc_proportions, "cc_proportions", p.size)
    qq = _check_proportions(quantified_proportions, "quantified_proportions", p.size)
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


# --------------------------------------------------------------------------- result
@dataclass(frozen=True)
class QuantificationBound:
    """A quantification-based upper bound for one classifier on one unlabeled set.

    Attributes
    ----------
    measure : str
        ``"accuracy"``, ``"macro_precision"``, ``"macro_recall"`` or ``"macro_f1"``.
    bound_type : str
        ``"theorem1"`` (the paper's Theorem 1) or ``"certa"`` (certa's own bounds).
    value : float
        The bound as computed, unclipped (Theorem 1's can exceed 1): what selection ranks.
    bound : float
        The guarantee, ``min(1, value)``; holds with probability >= ``1 - delta`` under the
        bound family's assumptions.
    quantifier : str
        Requested quantifier, ``"cc"`` or ``"pcc"``.
    quantifier_used : str
        ``"cc"`` when the epsilon < 0 fallback applied, else ``quantifier``.
    classes : numpy.ndarray
        Class labels, the order of every proportion array.
    predicted_proportions : numpy.ndarray
        Quantified distribution fed to the bound (after any fallback).
    cc_proportions : numpy.ndarray
        Hard-prediction (CC) proportions ``M_y / |S|`` on the unlabeled set.
    quantified_proportions : numpy.ndarray
        Output of the requested quantifier (before any fallback).
    train_proportions : numpy.ndarray
        Training class distribution ``p_hat``.
    epsilon : float
        Quantifier slack used (0 for CC or after fallback).
    epsilon_raw : float
        Epsilon before the fallback (Theorem 1: Algorithm 1 step 5; certa: the signed
        :func:`quantification_epsilon`); 0 for CC.
    max_epsilon : float
        ``Max_eps = max_y |p_bar_y - M_y/|S||`` of the requested quantifier (0 for CC).
    point_value : float
        The bound without its confidence term (Theorem 1: ``B_A`` or the ``B_MaP``, ``B_MaR``,
        harmonic value at the epsilon used; certa: :func:`certa.search.quantification.plugin_value`).
    confidence_term : float
        Theorem 1: ``t``; certa: ``lambda`` (accuracy) or the largest half-width of
        ``[L_y, U_y]`` (macro).
    delta, n_train, n_unlabeled, sigma
        Confidence parameter, sizes, and the logistic slope (None unless PCC was computed
        from decision scores).
    """

    measure: str
    bound: float
    quantifier: str
    quantifier_used: str
    classes: np.ndarray = field(repr=False)
    predicted_proportions: np.ndarray = field(repr=False)
    cc_proportions: np.ndarray = field(repr=False)
    quantified_proportions: np.ndarray = field(repr=False)
    train_proportions: np.ndarray = field(repr=False)
    epsilon: float
    confidence_term: float
    delta: float
    n_train: int
    n_unlabeled: int
    sigma: float | None = None
    bound_type: str = "theorem1"
    value: float = float("nan")
    epsilon_raw: float = 0.0
    max_epsilon: float = 0.0
    point_value: float = float("nan")


@dataclass(frozen=True)
class Quantification:
    """What a fitted classifier's predictions on ``S`` say, before any bound is computed.

    Attributes
    ----------
    classes, train_proportions, cc_proportions, quantified_proportions
        As in :class:`QuantificationBound` (``quantified_proportions`` is CC's for CC).
    quantifier : str
    sigma : float or None
        Logistic slope chosen by :func:`certa.quantification.choose_sigma` (PCC from scores).
    n_train, n_unlabeled : int
    """

    classes: np.ndarray
    train_proportions: np.ndarray
    cc_proportions: np.ndarray
    quantified_proportions: np.ndarray
    quantifier: str
    sigma: float | None
    n_train: int
    n_unlabeled: int


def _n_samples(X) -> int:
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    try:
        return len(X)
    except TypeError:
        raise TypeError(f"X_unlabeled: expected an array-like of examples, got {type(X).__name__}") from None


def quantify_classifier(
    fitted_clf,
    X_unlabeled,
    train_labels,
    quantifier: Literal["cc", "pcc"] = "cc",
    sigmas=range(1, 11),
) -> Quantification:
    """Algorithm 1 step 3: quantify a fitted classifier on ``S`` (CC and, if asked, PCC).

    CC counts ``predict``; PCC averages ``predict_proba`` when the classifier has it, else
    maps ``decision_function`` through the logistic ``1 / (1 + exp(-sigma t))`` with the
    ``sigma`` in ``sigmas`` of lowest ``Max_eps`` (:func:`certa.quantification.choose_sigma`,
    section 5 of the paper). Arguments as :func:`bounds_for_classifier`.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> X = np.array([[0.], [1.], [2.], [3.]]); y = np.array([0, 0, 1, 1])
    >>> quantify_classifier(LogisticRegression().fit(X, y), X, y).cc_proportions
    array([0.5, 0.5])
    """
    if quantifier not in ("cc", "pcc"):
        raise ValueError(f"quantifier: expected 'cc' or 'pcc', got {quantifier!r}")
    if not hasattr(fitted_clf, "predict"):
        raise TypeError(f"fitted_clf: expected a classifier with predict, got {type(fitted_clf).__name__}")
    classes = getattr(fitted_clf, "classes_", None)
    if classes is None:
        raise ValueError("fitted_clf: expected a fitted classifier (no classes_ attribute)")
    classes = np.asarray(classes)
    if classes.ndim != 1 or classes.size < 2:
        raise ValueError(f"fitted_clf: expected at least two classes, got classes_ = {classes.tolist()}")
    m = _n_samples(X_unlabeled)
    if m == 0:
        raise ValueError("X_unlabeled: expected at least one example, got an empty set")
    n_feat = getattr(fitted_clf, "n_features_in_", None)
    shape = getattr(X_unlabeled, "shape", None)
    if shape is None and n_feat is not None:
        shape = np.asarray(X_unlabeled).shape
    if n_feat is not None and shape is not None and (len(shape) != 2 or shape[1] != n_feat):
        raise ValueError(
            f"X_unlabeled: expected {n_feat} features (as the classifier was fitted with), "
            f"got shape {tuple(shape)}"
        )
    y_train = np.asarray(train_labels)
    if y_train.ndim != 1 or y_train.size == 0:
        raise ValueError("train_labels: expected a non-empty 1-D array of labels")
    # needs the same labels as classes_; classify_and_count names any stray label
    try:
        p_hat = classify_and_count(y_train, classes)
    except ValueError as exc:
        raise ValueError(str(exc).replace("y_pred", "train_labels")) from None

    q_cc = classify_and_count(fitted_clf.predict(X_unlabeled), classes)
    sigma = None
    if quantifier == "cc":
        q_quant = q_cc
    elif hasattr(fitted_clf, "predict_proba"):
        q_quant = probabilistic_classify_and_count(fitted_clf.predict_proba(X_unlabeled))
    elif hasattr(fitted_clf, "decision_function"):
        scores = np.asarray(fitted_clf.decision_function(X_unlabeled), dtype=float)
        if scores.ndim == 2 and classes.size == 2 and scores.shape[1] == 1:
            scores = scores[:, 0]
        sigma = choose_sigma(scores, sigmas)
        q_quant = probabilistic_classify_and_count(decision_to_proba(scores, sigma))
    else:
        raise TypeError(
            "fitted_clf: PCC needs predict_proba or decision_function; "
            f"{type(fitted_clf).__name__} has neither (use quantifier='cc')"
        )
    if q_quant.size != classes.size:
        raise ValueError(
            f"fitted_clf: probabilities/scores have {q_quant.size} columns for {classes.size} classes"
        )
    return Quantification(classes=classes, train_proportions=p_hat, cc_proportions=q_cc,
                          quantified_proportions=q_quant, quantifier=quantifier, sigma=sigma,
                          n_train=int(y_train.size), n_unlabeled=int(m))


def bound_from_quantification(
    quant: Quantification,
    measure: Measure = "accuracy",
    delta: float = 0.05,
    bound: Literal["theorem1", "certa"] = "certa",
) -> QuantificationBound:
    """certa's bound (default) or Algorithm 1 steps 4-8 (``bound="theorem1"``) for one measure.

    ``bound="theorem1"`` warns (:class:`Theorem1Warning`) when its guarantee cannot hold or
    is void for these inputs (:func:`theorem1_warnings`).

    Examples
    --------
    >>> q = Quantification(np.array([0, 1]), np.array([.5, .5]), np.array([.8, .2]),
    ...                    np.array([.8, .2]), "cc", None, 10**16, 10)
    >>> r = bound_from_quantification(q, "accuracy", bound="theorem1")
    >>> round(r.value, 6), round(r.bound, 6), round(r.point_value, 12)  # B_A = .5 + .2, t ~ 1e-8
    (0.7, 0.7, 0.7)
    """
    if measure not in _MEASURES:
        raise ValueError(f"measure: expected one of {_MEASURES}, got {measure!r}")
    if bound not in BOUNDS:
        raise ValueError(f"bound: expected one of {BOUNDS}, got {bound!r}")
    d = _check_delta(delta)
    p_hat, q_cc, q_quant = quant.train_proportions, quant.cc_proportions, quant.quantified_proportions
    n, m, k = quant.n_train, quant.n_unlabeled, quant.classes.size
    max_eps = 0.0 if quant.quantifier == "cc" else max_epsilon(q_quant, q_cc)
    if bound == "theorem1":
        r = theorem1_bounds(p_hat, q_cc, q_quant, n, d, quant.quantifier)
        found = theorem1_warnings(p_hat, n, d, measure, r["epsilon"])
        if not found and measure == "accuracy" and r["values"]["accuracy"] >= 1:
            found = [(f"accuracy: Theorem 1's bound (1) is B_A + |Y| (t + eps) = {r['point']['accuracy']:.4g} + "
                      f"{k * (r['t'] + r['epsilon']):.4g} >= 1: its guarantee is clipped to 1 (void) for this "
                      "classifier; bound='certa' adds an L1 radius instead")]
        for msg in found:
            warnings.warn(msg, Theorem1Warning, stacklevel=2)
        value, point = r["values"][measure], r["point"][measure]
        q_used, eps, eps_raw, fell_back, conf = r["proportions"], r["epsilon"], r["epsilon_step5"], r["fell_back"], r["t"]
        guarantee = min(1.0, value)
    else:
        eps_raw = 0.0 if quant.quantifier == "cc" else quantification_epsilon(p_hat, q_cc, q_quant, measure)
        q_used, eps, fell_back = resolve_quantifier(p_hat, q_cc, q_quant, measure)
        if measure == "accuracy":
            lam = l1_confidence_radius(k, n, d, m)
            gap = float(np.abs(p_hat - q_used).sum())
            value = 1.0 - (gap - eps - lam) / 2.0  # = accuracy_bound without its clip at 1
            guarantee = accuracy_bound(p_hat, q_used, n, d, eps, m)
            point = 1.0 - max(0.0, gap - eps) / 2.0
            conf = lam
        else:
            fn = {"macro_precision": macro_precision_bound, "macro_recall": macro_recall_bound,
                  "macro_f1": macro_f1_bound}[measure]
            value = guarantee = fn(p_hat, q_used, n, d, eps, m)
            point = _certa_point_macro(p_hat, q_used, eps, measure)
            lo, hi = true_proportion_intervals(p_hat, n, d, m)
            conf = float(np.max(hi - lo) / 2.0)
    return QuantificationBound(
        measure=measure,
        bound=float(guarantee),
        quantifier=quant.quantifier,
        quantifier_used="cc" if (quant.quantifier == "cc" or fell_back) else quant.quantifier,
        classes=quant.classes,
        predicted_proportions=np.asarray(q_used, dtype=float),
        cc_proportions=q_cc,
        quantified_proportions=q_quant,
        train_proportions=p_hat,
        epsilon=float(eps),
        confidence_term=float(conf),
        delta=d,
        n_train=n,
        n_unlabeled=m,
        sigma=quant.sigma,
        bound_type=bound,
        value=float(value),
        epsilon_raw=float(eps_raw),
        max_epsilon=float(max_eps),
        point_value=float(point),
    )


def _certa_point_macro(p, q, eps, measure):
    """certa's macro caps with ``pi`` replaced by ``p_hat`` (no confidence term)."""
    q_lo = np.maximum(q - eps / 2.0, 0.0)
    q_hi = np.minimum(q + eps / 2.0, 1.0)
    prec = np.where(q_lo > 0, np.minimum(1.0, p / np.where(q_lo > 0, q_lo, 1.0)), 1.0)
    rec = np.where(p > 0, np.minimum(1.0, q_hi / np.where(p > 0, p, 1.0)), 1.0)
    if measure == "macro_precision":
        return float(prec.mean())
    if measure == "macro_recall":
        return float(rec.mean())
    return float(np.mean([_harmonic(a, b) for a, b in zip(prec, rec)]))


def bounds_for_classifier(
    fitted_clf,
    X_unlabeled,
    train_labels,
    quantifier: Literal["cc", "pcc"] = "cc",
    measure: Measure = "accuracy",
    delta: float = 0.05,
    sigmas=range(1, 11),
    bound: Literal["theorem1", "certa"] = "certa",
) -> QuantificationBound:
    """Quantification bound of a fitted classifier from an unlabeled set.

    ``bound="certa"`` (default): certa's own bounds (module docstring).
    ``bound="theorem1"``: Algorithm 1 steps 3-8 of the paper (quantify; eps = 0 for CC,
    step 5's eps for PCC, fallback to CC when it is negative; inequality (1), (2) or (3)),
    with a :class:`Theorem1Warning` where its guarantee cannot hold or is void. CC counts ``predict``; PCC
    averages ``predict_proba`` when the classifier has it, else maps ``decision_function``
    through the logistic with the ``sigma`` of lowest ``Max_eps`` (:func:`choose_sigma`).

    Parameters
    ----------
    fitted_clf : fitted scikit-learn style classifier
        Needs ``classes_`` and ``predict``; PCC also ``predict_proba`` or
        ``decision_function``.
    X_unlabeled : array-like or sparse matrix, shape (M, d)
        The unlabeled set ``S`` (M >= 1, ``d == fitted_clf.n_features_in_`` when known).
    train_labels : array-like (N,)
        Labels of the training set (all labelled data), values in ``classes_``.
    quantifier : {"cc", "pcc"}
    measure : {"accuracy", "macro_precision", "macro_recall", "macro_f1"}
    delta : float in (0, 1)
    sigmas : iterable of float
        Candidate logistic slopes for decision scores.
    bound : {"certa", "theorem1"}, default "certa"

    Returns
    -------
    QuantificationBound
        ``value`` unclipped (rank on it), ``bound = min(1, value)``.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> X = np.array([[0.], [1.], [2.], [3.]]); y = np.array([0, 0, 1, 1])
    >>> clf = LogisticRegression().fit(X, y)
    >>> r = bounds_for_classifier(clf, X, y, quantifier="cc", measure="accuracy")
    >>> r.bound, round(r.point_value, 12)  # predictions match p_hat: B_A = 1, guarantee 1
    (1.0, 1.0)
    """
    if quantifier not in ("cc", "pcc"):
        raise ValueError(f"quantifier: expected 'cc' or 'pcc', got {quantifier!r}")
    if measure not in _MEASURES:
        raise ValueError(f"measure: expected one of {_MEASURES}, got {measure!r}")
    if bound not in BOUNDS:
        raise ValueError(f"bound: expected one of {BOUNDS}, got {bound!r}")
    d = _check_delta(delta)
    quant = quantify_classifier(fitted_clf, X_unlabeled, train_labels, quantifier, sigmas)
    if bound == "theorem1":
        with warnings.catch_warnings(record=True) as caught:  # re-issued here, where the caller is
            warnings.simplefilter("always", Theorem1Warning)
            out = bound_from_quantification(quant, measure, d, bound)
        for w in caught:
            warnings.warn(w.message, w.category, stacklevel=2)
        return out
    return bound_from_quantification(quant, measure, d, bound)
