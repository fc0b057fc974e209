"""Adaptive selection fronts: BanditSearchCV (scikit-learn style) and bandit_select (any model)."""
from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from joblib import hash as joblib_hash
from sklearn.base import BaseEstimator, MetaEstimatorMixin
from sklearn.metrics import check_scoring

from ..engine.candidates import as_candidates, candidates_from_grid, named_candidates
from ..engine.evaluators import EstimatorEvaluator, Evaluator, split_data
from ..engine.fingerprint import stable_hash
from ..engine.plans import RandomSplitPlan
from ..engine.runner import MAX_FAILURES, resolve_seed, run
from ..engine.selection import Selection
from ..engine.strategy import Strategy
from ..engine.validation import check_array_like
from ..strategies import (
    BatchThompson,
    EqualAllocation,
    PairedElimination,
    SequentialHalving,
    TopTwoThompson,
    UniformUntilConfident,
)
from ..strategies.thompson import DEFAULT_BETA, DEFAULT_STOPPING, FIESTA_SETTINGS
from ._budget import resolve_max_evals, warn_if_target_missed, with_near_tie_monitor
from ._common import (
    DelegateToBestMixin,
    check_estimator_arg,
    check_fit_failures,
    check_n_samples,
    check_single_metric,
    keep_init_params,
    rank_scores,
    refit_best,
    wants_stratified,
)
from ._screen import n_train_of, screen_or_race, why_no_screen

STRATEGIES = ("auto", "paired", "top_two", "fiesta", "batch", "sequential_halving", "uniform", "equal")


def resolve_paired(strategy: str | Strategy, paired: bool | None, unpaired_options: bool = False) -> bool:
    """Whether a run is paired.

    ``paired=None`` (the default) pairs ``"paired"`` and the default ``"auto"`` (unless an option
    of the unpaired rules, ``stopping``, ``beta`` or ``transform``, is given: ``unpaired_options``),
    and leaves the other strategies unpaired."""
    if paired is not None and not isinstance(paired, (bool, np.bool_)):
        raise TypeError(f"paired must be True, False or None, got {paired!r}")
    if isinstance(strategy, Strategy):
        own = bool(getattr(strategy, "paired", False))
        if paired is not None and bool(paired) != own:
            raise ValueError(f"paired={paired!r} contradicts the given strategy {type(strategy).__name__}, "
                             f"which is {'paired' if own else 'unpaired'}")
        return own
    if paired is None:
        return strategy == "paired" or (strategy == "auto" and not unpaired_options)
    if paired and strategy not in ("auto", "paired"):
        raise ValueError(f"paired=True needs the paired strategy (strategy='auto' or 'paired'); strategy="
                         f"{strategy!r} draws a fresh split per evaluation and its stopping rule assumes "
                         "independent candidates (give paired=False or None)")
    if not paired and strategy == "paired":
        raise ValueError("strategy='paired' is paired evaluation; with paired=False use strategy='auto' "
                         "(top-two) or another strategy")
    return bool(paired)


def _fixed_confidence_cap(strategy: str, confidence: float | None, max_evals: int | str | None,
                          n_candidates: int | None) -> int | None:
    """The evaluation cap of a fixed-confidence strategy, once its confidence is known to be given."""
    if isinstance(max_evals, str) and n_candidates is None:
        raise ValueError("max_evals='auto' needs n_candidates (the cap is 200 evaluations per candidate)")
    max_evals = resolve_max_evals(max_evals, n_candidates or 0)
    if confidence is None:
        raise ValueError(f"strategy={strategy!r} is a fixed-confidence method: give confidence, e.g. 0.95")
    return max_evals


#: The strategies that take ``budget`` (a fixed number of evaluations); the others stop at their confidence.
FIXED_BUDGET = ("sequential_halving", "equal")


def make_strategy(strategy: str | Strategy, *, confidence: float | None, budget: int | None,
                  stopping: str | None = None, n_workers: int | None = None, max_evals: int | str | None = None,
                  transform: str | None = None, beta: float | str | None = None,
                  tolerance: float = 0.0, n_candidates: int | None = None, paired: bool | None = None,
                  max_rows: int | None = None) -> Strategy:
    """Build a strategy from its name and the usual arguments (or pass a Strategy through).

    ``strategy="auto"`` (the fronts' default) is ``"paired"`` unless ``paired=False`` or an option
    of the unpaired rules (``stopping``, ``beta``, ``transform``) is given, then ``"top_two"``.
    ``"paired"`` (:class:`certa.strategies.PairedElimination`): every survivor on every row (one
    split and seed per row), eliminated by the paired delta-correct rule.

    ``stopping=None`` and ``beta=None`` take the defaults: ``"glr"`` (delta-correct) and
    ``"ids"`` (information-directed top-two). ``strategy="fiesta"`` is FIESTA's exact
    algorithm: top-two Thompson sampling with ``beta=0.5`` and the Bayesian stopping rule
    (``stopping`` and ``beta``, if given, must then be those values).
    ``beta`` (a probability or ``"ids"``) is the top-two rule's, for ``"top_two"`` and ``"batch"``.
    ``tolerance`` (epsilon-best identification) applies to the fixed-confidence strategies.
    ``max_evals="auto"`` caps a fixed-confidence run at 200 evaluations per candidate (``n_candidates``
    is then required; :func:`certa.search._budget.default_max_evals`); ``None``: no cap.
    ``max_rows`` (the number of splits of a ``cv`` splitter) needs the paired strategy: the run
    ends when its rows run out (``stop_reason="out of splits"``).
    """
    if budget is not None and not (isinstance(strategy, str) and strategy in FIXED_BUDGET):
        what = f"strategy={strategy!r}" if isinstance(strategy, str) else "a Strategy object (it holds its own settings)"
        raise ValueError(f"budget={budget!r} applies to strategy='sequential_halving' or 'equal' (a fixed number of "
                         f"evaluations); {what} does not use it: give max_evals to cap a fixed-confidence run")
    if isinstance(strategy, Strategy):
        resolve_paired(strategy, paired)
        if max_rows is not None and getattr(strategy, "max_rows", None) != max_rows:
            raise ValueError(f"cv gives {max_rows} rows: a given strategy must be PairedElimination("
                             f"..., max_rows={max_rows})")
        return strategy
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {list(STRATEGIES)} or a certa Strategy, got {strategy!r}")
    if resolve_paired(strategy, paired, any(v is not None for v in (stopping, beta, transform))):
        max_evals = _fixed_confidence_cap("paired", confidence, max_evals, n_candidates)
        for name, value in (("stopping", stopping), ("beta", beta), ("transform", transform)):
            if value is not None and not (name == "stopping" and value == "paired"):
                raise ValueError(f"{name}={value!r} applies to the unpaired strategies; the paired strategy "
                                 f"stops by its own rule (give paired=False to use {name})")
        return PairedElimination(confidence, tolerance=tolerance, max_evals=max_evals, max_rows=max_rows)
    if max_rows is not None:
        raise ValueError(f"cv (a splitter's splits as rows) needs the paired strategy (strategy='auto' or "
                         f"'paired'); strategy={strategy!r} with paired=False draws a fresh split per evaluation")
    if strategy == "auto":
        strategy = "top_two"
    if strategy in FIXED_BUDGET:
        if budget is None:
            raise ValueError(f"strategy={strategy!r} is a fixed-budget method: give budget (number of evaluations)")
        if tolerance:
            raise ValueError(f"tolerance applies to the fixed-confidence strategies, not strategy={strategy!r}")
        return SequentialHalving(budget) if strategy == "sequential_halving" else EqualAllocation(budget)
    max_evals = _fixed_confidence_cap(strategy, confidence, max_evals, n_candidates)
    if strategy == "fiesta":
        for name, value in (("stopping", stopping), ("beta", beta)):
            if value is not None and value != FIESTA_SETTINGS[name]:
                raise ValueError(f"strategy='fiesta' is FIESTA's exact algorithm, with {name}="
                                 f"{FIESTA_SETTINGS[name]!r}; got {name}={value!r} (use strategy='top_two' "
                                 f"to change {name})")
        return TopTwoThompson(confidence, FIESTA_SETTINGS["beta"], stopping=FIESTA_SETTINGS["stopping"],
                              transform=transform, max_evals=max_evals, tolerance=tolerance)
    stopping = DEFAULT_STOPPING if stopping is None else stopping
    beta = DEFAULT_BETA if beta is None else beta
    if strategy == "top_two":
        return TopTwoThompson(confidence, beta, stopping=stopping, transform=transform, max_evals=max_evals,
                              tolerance=tolerance)
    if strategy == "batch":
        return BatchThompson(confidence, 4 if n_workers is None else n_workers, beta=beta, stopping=stopping,
                             transform=transform, max_evals=max_evals, tolerance=tolerance)
    return UniformUntilConfident(confidence, stopping=stopping, transform=transform, max_evals=max_evals,
                                 n_workers=1 if n_workers is None else n_workers, tolerance=tolerance)


def _results_table(selection: Selection) -> dict[str, Any]:
    summ = selection.summary()
    res = selection.result
    out: dict[str, Any] = {"params": [dict(c.params) for c in selection.candidates],
                           "name": [c.name for c in selection.candidates],
                           "mean_test_score": summ["mean"].to_numpy(),
                           "std_test_score": summ["sd"].to_numpy(),
                           "n_evaluations": summ["n_evaluations"].to_numpy(),
                           "n_failed": summ["n_failed"].to_numpy()}
    if "p_best" in res:
        out["p_best"] = np.asarray(res["p_best"])
    if res.get("finalists") is not None or res.get("rungs"):   # a screen: each mean at the size it was last seen
        out["mean_test_score"] = np.asarray(res["estimates"], dtype=float)
        out["n_resources"] = np.where(res["size_of_estimate"] < 0, res["n_train"] or -1, res["size_of_estimate"])
        out["finalist"] = np.isin(np.arange(len(out["name"])), res.get("finalists") or [])
    out["rank_test_score"] = rank_scores(out["mean_test_score"])
    return out


class BanditSearchCV(DelegateToBestMixin, MetaEstimatorMixin, BaseEstimator):
    """Adaptive selection among settings or models, to a stated confidence; paired by default.

    Parameters
    ----------
    estimator : estimator or None
        The estimator whose ``param_grid`` is searched; ``None`` when
        ``candidates`` names the models themselves.
    param_grid : dict or list of dicts, optional
    candidates : dict of name -> estimator, optional
        Named models to choose between (instead of ``estimator`` + ``param_grid``).
    strategy : {"auto", "paired", "top_two", "fiesta", "batch", "sequential_halving", "uniform", "equal"} \
or Strategy, default "auto"
        ``"auto"``: ``"paired"`` (after a screen on training subsets when ``screen`` says so)
        unless ``paired=False`` or ``stopping``/``beta`` is given, then ``"top_two"``;
        ``"paired"``: every surviving candidate on each row (one split and seed per row, shared
        by the candidates), eliminated by the paired delta-correct rule, to a fixed ``confidence``
        (a row's evaluations run in parallel on the workers);
        ``"top_two"``: top-two Thompson sampling to a fixed ``confidence``, every evaluation on
        its own split and seed;
        ``"fiesta"``: FIESTA's exact algorithm (top-two with ``beta=0.5`` and the
        Bayesian stopping rule);
        ``"batch"``: asynchronous Thompson sampling for ``n_workers`` workers;
        ``"sequential_halving"``: a fixed ``budget``; ``"uniform"``/``"equal"``:
        the non-adaptive baselines.
    confidence : float, default 0.95
    budget : int or None
        The number of evaluations of ``strategy="sequential_halving"`` or ``"equal"`` (required
        there); any other strategy refuses it (cap a fixed-confidence run with ``max_evals``).
    paired : bool or None, default None
        Paired evaluation (common random numbers): the k-th row's split and seed are the same
        for every candidate, so scores compare row by row. ``None``: paired for ``"auto"`` (and
        ``"paired"``), unpaired for the other strategies, whose rules assume independent scores.
        On FIESTA's TDSA replay the paired default needs about a third of the evaluations of
        unpaired top-two at the same confidence (``docs/adaptive.md``).
    stopping : {"glr", "bayes", "gk16"} or None, default None (``"glr"``)
        ``"glr"``: delta-correct for Gaussian scores (a wrong choice with probability
        at most ``1 - confidence``); ``"bayes"`` (FIESTA's): stop when P(best) >=
        confidence, cheaper, no frequentist guarantee (``docs/adaptive.md``); ``"gk16"``:
        the GLR with Garivier & Kaufmann's heuristic threshold, opt-in, its confidence
        calibrated by simulation, not proven. Giving ``stopping`` selects the unpaired top-two.
    beta : float in (0, 1), "ids" or None, default None (``"ids"``)
        The top-two rule's probability of evaluating the leader (``"top_two"``, ``"batch"``);
        ``"ids"`` is information-directed selection, 0.5 is FIESTA's.
    test_size : float or int, default 0.2
        Size of each fresh random test split (stratified for classifiers); refused with ``cv``
        (other than the default), whose splits decide the test part.
    cv : splitter, int, iterable of (train, test) or None, default None
        ``None``: every row is a fresh random split (``test_size``). Otherwise row ``r`` of the
        paired run is the r-th split of ``cv.split(X, y, groups)``, shared by every candidate,
        so elimination is fold by fold: any scikit-learn splitter (``RepeatedStratifiedKFold``,
        ``GroupKFold``, ``StratifiedGroupKFold``, ``TimeSeriesSplit``, ``PredefinedSplit``, ...),
        an int K (``StratifiedKFold``/``KFold`` as in ``GridSearchCV``) or a list of
        ``(train, test)`` index pairs. The model seed of each row still derives from the root
        seed. When the splits run out before the target confidence, the run ends
        (``stop_reason="out of splits"``, the choice with the confidence reached, and a
        :class:`certa.TargetNotReachedWarning`): give enough rows, e.g.
        ``RepeatedStratifiedKFold(n_splits=5, n_repeats=100)`` (unused rows cost no fits; near ties
        need many rows, ``docs/user_guide/adaptive.rst``). A splitter that shuffles without
        a ``random_state`` gets one from ``random_state_``. Needs the paired strategy. What the
        stated confidence means with K-fold rows (folds of one partition share training data) is
        measured in ``docs/adaptive.md``, "Splitters as rows".
    n_workers : int or None
        Evaluations in flight for ``"batch"`` (default 4).
    max_evals : int, "auto" or None, default "auto"
        A cap on the number of evaluations of a fixed-confidence run; ``"auto"``: 200 per
        candidate (``docs/adaptive.md``, "Default cap"; a screened run: see ``tolerance``),
        ``None``: no cap. A run that reaches
        the cap before its target confidence warns (:class:`certa.TargetNotReachedWarning`),
        and one whose first evaluations show a near tie that would cost more than the cap
        warns early (:class:`certa.NearTieWarning`) with a tolerance that would fit.
    tolerance : float or "auto", default "auto"
        Epsilon-best identification: stop once the chosen candidate is within
        ``tolerance`` (in score units) of the best with the stated confidence. ``"auto"``: 0.
        A screened run with ``tolerance="auto"`` and ``max_evals="auto"`` asks for the best for a
        budget: its race runs for the best until it has spent one full-size evaluation per
        candidate of the grid (at least 10 rows per finalist), and a race that ends there
        (``stop_reason="budget"``) states the tolerance it has certified at the confidence, e.g.
        "within 0.0012 of the best of the 10 finalists with confidence 0.95"
        (``certified_tolerance_``; ``docs/screen.md``, "What the default asks").
    screen : bool or "auto", default "auto"
        Screen, then race (:class:`certa.strategies.ScreenThenRace`): every candidate on small
        training subsets (1/27, 1/9, 1/3 of the training part for 64 candidates), the paired rule
        eliminating on each rung, the finalists raced at full size; the stated confidence is the
        race's, among the finalists. ``"auto"``: screen when there are at least 16 candidates and
        the screen's most cost is below the plain race's least (from 58 candidates, and at 48-54, by their
        count; with fewer, when an evaluation's time, measured on the screen's first rows, grows
        fast enough with the training size: ``docs/screen.md``); ``True`` forces it, ``False``
        forbids it. Not with ``cv`` or an unpaired strategy. After ``fit``:
        ``finalists_``, ``rungs_``, ``screen_`` (the decision and its evidence).
    scoring, n_jobs, random_state, refit, store, executor, retries, timeout, progress
        As for :class:`certa.JKFoldSearchCV`; ``scoring`` is one metric.
    param_distributions : dict or list of dicts, optional
        Instead of ``param_grid``: distributions (with ``rvs``) or lists to
        sample ``n_iter`` settings from, as ``RandomizedSearchCV`` does; the
        sample is seeded with the run's root seed (``random_state_``).
    n_iter : int, default 10
        Number of settings sampled from ``param_distributions``.
    callbacks : Callback, function or list of them, optional
        Told about every evaluation as the run goes (e.g.
        :class:`certa.integrations.mlflow.MLflowLogger`); see :func:`certa.run`.

    Notes
    -----
    scikit-learn compatibility. Supported as in ``GridSearchCV``: fit
    parameters (``fit(X, y, sample_weight=w)``: split with each evaluation's
    training part, and passed to the refit), randomized settings
    (``param_distributions``, ``n_iter``), ``predict``, ``predict_proba``,
    ``predict_log_proba``, ``decision_function``, ``score_samples``,
    ``transform``, ``inverse_transform``, ``score``, ``classes_``,
    ``n_features_in_``, ``feature_names_in_``, ``refit_time_``, ``cv`` and
    ``groups`` (``fit(X, y, groups=g)``, passed to the splitter; the paired
    strategy). Not supported,
    by design: several metrics (an adaptive strategy allocates evaluations by
    one score; choose it with ``scoring``), ``error_score`` (a failed
    evaluation is recorded in ``selection_`` and counts against the candidate
    as the strategy decides), ``return_train_score`` and ``verbose``
    (``progress=True`` shows a bar on a terminal, a line in a notebook, plain lines in a log).

    Attributes
    ----------
    best_index_, best_params_, best_score_, best_estimator_, cv_results_ (with ``p_best``
    and ``n_evaluations`` per candidate), confidence_ (the confidence reached for the
    chosen candidate, whatever ended the run: for ``stopping="glr"`` the frequentist
    ``1 - delta`` at which the rule would have stopped, for ``"bayes"`` the posterior
    probability), guarantee_ (the same in words, e.g. "within 0.005 of the best with
    confidence 0.95 (...)"; when the run ended below its target, followed by e.g. "; target
    confidence 0.9 not reached (stopped at max_evals=200)", and a
    :class:`certa.TargetNotReachedWarning` is issued), target_reached_ (whether the target
    confidence was reached; ``None`` for a fixed budget), certified_tolerance_ (a paired run's:
    the smallest tolerance within which the choice is shown to be of the best at the target
    confidence, 0 when it is shown to be the best; what a screened run that ended at its race's
    budget claims, while ``confidence_`` is then the lower confidence reached for the best
    itself; ``None`` for other strategies), selection_ (every evaluation), random_state_.
    best_name_ is the chosen candidate's name; with ``candidates=`` (named models)
    ``best_params_`` is ``{"name": ..., "model": ...}``.

    Interrupted ``fit`` (Ctrl-C): :class:`certa.RunInterrupted` is raised; its ``selection``
    is the anytime answer (recommendation and confidence reached) from every finished
    evaluation, which are also kept in ``store`` when one is given (fit again to resume).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from certa import BanditSearchCV
    >>> X, y = load_iris(return_X_y=True)
    >>> s = BanditSearchCV(candidates={"tree": DecisionTreeClassifier(max_depth=1),
    ...                                "logreg": LogisticRegression(max_iter=500)},
    ...                    confidence=0.9, random_state=0).fit(X, y)
    >>> s.best_params_["name"], s.best_params_["model"].__class__.__name__
    ('logreg', 'LogisticRegression')
    """

    def __init__(self, estimator: Any = None, param_grid: Any = None, *, candidates: Mapping[str, Any] | None = None,
                 strategy: str | Strategy = "auto", confidence: float = 0.95, budget: int | None = None,
                 paired: bool | None = None, stopping: str | None = None, beta: float | str | None = None,
                 test_size: float = 0.2, cv: Any = None,
                 n_workers: int | None = None, max_evals: int | str | None = "auto", tolerance: float | str = "auto",
                 scoring: Any = None, screen: bool | str = "auto",
                 n_jobs: int | None = None,
                 random_state: int | None = None, refit: bool = True, store: str | os.PathLike | None = None,
                 executor: Any = None, retries: int = 0, timeout: float | None = None, progress: bool | str = "auto",
                 param_distributions: Any = None, n_iter: int = 10, callbacks: Any = None) -> None:
        keep_init_params(self, locals())

    def _candidates(self, root_seed: int = 0):
        if self.candidates is not None:
            if self.estimator is not None or self.param_grid is not None:
                raise ValueError("give either candidates (named models) or estimator + param_grid, not both")
            cands = named_candidates(self.candidates)
            for c in cands:
                check_estimator_arg(c.params["model"])
            return cands
        if self.estimator is None:
            raise ValueError("give estimator + param_grid, or candidates (a dict of named models)")
        check_estimator_arg(self.estimator)
        if self.param_distributions is not None:
            if self.param_grid is not None:
                raise ValueError("give either param_grid or param_distributions, not both")
            from ..engine.candidates import Candidate, _format_params
            from .jkfold import sample_candidate_params

            return [Candidate(i, _format_params(p), p)
                    for i, p in enumerate(sample_candidate_params(self.param_distributions, self.n_iter, root_seed))]
        if self.param_grid is None:
            raise ValueError("param_grid is required with estimator")
        return candidates_from_grid(self.param_grid)

    def fit(self, X: Any, y: Any = None, groups: Any = None, **fit_params: Any) -> BanditSearchCV:
        """Run the selection (with ``cv``: on its splits of ``X``, ``y``, ``groups``) and refit the choice."""
        if groups is not None and self.cv is None:
            raise ValueError("groups needs cv, a splitter that uses them (e.g. GroupKFold or StratifiedGroupKFold): "
                             "without cv every row is a fresh random split that ignores groups")
        check_single_metric(self.scoring, "BanditSearchCV")
        self.random_state_ = resolve_seed(self.random_state)
        cands = self._candidates(self.random_state_)
        if len(cands) < 2:
            raise ValueError(f"adaptive selection needs at least two candidates, got {len(cands)}")
        check_n_samples(X, y)
        if isinstance(self.test_size, bool) or not (
                (isinstance(self.test_size, float) and 0 < self.test_size < 1)
                or (isinstance(self.test_size, (int, np.integer)) and self.test_size >= 1)):
            raise ValueError(f"test_size must be a fraction in (0, 1) or a number of samples >= 1, got {self.test_size!r}")
        if self.cv is not None and self.test_size != 0.2:
            raise ValueError(f"test_size={self.test_size!r} sizes the fresh random splits; with cv the splitter's "
                             "splits are the rows and decide the test part: give one of test_size and cv")
        example = self.estimator if self.estimator is not None else cands[0].params["model"]
        stratified = wants_stratified(example, y)
        if self.cv is None:
            if stratified:
                counts = np.unique(np.asarray(y), return_counts=True)[1]
                if counts.min() < 2:   # as GridSearchCV's StratifiedKFold: warn and go on (issue 33's lemma grid)
                    warnings.warn(f"y: {int((counts < 2).sum())} of the {counts.size} classes have only 1 member, so "
                                  "the random splits are not stratified (a stratified split needs at least 2 "
                                  "members per class); pass cv= for splits of your choice", UserWarning, stacklevel=2)
                    stratified = False
            plan: Any = RandomSplitPlan(self.test_size, stratified)
        else:
            from sklearn.base import is_classifier

            from ._splitters import splitter_rows

            plan = splitter_rows(self.cv, X, y, groups, classifier=is_classifier(example),
                                 root_seed=self.random_state_)
        evaluator = EstimatorEvaluator(self.estimator, X, y, plan, self.scoring, fit_params=fit_params)
        strategy, self.screen_, evaluator = screen_or_race(
            self.screen, self.strategy, cands, evaluator, self.random_state_,
            n_train=n_train_of(check_n_samples(X, y), self.test_size) if self.cv is None else None,
            why_not=why_no_screen(self.strategy, self.paired, self.stopping, self.beta, self.cv, "cv"),
            confidence=self.confidence, tolerance=self.tolerance, max_evals=self.max_evals,
            store=self.store,
            race=lambda tolerance: make_strategy(
                self.strategy, confidence=self.confidence, budget=self.budget, stopping=self.stopping,
                n_workers=self.n_workers, max_evals=self.max_evals, beta=self.beta, tolerance=tolerance,
                n_candidates=len(cands), paired=self.paired, max_rows=None if self.cv is None else plan.n_rows))
        sel = run(strategy, evaluator, cands, random_state=self.random_state_, n_jobs=self.n_jobs,
                  executor=self.executor, store=self.store, retries=self.retries, timeout=self.timeout,
                  progress=self.progress, callbacks=with_near_tie_monitor(strategy, self.callbacks))
        self.selection_ = sel
        check_fit_failures(sel)
        self.cv_results_ = _results_table(sel)
        self.finalists_ = sel.result.get("finalists")
        self.rungs_ = sel.result.get("rungs")
        self.best_index_ = sel.best_index
        self.best_params_ = dict(cands[self.best_index_].params)
        self.best_name_ = cands[self.best_index_].name
        if self.candidates is not None:  # named models: the name with the model
            self.best_params_ = {"name": self.best_name_, **self.best_params_}
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        self.confidence_ = float(sel.result["confidence"]) if "confidence" in sel.result else None
        self.guarantee_ = sel.result.get("guarantee")
        missed = warn_if_target_missed(sel, "BanditSearchCV")
        self.target_reached_ = sel.result.get("target_reached") if "target_confidence" in sel.result else None
        cert = sel.result.get("certified_tolerance")
        self.certified_tolerance_ = None if cert is None else float(cert)
        if missed is not None:
            self.guarantee_ = f"{self.guarantee_}; {missed}"
        self.scorer_ = check_scoring(example, scoring=self.scoring)
        if self.refit:
            if self.estimator is None:
                self.best_estimator_, self.refit_time_ = refit_best(self.best_params_["model"], {}, X, y, fit_params)
            else:
                self.best_estimator_, self.refit_time_ = refit_best(self.estimator, self.best_params_, X, y,
                                                                    fit_params)
        return self


class _UserFunctionEvaluator(Evaluator):
    """Calls ``evaluate(candidate, train, test, seed)`` on a split of the user's data."""

    def __init__(self, evaluate: Callable, data: Any, split: Callable | None, test_size: float,
                 named: bool, rows: Any = None) -> None:
        self.evaluate_fn = evaluate
        self.data = data
        self.split = split
        self.test_size = test_size
        self.named = named
        self.rows = rows   # a RowSplitsPlan: split= was a scikit-learn splitter
        self.plan = RandomSplitPlan(test_size, stratified=False)   # one plan: its splits are kept per process

    def evaluate(self, params: dict[str, Any], draw) -> Any:
        candidate = params["model"] if self.named else params
        if self.rows is not None:
            train, test = split_data(self.data, self.rows, draw)
            return self.evaluate_fn(candidate, train, test, draw.seed)
        if self.data is None and self.split is None:
            return self.evaluate_fn(candidate, None, None, draw.seed)
        if self.split is not None:
            train, test = self.split(self.data, draw.seed)
        else:
            train, test = split_data(self.data, self.plan, draw)
        return self.evaluate_fn(candidate, train, test, draw.seed)

    def fingerprint_parts(self) -> dict[str, str]:
        # the functions' code, closures, defaults and referenced globals (not only their names)
        parts = {"code": stable_hash((self.evaluate_fn, self.split)), "data": stable_hash(self.data),
                 "plan": stable_hash((self.test_size, self.named))}
        if self.rows is not None:
            parts.update(code=stable_hash(self.evaluate_fn), plan=stable_hash((self.rows.spec(), self.named)))
        return parts

    def fingerprint(self) -> str:
        return joblib_hash(sorted(self.fingerprint_parts().items()))


def _check_arity(fn: Callable, name: str, expected: str, n: int) -> None:
    """``fn`` must accept ``n`` positional arguments (checked from its signature, before any call)."""
    import inspect

    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # some builtins have no signature: nothing to check
        return
    try:
        sig.bind(*([None] * n))
    except TypeError:
        raise TypeError(f"{name} must be callable as {expected}, with {n} positional arguments; "
                        f"its signature is {name}{sig}") from None


def _split_signature(split_result: Any) -> str:
    return joblib_hash(split_result)


def bandit_select(evaluate: Callable, candidates: Any, data: Any = None, *, split: Any = None,
                  groups: Any = None, test_size: float = 0.2, strategy: str | Strategy = "auto", confidence: float | None = 0.95,
                  budget: int | None = None, paired: bool | None = None, stopping: str | None = None, beta: float | str | None = None,
                  n_workers: int | None = None,
                  max_evals: int | str | None = "auto", tolerance: float | str = "auto", screen: bool | str = "auto",
                  n_jobs: int | None = 1,
                  executor: Any = None,
                  store: str | os.PathLike | None = None, random_state: int | None = None, retries: int = 0,
                  timeout: float | None = None, progress: bool | str = "auto",
                  max_failures: int | None = MAX_FAILURES, callbacks: Any = None) -> Selection:
    """Adaptive selection for any model (PyTorch, spaCy, ...), FIESTA style.

    ``evaluate(candidate, train, test, seed) -> float`` trains ``candidate`` on
    ``train`` with random seed ``seed`` and returns its score on ``test``.
    ``candidates`` is a dict ``{name: model}`` (the model is passed to
    ``evaluate``) or a param grid / list of param dicts (the dict is passed).
    The data are split afresh for every row of evaluations (for every evaluation with an unpaired
    strategy): by ``split(data, seed) -> (train, test)`` if given, otherwise at random with ``test_size`` (``data``
    may be a tuple of arrays, split together). With ``data=(X, y)``, ``train`` and
    ``test`` are ``(X, y)`` tuples (``X_train, y_train = train``); with one array they
    are its two parts; without ``data`` (and ``split``) both are ``None``. With ``paired`` (the
    default strategy's, see :class:`BanditSearchCV`) every candidate evaluated on a row gets the
    same ``seed``, so ``split`` gives them the same split. A candidate whose evaluations fail
    ``max_failures`` times in a row is dropped (``Selection.dropped``); see :func:`certa.run`.
    ``callbacks`` are told about every evaluation as the run goes (see :func:`certa.run`).

    ``split`` may instead be a scikit-learn splitter (``RepeatedStratifiedKFold``, ``GroupKFold``,
    ``TimeSeriesSplit``, ...), an int K or a list of ``(train, test)`` index pairs, as
    :class:`BanditSearchCV`'s ``cv``: row ``r`` of the paired run is then the r-th split of
    ``split.split(X, y, groups)`` (``X, y = data`` for a tuple, else ``X = data``; ``groups`` is
    passed to the splitter; an int K stratifies on class labels ``y``), the same for every
    candidate, and the run ends when the splits run out (``stop_reason="out of splits"``).

    ``tolerance`` (fixed confidence): stop once the choice is within ``tolerance`` of the
    best with the stated confidence (``"auto"``: 0; a screened run with ``max_evals="auto"`` too:
    the best for a budget, as :class:`BanditSearchCV`). ``screen`` (``"auto"``, True, False): screen,
    then race, as :class:`BanditSearchCV`; ``evaluate`` then gets the rung's training subset of
    ``data`` as ``train`` (needs ``data``, no ``split``); ``result["screen"]`` says what decided. ``max_evals="auto"`` (default) caps a fixed-confidence run at
    200 evaluations per candidate (``None``: no cap); a near tie that would cost more warns early
    (:class:`certa.NearTieWarning`), and a run that ends below its target warns
    (:class:`certa.TargetNotReachedWarning`; ``result["target_reached"]`` is False).
    ``stopping`` and ``beta`` default to the delta-correct ``"glr"`` rule and ``"ids"``; ``strategy="fiesta"`` is FIESTA's exact algorithm (see
    :class:`BanditSearchCV`).

    On Ctrl-C, :class:`certa.RunInterrupted` carries the anytime ``Selection`` (``exc.selection``);
    with ``store`` the finished evaluations are kept there too (call again to resume).

    Returns
    -------
    Selection
        ``best``, ``result["confidence"]`` (reached for the choice, whatever ended the run)
        and ``result["guarantee"]`` (in words), ``result["p_best"]``, evaluations per
        candidate, every evaluation.

    Examples
    --------
    >>> import numpy as np
    >>> def evaluate(mean, train, test, seed):
    ...     return mean + np.random.default_rng(seed).normal(0, 0.05)
    >>> sel = bandit_select(evaluate, {"a": 0.6, "b": 0.8, "c": 0.7}, confidence=0.95, random_state=0)
    >>> sel.best.name
    'b'
    """
    if not callable(evaluate):
        raise TypeError(f"evaluate must be callable as evaluate(candidate, train, test, seed), got {type(evaluate).__name__}")
    splitter = split is not None and not callable(split)
    if splitter and not (hasattr(split, "split") or isinstance(split, (int, np.integer, list, tuple))):
        raise TypeError(f"split must be callable as split(data, seed) -> (train, test), a scikit-learn splitter, an "
                        f"int or a list of (train, test) pairs, got {type(split).__name__}")
    if groups is not None and not splitter:
        raise ValueError("groups needs split to be a scikit-learn splitter that uses them (e.g. GroupKFold)")
    if splitter and data is None:
        raise ValueError("split is a splitter: give data, the examples it splits (an array or a tuple (X, y))")
    _check_arity(evaluate, "evaluate", "evaluate(candidate, train, test, seed)", 4)
    if split is not None and not splitter:
        _check_arity(split, "split", "split(data, seed) -> (train, test)", 2)
    if (split is None or splitter) and data is not None:
        parts = data if isinstance(data, tuple) else (data,)
        for i, part in enumerate(parts):
            check_array_like(part, "data" if len(parts) == 1 else f"data[{i}]")
        lengths = {len(p) if not hasattr(p, "shape") else p.shape[0] for p in parts}
        if len(lengths) > 1:
            raise ValueError(f"data: the arrays of the tuple have different lengths {sorted(lengths)}; "
                             "they are split together, so they need one row per example")
        from ..engine.plans import RandomSplitPlan as _Plan

        if not splitter:
            _Plan(test_size, stratified=False).check(None, lengths.pop())
    if isinstance(candidates, (Mapping, list, tuple)) and len(candidates) == 0:
        raise ValueError("candidates is empty: give a dict {name: model} or a param grid with at least two settings")
    named = isinstance(candidates, Mapping) and not all(isinstance(v, (list, tuple)) for v in candidates.values())
    cands = named_candidates(candidates) if named else as_candidates(candidates)
    if len(cands) < 2:
        raise ValueError(f"adaptive selection needs at least two candidates, got {len(cands)}")
    seed = resolve_seed(random_state)
    rows = None
    if splitter:
        from sklearn.utils.multiclass import type_of_target

        from ._splitters import splitter_rows

        X_, y_ = (data[0], data[1]) if isinstance(data, tuple) and len(data) > 1 else (data, None)
        classifier = y_ is not None and type_of_target(y_) in ("binary", "multiclass")
        rows = splitter_rows(split, X_, y_, groups, classifier=classifier, root_seed=seed, arg="split")
    elif split is not None:
        a, b = split(data, 1), split(data, 2)
        if _split_signature(a) == _split_signature(b):
            raise ValueError("split returns the same split for different seeds: every evaluation must use a fresh "
                             "split, so split(data, seed) must depend on seed")
    evaluator = _UserFunctionEvaluator(evaluate, data, None if splitter else split, test_size, named, rows)
    why_not = why_no_screen(strategy, paired, stopping, beta, split, "split")
    if why_not is None and data is None:
        why_not = "no data: the screen trains on subsets of data"
    strat, decision, evaluator = screen_or_race(
        screen, strategy, cands, evaluator, seed, why_not=why_not, confidence=confidence, tolerance=tolerance,
        max_evals=max_evals, store=store,
        n_train=None if why_not else n_train_of(len(data[0]) if isinstance(data, tuple) else len(data), test_size),
        race=lambda tol: make_strategy(strategy, confidence=confidence, budget=budget, stopping=stopping,
                                       n_workers=n_workers, max_evals=max_evals, beta=beta, tolerance=tol,
                                       n_candidates=len(cands), paired=paired,
                                       max_rows=None if rows is None else rows.n_rows))
    sel = run(strat, evaluator, cands, random_state=seed, n_jobs=n_jobs, executor=executor, store=store,
              retries=retries, timeout=timeout, progress=progress, max_failures=max_failures,
              callbacks=with_near_tie_monitor(strat, callbacks))
    warn_if_target_missed(sel, "bandit_select")
    sel.result["screen"] = dict(decision)
    return sel


def belief_frame(selection: Selection) -> pd.DataFrame:
    """P(best) of every candidate after each evaluation (rows) of a fixed-confidence run."""
    from ..reporting.loading import belief_history

    return pd.DataFrame(belief_history(selection), columns=[c.name for c in selection.candidates])


def plot_belief(selection: Selection, ax: Any = None):
    """FIESTA's Figure 2: P(best) of each candidate as evaluations accumulate (see :func:`certa.reporting.plot.belief`).

    Returns the ``Axes``; the matplotlib backend and settings are left as they are.
    """
    from ..reporting.plot import belief

    return belief(selection, ax=ax)
