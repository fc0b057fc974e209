"""Model selection on unlabeled data by quantification bounds (Balikas et al., IDA 2015).

Each candidate is trained once on **all** labelled data; its class distribution on an
unlabeled set is quantified (CC or PCC) and turned into an upper bound on its accuracy or
macro-F1 there (Algorithm 1 of the paper with Theorem 1's bounds, or certa's own bounds,
see ``docs/quantification.md``); the candidate with the highest (unclipped) bound wins
(Algorithm 1 step 10). One fit per candidate instead of k (k-fold CV) plus a refit.
"""
from __future__ import annotations

import os
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd
from joblib import hash as joblib_hash
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier

from ..engine.candidates import candidates_from_grid
from ..engine.draws import Draw
from ..engine.evaluators import Evaluator
from ..engine.fingerprint import stable_hash
from ..engine.runner import resolve_seed, run
from ..engine.validation import check_estimator_inputs
from ..quantification.bounds import (
    BOUNDS,
    Theorem1Warning,
    bound_from_quantification,
    quantify_classifier,
    theorem1_warnings,
)
from ..quantification.separation import BoundsNotSeparatedWarning, separation, separation_message
from ..strategies.one_shot import OneShot, choose_one_shot
from ._common import (
    DelegateToBestMixin,
    check_estimator_arg,
    check_n_samples,
    keep_init_params,
    param_columns,
    rank_scores,
    refit_best,
)

__all__ = ["BoundsNotSeparatedWarning", "QuantificationBoundEvaluator", "QuantificationBoundSearch", "plugin_value"]

MEASURES = ("accuracy", "macro_f1")
QUANTIFIERS = ("cc", "pcc")


# ----------------------------------------------------------------------------- helpers
def _n_features(X: Any) -> int | None:
    """Number of columns of a 2-D input, None for 1-D inputs (texts) or unknown shapes."""
    shape = getattr(X, "shape", None)
    if shape is None:
        try:
            shape = np.shape(X)
        except Exception:  # noqa: BLE001 - ragged or exotic input: leave it to the estimator
            return None
    return int(shape[1]) if len(shape) == 2 else None


def _has_method(estimator: Any, name: str) -> bool:
    try:
        return hasattr(estimator, name)
    except Exception:  # noqa: BLE001 - an availability check that needs a fitted model: cannot tell
        return True


def _check_choice(value: Any, name: str, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name}: expected one of {allowed}, got {value!r}")
    return value


def _check_delta(delta: Any) -> float:
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.integer, np.floating)):
        raise TypeError(f"delta: expected a number strictly between 0 and 1, got {type(delta).__name__}")
    if not 0.0 < float(delta) < 1.0:
        raise ValueError(f"delta: expected a number strictly between 0 and 1, got {delta!r}")
    return float(delta)


def _check_sigmas(sigmas: Any) -> tuple[float, ...]:
    if sigmas is None:
        return tuple(float(s) for s in range(1, 11))
    try:
        vals = tuple(float(s) for s in sigmas)
    except (TypeError, ValueError):
        raise TypeError(f"sigmas: expected an iterable of positive numbers or None, got {sigmas!r}") from None
    if not vals or not all(np.isfinite(v) and v > 0 for v in vals):
        raise ValueError(f"sigmas: expected a non-empty sequence of finite numbers > 0, got {sigmas!r}")
    return vals


def _preferences(tie_break: Any, candidates) -> np.ndarray:
    """``tie_break(params)`` for every candidate, validated (finite numbers)."""
    out = []
    for c in candidates:
        try:
            v = tie_break(dict(c.params))
        except Exception as exc:
            raise ValueError(f"tie_break: calling it on {dict(c.params)!r} raised {type(exc).__name__}: {exc}") from exc
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not np.isfinite(v):
            raise ValueError(f"tie_break: expected a finite number for {dict(c.params)!r}, got {v!r}")
        out.append(float(v))
    return np.asarray(out, dtype=float)


def plugin_value(train_proportions, predicted_proportions, epsilon: float = 0.0, measure: str = "accuracy") -> float:
    """The bound with its confidence term removed (the unknown ``pi`` replaced by ``p_hat``).

    accuracy: ``1 - max(0, ||p_hat - q||_1 - epsilon) / 2``; macro_f1 (per class, as
    scikit-learn's ``average="macro"``): ``(1/K) sum_y H(P_y, R_y)`` with
    ``P_y = min(1, p_hat_y / (q_y - epsilon/2))`` (1 if ``q_y - epsilon/2 <= 0``),
    ``R_y = min(1, (q_y + epsilon/2) / p_hat_y)`` (1 if ``p_hat_y = 0``), ``H(a, b) = 2ab/(a+b)``.
    It is an estimate, not a guarantee: the point value of ``bound="certa"`` (the search's
    ``plugin`` detail and default tie-break for that bound family).

    Examples
    --------
    >>> plugin_value([.5, .5], [.8, .2])  # 1 - 0.6 / 2
    0.7
    >>> round(plugin_value([.8, .2], [.6, .4], measure="macro_f1"), 4)  # mean(6/7, 2/3)
    0.7619
    """
    p = np.asarray(train_proportions, dtype=float)
    q = np.asarray(predicted_proportions, dtype=float)
    if p.ndim != 1 or p.shape != q.shape or p.size < 2:
        raise ValueError(f"predicted_proportions: expected the shape of train_proportions {p.shape}, got {q.shape}")
    eps = float(epsilon)
    _check_choice(measure, "measure", MEASURES)
    if measure == "accuracy":
        return float(1.0 - max(0.0, float(np.abs(p - q).sum()) - eps) / 2.0)
    q_lo = np.maximum(q - eps / 2.0, 0.0)
    q_hi = np.minimum(q + eps / 2.0, 1.0)
    prec = np.where(q_lo > 0, np.minimum(1.0, p / np.where(q_lo > 0, q_lo, 1.0)), 1.0)
    rec = np.where(p > 0, np.minimum(1.0, q_hi / np.where(p > 0, p, 1.0)), 1.0)
    den = prec + rec
    return float(np.mean(np.where(den > 0, 2 * prec * rec / np.where(den > 0, den, 1.0), 0.0)))


# --------------------------------------------------------------------------- evaluator
class QuantificationBoundEvaluator(Evaluator):
    """Fit a candidate on all labelled data and score it by a quantification bound.

    For a ``"full"`` draw: a clone of ``estimator`` with the candidate's parameters is fitted
    on ``(X, y)``, quantified once on ``X_unlabeled``
    (:func:`certa.quantification.quantify_classifier`) and bounded
    (:func:`certa.quantification.bound_from_quantification`, ``bound="certa"`` or
    ``"theorem1"``; Theorem 1's warnings are left to the search, which gives them once). The
    returned dict has ``score`` (the **unclipped** bound of ``measure``,
    what selection ranks) and JSON-able details: ``value`` (the same), ``bound`` (the
    guarantee ``min(1, value)``), ``plugin`` (the bound without confidence term, the
    tie-break), ``value_<m>`` / ``bound_<m>`` / ``plugin_<m>`` for ``m`` in accuracy and
    macro_f1 (both measures from the same fit and predictions), ``quantifier_used``,
    ``epsilon``, ``epsilon_raw`` (before the fallback), ``max_epsilon``,
    ``confidence_term``, ``sigma``, ``classes``, ``quantified_distribution`` (output of the
    requested quantifier), ``cc_distribution``, ``fed_distribution`` (what the bound used
    after the epsilon < 0 fallback), ``train_distribution``, ``n_train``, ``n_unlabeled``,
    ``fit_time``, ``quantify_time``. With ``keep_model=True`` the fitted estimator comes
    back in ``transient["estimator"]`` (so the search needs no refit; never written to a store).

    The draw's seed is not used: the estimator's own ``random_state`` governs the fit (as
    in ``GridSearchCV``), so a kept model equals ``clone(estimator).set_params(**params).fit(X, y)``.

    Parameters
    ----------
    estimator : classifier
        Cloned for every evaluation.
    X, y : array-like
        All labelled data (any input the estimator accepts: arrays, sparse matrices, texts
        for a pipeline).
    X_unlabeled : array-like
        The unlabeled set ``S`` (at least one example, as many features as ``X``).
    measure : {"accuracy", "macro_f1"}
    quantifier : {"cc", "pcc"}
    delta : float in (0, 1)
    sigmas : iterable of float or None
        Logistic slopes tried for PCC from decision scores (None: 1..10).
    keep_model : bool, default True
    bound : {"certa", "theorem1"}, default "certa"

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> X, y = load_iris(return_X_y=True)
    >>> ev = QuantificationBoundEvaluator(LogisticRegression(max_iter=500), X, y, X)
    >>> out = ev.evaluate({"C": 1.0}, Draw(0, "full", (0,)))
    >>> 0 < out["bound"] <= 1 <= out["score"] and out["train_distribution"] == [1 / 3] * 3
    True
    """

    def __init__(self, estimator: Any, X: Any, y: Any, X_unlabeled: Any, measure: str = "accuracy",
                 quantifier: str = "cc", delta: float = 0.05, sigmas: Any = None, keep_model: bool = True,
                 bound: str = "certa") -> None:
        check_estimator_arg(estimator)
        self.bound = _check_choice(bound, "bound", BOUNDS)
        self.measure = _check_choice(measure, "measure", MEASURES)
        self.quantifier = _check_choice(quantifier, "quantifier", QUANTIFIERS)
        self.delta = _check_delta(delta)
        self.sigmas = _check_sigmas(sigmas)
        if y is None:
            raise ValueError("y: expected class labels (quantification bounds need a labelled training set)")
        check_n_samples(X, y)
        y_arr = np.asarray(y)
        if y_arr.ndim != 1:
            raise ValueError(f"y: expected a 1-D array of class labels, got shape {y_arr.shape}")
        n_classes = np.unique(y_arr).size
        if n_classes < 2:
            raise ValueError(f"y: expected at least two classes, got {n_classes}")
        if X_unlabeled is None:
            raise ValueError("X_unlabeled: expected the unlabeled set (for Bound_Test: the test inputs), got None")
        n_unl = X_unlabeled.shape[0] if hasattr(X_unlabeled, "shape") else len(X_unlabeled)
        if n_unl == 0:
            raise ValueError("X_unlabeled: expected at least one example, got an empty set")
        f_lab, f_unl = _n_features(X), _n_features(X_unlabeled)
        if f_lab != f_unl:
            raise ValueError(f"X_unlabeled: expected inputs like X ({f_lab if f_lab is not None else '1-D'} "
                             f"features), got {f_unl if f_unl is not None else '1-D input'}")
        if self.quantifier == "pcc" and not (_has_method(estimator, "predict_proba")
                                             or _has_method(estimator, "decision_function")):
            raise TypeError(f"quantifier='pcc' needs predict_proba or decision_function; "
                            f"{type(estimator).__name__} has neither (use quantifier='cc')")
        self.estimator = estimator
        self.X = X
        self.y = y
        self.X_unlabeled = X_unlabeled
        self.keep_model = bool(keep_model)
        self._y_array = y_arr

    def evaluate(self, params: dict[str, Any], draw: Draw) -> dict[str, Any]:
        if draw.kind != "full":
            raise ValueError(f"QuantificationBoundEvaluator evaluates 'full' draws, got {draw.kind!r}")
        est = clone(self.estimator).set_params(**params)
        t0 = time.perf_counter()
        est.fit(self.X, self.y)
        fit_time = time.perf_counter() - t0
        t0 = time.perf_counter()
        quant = quantify_classifier(est, self.X_unlabeled, self._y_array, quantifier=self.quantifier,
                                    sigmas=self.sigmas)
        with warnings.catch_warnings():  # QuantificationBoundSearch.fit warns once, not once per candidate
            warnings.simplefilter("ignore", Theorem1Warning)
            per = {m: bound_from_quantification(quant, m, self.delta, self.bound) for m in MEASURES}
        b = per[self.measure]
        both: dict[str, float] = {}
        for m, bm in per.items():
            both[f"value_{m}"], both[f"bound_{m}"], both[f"plugin_{m}"] = bm.value, bm.bound, bm.point_value
        quantify_time = time.perf_counter() - t0
        out: dict[str, Any] = {
            "score": b.value, "value": b.value, "bound": b.bound, "plugin": b.point_value, **both,
            "bound_type": self.bound, "measure": self.measure, "quantifier": self.quantifier,
            "quantifier_used": b.quantifier_used, "epsilon": float(b.epsilon),
            "epsilon_raw": float(b.epsilon_raw), "max_epsilon": float(b.max_epsilon),
            "confidence_term": float(b.confidence_term),
            "sigma": None if b.sigma is None else float(b.sigma), "delta": b.delta,
            "classes": [str(c) for c in b.classes.tolist()],
            "quantified_distribution": [float(v) for v in b.quantified_proportions],
            "cc_distribution": [float(v) for v in b.cc_proportions],
            "fed_distribution": [float(v) for v in b.predicted_proportions],
            "train_distribution": [float(v) for v in b.train_proportions],
            "n_train": int(b.n_train), "n_unlabeled": int(b.n_unlabeled),
            "fit_time": fit_time, "quantify_time": quantify_time,
        }
        if self.keep_model:
            out["transient"] = {"estimator": est}  # handed back to the caller, never written to a store
        return out

    def fingerprint_parts(self) -> dict[str, str]:
        # keep_model changes what is kept, not the scores: a store resumes across it
        return {"model": stable_hash(self.estimator), "data": stable_hash((self.X, self.y, self.X_unlabeled)),
                "settings": stable_hash((self.measure, self.quantifier, self.delta, self.sigmas, self.bound))}

    def fingerprint(self) -> str:
        return joblib_hash(sorted(self.fingerprint_parts().items()))

    def check_candidates(self, candidates: list) -> None:
        check_estimator_inputs(self.estimator, candidates, self.X, self.y)
        check_estimator_inputs(self.estimator, candidates, self.X_unlabeled, None, x_name="X_unlabeled",
                               need_y=False)


# ------------------------------------------------------------------------------- front
class QuantificationBoundSearch(DelegateToBestMixin, MetaEstimatorMixin, BaseEstimator):
    """Choose hyperparameters without holding labelled data out: the highest quantification bound wins.

    After Balikas et al. (IDA 2015). Every candidate of ``param_grid`` is fitted **once on all
    labelled data** ``(X, y)``; its predicted class distribution on ``X_unlabeled`` (CC, or
    PCC) is compared with the training class distribution, giving an upper bound on its
    accuracy or macro-F1 on that set that holds with probability >= 1 - ``delta``:
    ``bound="certa"`` (default since issue 24) certa's own, proven and tighter bounds,
    ``bound="theorem1"`` the paper's Theorem 1 with Algorithm 1's epsilon and fallback, for
    reproducing the paper: it warns (:class:`~certa.quantification.Theorem1Warning`) when its
    guarantee cannot hold (macro bounds with classes smaller than ``t``) or is void (accuracy
    with ``|Y| t >= 1``) (see ``docs/quantification.md``). The candidate with the highest bound is chosen (Algorithm 1
    step 10). Cost: one fit per candidate, versus k fits plus a refit for k-fold CV.

    The two variants of the paper differ only in what is passed as ``X_unlabeled``:

    * **Bound_UN** -- a separate unlabeled set (e.g. ``load_debian_sections().X_quantification``);
    * **Bound_Test** (transductive) -- the very inputs the model will be applied to, e.g. the
      test inputs (their labels are never used).

    The bound assumes the unlabeled set has the training class distribution (no prior shift).

    Ranking on unclipped values. A bound above 1 guarantees nothing more than 1, but
    clipping it would tie every candidate whose bound exceeds 1 (with Theorem 1 and 58
    classes, ``|Y| t`` alone is 0.99: all of them) and leave the choice to a tie-break.
    Candidates are therefore ranked on the unclipped value (``bounds_["value"]``, also
    ``cv_results_["mean_test_score"]``); ``bounds_["bound"]`` is the guarantee
    ``min(1, value)``. For CC the confidence term is the same for every candidate, so this
    ranks by the bound's point value (``B_A`` for accuracy). Exact ties of the unclipped
    value (e.g. two candidates with identical predictions) remain possible: with
    ``tie_break="plugin"`` (default) they are broken by the bound without its confidence term,
    any tie left, or all of them with ``tie_break="order"``, goes to the first candidate in
    grid order. A callable ``tie_break(params) -> number`` breaks exact ties by its largest
    value instead (then grid order), e.g. ``lambda p: -p["C"]`` takes the most regularised of
    the tied candidates.

    No refit. With ``keep_models=True`` (default) the workers send each fitted candidate back
    (``selection_.transient[key]["estimator"]``; never written to the store, which holds data
    only) and ``best_estimator_`` is the winner's, fitted on all labelled data: no
    extra fit, ``refit_time_ = 0``. With ``keep_models=False`` nothing is kept and the winner is
    refit once in the parent (``refit_time_`` records it); the same happens when a resumed
    store lacks the model. Either way ``best_estimator_`` equals
    ``clone(estimator).set_params(**best_params_).fit(X, y)``: the estimator's own
    ``random_state`` governs every fit.

    Parameters
    ----------
    estimator : classifier
    param_grid : dict or list of dicts
        As for ``GridSearchCV``.
    measure : {"accuracy", "macro_f1"}, default "accuracy"
        What the bound bounds (Theorem 1: macro-F1 as the F1 of macro-precision and
        macro-recall; certa: scikit-learn's ``f1_score(average="macro")``).
    quantifier : {"cc", "pcc"}, default "cc"
        PCC uses ``predict_proba``, else a logistic map of ``decision_function`` (sigma of
        lowest Max_eps in ``sigmas``). The paper's experiments select with CC (PCC "performs
        worse than CC in practice"), as does certa by default.
    bound : {"certa", "theorem1"}, default "certa"
        certa's own bounds, or Theorem 1 of the paper, to the letter (with warnings).
    delta : float in (0, 1), default 0.05
    sigmas : iterable of float or None
        Logistic slopes for PCC from decision scores; None means 1..10.
    tie_break : {"plugin", "order"} or callable, default "plugin"
        How exact ties at the top of the bound are broken (see Ties above). A callable gets
        a candidate's params dict and returns a finite number; the largest wins.
    keep_models : bool, default True
    n_jobs, executor, store, retries, timeout, progress
        As for :func:`certa.engine.runner.run`; ``store`` (an SQLite path) makes a run resumable.
    random_state : int or None, default 0
        Root seed of the run (part of the store's identity). Nothing here is random besides
        the estimator's own ``random_state``, so a fixed default keeps runs resumable.

    Attributes
    ----------
    best_index_, best_params_, best_estimator_, classes_
    best_score_ : float
        The winner's unclipped bound (what was ranked).
    best_bound_ : float
        The winner's guarantee, ``min(1, best_score_)``.
    bounds_ : pandas.DataFrame
        One row per candidate: params, value (unclipped), bound (guarantee), plugin,
        ``value_``/``bound_``/``plugin_`` + ``accuracy`` and ``macro_f1``, epsilon, epsilon_raw, max_epsilon,
        confidence_term, quantifier_used, sigma, quantified / CC / fed distributions
        (Series indexed by class), fit_time, status, tied (exact tie at the top), contender
        (not separated from the choice by the guarantees, see ``separated_``).
    train_distribution_ : pandas.Series
        Class proportions of ``y``.
    cv_results_ : dict
        ``GridSearchCV``-like: params, param_<name>, mean_test_score (the unclipped bounds),
        rank_test_score (by bound alone, ties share a rank), mean_fit_time, mean_score_time.
    refit_time_ : float
    n_unlabeled_ : int
    selection_ : Selection
        The engine's result (every evaluation, failures, fitted models in ``transient``).
    separated_ : bool
        Whether the guarantees (``bounds_["bound"]``) tell the choice apart from every other
        candidate: no other guarantee within ``1 / |S|`` of the choice's (one example of the
        unlabeled set; guarantees clipped at 1 are equal). When not, the search warns
        (:class:`~certa.quantification.BoundsNotSeparatedWarning`): use labelled data (a
        hold-out set or cross-validation over ``contenders_``) for the final choice.
    decided_by_ : str
        The rule that decided: ``"bound"`` (separated), ``"unclipped value"`` (the choice's
        guarantee is clipped at 1 and the ranking beyond it decided), ``"value within
        tolerance"``, or, for an exact tie, ``"plugin"``, ``"callable tie_break"`` or ``"grid
        order"`` (:func:`certa.quantification.separation`).
    contenders_ : list of dict
        Params of the candidates the guarantees do not separate from the choice (the choice
        included; only the choice when ``separated_``); ``bounds_["contender"]`` marks them.
    random_state_ : int

    Notes
    -----
    scikit-learn compatibility: this is not a drop-in for ``GridSearchCV``. It
    needs unlabeled data (``fit(X, y, X_unlabeled)``) and no cross-validation:
    every candidate is trained once on all labelled data and judged by its
    bound, so ``cv``, ``groups``, ``return_train_score``, several metrics (the
    bound is the one score; ``measure`` picks accuracy or macro-F1) and
    randomized settings do not apply. Prediction methods, ``score``,
    ``classes_``, ``n_features_in_`` and ``feature_names_in_`` delegate to
    ``best_estimator_`` as in ``GridSearchCV``; failed fits are recorded in
    ``selection_`` and ``bounds_``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> X, y = load_iris(return_X_y=True)
    >>> search = QuantificationBoundSearch(LogisticRegression(max_iter=500), {"C": [0.01, 1.0]})
    >>> search.fit(X[::2], y[::2], X_unlabeled=X[1::2]).best_params_
    {'C': 1.0}
    """

    def __init__(self, estimator: Any, param_grid: Any, *, measure: str = "accuracy", quantifier: str = "cc",
                 delta: float = 0.05, sigmas: Any = None, bound: str = "certa", tie_break: str = "plugin",
                 keep_models: bool = True,
                 n_jobs: int | None = None, executor: Any = None, store: str | os.PathLike | None = None,
                 random_state: int | None = 0, retries: int = 0, timeout: float | None = None,
                 progress: bool | str = "auto") -> None:
        keep_init_params(self, locals())

    def fit(self, X: Any, y: Any, X_unlabeled: Any) -> QuantificationBoundSearch:
        """Fit every candidate on ``(X, y)``, bound it on ``X_unlabeled``, keep the best.

        Parameters
        ----------
        X, y : array-like
            All labelled data.
        X_unlabeled : array-like
            Unlabeled set (Bound_UN) or the inputs to be classified (Bound_Test).
        """
        check_estimator_arg(self.estimator)
        if not is_classifier(self.estimator):
            raise TypeError(f"estimator: expected a classifier, got {type(self.estimator).__name__}")
        candidates = candidates_from_grid(self.param_grid)
        prefs = None
        if callable(self.tie_break):
            prefs = _preferences(self.tie_break, candidates)  # before any fit: fail fast
            tie = "order"
        else:
            if not isinstance(self.tie_break, str) or self.tie_break not in ("plugin", "order"):
                raise ValueError(f"tie_break: expected 'plugin', 'order' or a callable params -> number, "
                                 f"got {self.tie_break!r}")
            tie = self.tie_break
        evaluator = QuantificationBoundEvaluator(self.estimator, X, y, X_unlabeled, self.measure, self.quantifier,
                                                 self.delta, self.sigmas, keep_model=self.keep_models,
                                                 bound=self.bound)
        if evaluator.bound == "theorem1":
            _, counts = np.unique(evaluator._y_array, return_counts=True)
            for msg in theorem1_warnings(counts / counts.sum(), len(evaluator._y_array), evaluator.delta,
                                         evaluator.measure):
                warnings.warn(msg, Theorem1Warning, stacklevel=2)
        strategy = OneShot(tie_break="plugin" if tie == "plugin" else None)
        self.random_state_ = resolve_seed(self.random_state)
        selection = run(strategy, evaluator, candidates, random_state=self.random_state_, n_jobs=self.n_jobs,
                        executor=self.executor, store=self.store, retries=self.retries, timeout=self.timeout,
                        progress=self.progress)
        self.selection_ = selection
        res = selection.result
        if prefs is not None:
            # same rule as OneShot's, with the caller's preference as tie value
            res["best"], res["tied"] = choose_one_shot(res["estimates"], prefs)
            res["tie_values"] = prefs.copy()
        if res["all_failed"]:
            first = next((e for e in res["errors"] if e), "unknown error")
            raise RuntimeError(f"every candidate failed to fit or to be bounded; first error: {first}")
        self.best_index_ = int(res["best"])
        self.best_params_ = dict(candidates[self.best_index_].params)
        self.best_score_ = float(res["estimates"][self.best_index_])
        self.best_bound_ = float((res["details"][self.best_index_] or {}).get("bound", min(1.0, self.best_score_)))
        self.n_unlabeled_ = int(evaluator.X_unlabeled.shape[0] if hasattr(evaluator.X_unlabeled, "shape")
                                else len(evaluator.X_unlabeled))
        self.bounds_, self.train_distribution_ = self._bounds_frame(res, candidates)
        tie_rule = "callable" if prefs is not None else tie
        sep = separation(self.bounds_["bound"].to_numpy(dtype=float), self.best_index_,
                         res["tied"], res["tie_values"], self.n_unlabeled_, tie_rule)
        self.separated_, self.decided_by_ = bool(sep["separated"]), str(sep["decided_by"])
        self.contenders_ = [dict(candidates[j].params) for j in sep["contenders"]]
        self.bounds_["contender"] = [c.index in sep["contenders"] for c in candidates]
        res.update(separated=self.separated_, decided_by=self.decided_by_, contenders=sep["contenders"])
        if not self.separated_:
            warnings.warn(separation_message(sep, self.bounds_, self.measure), BoundsNotSeparatedWarning,
                          stacklevel=2)
        guarantees = self.bounds_["bound_accuracy"].dropna() if "bound_accuracy" in self.bounds_ else []
        if self.bound == "theorem1" and self.measure == "accuracy" and len(guarantees) and (guarantees >= 1).all():
            warnings.warn("accuracy: Theorem 1's guarantee is clipped to 1 (void) for every candidate; the choice "
                          "rests on B_A alone, ranked unclipped; bound='certa' adds an L1 radius instead",
                          Theorem1Warning, stacklevel=2)
        self.cv_results_ = self._cv_results(res, candidates)
        best_key = Draw(self.best_index_, "full", (0,)).key
        kept = selection.transient.get(best_key)
        if self.keep_models and isinstance(kept, dict) and "estimator" in kept:
            self.best_estimator_, self.refit_time_ = kept["estimator"], 0.0
        else:
            self.best_estimator_, self.refit_time_ = refit_best(self.estimator, self.best_params_, X, y)
        return self

    @staticmethod
    def _bounds_frame(res: dict[str, Any], candidates) -> tuple[pd.DataFrame, pd.Series]:
        rows = []
        train = None
        for c, det, status in zip(candidates, res["details"], res["status"]):
            det = det or {}
            row: dict[str, Any] = {"params": dict(c.params), "status": status, "value": res["estimates"][c.index]}
            for key in ("bound", "plugin", "value_accuracy", "value_macro_f1", "bound_accuracy", "bound_macro_f1",
                        "plugin_accuracy", "plugin_macro_f1", "epsilon", "epsilon_raw", "max_epsilon",
                        "confidence_term", "quantifier_used", "sigma", "fit_time"):
                row[key] = det.get(key, np.nan)
            classes = det.get("classes")
            for key in ("quantified_distribution", "cc_distribution", "fed_distribution"):
                row[key] = pd.Series(det[key], index=classes) if classes and key in det else None
            if train is None and classes and "train_distribution" in det:
                train = pd.Series(det["train_distribution"], index=classes, name="train_distribution")
            row["tied"] = c.index in res["tied"]
            rows.append(row)
        return pd.DataFrame(rows), train

    @staticmethod
    def _cv_results(res: dict[str, Any], candidates) -> dict[str, Any]:
        params = [dict(c.params) for c in candidates]
        out: dict[str, Any] = {}
        for key, det_key in (("mean_fit_time", "fit_time"), ("mean_score_time", "quantify_time")):
            out[key] = np.array([(d or {}).get(det_key, np.nan) for d in res["details"]], dtype=float)
        out.update(param_columns(params))
        out["params"] = params
        out["mean_test_score"] = np.asarray(res["estimates"], dtype=float)
        out["rank_test_score"] = rank_scores(res["estimates"])
        return out
