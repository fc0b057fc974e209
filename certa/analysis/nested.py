"""CV to test: nested cross-validation of a whole selection procedure."""
from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from joblib import hash as joblib_hash
from sklearn.base import clone, is_classifier
from sklearn.metrics import check_scoring
from sklearn.utils import _safe_indexing

from ..engine.candidates import candidates_from_grid, named_candidates
from ..engine.draws import Draw
from ..engine.evaluators import Evaluator, _n_samples
from ..engine.fingerprint import stable_hash
from ..engine.plans import JKFoldPlan, wants_stratified
from ..engine.runner import resolve_seed, run
from ..engine.validation import (
    check_array_like,
    check_estimator_inputs,
    check_scoring_arg,
)
from ..strategies.grid import JKFoldGrid


def _plain(params: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in params.items():
        if isinstance(v, (np.generic,)):
            v = v.item()
        out[k] = v if isinstance(v, (int, float, str, bool, type(None))) else repr(v)
    return out


def _inner_score_of_choice(inner: Any) -> float:
    """The inner CV score of the chosen setting: ``best_score_``, or, where scikit-learn does not
    set it (``refit`` a callable), ``mean_test_score`` at ``best_index_``; NaN with several
    metrics and a callable ``refit`` (no single inner score)."""
    try:
        return float(inner.best_score_)
    except AttributeError:
        pass
    results, index = getattr(inner, "cv_results_", None), getattr(inner, "best_index_", None)
    if results is None or index is None or "mean_test_score" not in results:
        return float("nan")
    return float(results["mean_test_score"][index])


class _SelectionEvaluator(Evaluator):
    """Runs a whole selection on an outer training fold and scores its choice on the outer test fold."""

    def __init__(self, search: Any, X: Any, y: Any, plan: JKFoldPlan, scoring: Any, inner_jobs: int | None) -> None:
        self.search, self.X, self.y, self.plan, self.scoring, self.inner_jobs = search, X, y, plan, scoring, inner_jobs
        self._y = None if y is None else np.asarray(y)

    def evaluate(self, params: dict[str, Any], draw: Draw) -> dict[str, Any]:
        train, test = self.plan.split(draw, self._y, _n_samples(self.X))
        inner = clone(self.search)
        overrides = {"store": None, "progress": False}
        if not inner.get_params().get("refit", True):
            overrides["refit"] = True  # the outer test needs the refitted choice (a metric's name is kept)
        if "n_jobs" in inner.get_params():
            overrides["n_jobs"] = self.inner_jobs
        if "executor" in inner.get_params():
            overrides["executor"] = None
        if inner.get_params().get("random_state", 0) is None:
            overrides["random_state"] = draw.seed  # a None seed would differ from worker to worker
        inner.set_params(**{k: v for k, v in overrides.items() if k in inner.get_params()})
        X_tr, X_te = _safe_indexing(self.X, train), _safe_indexing(self.X, test)
        y_tr = None if self.y is None else _safe_indexing(self.y, train)
        y_te = None if self.y is None else _safe_indexing(self.y, test)
        inner.fit(X_tr, y_tr)
        scorer = check_scoring(inner.best_estimator_, scoring=self.scoring)
        score = scorer(inner.best_estimator_, X_te, y_te)
        same_size = self._score_at_inner_size(inner, X_tr, y_tr, X_te, y_te, scorer, draw.seed)
        return {"score": float(score), "inner_best_score": _inner_score_of_choice(inner),
                "outer_score_at_inner_size": same_size,
                "chosen": json.dumps(_plain(inner.best_params_), sort_keys=True),
                "n_train": len(train), "n_test": len(test)}

    @staticmethod
    def _score_at_inner_size(inner, X_tr, y_tr, X_te, y_te, scorer, seed) -> float | None:
        """The choice refitted on as many examples as an inner training fold had, scored on the outer test.

        The inner best score is measured with smaller training sets than the outer refit; this
        removes that difference, so inner best - this score is the selection bias alone.
        """
        params = inner.get_params()
        n = _n_samples(X_tr)
        if "n_splits" in params and isinstance(params["n_splits"], int):
            size = n - int(np.ceil(n / params["n_splits"]))
        elif isinstance(params.get("test_size"), float):
            size = int(round(n * (1 - params["test_size"])))
        else:
            return None
        if size >= n or not hasattr(inner, "best_estimator_"):
            return None
        from sklearn.model_selection import train_test_split

        strat = y_tr if (y_tr is not None and is_classifier(inner.best_estimator_)) else None
        try:
            idx, _ = train_test_split(np.arange(n), train_size=size, random_state=seed, stratify=strat)
        except ValueError:
            idx, _ = train_test_split(np.arange(n), train_size=size, random_state=seed)
        est = clone(inner.best_estimator_)
        est.fit(_safe_indexing(X_tr, idx), None if y_tr is None else _safe_indexing(y_tr, idx))
        return float(scorer(est, X_te, y_te))

    def fingerprint_parts(self) -> dict[str, str]:
        return {"model": stable_hash(self.search), "data": stable_hash((self.X, self.y)),
                "plan": stable_hash(self.plan.spec()), "scoring": stable_hash(self.scoring)}

    def fingerprint(self) -> str:
        return joblib_hash(sorted(self.fingerprint_parts().items()))

    def check_candidates(self, candidates: list) -> None:
        """The inner search's grid and the data, checked as the inner search would (before any outer fold)."""
        check_scoring_arg(self.scoring)
        params = self.search.get_params(deep=False)
        check_scoring_arg(params.get("scoring"))
        est, grid, named = params.get("estimator"), params.get("param_grid"), params.get("candidates")
        if named is not None:
            inner = named_candidates(named)
            est = None
        elif est is not None and grid is not None:
            inner = candidates_from_grid(grid)
        else:
            inner = []
        if inner:
            check_estimator_inputs(est, inner, self.X, self.y, self.scoring)
        self.plan.check(self._y if self._y is not None and self._y.ndim == 1 else None, _n_samples(self.X))


@dataclass
class NestedCVResult:
    """Outer-fold scores of a tune-then-train procedure, and the choices it made."""

    outer_scores: np.ndarray
    inner_best_scores: np.ndarray
    outer_scores_at_inner_size: np.ndarray
    chosen: list[dict[str, Any]]
    folds: pd.DataFrame

    @property
    def mean(self) -> float:
        return float(np.mean(self.outer_scores))

    @property
    def std(self) -> float:
        return float(np.std(self.outer_scores, ddof=1)) if len(self.outer_scores) > 1 else float("nan")

    @property
    def optimism(self) -> float:
        """Mean inner best score minus mean outer score: how much the inner estimate flatters the choice."""
        return float(np.mean(self.inner_best_scores) - np.mean(self.outer_scores))

    @property
    def selection_bias(self) -> float:
        """Mean inner best score minus the outer score of the choice refitted at the inner training size.

        Positive on average: the inner best score is an optimistic estimate, because it is the
        maximum of several noisy estimates. (NaN when the search's inner training size is unknown.)
        """
        return float(np.mean(self.inner_best_scores) - np.mean(self.outer_scores_at_inner_size))

    @property
    def choice_counts(self) -> Counter:
        return Counter(json.dumps(c, sort_keys=True) for c in self.chosen)

    @property
    def n_distinct_choices(self) -> int:
        return len(self.choice_counts)

    def __str__(self) -> str:
        lines = [f"Nested CV over {len(self.outer_scores)} outer folds: {self.mean:.4f} (SD {self.std:.4f})",
                 (f"mean inner best score {np.mean(self.inner_best_scores):.4f}: optimism {self.optimism:+.4f} "
                  f"(selection bias at equal training size {self.selection_bias:+.4f})"),
                 f"{self.n_distinct_choices} distinct choice(s) across outer folds:"]
        for choice, count in self.choice_counts.most_common():
            lines.append(f"  {count} x {choice}")
        return "\n".join(lines)


def cross_validate_selection(search: Any, X: Any, y: Any = None, *, n_splits: int = 5, n_repeats: int = 1,
                             scoring: Any = None, random_state: int | None = None, n_jobs: int | None = 1,
                             executor: Any = None, store: str | os.PathLike | None = None,
                             progress: bool | str = "auto") -> NestedCVResult:
    """Estimate how well "tune with ``search``, then train" does on new data (nested CV).

    Each outer fold (of ``n_repeats`` x ``n_splits``-fold CV, stratified for
    classifiers) runs the whole selection procedure ``search`` — any certa
    search, with its own inner CV or bandit — on the outer training part, and
    scores the refitted choice on the outer test part. The outer folds run on
    the engine (in parallel with ``n_jobs``/``executor``, kept in ``store``);
    inner searches then run serially.

    Returns
    -------
    NestedCVResult
        Outer scores (the honest estimate), the setting chosen in each outer
        fold, how often the choice changed, and the optimism of the inner
        best scores.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> from certa import JKFoldSearchCV
    >>> X, y = load_iris(return_X_y=True)
    >>> inner = JKFoldSearchCV(LogisticRegression(max_iter=500), {"C": [0.1, 1.0]}, n_splits=3, n_repeats=1,
    ...                        random_state=0)
    >>> res = cross_validate_selection(inner, X, y, n_splits=3, random_state=0)
    >>> len(res.outer_scores)
    3
    """
    for attr in ("fit", "get_params", "set_params"):
        if not hasattr(search, attr):
            raise TypeError(f"search must be a certa (or scikit-learn) search estimator with {attr}, "
                            f"got {type(search).__name__}")
    if "refit" in search.get_params() and search.get_params()["refit"] is False:
        pass  # refit is forced on inside: the outer test needs the refitted choice
    strategy = JKFoldGrid(n_splits, n_repeats)
    check_array_like(X, "X")
    if y is not None:
        check_array_like(y, "y")
    seed = resolve_seed(random_state)
    inner_est = search.get_params().get("estimator")
    if inner_est is None and search.get_params().get("candidates"):
        inner_est = next(iter(search.get_params()["candidates"].values()))
    stratified = wants_stratified(inner_est, y)
    plan = JKFoldPlan(strategy.n_splits, strategy.n_repeats, seed, stratified)
    parallel = executor is not None or (n_jobs is not None and n_jobs != 1)
    evaluator = _SelectionEvaluator(search, X, y, plan, scoring, inner_jobs=1 if parallel else None)
    sel = run(strategy, evaluator, [{"procedure": type(search).__name__}], random_state=seed, n_jobs=n_jobs,
              executor=executor, store=store, progress=progress)
    ev = sel.evaluations
    failed = ev[ev["status"] != "ok"]
    if len(failed):
        raise RuntimeError(f"{len(failed)} outer folds failed; first error: {failed['error'].iloc[0]}")
    ev = ev.sort_values("index").reset_index(drop=True)
    folds = pd.DataFrame({"repeat": [i[0] for i in ev["index"]], "fold": [i[1] for i in ev["index"]],
                          "outer_score": ev["score"], "inner_best_score": ev["inner_best_score"],
                          "outer_score_at_inner_size": ev["outer_score_at_inner_size"].astype(float),
                          "chosen": ev["chosen"]})
    return NestedCVResult(outer_scores=folds["outer_score"].to_numpy(),
                          inner_best_scores=folds["inner_best_score"].to_numpy(),
                          outer_scores_at_inner_size=folds["outer_score_at_inner_size"].to_numpy(dtype=float),
                          chosen=[json.loads(c) for c in folds["chosen"]], folds=folds)
