"""Shared pieces of certa's scikit-learn style fronts."""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import rankdata
from sklearn.base import clone

from ..engine.plans import wants_stratified  # noqa: F401 - used by the fronts


def keep_init_params(estimator: Any, arguments: dict[str, Any]) -> None:
    """Store every ``__init__`` argument unchanged under its own name (scikit-learn's convention).

    Called as ``keep_init_params(self, locals())`` first thing in a front's ``__init__``:
    ``get_params`` and ``clone`` read the arguments back by the signature's names, and the
    checks happen in ``fit``.
    """
    for name, value in arguments.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


def check_estimator_arg(estimator: Any) -> None:
    if not hasattr(estimator, "fit"):
        raise TypeError(f"estimator must be a scikit-learn style estimator with a fit method, "
                        f"got {type(estimator).__name__}")
    if not hasattr(estimator, "get_params") or not hasattr(estimator, "set_params"):
        raise TypeError(f"estimator must have get_params/set_params (a scikit-learn estimator), "
                        f"got {type(estimator).__name__}")


def check_n_samples(X: Any, y: Any) -> int:
    from ..engine.validation import check_array_like, check_samples

    check_array_like(X, "X")
    if y is not None:
        check_array_like(y, "y")
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    if n > 0 and y is not None and (y.shape[0] if hasattr(y, "shape") else len(y)) == n:
        check_samples(X, y)  # NaN in y named before a stratified splitter says "Input contains NaN."
    if y is not None:
        ny = y.shape[0] if hasattr(y, "shape") else len(y)
        if ny != n:
            raise ValueError(f"X and y have different numbers of samples: {n} and {ny}")
    if n < 2:
        raise ValueError(f"X must have at least 2 samples, got {n}")
    return int(n)


def check_fit_failures(selection: Any, what: str = "fits") -> None:
    """Raise if every evaluation failed; warn (``FitFailedWarning``) naming the candidates hit if some did.

    As ``GridSearchCV(error_score=np.nan)``: a failed evaluation scores NaN, so a candidate with
    a failed fold has a NaN mean and ranks after every candidate without one.
    """
    import warnings

    from sklearn.exceptions import FitFailedWarning

    ev = selection.evaluations
    if len(ev) == 0:
        return
    failed = ev[ev["status"] != "ok"]
    if len(failed) == len(ev):
        counts = failed["error"].fillna("unknown error").value_counts()
        detail = "\n".join(f"{n} {what} failed with: {err}" for err, n in counts.head(5).items())
        raise ValueError(f"All the {len(ev)} {what} failed. It is very likely that your model is misconfigured "
                         f"or the data are not what it accepts.\nBelow are more details about the failures:\n"
                         f"{detail}")
    if len(failed):
        names = list(dict.fromkeys(selection.candidates[c].name for c in failed["candidate"]))
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        warnings.warn(f"{len(failed)} {what} failed out of a total of {len(ev)}; the score of a failed {what[:-1]} "
                      f"is NaN, so a candidate with a failed one ranks after every candidate without ({shown}). "
                      f"First error: {failed['error'].iloc[0]}", FitFailedWarning, stacklevel=3)


def rank_scores(means: np.ndarray) -> np.ndarray:
    """``rank_test_score`` exactly as GridSearchCV computes it (NaN ranks last)."""
    means = np.asarray(means, dtype=float)
    if np.isnan(means).all():
        return np.ones_like(means, dtype=np.int32)
    filled = np.where(np.isnan(means), np.nanmin(means) - 1, means)
    return rankdata(-filled, method="min").astype(np.int32)


def param_columns(candidate_params: list[dict[str, Any]]) -> dict[str, np.ma.MaskedArray]:
    """``param_<name>`` masked arrays, as in ``GridSearchCV.cv_results_``."""
    names = sorted({k for p in candidate_params for k in p})
    out = {}
    n = len(candidate_params)
    for name in names:
        col = np.ma.MaskedArray(np.empty(n, dtype=object), mask=True)
        for i, p in enumerate(candidate_params):
            if name in p:
                col[i] = p[name]
        out[f"param_{name}"] = col
    return out


class DelegateToBestMixin:
    """``predict``/``predict_proba``/``decision_function``/``transform``/``score`` via ``best_estimator_``."""

    def _best(self):
        if not hasattr(self, "best_estimator_"):
            raise AttributeError("this search was not refit: call fit with refit=True first")
        return self.best_estimator_

    def predict(self, X):
        return self._best().predict(X)

    def predict_proba(self, X):
        return self._best().predict_proba(X)

    def predict_log_proba(self, X):
        return self._best().predict_log_proba(X)

    def decision_function(self, X):
        return self._best().decision_function(X)

    def score_samples(self, X):
        return self._best().score_samples(X)

    def transform(self, X):
        return self._best().transform(X)

    def inverse_transform(self, X):
        return self._best().inverse_transform(X)

    @property
    def n_features_in_(self):
        return self._best().n_features_in_

    @property
    def feature_names_in_(self):
        return self._best().feature_names_in_

    def score(self, X, y=None):
        if getattr(self, "scorer_", None) is not None:
            return self.scorer_(self._best(), X, y)
        return self._best().score(X, y)

    @property
    def classes_(self):
        return self._best().classes_


def refit_best(estimator: Any, params: dict[str, Any], X: Any, y: Any,
               fit_params: dict[str, Any] | None = None) -> tuple[Any, float]:
    import time

    est = clone(estimator).set_params(**clone(params, safe=False))
    fit_params = fit_params or {}
    t0 = time.perf_counter()
    est.fit(X, **fit_params) if y is None else est.fit(X, y, **fit_params)
    return est, time.perf_counter() - t0


def check_single_metric(scoring: Any, front: str) -> None:
    """Refuse several metrics where a front's strategy decides by one score (before any evaluation)."""
    if isinstance(scoring, (list, tuple, set, dict)):
        raise ValueError(f"{front} decides by one score: give scoring as one metric (a name or a scorer), "
                         f"got {type(scoring).__name__} {scoring!r}; JKFoldSearchCV takes several metrics")
