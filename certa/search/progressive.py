"""ProgressiveSearchCV: wrapped progressive sampling (Paramsearch / PSearch) over a parameter grid."""
from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, MetaEstimatorMixin
from sklearn.metrics import check_scoring

from ..analysis.comparison import comparison_table
from ..engine.candidates import candidates_from_grid
from ..engine.evaluators import EstimatorEvaluator, per_example_scoring
from ..engine.runner import resolve_seed, run
from ..strategies._subset_plan import SubsetPlan
from ..strategies.progressive import ProgressiveSampling
from ._common import (
    DelegateToBestMixin,
    check_estimator_arg,
    check_fit_failures,
    check_n_samples,
    check_single_metric,
    keep_init_params,
    param_columns,
    refit_best,
    wants_stratified,
)


class ProgressiveSearchCV(DelegateToBestMixin, MetaEstimatorMixin, BaseEstimator):
    """Search a parameter grid by wrapped progressive sampling (Paramsearch or PSearch).

    The data are split once into a training part (``train_fraction``) and an
    evaluation part, stratified by class for classifiers. Round ``r`` trains
    every surviving setting on the first ``size_r`` examples of a fixed
    stratified ordering of the training part and scores it on
    ``eval_fraction * size_r`` examples of the evaluation part (nested,
    stratified); the worse settings are dropped (``survival``, PSearch's
    ``floor``) and the next, larger size follows, until one setting is left or
    the training part is used up. For a classifier no round trains on fewer
    examples than the smallest stratified subset that holds every class of the
    training part: smaller sizes of a schedule are raised to it, and a list of
    int sizes starting below it is refused naming it. See ``docs/progressive.md``.

    Parameters
    ----------
    estimator : estimator object
    param_grid : dict or list of dicts
    schedule : "paramsearch", "psearch" or list of fractions / sizes, default="psearch"
    survival : "auto", "race", "mean", "median", float, callable or None, default="auto"
        Which settings survive a round. ``"race"``: keep every setting that a
        paired test on the round's evaluation examples cannot show worse than
        the round's leader (exact McNemar for accuracy, Bonferroni over the
        settings compared), keep the ``baseline`` to the end; needs a
        per-example score (accuracy, or ``"neg_mean_absolute_error"`` /
        ``"neg_mean_squared_error"``). ``"mean"`` (or ``None``): the published
        schedules' own rule, which reproduces Paramsearch and PSearch exactly.
        ``"auto"`` (default), per schedule since issue 24, when the scoring is
        a mean over examples: ``"psearch"`` runs its published ``"mean"`` rule
        (as accurate as the race on issue 24's benchmark, six draw/learner
        cells, and cheaper), ``"paramsearch"`` and a list of sizes the race
        (never worse than the default in 6 of 6 cells, the mean rule in 5 of 6);
        a named ``baseline`` always runs the race; any other scoring runs
        ``"mean"``. ``survival_`` says which ran; see ``docs/progressive.md``.
    floor : float, None or "auto"
        Minimum fraction of a round's settings that survive, added back in whole
        score bins (``"auto"``: 0.2 for PSearch and for the race, none otherwise).
    confidence : float, default=0.95
        Race: confidence level of its tests; also the level of the intervals
        in ``comparison_`` and ``vs_baseline_``.
    cap : "budget", float, int, None or "auto"
        Race: ``"budget"`` (``"auto"``) keeps every setting the test cannot drop
        unless the schedule's projected cost (sum over rounds of settings x
        training size) would exceed ``budget`` times the cost of the halving
        race; only then are the lowest-scoring cut. A float or int: at most this
        fraction (or number) of a round's settings survive, besides the baseline
        (``cap=0.5`` is the rule of the runs before issue #14's rerun).
    budget : float or "auto"
        Race with ``cap="budget"``: budget in units of the halving race's cost
        (at least 1; ``"auto"``: 2).
    baseline : "auto", dict or None
        Race: a setting kept to the final round, where it stays the choice unless
        another setting is shown better than it. ``"auto"``: the setting of
        ``param_grid`` equal to the estimator's own parameter values (its
        default), if there is one; a dict names the setting. Not available with
        the published rules.
    confirm_folds : int, None or "auto"
        Race with a baseline: the final round chooses the challenger (its best
        other setting); challenger and baseline are then scored by
        ``confirm_folds``-fold cross-validation over the whole training part
        (same folds, every training example predicted once by each) and the
        challenger is the choice only if a one-sided paired test there (exact
        McNemar for accuracy) shows it better at ``1 - confidence``. ``"auto"``:
        5. ``None``: the final round's examples decide (Bonferroni over the
        settings compared), as before issue #14's rerun.
    baseline_rule : "gate", "evidence" or "auto", default="auto"
        Race with a baseline: ``"gate"`` keeps the baseline unless the confirmation
        test shows it beaten; ``"evidence"`` chooses what the evidence favours (the
        challenger if its confirmation mean is higher) and reports the test against
        the baseline as a claim (``vs_baseline_["beat_baseline"]``). ``"auto"``:
        ``"evidence"`` (the gate paid on neither schedule in issue 24's benchmark).
    bin_width : float or None
        Score-bin width for the floor (``None``: one bin per distinct score).
    train_fraction : float, default=0.8
    eval_fraction : float or None, default=0.2
        Evaluation-set size as a fraction of the round's training size
        (``None``: the whole evaluation part every round).
    scoring, n_jobs, random_state, refit, store, executor, retries, timeout, progress, cache_transformers, callbacks
        As for :class:`~certa.JKFoldSearchCV`; ``refit`` refits on all of ``X``.
        ``cache_transformers=True`` fits a pipeline's steps before the last
        once per round (per worker and per setting of those steps) instead of
        once per setting: all settings of a round share its subset.

    Attributes
    ----------
    survival_ : str or callable
        The survival rule that ran (``"auto"`` resolved).
    best_params_, best_score_, best_index_, best_estimator_, refit_time_, scorer_, random_state_
        As for ``GridSearchCV``; ``best_score_`` is the chosen setting's score in
        the last round it was evaluated in.
    comparison_ : pandas.DataFrame
        The choice against every other setting of the deciding round (the last
        round in which it was scored next to others), paired over that round's
        evaluation examples, Holm-adjusted (:func:`certa.comparison_table`).
        Its tests compare the fitted models on those examples: the ``test``
        column says that the p-values do not cover the learner's seed or
        training sample (they over-reject with seed-dependent learners); the
        calibrated claim is ``vs_baseline_`` (corrected k-fold t test).
    vs_baseline_ : dict or None
        Race with a baseline: ``baseline`` and ``choice`` (params),
        ``beat_baseline``, ``challenger`` (params of the setting compared with
        the baseline: the choice, or the best other setting if the baseline was
        kept), ``difference`` (its final-round score minus the baseline's),
        ``ci_low``, ``ci_high`` (paired t interval at ``confidence``),
        ``pvalue`` (one-sided) and ``pvalue_adjusted`` (Bonferroni; equal to
        ``pvalue`` for the confirmation's single test), ``n_examples``,
        ``round``, ``evidence`` (which examples decided) and, after a
        confirmation, ``final_round`` (the challenger against the baseline on the
        final round's examples, uncorrected: the evidence it was chosen on).
    rounds_ : pandas.DataFrame
        One row per (round, setting): round, size, eval_size, candidate, params,
        score, survived, added_by_floor, fit_time, duration.
    round_summary_ : pandas.DataFrame
        One row per round: size, eval_size, settings evaluated and surviving,
        best score, summed evaluation time.
    cv_results_ : dict
        Per candidate: params, ``param_*``, ``mean_test_score`` (score in its last
        round), ``rank_test_score`` (later round first, then score),
        ``last_round``, ``n_resources`` (its last training size) and
        ``round<r>_test_score`` (NaN where not evaluated).
    n_train_, sizes_ : int, list of int
        Size of the training part and the schedule's sizes.
    finalists_, race_, guarantee_ : list of int, Selection, str (with ``race=True``; else None)
        ``race=True`` (issue 33): the schedule's finalists (the settings of its last round that
        held two or more) race at full size, on fresh random splits of ``train_fraction``, by the
        paired delta-correct rule at ``confidence``; the choice is the race's and ``guarantee_``
        states it among the finalists (``docs/screen.md``). ``tolerance="auto"``: the best for a
        budget, as a screened ``BanditSearchCV`` (one full-size evaluation per setting of the grid, at
        least 10 rows per finalist; a race that ends there states the tolerance it certified); a
        number: the best within it. With ``store``, the race has its own store, ``-race`` before the
        suffix.
    selection_ : Selection

    Notes
    -----
    scikit-learn compatibility (against ``HalvingGridSearchCV``, the closest
    scikit-learn search). Supported: fit parameters (``fit(X, y,
    sample_weight=w)``, indexed with each round's subset and passed to the
    refit), ``predict``, ``predict_proba``, ``predict_log_proba``,
    ``decision_function``, ``score_samples``, ``transform``,
    ``inverse_transform``, ``score``, ``classes_``, ``n_features_in_``,
    ``feature_names_in_``, ``refit_time_``. Not supported, by design: several
    metrics (survival between rounds is decided by one score), ``cv`` and
    ``groups`` (every round uses nested stratified subsets of one
    training/evaluation split, which is what makes rounds comparable),
    randomized settings (the wrapped-progressive-sampling papers search a
    grid), ``error_score``, ``return_train_score`` and ``verbose`` (failures
    are recorded in ``selection_``; ``progress=True`` shows a bar), and
    ``HalvingGridSearchCV``'s ``factor`` / ``min_resources`` (the size
    schedule is ``schedule``).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = load_digits(return_X_y=True)
    >>> search = ProgressiveSearchCV(DecisionTreeClassifier(random_state=0),
    ...                              {"min_samples_leaf": [1, 5, 25, 100]},
    ...                              schedule=[0.25, 0.5, 1.0], random_state=0).fit(X, y)
    >>> bool(search.rounds_["round"].max() <= 2)
    True
    """

    def __init__(self, estimator: Any, param_grid: Any, *, schedule: Any = "psearch", survival: Any = "auto",
                 floor: float | str | None = "auto", bin_width: float | None = None, confidence: float = 0.95,
                 cap: float | str | None = "auto", baseline: Any = "auto", budget: float | str | None = "auto",
                 confirm_folds: int | str | None = "auto", baseline_rule: str = "auto", train_fraction: float = 0.8,
                 eval_fraction: float | None = 0.2, scoring: Any = None, n_jobs: int | None = None,
                 random_state: int | None = None, refit: bool = True, store: str | os.PathLike | None = None,
                 executor: Any = None, retries: int = 0, timeout: float | None = None,
                 progress: bool | str = "auto", cache_transformers: bool = False, callbacks: Any = None,
                 race: bool = False, tolerance: float | str = "auto") -> None:
        keep_init_params(self, locals())

    def fit(self, X: Any, y: Any = None, **fit_params: Any) -> ProgressiveSearchCV:
        """Run the rounds, choose, and refit the choice on all data.

        ``fit_params`` (e.g. ``sample_weight``) go to the estimator's ``fit``,
        indexed with each round's training subset, and to the refit.
        """
        if "groups" in fit_params:
            raise ValueError("ProgressiveSearchCV does not take groups: its rounds train on nested stratified "
                             "subsets of one training part")
        check_estimator_arg(self.estimator)
        check_single_metric(self.scoring, "ProgressiveSearchCV")
        if not isinstance(self.race, (bool, np.bool_)):
            raise TypeError(f"race must be True or False, got {self.race!r}")
        candidates = candidates_from_grid(self.param_grid)
        n = check_n_samples(X, y)
        self.random_state_ = resolve_seed(self.random_state)
        stratified = wants_stratified(self.estimator, y)
        plan = SubsetPlan(self.random_state_, self.train_fraction, self.eval_fraction, stratified)
        self.n_train_ = plan.n_train(n)
        per_example = y is not None and per_example_scoring(self.estimator, self.scoring) is not None
        survival = self.survival
        if survival is None:
            survival = "mean"
        elif isinstance(survival, str) and survival == "auto":
            rule = AUTO_SURVIVAL.get(self.schedule, "race") if isinstance(self.schedule, str) else "race"
            if isinstance(self.baseline, dict):  # a named baseline exists only in the race
                rule = "race"
            survival = "race" if per_example and rule == "race" else "mean"
        race = isinstance(survival, str) and survival == "race"
        if race and not per_example:
            raise ValueError("survival='race' compares settings example by example: it needs scoring='accuracy' "
                             "(or None for a classifier), 'neg_mean_absolute_error' or 'neg_mean_squared_error', "
                             f"and labels y; got scoring={self.scoring!r}")
        baseline = _baseline_index(self.baseline, self.estimator, candidates, race, survival)
        strategy = ProgressiveSampling(self.n_train_, self.schedule, survival, self.floor, self.bin_width,
                                       confidence=self.confidence, cap=self.cap if race or self.cap != "auto" else None,
                                       baseline=baseline, budget=self.budget if race or self.budget != "auto" else None,
                                       confirm_folds=self.confirm_folds if baseline is not None or
                                       self.confirm_folds != "auto" else None,
                                       baseline_rule=_baseline_rule(self.baseline_rule, self.schedule, baseline),
                                       min_size=plan.smallest_size(y if stratified else None, n))
        self.survival_ = survival
        self.sizes_ = list(strategy.sizes)
        evaluator = EstimatorEvaluator(self.estimator, X, y, plan, self.scoring,
                                       cache_transformers=self.cache_transformers, fit_params=fit_params,
                                       per_example=per_example)
        self.scorer_ = check_scoring(self.estimator, scoring=self.scoring)
        selection = run(strategy, evaluator, candidates, random_state=self.random_state_, n_jobs=self.n_jobs,
                        executor=self.executor, store=self.store, retries=self.retries, timeout=self.timeout,
                        progress=self.progress, callbacks=self.callbacks)
        self.selection_ = selection
        check_fit_failures(selection)
        res = selection.result
        self.best_index_ = int(res["best"])
        self.finalists_ = self.race_ = self.guarantee_ = None
        if self.race:   # the paired race at full size confirms the schedule's finalists (issue 33)
            from ._screen import race_finalists

            self.race_, self.finalists_, self.guarantee_ = race_finalists(
                selection, self.estimator, X, y, candidates, confidence=self.confidence, tolerance=self.tolerance,
                scoring=self.scoring, fit_params=fit_params, seed=self.random_state_, n_train=self.n_train_,
                stratified=stratified, store=self.store,
                run_kw=dict(n_jobs=self.n_jobs, executor=self.executor, retries=self.retries, timeout=self.timeout,
                            progress=self.progress))
            self.best_index_ = self.finalists_[self.race_.best_index]
        self.best_params_ = dict(candidates[self.best_index_].params)
        self.best_score_ = float(res["estimates"][self.best_index_] if self.race_ is None
                                 else self.race_.result["estimates"][self.race_.best_index])
        self.rounds_, self.round_summary_ = _round_tables(selection, candidates, plan, n)
        self.comparison_ = comparison_table(selection, confidence=self.confidence)
        self.vs_baseline_ = _vs_baseline(res.get("baseline"), candidates)
        self.cv_results_ = _cv_results(selection, candidates)
        if self.refit:
            self.best_estimator_, self.refit_time_ = refit_best(self.estimator, self.best_params_, X, y, fit_params)
        return self


#: Default survival rule (for a scoring that is a mean over examples) and baseline rule of the race per
#: schedule, chosen on issue 24's benchmark (benchmarks/progressive.py rule-choice, docs/progressive.md).
AUTO_SURVIVAL = {"paramsearch": "race", "psearch": "mean"}
AUTO_BASELINE_RULE = {"paramsearch": "evidence", "psearch": "evidence"}


def _baseline_rule(rule: Any, schedule: Any, baseline: int | None) -> str:
    """``baseline_rule`` with ``"auto"`` resolved for ``schedule`` (``"gate"`` without a baseline)."""
    if not isinstance(rule, str) or rule not in ("auto", "gate", "evidence"):
        raise ValueError(f"baseline_rule must be 'auto', 'gate' or 'evidence', got {rule!r}")
    if rule == "auto":  # a user schedule: "evidence", as for both named schedules (the gate paid on neither)
        if baseline is None:
            return "gate"
        return AUTO_BASELINE_RULE.get(schedule, "evidence") if isinstance(schedule, str) else "evidence"
    if rule == "evidence" and baseline is None:
        raise ValueError("baseline_rule='evidence' belongs to survival='race' with a baseline")
    return rule


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # e.g. arrays
        return a is b


def _baseline_index(baseline: Any, estimator: Any, candidates, race: bool, survival: Any) -> int | None:
    """Index of the baseline setting in ``candidates`` (``None``: no baseline)."""
    if baseline is None:
        return None
    if isinstance(baseline, str):
        if baseline != "auto":
            raise ValueError(f"baseline must be 'auto', a dict of parameters or None, got {baseline!r}")
        if not race:
            return None  # the published rules keep their own survival
        own = estimator.get_params(deep=True)
        for c in candidates:
            if all(k in own and _same(own[k], v) for k, v in c.params.items()):
                return c.index
        return None
    if not isinstance(baseline, dict):
        raise TypeError(f"baseline must be 'auto', a dict of parameters or None, got {type(baseline).__name__}")
    if not race:
        raise ValueError("baseline belongs to survival='race'; the published rules keep their own survival "
                         f"(this search runs survival={survival!r}; 'auto' runs the race only for a scoring that is "
                         "a mean over examples)")
    for c in candidates:
        if c.params.keys() == baseline.keys() and all(_same(c.params[k], v) for k, v in baseline.items()):
            return c.index
    raise ValueError(f"baseline {baseline!r} is not a setting of param_grid")


def _vs_baseline(verdict: dict[str, Any] | None, candidates) -> dict[str, Any] | None:
    if verdict is None:
        return None
    out = dict(verdict)
    for k in ("baseline", "choice", "challenger"):
        i = out.get(k, -1)
        out[k] = dict(candidates[i].params) if i is not None and i >= 0 else None
    return out


def _round_tables(selection, candidates, plan: SubsetPlan, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    ev = selection.evaluations
    fit_time = {}
    if len(ev) and "fit_time" in ev.columns:
        fit_time = {(row.index[0], row.candidate): row.fit_time for row in ev.itertuples()}
    rows, summary = [], []
    for rnd in selection.result["rounds"]:
        r, size = rnd["round"], rnd["size"]
        for c, s, keep, added in zip(rnd["candidates"], rnd["scores"], rnd["survived"], rnd["added_by_floor"]):
            rows.append({"round": r, "size": size, "eval_size": plan.eval_size(size, n), "candidate": c,
                         "params": candidates[c].name, "score": s, "survived": keep, "added_by_floor": added,
                         "fit_time": fit_time.get((r, c), np.nan)})
        finite = [s for s in rnd["scores"] if np.isfinite(s)]
        summary.append({"round": r, "size": size, "eval_size": plan.eval_size(size, n),
                        "n_evaluated": rnd["n_evaluated"], "n_survived": rnd["n_survived"],
                        "n_added_by_floor": int(sum(rnd["added_by_floor"])),
                        "best_score": max(finite) if finite else np.nan, "time": rnd["time"]})
    return pd.DataFrame(rows), pd.DataFrame(summary)


def _cv_results(selection, candidates) -> dict[str, Any]:
    res = selection.result
    params = [dict(c.params) for c in candidates]
    out: dict[str, Any] = {"params": params}
    out.update(param_columns(params))
    out["mean_test_score"] = np.asarray(res["estimates"], dtype=float)
    out["rank_test_score"] = np.asarray(res["rank"], dtype=np.int32)
    out["last_round"] = np.asarray(res["last_round"], dtype=int)
    sizes = res["sizes"]
    out["n_resources"] = np.array([sizes[r] if r >= 0 else 0 for r in res["last_round"]], dtype=int)
    for r in range(len(sizes)):
        out[f"round{r}_test_score"] = res["scores"][r].copy()
    return out
