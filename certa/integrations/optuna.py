"""Confirm an Optuna study's best trial: re-evaluate its top trials on fresh splits until one is
the best with a stated confidence (``pip install "certa[optuna]"``).

With a noisy objective (one validation split, one seed per trial), ``study.best_trial`` is often a
lucky draw: the trial whose noise was highest, not the best parameters (optuna/optuna#4124).
:func:`confirm_best` takes the study's ``top_k`` distinct parameter sets and runs certa's adaptive
fixed-confidence selection on them (:func:`certa.bandit_select`: evaluations spent where they
decide, stopped by a delta-correct rule), and returns the choice with the confidence it reached.
By default the evaluation is paired: each row is one fresh split and seed on which every candidate
left is evaluated, and the paired rule eliminates (``docs/adaptive.md``).

:class:`PairedPruner` (from :mod:`certa.integrations.optuna_pruner`) prunes trials during the study:
each trial reports one score per shared fold or seed, and a trial stops once a repeated paired
t-test (its boundary calibrated to the number of folds) shows it worse than a complete trial, at a
stated level.
"""
from __future__ import annotations

import numbers
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..engine.selection import Selection
from ..search.bandit import bandit_select
from .optuna_pruner import PairedPruner

__all__ = ["Confirmation", "PairedPruner", "confirm_best", "top_trials"]


@dataclass
class Confirmation:
    """The trial :func:`confirm_best` chose and what it can say about it.

    Attributes
    ----------
    best_trial : optuna.trial.FrozenTrial
        The chosen trial (the first of the study's trials with the chosen parameters).
    best_params : dict
        Its parameters.
    study_best_trial : optuna.trial.FrozenTrial
        ``study.best_trial``, for comparison.
    agrees_with_study : bool
        Whether the choice has the parameters of ``study.best_trial``.
    confidence : float
        The confidence reached for the choice: with the default ``stopping="glr"``, the choice is
        within ``tolerance`` of the best of the ``top_k`` with at least this probability
        (frequentist, for Gaussian scores), whatever ended the run.
    target_confidence, tolerance : float
        What was asked for.
    target_reached : bool
        Whether ``confidence`` reached ``target_confidence`` (False when the run stopped at
        ``max_evals``: see ``guarantee``).
    guarantee : str
        The statement in words.
    n_evaluations : int
        Evaluations (fits) spent on the confirmation.
    table : pandas.DataFrame
        One row per candidate trial: ``trial``, ``study_value`` (the study's value),
        ``mean`` (mean of the confirmation's scores, in the objective's direction), ``sd``,
        ``n_evaluations``, ``chosen``, ``study_best``.
    selection : Selection
        The certa run (every evaluation).
    """

    best_trial: Any
    best_params: dict[str, Any]
    study_best_trial: Any
    agrees_with_study: bool
    confidence: float
    target_confidence: float
    tolerance: float
    target_reached: bool
    guarantee: str
    n_evaluations: int
    table: pd.DataFrame = field(repr=False)
    selection: Selection = field(repr=False)


def _optuna():
    try:
        import optuna
    except ImportError as exc:  # pragma: no cover - the extra is missing
        raise ImportError('certa.integrations.optuna needs Optuna: pip install "certa[optuna]"') from exc
    return optuna


def top_trials(study: Any, top_k: int) -> list[Any]:
    """The ``top_k`` best complete trials of ``study`` with distinct parameters, best first.

    Trials are ranked by value in the study's direction (ties: lower trial number first); a
    trial whose parameters repeat a better-ranked trial's is skipped.
    """
    optuna = _optuna()
    if not isinstance(study, optuna.Study):
        raise TypeError(f"study must be an optuna.Study, got {type(study).__name__}")
    if len(study.directions) != 1:
        raise ValueError(f"study has {len(study.directions)} objectives; confirm_best needs a single-objective study")
    if isinstance(top_k, bool) or not isinstance(top_k, numbers.Integral) or top_k < 2:
        raise ValueError(f"top_k must be an int >= 2, got {top_k!r}")
    sign = 1.0 if study.direction == optuna.study.StudyDirection.MAXIMIZE else -1.0
    done = [t for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
            if t.value is not None and np.isfinite(t.value)]
    done.sort(key=lambda t: (-sign * t.value, t.number))
    chosen, seen = [], set()
    for t in done:
        key = repr(sorted(t.params.items()))
        if key not in seen:
            seen.add(key)
            chosen.append(t)
        if len(chosen) == top_k:
            break
    if len(chosen) < 2:
        raise ValueError(f"study has {len(chosen)} complete trial(s) with distinct parameters and a finite value; "
                         "confirm_best needs at least 2")
    return chosen


def confirm_best(study: Any, evaluate: Callable, data: Any = None, *, top_k: int = 5, confidence: float = 0.95,
                 tolerance: float = 0.0, split: Callable | None = None, test_size: float = 0.2,
                 strategy: str = "auto", paired: bool | None = None, max_evals: int | str | None = "auto",
                 n_jobs: int | None = 1,
                 executor: Any = None, store: str | os.PathLike | None = None, random_state: int | None = None,
                 retries: int = 0, timeout: float | None = None, progress: bool | str = "auto",
                 callbacks: Any = None) -> Confirmation:
    """Re-evaluate a study's top trials on fresh splits and choose one with a stated confidence.

    Parameters
    ----------
    study : optuna.Study
        A single-objective study with at least two complete trials of distinct parameters.
    evaluate : callable
        ``evaluate(params, train, test, seed) -> float``: train with the trial's ``params`` on
        ``train`` (random seed ``seed``) and return the objective on ``test``, in the study's
        direction (a study that minimizes a loss gets the loss). ``train`` and ``test`` are
        what ``split`` returns, or ``data`` split at random with ``test_size`` (a tuple of
        arrays such as ``(X, y)`` is split together, into ``(X_train, y_train)`` and
        ``(X_test, y_test)``); with ``data=None`` and no ``split`` both are ``None`` and
        ``seed`` alone should drive the randomness.
    data : array, tuple of arrays, or None
    top_k : int, default 5
        How many of the study's best distinct parameter sets to confirm among.
    confidence : float, default 0.95
        Target: the choice is within ``tolerance`` of the best of the ``top_k`` with at least
        this probability (delta-correct for Gaussian scores: the paired rule by default, the GLR
        rule for the unpaired strategies).
    tolerance : float, default 0
        In the objective's units: a choice within ``tolerance`` of the best counts as right;
        near ties then stop early. A tolerance the size of the differences that matter to you
        is usually much cheaper than 0 (``docs/integrations.md``).
    strategy : str, default "auto"
        ``"auto"`` (default): **paired** evaluation, every candidate left on the same fresh split
        and seed per row, eliminated by the paired delta-correct rule (differences between
        settings of one model on one split vary much less than the scores themselves);
        ``"top_two"`` etc.: the unpaired rules of :func:`certa.bandit_select`. A fixed-budget
        strategy is refused (no confidence to state).
    paired : bool or None
        As for :func:`certa.bandit_select` (``False`` with ``"auto"``: unpaired top-two).
    split, test_size, max_evals, n_jobs, executor, store, random_state, retries, timeout, progress, callbacks
        As for :func:`certa.bandit_select` (``max_evals="auto"`` caps the run at 200 evaluations
        per candidate).

    Returns
    -------
    Confirmation

    Examples
    --------
    >>> import numpy as np, optuna
    >>> from certa.integrations.optuna import confirm_best
    >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
    >>> def noisy(x, seed):                  # the true objective is -(x - 2)^2, observed with noise
    ...     return -(x - 2) ** 2 + np.random.default_rng(seed).normal(0, 0.5)
    >>> study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=0))
    >>> study.optimize(lambda t: noisy(t.suggest_int("x", 0, 4), t.number), n_trials=20)
    >>> c = confirm_best(study, lambda p, train, test, seed: noisy(p["x"], seed), top_k=3,
    ...                  tolerance=0.5, random_state=0)
    >>> c.best_params, c.target_reached
    ({'x': 2}, True)
    """
    optuna = _optuna()
    if not callable(evaluate):
        raise TypeError("evaluate must be callable as evaluate(params, train, test, seed)")
    trials = top_trials(study, top_k)
    sign = 1.0 if study.direction == optuna.study.StudyDirection.MAXIMIZE else -1.0
    candidates = {f"trial {t.number}": dict(t.params) for t in trials}
    directed = evaluate if sign > 0 else _Negated(evaluate)
    if strategy in ("sequential_halving", "equal"):
        raise ValueError(f"confirm_best states a confidence: give a fixed-confidence strategy, not {strategy!r}")
    sel = bandit_select(directed, candidates, data, split=split, test_size=test_size, strategy=strategy,
                        paired=paired, confidence=confidence, tolerance=tolerance, max_evals=max_evals, n_jobs=n_jobs,
                        executor=executor, store=store, random_state=random_state, retries=retries,
                        timeout=timeout, progress=progress, callbacks=callbacks)
    res = sel.result
    chosen = trials[sel.best_index]
    study_best = study.best_trial
    summ = sel.summary()
    table = pd.DataFrame({"trial": [t.number for t in trials], "study_value": [t.value for t in trials],
                          "mean": sign * summ["mean"].to_numpy(), "sd": summ["sd"].to_numpy(),
                          "n_evaluations": summ["n_evaluations"].to_numpy(),
                          "chosen": [i == sel.best_index for i in range(len(trials))],
                          "study_best": [t.params == study_best.params for t in trials]})
    return Confirmation(best_trial=chosen, best_params=dict(chosen.params), study_best_trial=study_best,
                        agrees_with_study=chosen.params == study_best.params, confidence=float(res["confidence"]),
                        target_confidence=float(res["target_confidence"]), tolerance=float(res["tolerance"]),
                        target_reached=bool(res["target_reached"]), guarantee=str(res["guarantee"]),
                        n_evaluations=sel.n_evaluations, table=table, selection=sel)


class _Negated:
    """``-evaluate(...)``: certa maximizes, a study may minimize. A class, not a lambda, so it
    pickles for worker processes and fingerprints by the wrapped function."""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn

    def __call__(self, params: Any, train: Any, test: Any, seed: int) -> float:
        return -float(self.fn(params, train, test, seed))
