"""Quantifiers: estimate the class distribution of an unlabeled set from a classifier.

* Classify and Count (CC): the fraction of the set predicted in each class.
* Probabilistic Classify and Count (PCC): the mean predicted probability of each class.
* For margin classifiers without ``predict_proba`` (linear SVMs), PCC uses the logistic
  map ``1 / (1 + exp(-sigma * t))`` of the decision score ``t``; ``sigma`` is picked in
  1..10 as the value with the lowest ``Max_eps = max_y |PCC_y - CC_y|`` (Balikas et al.
  2015, section 5: "varying sigma from 1 to 10 [...] using the value of sigma leading to
  the lowest value of Max_eps").

See ``docs/quantification.md`` for the formulas.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from scipy.special import expit

__all__ = [
    "choose_sigma",
    "classify_and_count",
    "decision_to_proba",
    "predictions_from_decision",
    "probabilistic_classify_and_count",
]


def _as_classes(classes: Iterable) -> np.ndarray:
    cls = np.asarray(list(classes) if not isinstance(classes, np.ndarray) else classes)
    if cls.ndim != 1 or cls.size == 0:
        raise ValueError(f"classes: expected a non-empty 1-D sequence of labels, got shape {cls.shape}")
    if np.unique(cls).size != cls.size:
        raise ValueError("classes: expected distinct labels, got duplicates")
    return cls


def classify_and_count(y_pred: Iterable, classes: Iterable) -> np.ndarray:
    """Classify and Count: the fraction of examples predicted in each class.

    Parameters
    ----------
    y_pred : array-like of shape (n,)
        Predicted labels of the unlabeled examples (n >= 1).
    classes : array-like of shape (K,)
        The class labels, in the order of the returned proportions. Every predicted
        label must be one of them; classes never predicted get proportion 0.

    Returns
    -------
    numpy.ndarray of shape (K,)
        ``q_y = #{i : y_pred_i = y} / n``.

    Examples
    --------
    >>> classify_and_count(["a", "b", "a", "a"], classes=["a", "b", "c"])
    array([0.75, 0.25, 0.  ])
    """
    cls = _as_classes(classes)
    pred = np.asarray(y_pred)
    if pred.ndim != 1:
        raise ValueError(f"y_pred: expected a 1-D array of labels, got shape {pred.shape}")
    if pred.size == 0:
        raise ValueError("y_pred: expected at least one prediction, got an empty array")
    index = {c: i for i, c in enumerate(cls.tolist())}
    try:
        idx = np.fromiter((index[v] for v in pred.tolist()), dtype=np.intp, count=pred.size)
    except KeyError as exc:
        raise ValueError(f"y_pred: label {exc.args[0]!r} is not one of classes {cls.tolist()}") from None
    return np.bincount(idx, minlength=cls.size) / pred.size


def probabilistic_classify_and_count(proba: np.ndarray) -> np.ndarray:
    """Probabilistic Classify and Count: the mean predicted probability of each class.

    Parameters
    ----------
    proba : array-like of shape (n, K)
        Predicted class probabilities (rows of non-negative numbers summing to 1), columns
        in the classifier's ``classes_`` order.

    Returns
    -------
    numpy.ndarray of shape (K,)
        ``q_y = (1/n) sum_i P(y | x_i)``, renormalised to sum to 1 (guards rounding).

    Examples
    --------
    >>> probabilistic_classify_and_count([[0.9, 0.1], [0.4, 0.6]])
    array([0.65, 0.35])
    """
    p = np.asarray(proba, dtype=float)
    if p.ndim != 2 or p.shape[1] < 2:
        raise ValueError(f"proba: expected a 2-D array of shape (n, K) with K >= 2, got shape {p.shape}")
    if p.shape[0] == 0:
        raise ValueError("proba: expected at least one row, got an empty array")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError("proba: expected finite non-negative probabilities")
    if not np.allclose(p.sum(axis=1), 1.0, atol=1e-6):
        raise ValueError("proba: expected every row to sum to 1")
    q = p.mean(axis=0)
    return q / q.sum()


def _check_scores(decision_scores: np.ndarray) -> np.ndarray:
    t = np.asarray(decision_scores, dtype=float)
    if t.ndim not in (1, 2):
        raise ValueError(
            f"decision_scores: expected 1-D (binary) or 2-D (one-vs-rest) scores, got {t.ndim}-D"
        )
    if t.shape[0] == 0:
        raise ValueError("decision_scores: expected at least one row, got an empty array")
    if t.ndim == 2 and t.shape[1] < 2:
        raise ValueError("decision_scores: a 2-D array needs at least 2 columns (one per class)")
    if not np.all(np.isfinite(t)):
        raise ValueError("decision_scores: expected finite scores")
    return t


def decision_to_proba(decision_scores: np.ndarray, sigma: float) -> np.ndarray:
    """Map margin scores to probabilities with the logistic ``1 / (1 + exp(-sigma t))``.

    Binary (1-D scores ``t``, positive meaning the second class as in scikit-learn):
    ``P(classes_[1] | x) = s(t)``, ``P(classes_[0] | x) = 1 - s(t)``.
    One-vs-rest multi-class (2-D scores ``t_k``): ``s(t_k)`` per column, rows normalised
    to sum to 1.

    Parameters
    ----------
    decision_scores : array-like of shape (n,) or (n, K)
        Output of ``decision_function``.
    sigma : float
        Slope of the logistic map, > 0.

    Returns
    -------
    numpy.ndarray of shape (n, 2) or (n, K)

    Examples
    --------
    >>> decision_to_proba([0.0, 2.0], sigma=1.0).round(4)
    array([[0.5   , 0.5   ],
           [0.1192, 0.8808]])
    """
    t = _check_scores(decision_scores)
    sig = float(sigma)
    if not np.isfinite(sig) or sig <= 0:
        raise ValueError(f"sigma: expected a finite number > 0, got {sigma!r}")
    if t.ndim == 1:
        s = expit(sig * t)
        return np.column_stack([1.0 - s, s])
    s = expit(sig * t)
    rows = s.sum(axis=1, keepdims=True)
    # expit(x) > 0 for every finite x in exact arithmetic, but underflows to 0 for
    # x < about -745; such a row has all classes equally (im)probable.
    zero = rows[:, 0] == 0.0
    if np.any(zero):
        s[zero] = 1.0
        rows[zero] = t.shape[1]
    return s / rows


def predictions_from_decision(decision_scores: np.ndarray) -> np.ndarray:
    """Class indices that scikit-learn's ``predict`` derives from decision scores.

    Binary: index 1 where ``t > 0`` else 0. Multi-class: argmax of the row (first on ties).

    Examples
    --------
    >>> predictions_from_decision([-1.0, 0.0, 3.0])
    array([0, 0, 1])
    """
    t = _check_scores(decision_scores)
    if t.ndim == 1:
        return (t > 0).astype(np.intp)
    return np.argmax(t, axis=1)


def choose_sigma(
    decision_scores: np.ndarray,
    sigmas: Iterable[float] = range(1, 11),
) -> float:
    """Pick the logistic slope of lowest ``Max_eps`` (the paper's section 5 rule).

    Criterion: the ``sigma`` minimising ``Max_eps = max_y |PCC_sigma,y - CC_y|`` over the
    candidate values, where CC counts the predictions ``predict`` would make from the same
    scores (:func:`predictions_from_decision`). Ties go to the smallest ``sigma``. One-vs-rest
    scores are mapped per class and the rows normalised to sum to 1
    (:func:`decision_to_proba`): the paper does not say how its logistic outputs become
    posteriors summing to 1 over the classes; normalising is certa's choice.

    Parameters
    ----------
    decision_scores : array-like of shape (n,) or (n, K)
    sigmas : iterable of float, default 1..10
        Candidate slopes, each > 0.

    Returns
    -------
    float

    Examples
    --------
    >>> choose_sigma([-0.4, 0.2, 3.0])  # Max_eps .032, .03125, .041, ... for sigma = 1, 2, 3, ...
    2.0
    """
    t = _check_scores(decision_scores)
    cand = np.asarray(list(sigmas), dtype=float)
    if cand.ndim != 1 or cand.size == 0:
        raise ValueError("sigmas: expected a non-empty sequence of numbers")
    if not np.all(np.isfinite(cand)) or np.any(cand <= 0):
        raise ValueError("sigmas: expected finite values > 0")
    n_classes = 2 if t.ndim == 1 else t.shape[1]
    cc = np.bincount(predictions_from_decision(t), minlength=n_classes) / t.shape[0]
    dist = np.array(
        [np.abs(probabilistic_classify_and_count(decision_to_proba(t, s)) - cc).max() for s in cand]
    )
    best = np.flatnonzero(dist == dist.min())
    return float(cand[best][np.argmin(cand[best])])
