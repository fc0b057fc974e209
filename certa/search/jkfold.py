"""JKFoldSearchCV: exhaustive grid search by J repeated K-fold cross-validation."""
from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin
from sklearn.metrics import check_scoring

from ..engine.candidates import candidates_from_grid
from ..engine.evaluators import EstimatorEvaluator
from ..engine.plans import JKFoldPlan
from ..engine.runner import resolve_seed, run
from ..stability import stability_report
from ..strategies.grid import JKFoldGrid
from ._common import (DelegateToBestMixin, check_estimator_arg, check_n_samples, param_columns, rank_scores,
                      refit_best, wants_stratified)


class JKFoldSearchCV(DelegateToBestMixin, MetaEstimatorMixin, BaseEstimator):
    """Exhaustive search over a parameter grid by J repeated K-fold cross-validation.

    Every candidate is scored on the same J random K-fold partitions (those
    of ``RepeatedStratifiedKFold`` for classifiers, ``RepeatedKFold``
    otherwise, with the same ``random_state``) and the one with the highest
    mean over the J*K folds is chosen. Scores therefore equal those of
    ``GridSearchCV(cv=RepeatedStratifiedKFold(n_splits=K, n_repeats=J,
    random_state=s))``; in addition certa keeps every evaluation in a store
    (resumable), runs on any executor, records failures, and reports how
    stable the choice is (``stability_``).

    Parameters
    ----------
    estimator : estimator object
        Cloned for every fit.
    param_grid : dict or list of dicts
        As for ``GridSearchCV``: parameter names mapped to lists of values.
    n_splits : int, default=5
        K, the number of folds per partition (at least 2).
    n_repeats : int, default=3
        J, the number of random partitions (at least 1).
    scoring : str, callable or None
        As in scikit-learn; ``None`` uses the estimator's ``score``.
    n_jobs : int or None
        Local worker processes; ignored when ``executor`` is given.
    random_state : int or None
        Seed of the partitions; ``None`` draws one (kept in ``random_state_``).
    refit : bool, default=True
        Refit the best setting on all data as ``best_estimator_``.
    store : str, path or None
        SQLite file keeping every finished evaluation; a run with the same
        store, data, grid and seed resumes where it stopped.
    executor : concurrent.futures.Executor, dask.distributed.Client, "ray" or None
    retries : int, default=0
        Extra attempts for an evaluation that fails.
    timeout : float or None
        Seconds allowed per evaluation.
    progress : bool or "auto", default="auto"
        Show a progress bar; ``"auto"``: when standard error is a terminal.
    cache_transformers : bool, default=False
        For a pipeline whose grid varies only its last step (or whose earlier
        steps repeat across candidates), fit the earlier steps once per fold
        and worker instead of once per fold and candidate. The scores are
        identical when those steps are deterministic (a TF-IDF vectorizer is).

    Attributes
    ----------
    best_params_, best_score_, best_index_, best_estimator_, cv_results_, n_splits_,
    refit_time_, scorer_, random_state_
        As for ``GridSearchCV`` (``n_splits_`` is J*K).
    stability_ : StabilityReport
        Choice per partition, SD of the chosen parameter and of the tuned
        score across partitions, J' < J disagreement, ties.
    selection_ : Selection
        The engine's result: every evaluation as a DataFrame, failures.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> from certa import JKFoldSearchCV
    >>> X, y = load_iris(return_X_y=True)
    >>> search = JKFoldSearchCV(LogisticRegression(max_iter=500), {"C": [0.1, 1.0, 10.0]},
    ...                         n_splits=5, n_repeats=2, random_state=0).fit(X, y)
    >>> sorted(search.best_params_)
    ['C']
    """

    def __init__(self, estimator: Any, param_grid: Any, *, n_splits: int = 5, n_repeats: int = 3,
                 scoring: Any = None, n_jobs: int | None = None, random_state: int | None = None,
                 refit: bool = True, store: str | os.PathLike | None = None, executor: Any = None,
                 retries: int = 0, timeout: float | None = None, progress: bool | str = "auto",
                 cache_transformers: bool = False) -> None:
        self.estimator = estimator
        self.param_grid = param_grid
        self.n_splits = n_splits
        self.n_repeats = n_repeats
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.refit = refit
        self.store = store
        self.executor = executor
        self.retries = retries
        self.timeout = timeout
        self.progress = progress
        self.cache_transformers = cache_transformers

    def fit(self, X: Any, y: Any = None) -> "JKFoldSearchCV":
        """Score every candidate on every fold, choose, report stability and refit."""
        check_estimator_arg(self.estimator)
        candidates = candidates_from_grid(self.param_grid)
        strategy = JKFoldGrid(self.n_splits, self.n_repeats)  # validates n_splits / n_repeats
        n = check_n_samples(X, y)
        K, J = strategy.n_splits, strategy.n_repeats
        if K > n:
            raise ValueError(f"n_splits={K} is larger than the number of samples ({n})")
        stratified = wants_stratified(self.estimator, y)
        if stratified:
            _, counts = np.unique(np.asarray(y), return_counts=True)
            if K > counts.min():
                raise ValueError(f"n_splits={K} is larger than the number of members of the smallest "
                                 f"class ({counts.min()}): every fold needs every class; lower n_splits")
        self.random_state_ = resolve_seed(self.random_state)
        plan = JKFoldPlan(K, J, self.random_state_, stratified)
        evaluator = EstimatorEvaluator(self.estimator, X, y, plan, self.scoring,
                                       cache_transformers=self.cache_transformers)
        self.scorer_ = check_scoring(self.estimator, scoring=self.scoring)
        selection = run(strategy, evaluator, candidates, random_state=self.random_state_,
                        n_jobs=self.n_jobs, executor=self.executor, store=self.store,
                        retries=self.retries, timeout=self.timeout, progress=self.progress)
        self.selection_ = selection
        self.n_splits_ = J * K
        self.cv_results_ = self._cv_results(selection, candidates, J, K)
        self.best_index_ = int(np.argmin(self.cv_results_["rank_test_score"]))
        self.best_params_ = dict(candidates[self.best_index_].params)
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        self.stability_ = stability_report(selection.result["scores"], candidates,
                                           random_state=self.random_state_)
        if self.refit:
            self.best_estimator_, self.refit_time_ = refit_best(self.estimator, self.best_params_, X, y)
        return self

    @staticmethod
    def _cv_results(selection, candidates, J: int, K: int) -> dict[str, Any]:
        n_folds = J * K
        res = selection.result
        C = len(candidates)
        flat = res["scores"].reshape(C, n_folds)
        ev = selection.evaluations
        results: dict[str, Any] = {}
        for key in ("fit_time", "score_time"):
            t = np.full((C, n_folds), np.nan)
            if key in ev.columns:
                for row in ev[["candidate", "index", key]].itertuples(index=False):
                    j, k = row.index
                    t[row.candidate, j * K + k] = row[2]
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a candidate whose every fit failed has no times
                results[f"mean_{key}"] = np.nanmean(t, axis=1)
                results[f"std_{key}"] = np.nanstd(t, axis=1)
        params = [dict(c.params) for c in candidates]
        results.update(param_columns(params))
        results["params"] = params
        for i in range(n_folds):
            results[f"split{i}_test_score"] = flat[:, i]
        results["mean_test_score"] = res["estimates"]
        results["std_test_score"] = res["std"]
        results["rank_test_score"] = rank_scores(res["estimates"])
        return results
