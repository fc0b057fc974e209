"""Theorem 1 and Algorithm 1 of Balikas et al. (IDA 2015), to the letter (``bound="theorem1"``).

After Balikas, Partalas, Gaussier, Babbar, Amini, "Efficient Model Selection for
Regularized Classification by Exploiting Unlabeled Data", IDA 2015 (LNCS 9385, 25-36),
text in ``../shared/papers/balikas2015-quantification-bounds.txt``. For reproducing the paper:
inequalities (1)-(3) of Theorem 1 and Algorithm 1's epsilon (steps 3-6), with a
:class:`Theorem1Warning` where the guarantee cannot hold or is void (:func:`theorem1_warnings`):
:func:`theorem1_confidence_term`, :func:`theorem1_point_values`, :func:`theorem1_accuracy_bound`,
:func:`theorem1_macro_precision_bound`, :func:`theorem1_macro_recall_bound`,
:func:`theorem1_macro_f1_bound`, :func:`theorem1_bounds`, :func:`algorithm1_epsilon`,
:func:`max_epsilon`. certa's own bounds (the default) are in
:mod:`certa.quantification.certa_bounds`; ``docs/quantification.md`` compares the two.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ._common import (
    Measure,
    _check_count,
    _check_measure,
    _check_n_classes,
    _check_proportions,
    _check_quantified,
    _check_quantifier,
    _harmonic,
)

__all__ = [
    "Theorem1Warning",
    "algorithm1_epsilon",
    "max_epsilon",
    "theorem1_accuracy_bound",
    "theorem1_bounds",
    "theorem1_confidence_term",
    "theorem1_macro_f1_bound",
    "theorem1_macro_precision_bound",
    "theorem1_macro_recall_bound",
    "theorem1_point_values",
    "theorem1_warnings",
]


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
    k = _check_n_classes(n_classes)
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


def _theorem1_values(p: np.ndarray, q: np.ndarray, eps: float, n_train: int, delta: float):
    """Inequalities (1)-(3), unclipped, for checked proportions: ``(values, point values, t)``."""
    t = theorem1_confidence_term(p.size, n_train, delta)
    point = theorem1_point_values(p, q, eps)
    values = {
        "accuracy": point["accuracy"] + p.size * (t + eps),
        "macro_precision": point["macro_precision"] + t,
        "macro_recall": point["macro_recall"] + t,
        "macro_f1": point["macro_f1"] + t,
    }
    return values, point, t


def _theorem1_measure(measure: str, train_proportions, quantified_proportions, n_train, delta, epsilon) -> float:
    p, q, eps = _theorem1_inputs(train_proportions, quantified_proportions, epsilon)
    return float(_theorem1_values(p, q, eps, n_train, delta)[0][measure])


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
    return _theorem1_measure("accuracy", train_proportions, quantified_proportions, n_train, delta, epsilon)


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
    return _theorem1_measure("macro_precision", train_proportions, quantified_proportions, n_train, delta, epsilon)


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
    return _theorem1_measure("macro_recall", train_proportions, quantified_proportions, n_train, delta, epsilon)


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
    return _theorem1_measure("macro_f1", train_proportions, quantified_proportions, n_train, delta, epsilon)


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
    _check_quantifier(quantifier)
    p, cc, qq = _check_quantified(train_proportions, cc_proportions, quantified_proportions)
    if quantifier == "cc":
        q, eps, eps5, fell_back = cc, 0.0, 0.0, False
    else:
        eps5 = algorithm1_epsilon(p, qq, cc)
        fell_back = eps5 < 0
        q, eps = (cc, 0.0) if fell_back else (qq, eps5)
    values, point, t = _theorem1_values(p, q, eps, n_train, delta)
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
    _check_measure(measure)
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
