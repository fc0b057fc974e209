"""Checks run before the first evaluation: bad grids, data or scoring are refused up front.

The rule (documented in ``docs/reliability.md``): certa refuses up front only what it can
tell for sure will fail, and never what the estimator itself accepts.

* Always: ``X``/``y`` that are not array-like (``None``, a string, a scalar), different
  numbers of samples, a multi-metric ``scoring`` (a list, tuple, set or dict: not supported
  yet), a ``scoring`` scikit-learn does not know, grid keys the estimator does not have
  (``set_params`` on a clone of each candidate), parameter values the estimator's own
  constraints refuse (scikit-learn's ``_validate_params``, on every nested estimator), ``y``
  with NaN or infinity, ``y`` of more than 2 dimensions, ``None`` as ``y`` for a classifier or
  regressor, fewer than two classes or continuous targets for a classifier.
* Only when the estimator (the first step of a pipeline) is a plain scikit-learn estimator,
  whose input tags say what it takes: NaN or infinity in a numeric ``X`` when the tags say
  ``allow_nan=False`` (so ``HistGradientBoosting`` or a pipeline starting with
  ``SimpleImputer`` keeps its NaN); a 3-D ``X``; a 1-D numeric ``X`` for an estimator that
  takes 2-D arrays (a text pipeline's list of strings is fine); non-numeric values in a 2-D
  array for an estimator that takes neither strings nor categories; a 2-D ``y`` with several
  columns for an estimator without multi-output support. Column transformers, function
  transformers, feature unions and third-party estimators are not second-guessed: what they
  reject fails at the first evaluation and is reported then.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def check_scoring_arg(scoring: Any, estimator: Any = None) -> None:
    """Refuse multi-metric scoring (not supported yet) and scoring names scikit-learn does not know."""
    if isinstance(scoring, (list, tuple, set, frozenset, dict)):
        raise ValueError(f"scoring: multi-metric scoring (a {type(scoring).__name__} of scorers) is not supported "
                         f"yet; give one scorer (a name such as 'accuracy', or a callable), got {scoring!r}")
    if scoring is None or callable(scoring):
        return
    if not isinstance(scoring, str):
        raise TypeError(f"scoring: expected None, a scorer name or a callable, got {type(scoring).__name__}")
    from sklearn.metrics import get_scorer

    try:
        get_scorer(scoring)
    except ValueError:
        raise ValueError(f"scoring: {scoring!r} is not a scikit-learn scorer name "
                         "(see sklearn.metrics.get_scorer_names())") from None


def check_array_like(value: Any, name: str) -> None:
    """``value`` must be a sequence of samples: not None, not a string, not a scalar."""
    if value is None:
        raise ValueError(f"{name} must not be None")
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name}: expected an array-like of samples, got a {type(value).__name__}")
    if isinstance(value, dict) and not hasattr(value, "shape"):  # (scipy's DOK matrix is a dict with a shape)
        raise TypeError(f"{name}: expected an array-like of samples, got a dict")
    if hasattr(value, "shape"):
        if len(value.shape) == 0:
            raise TypeError(f"{name}: expected an array-like of samples, got a 0-d array")
        return
    if hasattr(value, "__array__") or hasattr(value, "__dataframe__"):
        return
    if not hasattr(value, "__len__") or not hasattr(value, "__getitem__"):
        raise TypeError(f"{name}: expected an array-like of samples, got {type(value).__name__}")


def check_samples(X: Any, y: Any = None, x_name: str = "X") -> None:
    """``X`` must hold at least one sample and, when ``y`` is given, as many as ``y``, whose numbers are finite.

    Run before any split is made: a splitter's own messages ("Found array with 0 sample(s)",
    "Input contains NaN.") name no argument.
    """
    check_array_like(X, x_name)
    n_x = _n(X)
    if n_x == 0:
        raise ValueError(f"{x_name}: expected at least one sample, got an empty array")
    if y is None:
        return
    check_array_like(y, "y")
    n_y = _n(y)
    if n_x != n_y:
        raise ValueError(f"{x_name} and y have different numbers of samples: {n_x} and {n_y}")
    y_arr = y.to_numpy() if hasattr(y, "to_numpy") else np.asarray(y) if not hasattr(y, "tocsr") else None
    numeric = None if y_arr is None else _as_numeric(y_arr)
    if numeric is not None:
        _check_finite_targets(numeric)


def _check_finite_targets(numeric: np.ndarray) -> None:
    """Refuse NaN or infinite targets, naming the first NaN's index."""
    if np.isnan(numeric).any():
        raise ValueError(f"y contains NaN (at index {int(np.flatnonzero(np.isnan(numeric).ravel())[0])}); "
                         "targets must be finite")
    if np.isinf(numeric).any():
        raise ValueError("y contains infinity; targets must be finite")


def _n(value: Any) -> int:
    from sklearn.utils.validation import _num_samples

    return int(_num_samples(value))


def _first_step(est: Any) -> Any:
    from sklearn.pipeline import Pipeline

    while isinstance(est, Pipeline):
        steps = [s for _, s in est.steps if s is not None and s != "passthrough"]
        if not steps:
            return None
        est = steps[0]
    return est


def _last_step(est: Any) -> Any:
    from sklearn.pipeline import Pipeline

    while isinstance(est, Pipeline):
        est = est.steps[-1][1]
    return est


_FLEXIBLE = ("ColumnTransformer", "FunctionTransformer", "FeatureUnion", "TransformedTargetRegressor")


def _plain_sklearn_tags(est: Any):
    """Input tags of the estimator that first sees X, when they can be trusted; else None."""
    first = _first_step(est)
    module = type(first).__module__ or ""
    if first is None or not module.startswith("sklearn.") or module.startswith("sklearn.utils"):
        return None  # third-party estimators and scikit-learn's test mocks: their tags do not say enough
    if type(first).__name__ in _FLEXIBLE:
        return None
    from sklearn.utils import get_tags

    try:
        return get_tags(first).input_tags
    except Exception:  # noqa: BLE001 - an estimator whose tags cannot be computed is not second-guessed
        return None


def _as_numeric(X: Any) -> np.ndarray | None:
    """The values of ``X`` as a float array when ``X`` is numeric, else None (never raises)."""
    try:
        if hasattr(X, "tocsr") and hasattr(X, "data"):  # scipy sparse
            return np.asarray(X.data, dtype=float) if X.data.dtype.kind in "biuf" else None
        if hasattr(X, "dtypes") and hasattr(X, "to_numpy"):  # pandas
            kinds = [getattr(d, "kind", "O") for d in (X.dtypes if hasattr(X.dtypes, "__iter__") else [X.dtypes])]
            return X.to_numpy(dtype=float) if all(k in "biuf" for k in kinds) else None
        arr = X if isinstance(X, np.ndarray) else np.asarray(X)
        if arr.dtype.kind == "O":
            return arr.astype(float)  # numbers held in an object array are numbers to scikit-learn too
        return arr.astype(float, copy=False) if arr.dtype.kind in "biuf" else None
    except (ValueError, TypeError):
        return None


def _configured(estimator: Any, candidate: Any) -> Any:
    from sklearn.base import clone

    params = dict(candidate.params)
    if estimator is None:
        model = params.get("model")
        if model is None or not hasattr(model, "fit"):
            raise TypeError(f"candidate {candidate.name!r}: expected an estimator with a fit method, "
                            f"got {type(model).__name__}")
        return model
    try:  # values cloned as scikit-learn's _fit_and_score does: the grid's objects are never changed
        return clone(estimator).set_params(**{k: clone(v, safe=False) for k, v in params.items()})
    except ValueError as exc:
        valid = sorted(estimator.get_params(deep=True)) if hasattr(estimator, "get_params") else []
        bad = [k for k in params if k not in valid]
        raise ValueError(f"param_grid: {bad or list(params)} not parameter(s) of {type(estimator).__name__} "
                         f"(candidate {candidate.name}): {exc}") from None


def _validate_params(est: Any, candidate: Any) -> None:
    from sklearn.utils._param_validation import InvalidParameterError

    nested = [est] + [v for v in est.get_params(deep=True).values() if hasattr(v, "_validate_params")] \
        if hasattr(est, "get_params") else [est]
    for e in nested:
        if hasattr(e, "_validate_params") and hasattr(e, "_parameter_constraints"):
            try:
                e._validate_params()
            except InvalidParameterError as exc:
                raise ValueError(f"param_grid: candidate {candidate.name}: {exc}") from None


def check_estimator_inputs(estimator: Any, candidates: list, X: Any, y: Any, scoring: Any = None, *,
                           x_name: str = "X", need_y: bool = True, validate_params: bool = True) -> None:
    """Refuse, before any evaluation, what would make every evaluation fail (see the module docstring).

    ``estimator`` is ``None`` for named candidates (``params["model"]`` is the estimator).
    ``x_name`` names ``X`` in the messages; ``need_y=False`` checks inputs to predict on.
    """
    from sklearn.base import is_classifier, is_regressor
    from sklearn.utils.multiclass import type_of_target

    check_scoring_arg(scoring)
    check_samples(X, y, x_name)
    models = [_configured(estimator, c) for c in candidates]
    if validate_params:
        for m, c in zip(models, candidates):
            _validate_params(m, c)
    supervised = [m for m in models if is_classifier(_last_step(m)) or is_regressor(_last_step(m))
                  or is_classifier(m) or is_regressor(m)]
    classifiers = [m for m in models if is_classifier(m)]
    if y is None:
        if supervised and need_y:
            raise ValueError(f"y: {type(supervised[0]).__name__} is supervised and needs targets y, got None")
    else:
        _check_y(y, models, classifiers, type_of_target)
    _check_X(X, models, candidates, x_name)


def _check_y(y: Any, models: list, classifiers: list, type_of_target) -> None:
    y_arr = y.to_numpy() if hasattr(y, "to_numpy") else np.asarray(y) if not hasattr(y, "tocsr") else None
    if y_arr is None:
        return
    numeric = _as_numeric(y_arr)
    if numeric is not None:
        _check_finite_targets(numeric)
    if y_arr.ndim == 2 and y_arr.shape[1] > 1:
        from sklearn.utils import get_tags

        for m in models:
            last = _last_step(m)
            if (type(last).__module__ or "").startswith("sklearn.") and not get_tags(last).target_tags.multi_output:
                raise ValueError(f"y: expected a 1-D array of targets, got shape {y_arr.shape}; "
                                 f"{type(last).__name__} does not support several outputs")
    if classifiers and y_arr.ndim == 1:
        try:
            kind = type_of_target(y_arr)
        except ValueError:
            kind = "unknown"
        if kind == "continuous":
            raise ValueError(f"y: {type(classifiers[0]).__name__} is a classifier but y holds continuous values "
                             "(class labels expected)")
        try:
            n_classes = np.unique(y_arr).size
        except TypeError:  # mixed label types: left to the estimator
            return
        if n_classes < 2:
            raise ValueError(f"y: {type(classifiers[0]).__name__} is a classifier and needs at least two classes, "
                             f"y has {n_classes} ({np.unique(y_arr).tolist()[:1]})")


def _check_X(X: Any, models: list, candidates: list, name: str = "X") -> None:
    tags = [(_plain_sklearn_tags(m), m, c) for m, c in zip(models, candidates)]
    tags = [t for t in tags if t[0] is not None]
    if not tags:
        return
    shape = getattr(X, "shape", None)
    ndim = len(shape) if shape is not None else None
    if ndim is None and isinstance(X, (list, tuple)):
        try:
            ndim = np.asarray(X).ndim
        except ValueError:  # ragged
            ndim = None
    for t, m, c in tags:
        if ndim is not None and ndim >= 3 and not t.three_d_array:
            raise ValueError(f"{name}: expected a 2-D array (n_samples, n_features), got a {ndim}-D array"
                             f"{f' of shape {tuple(shape)}' if shape is not None else ''}; "
                             f"{type(_first_step(m)).__name__} takes 2-D input")
    numeric = _as_numeric(X)
    for t, m, c in tags:
        first = type(_first_step(m)).__name__
        if ndim == 1 and numeric is not None and t.two_d_array and not (t.one_d_array or t.string):
            raise ValueError(f"{name}: expected a 2-D array (n_samples, n_features), got a 1-D array; {first} takes "
                             "2-D input (use X.reshape(-1, 1) for a single feature)")
        if ndim == 1 and numeric is None and t.two_d_array and not (t.one_d_array or t.string or t.categorical):
            example = next((v for v in np.asarray(X, dtype=object).ravel().tolist() if not _is_number(v)), None)
            raise ValueError(f"{name}: expected a 2-D array of numbers (n_samples, n_features), got a 1-D sequence "
                             f"of {type(example).__name__} (e.g. {example!r:.40}); {first} takes numbers: for text, "
                             "start a pipeline with a vectorizer (e.g. make_pipeline(TfidfVectorizer(), ...))")
        if numeric is None and ndim == 2 and not (t.string or t.categorical) and not hasattr(X, "dtypes"):
            arr = np.asarray(X)
            if arr.dtype.kind not in "OUS":  # complex and other numeric kinds: the estimator says what it thinks
                continue
            bad = next((v for v in arr.ravel().tolist() if not _is_number(v)), None)
            if not isinstance(bad, (str, bytes)):  # as float() says it (scikit-learn's own check expects this)
                raise TypeError(f"{name}: contains a {type(bad).__name__} ({bad!r:.40}); float() argument must be a "
                                f"string or a real number, not '{type(bad).__name__}', and {first} takes numbers")
            raise ValueError(f"{name}: contains non-numeric values (e.g. {bad!r}), which {first} does not accept "
                             "(it takes numbers)")
        if numeric is not None and not t.allow_nan:
            if np.isnan(numeric).any():
                raise ValueError(f"{name} contains NaN, which {first} (candidate {c.name}) does not accept; impute it "
                                 "(e.g. a pipeline starting with SimpleImputer) or use an estimator that "
                                 "handles missing values (e.g. HistGradientBoostingClassifier)")
            if np.isinf(numeric).any():
                raise ValueError(f"{name} contains infinity, which {first} (candidate {c.name}) does not accept")


def _is_number(v: Any) -> bool:
    if isinstance(v, (str, bytes)):
        return False
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True
