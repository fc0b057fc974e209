"""What certa's J-K-fold fronts share with scikit-learn's searches.

The fronts derive from scikit-learn's ``BaseSearchCV`` (the base class that
scikit-learn documents for custom searches) and keep its prediction
delegation, scorer handling, metadata routing, ``cv_results_`` formatting and
best-index rules. Only the evaluation loop differs: every (candidate, split)
fit runs through certa's engine (store, resume, any executor, retries,
timeouts) instead of ``joblib.Parallel``, and each fit is scikit-learn's own
``_fit_and_score``, so fit parameters, pairwise estimators, ``error_score``,
train scores and verbose output behave as in ``GridSearchCV``.
"""
from __future__ import annotations

import inspect
import numbers
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from joblib import hash as joblib_hash
from sklearn.base import clone, is_classifier
from sklearn.metrics._scorer import _MultimetricScorer
from sklearn.model_selection import check_cv
from sklearn.model_selection._search import BaseSearchCV
from sklearn.model_selection._validation import (
    _fit_and_score,
    _insert_error_scores,
    _warn_or_raise_about_fit_failures,
)
from sklearn.utils.validation import _num_samples

from ..engine.draws import Draw
from ..engine.evaluators import Evaluator
from ..engine.executors import _effective_workers
from ..engine.plans import JKFoldPlan, Plan, SplitsPlan

_FIT_AND_SCORE_ARGS = set(inspect.signature(_fit_and_score).parameters)


def _last_line(traceback_text: str) -> str:
    lines = [ln for ln in str(traceback_text).strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else str(traceback_text)


class FitAndScoreEvaluator(Evaluator):
    """One (candidate, split) fit through scikit-learn's ``_fit_and_score``.

    Returns the primary score (the ``refit`` metric, or the first metric) as
    ``"score"`` for the strategy, and in the details everything
    ``GridSearchCV`` keeps: test (and train) scores of every metric, the
    number of test samples, fit and score times, and the fit error (a
    traceback) if the fit failed, in which case the score is NaN and the
    engine records a failure whose message is the error's last line.
    """

    def __init__(self, estimator: Any, X: Any, y: Any, plan: Plan, scorer: Any, *, fit_params: dict | None = None,
                 score_params: dict | None = None, return_train_score: bool = False, error_score: Any = np.nan,
                 verbose: int = 0, n_candidates: int = 1, primary: str | None = None, scoring_given: bool = True) -> None:
        self.estimator = estimator
        self.X = X
        self.y = y
        self.plan = plan
        self.scorer = scorer
        self.fit_params = dict(fit_params or {})
        self.score_params = dict(score_params or {})
        self.return_train_score = bool(return_train_score)
        self.error_score = error_score
        self.verbose = int(verbose or 0)
        self.n_candidates = int(n_candidates)
        self.primary = primary
        self.scoring_given = bool(scoring_given)
        self._y_split = None if y is None else np.asarray(y)

    def evaluate(self, params: dict[str, Any], draw: Draw) -> dict[str, Any]:
        train, test = self.plan.split(draw, self._y_split, _num_samples(self.X))
        j, k = draw.index
        K = self.plan.n_splits
        kwargs = dict(scorer=self.scorer, train=train, test=test, verbose=self.verbose, parameters=params,
                      fit_params=self.fit_params, score_params=self.score_params,
                      return_train_score=self.return_train_score, return_n_test_samples=True, return_times=True,
                      return_parameters=False, split_progress=(j * K + k, K * self.plan.n_repeats),
                      candidate_progress=(draw.candidate, self.n_candidates), error_score=self.error_score)
        res = _fit_and_score(clone(self.estimator), self.X, self.y,
                             **{k_: v for k_, v in kwargs.items() if k_ in _FIT_AND_SCORE_ARGS})
        test_scores = res["test_scores"]
        if isinstance(test_scores, Mapping):
            name = self.primary if self.primary in test_scores else next(iter(test_scores))
            primary = test_scores[name]
            test_scores = {str(key): _as_float(v) for key, v in test_scores.items()}
        else:
            primary = test_scores
            test_scores = _as_float(test_scores)
        out: dict[str, Any] = {"score": primary, "test_scores": test_scores,
                               "n_test_samples": int(res["n_test_samples"]), "n_train": len(train),
                               "n_test": len(test), "fit_time": float(res["fit_time"]),
                               "score_time": float(res["score_time"]), "fit_error": res["fit_error"]}
        if self.return_train_score:
            tr = res["train_scores"]
            out["train_scores"] = ({str(key): _as_float(v) for key, v in tr.items()} if isinstance(tr, Mapping)
                                   else _as_float(tr))
        if res["fit_error"] is not None:
            out["score"] = float("nan")  # a failed fit is a failure for the engine, whatever error_score says
            out["error"] = _last_line(res["fit_error"])
        return out

    def fingerprint_parts(self) -> dict[str, str]:
        from ..engine.fingerprint import stable_hash

        return {"model": stable_hash((self.estimator, self.fit_params, self.score_params)),
                "data": stable_hash((self.X, self.y)), "plan": stable_hash(self.plan.spec()),
                # the scorer by content: functions by code, not source text
                "scoring": stable_hash(self.scorer if self.scoring_given else None),
                "settings": stable_hash((self.return_train_score, repr(self.error_score)))}

    def fingerprint(self) -> str:

        return joblib_hash(sorted(self.fingerprint_parts().items()))

    def check_candidates(self, candidates: list) -> None:
        # grid keys, parameter values and data, before any fit (multi-metric scoring is fine here)
        from ..engine.validation import check_estimator_inputs

        # parameter values the estimator's constraints refuse are left to the fits, as GridSearchCV does
        # (error_score, FitFailedWarning): JKFoldSearchCV keeps scikit-learn's behaviour there
        check_estimator_inputs(self.estimator, candidates, self.X, self.y, validate_params=False)


def _as_float(value: Any) -> Any:
    try:
        return float(value)
    except (TypeError, ValueError):
        return value  # left as it is: _format_results (or the strategy) reports it


def make_jkfold_plan(cv: Any, *, n_splits: int, n_repeats: int, random_state: int, estimator: Any, X: Any, y: Any,
                     split_params: dict[str, Any]) -> Plan:
    """The J partitions of K folds a J-K-fold search scores every candidate on.

    ``cv=None`` (or an int K): J = ``n_repeats`` random K-fold partitions, as
    ``RepeatedStratifiedKFold`` (classifiers) or ``RepeatedKFold`` make them.
    A splitter: its splits, grouped into ``cv.n_repeats`` partitions if it
    has that attribute (``RepeatedKFold``, ``RepeatedStratifiedKFold``), else
    one. A list of partitions, each a list of ``(train, test)`` tuples: J =
    the number of partitions. Any other iterable of ``(train, test)`` pairs:
    one partition.
    """
    from ._common import wants_stratified

    n = _num_samples(X)
    if cv is None or (isinstance(cv, numbers.Integral) and not isinstance(cv, bool)):
        K = n_splits if cv is None else int(cv)
        for name, value, low in (("n_splits" if cv is None else "cv", K, 2), ("n_repeats", n_repeats, 1)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"{name} must be an int, got {type(value).__name__}")
            if value < low:
                raise ValueError(f"{name} must be at least {low}, got {value}")
        plan = JKFoldPlan(int(K), int(n_repeats), random_state, wants_stratified(estimator, y))
        # made here once, so that the splitter's warnings (a class with fewer members than K) and
        # errors (K larger than the data) reach the caller before any fit
        plan.partitions(None if y is None else np.asarray(y), n)
        return plan
    partitions = _grouped_partitions(cv)
    if partitions is not None:
        flat = [split for part in partitions for split in part]
        return SplitsPlan(flat, len(partitions))
    checked = check_cv(cv, y, classifier=is_classifier(estimator))
    splits = list(checked.split(X, y, **split_params))
    expected = checked.get_n_splits(X, y, **split_params)
    if len(splits) != expected:
        raise ValueError(f"cv.split and cv.get_n_splits return inconsistent results. "
                         f"Expected {expected} splits, got {len(splits)}")
    if not splits:
        raise ValueError("No fits were performed. Was the CV iterator empty? Were there no candidates?")
    J = getattr(cv, "n_repeats", 1)
    if isinstance(J, bool) or not isinstance(J, numbers.Integral) or J < 1 or len(splits) % J:
        J = 1
    return SplitsPlan(splits, int(J))


def _grouped_partitions(cv: Any) -> list[list[tuple]] | None:
    """``cv`` as a list of partitions if it is a list of lists of (train, test) tuples, else None."""
    if not isinstance(cv, (list, tuple)) or not cv:
        return None
    if not all(isinstance(part, list) and part and all(isinstance(s, tuple) and len(s) == 2 for s in part)
               for part in cv):
        return None
    sizes = {len(part) for part in cv}
    if len(sizes) != 1:
        raise ValueError(f"cv: every partition must have the same number of (train, test) splits, got {sorted(sizes)}")
    return [list(part) for part in cv]


def max_in_flight(pre_dispatch: Any, n_jobs: int | None, executor: Any) -> int | None:
    """``pre_dispatch`` (an int, or an expression in ``n_jobs`` such as ``"2*n_jobs"``) as a number of evaluations."""
    if pre_dispatch is None or (isinstance(pre_dispatch, str) and pre_dispatch in ("all", "2*n_jobs")):
        return None if pre_dispatch in (None, "2*n_jobs") else 10**9
    if isinstance(pre_dispatch, numbers.Integral) and not isinstance(pre_dispatch, bool):
        value = int(pre_dispatch)
    elif isinstance(pre_dispatch, str):
        workers = _effective_workers(n_jobs)
        try:
            value = int(eval(pre_dispatch, {"__builtins__": {}}, {"n_jobs": workers}))  # as joblib does
        except Exception as exc:
            raise ValueError(f"pre_dispatch must be an int or an expression in n_jobs such as '2*n_jobs', "
                             f"got {pre_dispatch!r}") from exc
    else:
        raise TypeError(f"pre_dispatch must be an int or an expression in n_jobs such as '2*n_jobs', "
                        f"got {pre_dispatch!r}")
    if value < 1:
        raise ValueError(f"pre_dispatch must allow at least one evaluation in flight, got {pre_dispatch!r}")
    return value


def outputs_from_selection(selection: Any, n_candidates: int, n_splits: int, plan: Plan, scorers: Any,
                           error_score: Any, return_train_score: bool, X: Any, y: Any) -> list[dict[str, Any]]:
    """The engine's evaluations as the list of ``_fit_and_score`` results ``BaseSearchCV`` formats.

    Candidate-major, split-minor, as ``GridSearchCV`` orders them. An
    evaluation that failed (its fit raised, it timed out, its worker died)
    gets ``error_score`` for every metric and its error as ``fit_error``.
    """
    out: list[dict[str, Any] | None] = [None] * (n_candidates * n_splits)
    K = plan.n_splits
    y_split = None if y is None else np.asarray(y)
    n = _num_samples(X)
    for rec in selection.evaluations.to_dict("records"):
        j, k = rec["index"]
        pos = rec["candidate"] * n_splits + j * K + k
        test_scores = rec.get("test_scores")
        fit_error = rec.get("fit_error")
        if rec["status"] == "ok" and "test_scores" not in rec:  # certa's own (caching) evaluator
            test_scores, rec = float(rec["score"]), {**rec, "n_test_samples": rec["n_test"]}
        # the evaluator returned (its details are there, NaN-filled by the DataFrame otherwise): a NaN
        # score from a scorer is kept as a score, as GridSearchCV keeps it; only a fit error is a failure
        n_test = rec.get("n_test_samples")
        returned = isinstance(n_test, (int, float, np.integer, np.floating)) and not pd.isna(n_test)
        if rec["status"] == "ok" or (returned and not isinstance(fit_error, str)):
            entry = {"test_scores": test_scores, "fit_error": None,
                     "n_test_samples": int(rec["n_test_samples"]), "fit_time": float(rec["fit_time"]),
                     "score_time": float(rec["score_time"])}
            if return_train_score:
                entry["train_scores"] = rec.get("train_scores")
        else:
            if not isinstance(fit_error, str):
                fit_error = str(rec.get("error") or "the evaluation failed")
            if isinstance(scorers, _MultimetricScorer):
                failed: Any = {name: error_score for name in scorers._scorers}
            else:
                failed = error_score
            if not returned:
                n_test = len(plan.split(Draw(rec["candidate"], "fold", rec["index"]), y_split, n)[1])
            fit_time = rec.get("fit_time")
            entry = {"test_scores": failed.copy() if isinstance(failed, dict) else failed, "fit_error": fit_error,
                     "n_test_samples": int(n_test),
                     "fit_time": float(fit_time) if isinstance(fit_time, (int, float)) and np.isfinite(fit_time)
                     else float(rec.get("duration") or 0.0),
                     "score_time": 0.0}
            if return_train_score:
                entry["train_scores"] = failed.copy() if isinstance(failed, dict) else failed
        out[pos] = entry
    missing = [i for i, e in enumerate(out) if e is None]
    if missing:
        raise RuntimeError(f"the run returned no result for {len(missing)} of {len(out)} fits")
    return out  # type: ignore[return-value]


class EngineSearchCV(BaseSearchCV):
    """``BaseSearchCV`` whose fits run through certa's engine (see the module docstring).

    Subclasses set the search-specific parameters and implement
    ``_candidate_params(random_state)``.
    """

    def _candidate_params(self, root_seed: int) -> list[dict[str, Any]]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _run_search(self, evaluate_candidates, *args, **kwargs):  # pragma: no cover - fit does not use it
        raise NotImplementedError("certa searches evaluate through their own engine, not _run_search")

    def fit(self, X: Any, y: Any = None, **params: Any):
        """Score every candidate on every fold of the J partitions, choose, and refit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs), default=None
        **params : dict
            Fit parameters of the estimator (e.g. ``sample_weight``), split
            with the folds as scikit-learn does; ``groups`` goes to the
            ``cv`` splitter. With metadata routing enabled, routed as
            ``GridSearchCV`` routes them.

        Returns
        -------
        self
        """
        from sklearn.utils import indexable
        from sklearn.utils.validation import _check_method_params

        from ..analysis.stability import stability_report
        from ..engine.runner import resolve_seed, run
        from ..engine.validation import check_samples
        from ..strategies.grid import JKFoldGrid
        from ._common import check_estimator_arg

        # a string or a scalar, no samples, lengths that differ, NaN in y: named as such before the
        # splitter sees them (its own messages name no argument)
        check_samples(X, y)

        check_estimator_arg(self.estimator)
        _check_error_score(self.error_score)
        scorers, refit_metric = self._get_scorers()
        X, y = indexable(X, y)
        params = _check_method_params(X, params=params)
        routed = self._get_routed_params_for_fit(params)
        self.random_state_ = resolve_seed(self.random_state)
        candidate_params = self._candidate_params(self.random_state_)
        n_candidates = len(candidate_params)
        plan = make_jkfold_plan(self.cv, n_splits=self.n_splits, n_repeats=self.n_repeats,
                                random_state=self.random_state_, estimator=self.estimator, X=X, y=y,
                                split_params=routed.splitter.split)
        J, K = plan.n_repeats, plan.n_splits
        self.n_splits_ = n_splits = J * K
        strategy = JKFoldGrid(K, J)
        primary = refit_metric if isinstance(refit_metric, str) else None
        if getattr(self, "cache_transformers", False):
            evaluator = self._caching_evaluator(X, y, plan, scorers, routed)
        else:
            evaluator = FitAndScoreEvaluator(
                self.estimator, X, y, plan, scorers, fit_params=routed.estimator.fit, score_params=routed.scorer.score, return_train_score=self.return_train_score,
                error_score=self.error_score, verbose=self.verbose, n_candidates=n_candidates, primary=primary,
                scoring_given=self.scoring is not None)
        if self.verbose > 0:
            print(f"Fitting {n_splits} folds for each of {n_candidates} candidates, "
                  f"totalling {n_candidates * n_splits} fits")
        from ..engine.candidates import Candidate, _format_params

        candidates = [Candidate(i, _format_params(p), dict(p)) for i, p in enumerate(candidate_params)]
        from ..engine.runner import EvaluationFailedError

        try:
            selection = run(strategy, evaluator, candidates, random_state=self.random_state_, n_jobs=self.n_jobs,
                            executor=self.executor, store=self.store, retries=self.retries, timeout=self.timeout,
                            progress=self.progress, callbacks=getattr(self, "callbacks", None),
                            max_in_flight=max_in_flight(self.pre_dispatch, self.n_jobs, self.executor),
                            max_failures=None,  # every fit runs, as in GridSearchCV; failures are handled below
                            stop_on_failure=self.error_score == "raise")  # ... unless the first failure raises
        except EvaluationFailedError as exc:
            _raise_failed_fit(exc.draw, exc.outcome, evaluator, candidates)
        self.selection_ = selection
        if self.verbose > 0 and selection.n_reused:
            print(f"Resumed from the store: {selection.n_reused} of the {n_candidates * n_splits} fits were recorded "
                  f"there and reused, {n_candidates * n_splits - selection.n_reused} run now")
        out = outputs_from_selection(selection, n_candidates, n_splits, plan, scorers, self.error_score,
                                     self.return_train_score, X, y)
        if self.error_score == "raise" and any(o["fit_error"] is not None for o in out):
            _raise_first_failure(selection, evaluator, candidates)
        _warn_or_raise_about_fit_failures(out, self.error_score)
        if callable(self.scoring):
            _insert_error_scores(out, self.error_score)
        results = self._format_results(candidate_params, n_splits, out)
        first_test_score = out[0]["test_scores"]
        self.multimetric_ = isinstance(first_test_score, dict)
        if callable(self.scoring) and self.multimetric_:
            self._check_refit_for_multimetric(first_test_score)
            refit_metric = self.refit
        if self.refit or not self.multimetric_:
            self.best_index_ = int(self._select_best_index(self.refit, refit_metric, results))
            if not callable(self.refit):
                self.best_score_ = results[f"mean_test_{refit_metric}"][self.best_index_]
            self.best_params_ = results["params"][self.best_index_]
        if self.refit:
            self.best_estimator_ = clone(self.estimator).set_params(**clone(self.best_params_, safe=False))
            fit_params = routed.estimator.fit
            t0 = time.time()
            if y is not None:
                self.best_estimator_.fit(X, y, **fit_params)
            else:
                self.best_estimator_.fit(X, **fit_params)
            self.refit_time_ = time.time() - t0
            if hasattr(self.best_estimator_, "feature_names_in_"):
                self.feature_names_in_ = self.best_estimator_.feature_names_in_
        self.scorer_ = scorers._scorers if isinstance(scorers, _MultimetricScorer) else scorers
        self.cv_results_ = results
        self.stability_ = stability_report(selection.result["scores"], candidates, random_state=self.random_state_)
        return self

    def _caching_evaluator(self, X: Any, y: Any, plan: Plan, scorers: Any, routed: Any) -> Evaluator:
        """certa's own evaluator, which can reuse a pipeline's fitted first steps (``cache_transformers``)."""
        from ..engine.evaluators import EstimatorEvaluator

        if isinstance(scorers, _MultimetricScorer) or self.return_train_score or routed.estimator.fit \
                or routed.scorer.score:
            raise ValueError("cache_transformers=True works with one metric, no fit parameters and "
                             "return_train_score=False")
        return EstimatorEvaluator(self.estimator, X, y, plan, self.scoring, cache_transformers=True)


def _check_error_score(error_score: Any) -> None:
    if isinstance(error_score, str) and error_score == "raise":
        return
    if isinstance(error_score, bool) or not isinstance(error_score, numbers.Real):
        raise ValueError(f"error_score must be the string 'raise' or a number, got {error_score!r}")


def _raise_first_failure(selection: Any, evaluator: FitAndScoreEvaluator, candidates: list) -> None:
    """``error_score="raise"``: rerun the first failed fit here, so that its own exception propagates."""
    row = selection.failures.iloc[0]
    draw = Draw(int(row["candidate"]), row["kind"], tuple(row["index"]), int(row["seed"]))
    _raise_failed_fit(draw, row["error"], evaluator, candidates)


def _raise_failed_fit(draw: Draw, error: Any, evaluator: Evaluator, candidates: list) -> None:
    """Rerun the failed fit of ``draw`` in this process, so that its own exception propagates (``error_score="raise"``)."""
    error = getattr(error, "error", error)
    evaluator.evaluate(candidates[draw.candidate].params, draw)  # raises: error_score="raise" inside
    raise RuntimeError(f"a fit failed in a worker ({error}) but did not fail when run again here")
