"""JKFoldSearchCV and RandomizedJKFoldSearchCV: J repeated K-fold cross-validation over a grid or a sample."""
from __future__ import annotations

import os
from typing import Any

import numpy as np
from sklearn.model_selection import ParameterGrid, ParameterSampler

from ._common import keep_init_params
from ._sklearn import EngineSearchCV

_COMMON_PARAMS_DOC = """
    n_splits : int, default=5
        K, the number of folds per partition (at least 2), when ``cv`` is None.
    n_repeats : int, default=3
        J, the number of random partitions (at least 1), when ``cv`` is None or an int.
    scoring : str, callable, list, tuple, dict or None
        As for ``GridSearchCV``: one metric (a name, a scorer, or a callable
        ``scorer(estimator, X, y)``), or several (a list or tuple of names, a
        dict of name -> scorer, or a callable returning a dict); every metric
        gets ``mean_test_<name>``, ``rank_test_<name>`` and
        ``split<i>_test_<name>`` in ``cv_results_``. ``None`` uses the
        estimator's ``score``.
    n_jobs : int or None
        Local worker processes; ignored when ``executor`` is given.
    random_state : int or None
        Root seed of the run: the J partitions (and, for the randomized
        search, the sampled settings) derive from it. ``None`` draws one (kept
        in ``random_state_``).
    refit : bool, str or callable, default=True
        As for ``GridSearchCV``: refit the best setting on all data as
        ``best_estimator_``; with several metrics, the metric's name that
        chooses the best (or ``False``), or a callable
        ``refit(cv_results_) -> best_index_``.
    cv : None, int, splitter or iterable, default=None
        ``None``: J = ``n_repeats`` random K-fold partitions with K =
        ``n_splits`` (``RepeatedStratifiedKFold`` for classifiers,
        ``RepeatedKFold`` otherwise). An int: K, with J = ``n_repeats``
        partitions as for ``None``. A splitter: its splits, grouped into
        partitions by its ``n_repeats`` (``RepeatedKFold``,
        ``RepeatedStratifiedKFold``: J of them) or as one partition
        (``GroupKFold``, ``KFold``, ``LeaveOneGroupOut``, ...); ``groups`` passed
        to ``fit`` go to its ``split``. A list of partitions, each a list of
        ``(train, test)`` tuples (e.g. J ``GroupKFold(shuffle=True)`` runs with
        different seeds): J = the number of partitions. Any other iterable of
        ``(train, test)`` pairs: one partition. ``n_repeats`` is not used with
        a splitter or a list.
    verbose : int, default=0
        As for ``GridSearchCV``: > 0 prints the number of fits, > 1 each fit's
        score and time, > 2 also the fold, > 9 also the candidate.
    pre_dispatch : int or str, default="2*n_jobs"
        How many fits may be handed to the workers at once (an int, or an
        expression in ``n_jobs``); bounds the memory held by waiting fits.
    error_score : "raise" or float, default=np.nan
        The score of a failed fit (a ``FitFailedWarning`` says how many failed;
        if every fit fails a ``ValueError`` says "All the N fits failed"). As
        in ``GridSearchCV``, every fit runs first: this is the one certa front
        that does not stop early when everything fails. ``"raise"`` raises the
        failed fit's own exception at the first failed fit, without running the
        rest of the grid.
    return_train_score : bool, default=False
        Also score every fit on its training part (``mean_train_<name>``, ...).
    store : str, path or None
        SQLite file keeping every finished evaluation; a run with the same
        store, data, candidates and seed resumes where it stopped.
    executor : concurrent.futures.Executor, dask.distributed.Client, "ray" or None
    retries : int, default=0
        Extra attempts for a fit that fails.
    timeout : float or None
        Seconds allowed per fit.
    progress : bool or "auto", default="auto"
        Show progress on standard error: a bar on a terminal, a line in a Jupyter notebook,
        plain lines in a log (``True`` only); ``"auto"``: on a terminal or in a notebook.
    callbacks : Callback, function or list of them, optional
        Told about every evaluation as the run goes (e.g.
        :class:`certa.integrations.mlflow.MLflowLogger`); see :func:`certa.run`.
"""

_COMMON_ATTRS_DOC = """
    cv_results_ : dict of numpy (masked) ndarrays
        ``GridSearchCV``'s keys and meanings: ``params``, ``param_<name>``
        (masked arrays), ``split<i>_test_<metric>`` for i < J*K (partition j,
        fold k is split ``j*K + k``), ``mean_test_<metric>``,
        ``std_test_<metric>``, ``rank_test_<metric>``, the same for ``train``
        with ``return_train_score``, and ``mean_fit_time``, ``std_fit_time``,
        ``mean_score_time``, ``std_score_time``. ``pandas.DataFrame(cv_results_)``
        works.
    best_estimator_, best_score_, best_params_, best_index_, scorer_, n_splits_, refit_time_,
    multimetric_, classes_, n_features_in_, feature_names_in_
        As for ``GridSearchCV`` (``n_splits_`` is J*K; ``best_score_`` is absent
        when ``refit`` is a callable; ``best_*`` are absent for several metrics
        with ``refit=False``).
    random_state_ : int
        The root seed used.
    stability_ : StabilityReport
        Choice per partition, SD of the chosen parameter and of the tuned
        score across partitions, J' < J disagreement, ties (for the primary
        metric: the ``refit`` metric, or the first).
    selection_ : Selection
        The engine's result: every evaluation as a DataFrame, failures.

    Notes
    -----
    Built on scikit-learn's ``BaseSearchCV``: prediction methods
    (``predict``, ``predict_proba``, ``predict_log_proba``,
    ``decision_function``, ``score_samples``, ``transform``,
    ``inverse_transform``, ``score``) delegate to ``best_estimator_`` exactly as
    in ``GridSearchCV``, as do metadata routing (``fit(X, y, sample_weight=...)``,
    ``groups``) and the estimator tags. What certa adds: every fit goes
    through its engine (store and resume, any executor, retries, timeouts,
    failures kept in ``selection_``), and ``stability_``. Not supported:
    scikit-learn's fit callbacks (``sklearn.callback``), which need the fits
    in the caller's process; and array-API dispatch (fits run on NumPy data
    in worker processes).
"""


class JKFoldSearchCV(EngineSearchCV):
    __doc__ = """Exhaustive search over a parameter grid by J repeated K-fold cross-validation.

    Every candidate is scored on the same J random K-fold partitions (those
    of ``RepeatedStratifiedKFold`` for classifiers, ``RepeatedKFold``
    otherwise, with the same ``random_state``) and the one with the highest
    mean over the J*K folds is chosen. Scores therefore equal those of
    ``GridSearchCV(cv=RepeatedStratifiedKFold(n_splits=K, n_repeats=J,
    random_state=s))``; in addition certa keeps every evaluation in a store
    (resumable), runs on any executor, records failures, and reports how
    stable the choice is (``stability_``). With ``n_repeats=1`` and the same
    ``cv`` it is a drop-in ``GridSearchCV`` (see ``docs/sklearn-parity.md``).

    Parameters
    ----------
    estimator : estimator object
        Cloned for every fit.
    param_grid : dict or list of dicts
        As for ``GridSearchCV``: parameter names mapped to lists of values.""" + _COMMON_PARAMS_DOC + """    cache_transformers : bool, default=False
        For a pipeline whose grid varies only its last step (or whose earlier
        steps repeat across candidates), fit the earlier steps once per fold
        and worker instead of once per fold and candidate. The scores are
        identical when those steps are deterministic (a TF-IDF vectorizer is).
        Only with one metric, no fit parameters and ``return_train_score=False``.

    Attributes
    ----------""" + _COMMON_ATTRS_DOC + """
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
                 refit: Any = True, cv: Any = None, verbose: int = 0, pre_dispatch: Any = "2*n_jobs",
                 error_score: Any = np.nan, return_train_score: bool = False,
                 store: str | os.PathLike | None = None, executor: Any = None,
                 retries: int = 0, timeout: float | None = None, progress: bool | str = "auto",
                 cache_transformers: bool = False, callbacks: Any = None) -> None:
        keep_init_params(self, locals())

    def _candidate_params(self, root_seed: int) -> list[dict[str, Any]]:
        # scikit-learn's rules and messages; as in GridSearchCV, {} is one candidate: the estimator's defaults
        settings = [dict(p) for p in ParameterGrid(self.param_grid)]
        if not settings:
            raise ValueError("param_grid is empty: give at least one setting")
        return settings


class RandomizedJKFoldSearchCV(EngineSearchCV):
    __doc__ = """Randomized search over parameter distributions by J repeated K-fold cross-validation.

    As :class:`JKFoldSearchCV`, over ``n_iter`` settings sampled from
    ``param_distributions`` as ``RandomizedSearchCV`` samples them
    (``ParameterSampler``: lists are sampled uniformly, scipy.stats
    distributions by their ``rvs``; without replacement when every value is
    a list). The sample is seeded from the run's root seed, so the same
    ``random_state`` gives the same settings and the same partitions.

    Parameters
    ----------
    estimator : estimator object
    param_distributions : dict or list of dicts
        Parameter names mapped to distributions (with an ``rvs`` method) or
        lists of values; a list of dicts samples a dict first.
    n_iter : int, default=10
        Number of settings sampled.""" + _COMMON_PARAMS_DOC + """
    Attributes
    ----------""" + _COMMON_ATTRS_DOC + """
    Examples
    --------
    >>> from scipy.stats import loguniform
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> from certa import RandomizedJKFoldSearchCV
    >>> X, y = load_iris(return_X_y=True)
    >>> search = RandomizedJKFoldSearchCV(LogisticRegression(max_iter=500), {"C": loguniform(1e-2, 1e2)},
    ...                                   n_iter=4, n_splits=3, n_repeats=2, random_state=0).fit(X, y)
    >>> len(search.cv_results_["params"])
    4
    """

    def __init__(self, estimator: Any, param_distributions: Any, *, n_iter: int = 10, n_splits: int = 5,
                 n_repeats: int = 3, scoring: Any = None, n_jobs: int | None = None,
                 random_state: int | None = None, refit: Any = True, cv: Any = None, verbose: int = 0,
                 pre_dispatch: Any = "2*n_jobs", error_score: Any = np.nan, return_train_score: bool = False,
                 store: str | os.PathLike | None = None, executor: Any = None, retries: int = 0,
                 timeout: float | None = None, progress: bool | str = "auto", callbacks: Any = None) -> None:
        keep_init_params(self, locals())

    cache_transformers = False

    def _candidate_params(self, root_seed: int) -> list[dict[str, Any]]:
        return sample_candidate_params(self.param_distributions, self.n_iter, root_seed)


def sample_candidate_params(param_distributions: Any, n_iter: Any, root_seed: int) -> list[dict[str, Any]]:
    """``n_iter`` settings from ``param_distributions``, as ``RandomizedSearchCV`` draws them.

    The sampler is seeded with the run's root seed itself, so that
    ``random_state=s`` samples the same settings as
    ``RandomizedSearchCV(random_state=s)``.
    """
    if isinstance(n_iter, bool) or not isinstance(n_iter, (int, np.integer)):
        raise TypeError(f"n_iter must be an int, got {type(n_iter).__name__}")
    if n_iter < 1:
        raise ValueError(f"n_iter must be at least 1, got {n_iter}")
    return [dict(p) for p in ParameterSampler(param_distributions, int(n_iter), random_state=int(root_seed))]
