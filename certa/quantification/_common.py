"""Checks and a helper shared by both bound families and the glue (private to the package).

:mod:`~certa.quantification.theorem1` (the paper's bounds), :mod:`~certa.quantification.certa_bounds`
(certa's own) and :mod:`~certa.quantification.bounds` (quantify a classifier, bound it) validate
their arguments here, so that each check and its error message is written once.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

Measure = Literal["accuracy", "macro_precision", "macro_recall", "macro_f1"]
_MEASURES = ("accuracy", "macro_precision", "macro_recall", "macro_f1")


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


def _check_n_classes(n_classes) -> int:
    k = _check_count(n_classes, "n_classes")
    if k < 2:
        raise ValueError(f"n_classes: expected at least 2 classes, got {k}")
    return k


def _check_proportions(p, name: str, n_classes: int | None = None) -> np.ndarray:
    a = np.asarray(p, dtype=float)
    if a.ndim != 1 or a.size < 2:
        raise ValueError(f"{name}: expected a 1-D array of K >= 2 class proportions, got shape {a.shape}")
    if n_classes is not None and a.size != n_classes:
        raise ValueError(f"{name}: expected {n_classes} proportions (one per class), got {a.size}")
    if not np.all(np.isfinite(a)) or np.any(a < 0) or not np.isclose(a.sum(), 1.0, atol=1e-6):
        raise ValueError(f"{name}: expected finite non-negative proportions summing to 1")
    return a


def _check_quantified(train_proportions, cc_proportions, quantified_proportions):
    """``(p_hat, q_CC, q_Q)`` checked as proportions over the same classes (in this order)."""
    p = _check_proportions(train_proportions, "train_proportions")
    cc = _check_proportions(cc_proportions, "cc_proportions", p.size)
    qq = _check_proportions(quantified_proportions, "quantified_proportions", p.size)
    return p, cc, qq


def _check_measure(measure) -> None:
    if measure not in _MEASURES:
        raise ValueError(f"measure: expected one of {_MEASURES}, got {measure!r}")


def _check_quantifier(quantifier) -> None:
    if quantifier not in ("cc", "pcc"):
        raise ValueError(f"quantifier: expected 'cc' or 'pcc', got {quantifier!r}")


def _harmonic(a: float, b: float) -> float:
    return 0.0 if a + b == 0 else float(2.0 * a * b / (a + b))
