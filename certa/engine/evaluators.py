"""Evaluators: turn (candidate parameters, draw) into a score."""
from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
from joblib import hash as joblib_hash

from .draws import NON_FINITE_ERROR, Draw, Outcome
from .fingerprint import stable_hash
from .payload import normalize_details, normalize_payload
from .plans import Plan
from .validation import check_estimator_inputs, check_scoring_arg


class Evaluator(ABC):
    """Computes the score of one candidate on one draw (runs inside a worker)."""

    @abstractmethod
    def evaluate(self, params: dict[str, Any], draw: Draw) -> float | dict[str, Any]:
        """Return a score, or a dict with a ``"score"`` key and JSON-able extras.

        A ``"payload"`` key may hold data to keep in the store (JSON values and numpy
        arrays of non-object dtype, see :mod:`certa.engine.payload`), a ``"transient"``
        key objects handed back to the calling process but never stored.
        """

    @abstractmethod
    def fingerprint(self) -> str:
        """A stable hash of everything that determines the scores (data, model, plan)."""

    def fingerprint_parts(self) -> dict[str, str]:
        """The fingerprint by part (``"data"``, ``"model"``, ``"code"``, ...), so a refused store says which differs."""
        return {"evaluator": self.fingerprint()}

    def check_candidates(self, candidates: list) -> None:
        """Refuse, before any evaluation, candidates or data this evaluator cannot evaluate (default: accept)."""


def _n_samples(X: Any) -> int:
    if hasattr(X, "shape"):
        return int(X.shape[0])
    return len(X)


# Per-process cache of fitted pipeline prefixes (all steps but the last) and the data they
# transformed, keyed by (plan, draw index, prefix parameters): with draws ordered fold by
# fold, a worker fits a TF-IDF vectorizer once per fold instead of once per fold and candidate.
_PREFIX_CACHE: OrderedDict[str, tuple] = OrderedDict()
_PREFIX_CACHE_SIZE = 4

#: Scorings whose score is the mean of a per-example score: name -> per-example score of (y_true, y_pred).
PER_EXAMPLE_SCORINGS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "accuracy": lambda y, p: (np.asarray(y) == np.asarray(p)),
    "neg_mean_absolute_error": lambda y, p: -np.abs(np.asarray(y, dtype=float) - np.asarray(p, dtype=float)),
    "neg_mean_squared_error": lambda y, p: -(np.asarray(y, dtype=float) - np.asarray(p, dtype=float)) ** 2,
}


def per_example_scoring(estimator: Any, scoring: Any) -> str | None:
    """The :data:`PER_EXAMPLE_SCORINGS` name that ``scoring`` amounts to for ``estimator``, or ``None``.

    ``None`` (the estimator's own ``score``) is accuracy for a classifier; other scorings
    (R^2, F1, AUC, a callable) are not means of per-example scores.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> per_example_scoring(LogisticRegression(), None), per_example_scoring(LogisticRegression(), "f1")
    ('accuracy', None)
    """
    from sklearn.base import is_classifier  # scikit-learn on first use: reading a store (certa show) needs none

    if scoring is None:
        return "accuracy" if estimator is not None and is_classifier(estimator) else None
    if isinstance(scoring, str) and scoring in PER_EXAMPLE_SCORINGS:
        return scoring
    return None


class EstimatorEvaluator(Evaluator):
    """Fits a clone of a scikit-learn estimator with the candidate's parameters and scores it.

    Parameters
    ----------
    estimator : estimator object
        Anything with ``fit`` (a pipeline is fine). It is cloned for every draw.
    X, y : array-like
        The data. ``y`` may be ``None`` for unsupervised estimators.
    plan : Plan
        How a draw maps to training and test indices.
    scoring : str, callable or None
        As in scikit-learn: ``None`` uses ``estimator.score``.
    seed_param : str or None
        For ``"split"`` draws (fresh split and seed per evaluation), the
        estimator parameter set to a seed derived from the draw, if the
        estimator has it and the candidate does not set it. J-K-fold draws
        leave the estimator's own ``random_state`` alone, as ``GridSearchCV``
        does.
    keep_predictions : bool
        Keep the test indices and predictions of every draw (for McNemar
        tests and bounds) in the store.
    fit_params : dict or None
        Passed to the estimator's ``fit``; arrays as long as ``X`` (e.g.
        ``sample_weight``) are indexed with the training part, as scikit-learn
        does.
    cache_transformers : bool
        For a :class:`~sklearn.pipeline.Pipeline`, reuse the fitted steps
        before the last one (and the data they transformed) across candidates
        that share the draw and those steps' parameters. Exact when those
        steps are deterministic (e.g. a TF-IDF vectorizer).
    per_example : bool
        Keep every test example's score in the payload (``"test_index"`` and
        ``"per_example"``, whose mean is the score): 0/1 correctness for accuracy,
        minus the absolute or squared error for ``"neg_mean_absolute_error"`` /
        ``"neg_mean_squared_error"`` (:data:`PER_EXAMPLE_SCORINGS`); the score is then
        computed from one ``predict``. Other scorings raise ``ValueError``. Paired
        per-example tests (the race of progressive sampling, McNemar) need it.
    """

    def __init__(self, estimator: Any, X: Any, y: Any, plan: Plan, scoring: Any = None,
                 seed_param: str | None = "random_state", keep_predictions: bool = False,
                 cache_transformers: bool = False, fit_params: dict[str, Any] | None = None,
                 per_example: bool = False) -> None:
        if estimator is not None and not hasattr(estimator, "fit"):
            raise TypeError(f"estimator must have a fit method, got {type(estimator).__name__}")
        if not isinstance(cache_transformers, (bool, np.bool_)):
            raise TypeError(f"cache_transformers must be True or False, got {cache_transformers!r}")
        if fit_params and cache_transformers:
            raise ValueError("cache_transformers=True cannot be combined with fit parameters")
        self.fit_params = dict(fit_params or {})
        if not isinstance(per_example, (bool, np.bool_)):
            raise TypeError(f"per_example must be True or False, got {per_example!r}")
        self._per_example = per_example_scoring(estimator, scoring) if per_example else None
        if per_example and (self._per_example is None or y is None):
            raise ValueError(f"per_example=True needs a score that is a mean over test examples: scoring "
                             f"{sorted(PER_EXAMPLE_SCORINGS)} (or None for a classifier) and labels y; "
                             f"got scoring={scoring!r}")
        self.per_example = bool(per_example)
        self.estimator = estimator
        self.X = X
        self.y = y
        self.plan = plan
        self.scoring = scoring
        self.seed_param = seed_param
        self.keep_predictions = keep_predictions
        self.cache_transformers = cache_transformers
        # identifies the data across processes (the arrays are unpickled anew for every task)
        self._data_token = joblib_hash((X, y)) if cache_transformers else None
        check_scoring_arg(scoring)
        from sklearn.metrics import check_scoring

        self._scorer = check_scoring(estimator, scoring=scoring) if estimator is not None else None
        self._y_array = None if y is None else np.asarray(y)

    def evaluate(self, params: dict[str, Any], draw: Draw) -> dict[str, Any]:
        from sklearn.base import clone
        from sklearn.pipeline import Pipeline
        from sklearn.utils import _safe_indexing

        train, test = self.plan.split(draw, self._y_array, _n_samples(self.X))
        if self.estimator is None:  # named candidates: each is its own estimator
            est = clone(params["model"])
            params = {}
        else:
            est = clone(self.estimator)
            est.set_params(**params)
        if (draw.kind != "fold" and self.seed_param and self.seed_param not in params
                and self.seed_param in est.get_params()):
            est.set_params(**{self.seed_param: draw.seed})
        if self.cache_transformers and self.y is not None and isinstance(est, Pipeline) and len(est.steps) > 1:
            return self._evaluate_with_prefix_cache(est, params, draw, train, test)
        X_train, X_test = _safe_indexing(self.X, train), _safe_indexing(self.X, test)
        fit_params = {}
        if self.fit_params:
            from sklearn.utils.validation import _check_method_params

            fit_params = _check_method_params(self.X, params=self.fit_params, indices=train)
        t0 = time.perf_counter()
        if self.y is None:
            est.fit(X_train, **fit_params)
            y_test = None
        else:
            y_train, y_test = _safe_indexing(self.y, train), _safe_indexing(self.y, test)
            est.fit(X_train, y_train, **fit_params)
        fit_time = time.perf_counter() - t0
        return self._score(est, X_test, y_test, test, fit_time, len(train))

    def _score(self, est, X_test, y_test, test, fit_time: float, n_train: int) -> dict[str, Any]:
        t0 = time.perf_counter()
        payload: dict[str, Any] = {}
        if self._per_example is not None:
            y_pred = est.predict(X_test)
            per = PER_EXAMPLE_SCORINGS[self._per_example](y_test, y_pred)
            score = float(np.mean(per))
            payload["per_example"] = per.astype(bool) if per.dtype == bool else per.astype(float)
            if self.keep_predictions:
                payload["y_pred"] = y_pred
        else:
            from sklearn.metrics import check_scoring

            scorer = self._scorer or check_scoring(est, scoring=self.scoring)
            score = scorer(est, X_test, y_test) if y_test is not None else scorer(est, X_test)
            if self.keep_predictions:
                payload["y_pred"] = est.predict(X_test)
        out: dict[str, Any] = {"score": float(score), "fit_time": fit_time, "score_time": time.perf_counter() - t0,
                               "n_train": int(n_train), "n_test": len(test)}
        if payload:
            out["payload"] = {"test_index": test, **payload}
        return out

    def _evaluate_with_prefix_cache(self, est, params, draw, train, test) -> dict[str, Any]:
        from sklearn.pipeline import Pipeline
        from sklearn.utils import _safe_indexing

        last = est.steps[-1][0]
        prefix_params = {k: v for k, v in est.get_params(deep=True).items()
                         if not k.startswith(last + "__") and k != last and "__" in k}
        key = joblib_hash((self.plan.spec(), draw.kind, draw.index, draw.size, repr(sorted(prefix_params.items(), key=str)),
                           self._data_token))
        y_train, y_test = _safe_indexing(self.y, train), _safe_indexing(self.y, test)
        t0 = time.perf_counter()
        if key in _PREFIX_CACHE:
            _PREFIX_CACHE.move_to_end(key)
            Xt_train, Xt_test = _PREFIX_CACHE[key]
        else:
            prefix = Pipeline(est.steps[:-1])
            Xt_train = prefix.fit_transform(_safe_indexing(self.X, train), y_train)
            Xt_test = prefix.transform(_safe_indexing(self.X, test))
            _PREFIX_CACHE[key] = (Xt_train, Xt_test)
            while len(_PREFIX_CACHE) > _PREFIX_CACHE_SIZE:
                _PREFIX_CACHE.popitem(last=False)
        final = est.steps[-1][1]
        final.fit(Xt_train, y_train)
        fit_time = time.perf_counter() - t0
        return self._score(final, Xt_test, y_test, test, fit_time, len(train))

    def fingerprint_parts(self) -> dict[str, str]:
        return {"model": stable_hash((self.estimator, self.fit_params)), "data": stable_hash((self.X, self.y)),
                "plan": stable_hash(self.plan.spec()), "scoring": stable_hash(self.scoring),
                "settings": stable_hash(self.seed_param)}

    def fingerprint(self) -> str:
        return joblib_hash(sorted(self.fingerprint_parts().items()))

    def check_candidates(self, candidates: list) -> None:
        check_estimator_inputs(self.estimator, candidates, self.X, self.y, self.scoring)
        self.plan.check(self._y_array if self._y_array is not None and self._y_array.ndim == 1 else None,
                        _n_samples(self.X))

    @property
    def is_classifier(self) -> bool:
        from sklearn.base import is_classifier

        return is_classifier(self.estimator)


def split_data(data: Any, plan: Plan, draw: Draw, y: np.ndarray | None = None) -> tuple[Any, Any]:
    """``data`` (one array or a tuple of arrays, indexed together) split into the draw's train and test parts."""
    from sklearn.utils import _safe_indexing

    parts = data if isinstance(data, tuple) else (data,)
    train_idx, test_idx = plan.split(draw, y, _n_samples(parts[0]))
    train = tuple(_safe_indexing(p, train_idx) for p in parts)
    test = tuple(_safe_indexing(p, test_idx) for p in parts)
    return (train, test) if isinstance(data, tuple) else (train[0], test[0])


class FunctionEvaluator(Evaluator):
    """Scores candidates with a user function, for models that are not scikit-learn estimators.

    With ``data`` and ``plan`` the function is called as
    ``fn(params, train, test, seed)`` where ``train``/``test`` are the data
    (a tuple of arrays, each indexed) restricted to the draw's indices;
    without data as ``fn(params, seed)``. It returns a float or a dict with
    a ``"score"`` key.
    """

    def __init__(self, fn: Callable, data: Any = None, plan: Plan | None = None, y_for_split: Any = None) -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        if (data is None) != (plan is None):
            raise ValueError("data and plan go together: give both or neither")
        self.fn = fn
        self.data = data
        self.plan = plan
        self.y_for_split = None if y_for_split is None else np.asarray(y_for_split)

    def evaluate(self, params: dict[str, Any], draw: Draw) -> Any:
        if self.data is None:
            return self.fn(params, draw.seed)
        train, test = split_data(self.data, self.plan, draw, self.y_for_split)
        return self.fn(params, train, test, draw.seed)

    def fingerprint_parts(self) -> dict[str, str]:
        return {"code": stable_hash(self.fn), "data": stable_hash((self.data, self.y_for_split)),
                "plan": stable_hash(None if self.plan is None else self.plan.spec())}

    def fingerprint(self) -> str:
        return joblib_hash(sorted(self.fingerprint_parts().items()))


def execute(evaluator: Evaluator, params: dict[str, Any], draw: Draw, attempt: int,
            timeout: float | None) -> Outcome:
    """Run one evaluation and turn whatever happens into an :class:`Outcome` (runs in a worker)."""
    import signal
    import threading
    import traceback

    from .draws import Outcome

    # (an infinite or non-positive timeout is no limit: run() refuses them up front)
    use_alarm = timeout is not None and math.isfinite(timeout) and timeout > 0 \
        and threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    if use_alarm:
        def _on_alarm(signum, frame):
            raise TimeoutError(f"evaluation exceeded the timeout of {timeout} s")
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    t0 = time.perf_counter()
    try:
        value = evaluator.evaluate(params, draw)
    except TimeoutError as exc:
        return _finish(Outcome.failure(str(exc), status="timeout", duration=time.perf_counter() - t0), attempt)
    except Exception as exc:  # noqa: BLE001 - a failing user evaluation is recorded, not raised
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return _finish(Outcome.failure(tb, duration=time.perf_counter() - t0), attempt)
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    duration = time.perf_counter() - t0
    payload = transient = None
    details: dict[str, Any] = {}
    if isinstance(value, dict):
        if "score" not in value:
            return _finish(Outcome.failure("evaluation returned a dict without a 'score' key", duration=duration), attempt)
        value = dict(value)
        payload = value.pop("payload", None)
        transient = value.pop("transient", None)
        score = value.pop("score")
        try:  # what cannot be stored as data is a recorded failure, not a crash of the run
            details = normalize_details(value)
            payload = None if payload is None else normalize_payload(payload)
        except TypeError as exc:
            return _finish(Outcome.failure(f"evaluation returned something that cannot be stored: {exc}",
                                           duration=duration), attempt)
    else:
        score = value
    if isinstance(score, (bool, np.bool_, str, bytes)):
        return _finish(Outcome.failure(f"evaluation returned a {type(score).__name__}, expected a number",
                                       duration=duration), attempt)
    try:
        score = float(score)
    except (TypeError, ValueError):
        return _finish(Outcome.failure(f"evaluation returned {type(score).__name__}, expected a number",
                                       duration=duration), attempt)
    if not math.isfinite(score):
        # a failed fit that the evaluator caught itself says why in details["error"]; its details
        # (times, the other metrics) are kept
        error = details.get("error") if isinstance(details.get("error"), str) else None
        failed = Outcome.failure(error or f"{NON_FINITE_ERROR} ({score})", duration=duration)
        failed.details = details
        return _finish(failed, attempt)
    return Outcome(score=score, status="ok", duration=duration, attempt=attempt, details=details, payload=payload,
                   transient=transient)


#: Returned by :func:`execute_shipped` when this worker does not hold the evaluator yet.
MISSING_EVALUATOR = Outcome(score=math.nan, status="missing-evaluator")
_SHIPPED: OrderedDict[str, Evaluator] = OrderedDict()


def execute_shipped(token: str, blob: bytes | None, params: dict[str, Any], draw: Draw, attempt: int,
                    timeout: float | None) -> Outcome:
    """:func:`execute` with the evaluator looked up by ``token`` in this worker's cache (see the runner)."""
    evaluator = _SHIPPED.get(token)
    if evaluator is None:
        if blob is None:
            return MISSING_EVALUATOR
        evaluator = keep_evaluator(token, blob)
    return execute(evaluator, params, draw, attempt, timeout)


def keep_shipped(token: str, blob: bytes | None) -> None:
    """Unpickle the shipped evaluator ``token`` now, if this worker does not hold it yet and ``blob`` is here."""
    if blob is not None and token not in _SHIPPED:
        keep_evaluator(token, blob)


def keep_evaluator(token: str, blob: bytes) -> Evaluator:
    """Unpickle an evaluator the runner shipped (never data read from a store) and keep it in this worker."""
    import pickle

    evaluator = pickle.loads(blob)
    _SHIPPED[token] = evaluator
    while len(_SHIPPED) > 2:
        _SHIPPED.popitem(last=False)
    return evaluator


def _finish(outcome, attempt):
    outcome.attempt = attempt
    return outcome
