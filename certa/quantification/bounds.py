"""Quantify a fitted classifier on an unlabeled set and bound its accuracy or a macro measure.

The glue between the quantifiers (:mod:`certa.quantification.quantifiers`) and the two bound
families of Balikas et al. (IDA 2015): :func:`quantify_classifier` (Algorithm 1 step 3),
:func:`bound_from_quantification` (one family's bound of one measure, as a
:class:`QuantificationBound`) and :func:`bounds_for_classifier` (both steps). ``bound`` picks
the family (:data:`BOUNDS`):

* ``"certa"`` (the default everywhere since issue 24): certa's own bounds, proven from first
  principles, in :mod:`certa.quantification.certa_bounds`;
* ``"theorem1"`` (for reproducing the paper): Theorem 1 and Algorithm 1 to the letter, with a
  :class:`~certa.quantification.Theorem1Warning` where the guarantee cannot hold or is void, in
  :mod:`certa.quantification.theorem1`.

``docs/quantification.md`` compares them.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from . import certa_bounds
from ._common import Measure, _check_delta, _check_measure, _check_quantifier
from .quantifiers import (
    choose_sigma,
    classify_and_count,
    decision_to_proba,
    probabilistic_classify_and_count,
)
from .theorem1 import Theorem1Warning, max_epsilon, theorem1_bounds, theorem1_warnings

__all__ = [
    "BOUNDS",
    "Quantification",
    "QuantificationBound",
    "bound_from_quantification",
    "bounds_for_classifier",
    "quantify_classifier",
]

BOUNDS = ("theorem1", "certa")


def _check_bound(bound) -> None:
    if bound not in BOUNDS:
        raise ValueError(f"bound: expected one of {BOUNDS}, got {bound!r}")


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
    _check_quantifier(quantifier)
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
    _check_measure(measure)
    _check_bound(bound)
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
        eps_raw = 0.0 if quant.quantifier == "cc" else certa_bounds.quantification_epsilon(p_hat, q_cc, q_quant, measure)
        q_used, eps, fell_back = certa_bounds.resolve_quantifier(p_hat, q_cc, q_quant, measure)
        if measure == "accuracy":
            lam = certa_bounds.l1_confidence_radius(k, n, d, m)
            gap = float(np.abs(p_hat - q_used).sum())
            value = 1.0 - (gap - eps - lam) / 2.0  # = accuracy_bound without its clip at 1
            guarantee = certa_bounds.accuracy_bound(p_hat, q_used, n, d, eps, m)
            point = 1.0 - max(0.0, gap - eps) / 2.0
            conf = lam
        else:
            fn = {"macro_precision": certa_bounds.macro_precision_bound,
                  "macro_recall": certa_bounds.macro_recall_bound, "macro_f1": certa_bounds.macro_f1_bound}[measure]
            value = guarantee = fn(p_hat, q_used, n, d, eps, m)
            point = certa_bounds._certa_point_macro(p_hat, q_used, eps, measure)
            lo, hi = certa_bounds.true_proportion_intervals(p_hat, n, d, m)
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

    ``bound="certa"`` (default): certa's own bounds (:mod:`certa.quantification.certa_bounds`).
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
    _check_quantifier(quantifier)
    _check_measure(measure)
    _check_bound(bound)
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
