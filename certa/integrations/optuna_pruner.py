"""An Optuna pruner with a stated confidence: a repeated paired t-test, trial against trial.

Each trial reports one score per shared row with ``trial.report(score, step=row_id)``: the row is a
fold, a split or a seed, the same for every trial (fold 3 of trial 7 is fold 3 of trial 2). Two
trials then compare through the differences of their scores on the rows both reported, as certa's
paired selection does (:mod:`certa.strategies._paired`), and :class:`PairedPruner` stops a trial
once those differences show it worse than some complete trial by more than ``tolerance``.

What the level means across a whole study
-----------------------------------------
Write ``mu_t`` for trial ``t``'s mean score over the row distribution (its expected score on a
fresh row), ``delta = 1 - confidence``, ``eps = tolerance``. The *comparators* of trial ``t`` are
the ``m_t`` trials that were complete when ``t`` started (from the study's stored start and
completion times, so they are fixed before ``t``'s first report, whatever the order of trials in
parallel runs; trials without stored times: the complete earlier-numbered ones). For each
comparator ``b``, ``p_bt`` is the p-value of the one-sided paired t-test of ``mean(x_b - x_t) <= eps``
on the ``n`` rows both reported (the difference variance floored at 0.01 times the mean of the
two trials' score variances, as in certa's paired rule), and ``N_b`` is the number of rows ``b``
reported. Trial ``t`` is pruned as soon as, for some comparator,

    p_bt <= a(N_b, delta_t / m_t)   and   n >= n0(N_b)

where ``a(N, alpha)`` is the repeated t-test's nominal level (:mod:`certa.integrations._repeated_t`):
under i.i.d. Gaussian differences with mean ``eps``, some of the looks ``n = n0..N`` passes it
with probability ``alpha`` (a Pocock-type group-sequential boundary, calibrated by a seeded
simulation of the pivotal t-statistics; 0.0072 for ``N = 30``, ``alpha = 0.05``). The looks start
at ``n0 = 3`` common rows when ``N >= 4`` (else 2): the look at 2 rows, a t-test with one degree
of freedom, spent alpha and pruned almost nothing.

* ``family="trial"`` (default): ``delta_t = delta``, so **each trial within the tolerance of the
  best is wrongly pruned with probability at most delta** (measured, below);
  ``family="study"``: ``delta_t = delta * 6 / (pi^2 (t + 1)^2)`` (these sum to ``delta`` over all
  trials), so **with probability at least 1 - delta no trial of the whole study is wrongly
  pruned**.

"Wrongly pruned" means pruned although ``mu_t >= mu_b - eps`` for every trial ``b``: the best
trial, and any trial within ``eps`` of it, is such a trial.

What is proven and what is measured. Fix ``t`` with ``mu_t >= mu_b - eps`` for every ``b``. Rows
are i.i.d. draws (fresh splits or seeds) and the trials' parameters are fixed before their scores
are seen, so for each ``b`` the differences ``x_b - x_t`` on the rows in the order ``t`` reports
them are i.i.d. with mean ``mu_b - mu_t <= eps``; if they are Gaussian, the pair's boundary is
passed at some look with probability at most ``delta_t / m_t`` (a mean below ``eps``, the floor,
and fewer looks only lower it), since ``t`` and ``b`` share at most ``N_b`` rows. A union over
``m_t`` comparators fixed in advance gives ``delta_t``. Here the comparators are the trials that
*completed*, a selection on their own scores (a trial completes if it was not shown worse than the
trials before it) that the argument does not cover: a comparator that completed by luck looks
better than it is on the very rows ``t`` is compared on. The union over comparators leaves slack
where they are close to each other (their tests share ``t``'s scores), and the per-trial rates
measured in simulated studies (``docs/integrations.md``: every trial tied with the best, or ties
among narrowly worse trials that complete or not by their noise, at confidence 0.8, 0.9 and 0.95)
stay below ``delta``. A stronger selection fails such a test: weighting the comparators by the rank of
their mean scores (certa's e-process mixture with weight ``6 / (pi^2 r^2)`` on the ``r``-th best)
pruned a trial tied with 30 complete trials in 28 % of 300 simulated studies at ``delta = 0.2``
and 8.3 % at ``delta = 0.05`` (equal weights: 10 % and 2.7 %), and so does weighting them by how
recently they completed (weights ``1 / r^2`` on the ``r``-th latest: a trial tied with seven others
pruned at a rate of 0.223 at ``delta = 0.2``, 8,000 simulated trials), so the comparators are
chosen by no score beyond completion and share the level equally. With ``family="study"`` a union over the trials gives the study-wide
statement.

So with ``family="trial"`` and a sampler whose choices do not look at the scores
(``GridSampler``, ``RandomSampler``, ``QMCSampler``, ``BruteForceSampler``), **the best trial is
pruned with probability at most delta** in every setting measured, whatever the number of trials.
An adaptive sampler (TPE, CMA-ES, GP) chooses the next parameters from earlier trials' scores on
the very rows the new trial will be compared on, rows that are the folds of one K-fold partition
are not independent draws (they share training data), and bounded scores are not Gaussian:
``docs/integrations.md`` gives the rates measured with TPE, on real K-fold fits and on replayed
scores.

The pruner keeps no state: every decision is computed from the study's stored trials (their
intermediate values and times), so it works with ``n_jobs`` threads and with processes sharing an
RDB storage, whatever the order of trials and reports.
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np

from ._repeated_t import first_look, nominal_level, one_sided_p

__all__ = ["PairedPruner"]


def _optuna():
    try:
        import optuna
    except ImportError as exc:  # pragma: no cover - the extra is missing
        raise ImportError('certa.integrations.optuna needs Optuna: pip install "certa[optuna]"') from exc
    return optuna


def _base() -> type:
    try:
        from optuna.pruners import BasePruner
    except ImportError:  # pragma: no cover - the extra is missing
        return object
    return BasePruner


#: Floor of a pair's difference variance, as a fraction of the mean of the two trials' score variances
#: (as in certa's paired rule): a floor only raises p-values.
DIFF_VAR_FLOOR = 0.01


class PairedPruner(_base()):  # type: ignore[misc]
    """Prune an Optuna trial once certa's paired delta-correct rule shows it worse than the complete trials.

    Each trial reports one score per shared row, ``trial.report(score, step=row_id)`` (a fold, split
    or seed id, the same for every trial), and calls ``trial.should_prune()``. A trial is pruned
    once the paired differences on the rows it shares with a trial complete when it started show it
    worse by more than ``tolerance``, at the level ``1 - confidence`` (a repeated one-sided paired
    t-test per comparator, its boundary calibrated to the comparator's number of rows, a union over
    the comparators; module documentation: what the level means across the study, what is proven
    and what is measured).

    Parameters
    ----------
    confidence : float in (0, 1), default 0.95
        ``1 - delta``: with ``family="trial"``, each trial that is within ``tolerance`` of the best
        (the best trial among them) is pruned with probability at most ``delta``.
    tolerance : float >= 0, default 0
        In the objective's units: only prune a trial shown worse than another by more than this.
    family : {"trial", "study"}, default "trial"
        ``"trial"``: delta per trial; ``"study"``: ``delta * 6 / (pi^2 (t + 1)^2)`` for trial ``t``,
        so that no trial of the whole study is wrongly pruned with probability ``1 - delta``.

    Examples
    --------
    >>> import numpy as np, optuna
    >>> from certa.integrations.optuna import PairedPruner
    >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
    >>> def objective(trial):            # 10 folds; fold k is the same split for every trial
    ...     x = trial.suggest_float("x", -2, 2)
    ...     scores = []
    ...     for fold in range(10):
    ...         noise = np.random.default_rng(fold).normal(0, 0.3)       # shared by every trial
    ...         scores.append(-(x - 1) ** 2 + noise + 0.05 * np.random.default_rng([fold, trial.number]).normal())
    ...         trial.report(scores[-1], step=fold)
    ...         if trial.should_prune():
    ...             raise optuna.TrialPruned()
    ...     return float(np.mean(scores))
    >>> study = optuna.create_study(direction="maximize", pruner=PairedPruner(confidence=0.95),
    ...                             sampler=optuna.samplers.RandomSampler(seed=0))
    >>> study.optimize(objective, n_trials=20)
    >>> pruned = [t for t in study.trials if t.state == optuna.trial.TrialState.PRUNED]
    >>> len(pruned) > 0, abs(study.best_params["x"] - 1) < 0.3
    (True, True)
    """

    def __init__(self, confidence: float = 0.95, *, tolerance: float = 0.0, family: str = "trial") -> None:
        if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real) or not 0 < confidence < 1:
            raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}")
        if (isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real) or not math.isfinite(tolerance)
                or tolerance < 0):
            raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
        if family not in ("trial", "study"):
            raise ValueError(f"family must be 'trial' or 'study', got {family!r}")
        self.confidence = float(confidence)
        self.tolerance = float(tolerance)
        self.family = family

    def __repr__(self) -> str:
        return f"PairedPruner(confidence={self.confidence}, tolerance={self.tolerance}, family={self.family!r})"

    # ------------------------------------------------------------------------------------------
    def comparators(self, study: Any, trial: Any) -> list[Any]:
        """The trials ``trial`` is compared with: those complete when it started (its
        ``datetime_start`` at or after their ``datetime_complete``; without stored times, the
        complete trials numbered before it)."""
        optuna = _optuna()
        start = trial.datetime_start
        out = []
        for b in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)):
            if b.number == trial.number:
                continue
            if start is not None and b.datetime_complete is not None:
                if b.datetime_complete <= start:
                    out.append(b)
            elif b.number < trial.number:
                out.append(b)
        return out

    def delta(self, number: int) -> float:
        """``delta_t`` of trial ``number``: ``1 - confidence`` (``family="trial"``) or
        ``(1 - confidence) * 6 / (pi^2 (t + 1)^2)`` (``family="study"``).

        Examples
        --------
        >>> round(PairedPruner(0.95).delta(7), 4)
        0.05
        >>> round(PairedPruner(0.95, family="study").delta(3), 6)   # 0.05 * 6 / (pi^2 16)
        0.0019
        """
        delta = 1.0 - self.confidence
        if self.family == "study":
            delta *= 6.0 / (math.pi ** 2 * (number + 1) ** 2)
        return delta

    def evidence(self, study: Any, trial: Any) -> tuple[float, int | None]:
        """``max_b log(a_b / p_bt)`` over the ``m_t`` comparators ``b`` of ``trial`` (positive: prune), with
        ``p_bt`` the one-sided paired t-test's p-value on their common rows and ``a_b`` the nominal
        level for ``b``'s number of rows at ``delta_t / m_t`` (module documentation); and the comparator
        reaching it (``-inf, None`` without a comparator or with fewer than 2 common rows)."""
        optuna = _optuna()
        values = _finite_values(trial)
        if values is None or len(values) < 2:
            return -math.inf, None
        sign = 1.0 if study.direction == optuna.study.StudyDirection.MAXIMIZE else -1.0
        steps = list(values.keys())
        xt = sign * np.fromiter(values.values(), dtype=float)
        comparators = self.comparators(study, trial)
        numbers_, rows, horizon = [], [], []
        for b in comparators:
            vb = _finite_values(b, warn=False)
            if vb is None:
                continue
            numbers_.append(b.number)
            rows.append([vb.get(step, math.nan) for step in steps])
            horizon.append(len(vb))
        if not rows:
            return -math.inf, None
        xb = sign * np.array(rows, dtype=float)              # (comparators, t's rows)
        common = np.isfinite(xb)
        n = common.sum(axis=1).astype(float)
        nn = np.maximum(n, 1.0)
        d = np.where(common, xb - xt[None, :], 0.0)
        mean = d.sum(axis=1) / nn
        var = np.where(common, (d - mean[:, None]) ** 2, 0.0).sum(axis=1) / np.maximum(n - 1.0, 1.0)
        mb = np.where(common, xb, 0.0).sum(axis=1) / nn       # the floor's score variances, on common rows
        var_b = np.where(common, (xb - mb[:, None]) ** 2, 0.0).sum(axis=1) / nn
        mt = np.where(common, xt[None, :], 0.0).sum(axis=1) / nn
        var_t = np.where(common, (xt[None, :] - mt[:, None]) ** 2, 0.0).sum(axis=1) / nn
        var = np.maximum(var, DIFF_VAR_FLOOR * 0.5 * (var_b + var_t))
        looks = np.array([first_look(h) for h in horizon])   # no look before the boundary's first
        live = (n >= np.maximum(looks, 2)) & (mean > self.tolerance) & (var > 0)
        if not live.any():
            return -math.inf, None
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(live, one_sided_p(np.maximum(n, 2.0), mean - self.tolerance, np.where(var > 0, var, 1.0)), 1.0)
        alpha = self.delta(trial.number) / len(comparators)
        level = np.array([nominal_level(h, alpha) for h in horizon])
        with np.errstate(divide="ignore"):
            score = np.where(live, np.log(level) - np.log(p), -np.inf)
        i = int(np.argmax(score))
        return float(score[i]), numbers_[i]

    def prune(self, study: Any, trial: Any) -> bool:
        """Optuna's hook: whether to stop ``trial`` now (``study`` and ``trial`` as Optuna passes them)."""
        if len(study.directions) != 1:
            raise ValueError("PairedPruner needs a single-objective study")
        w, _ = self.evidence(study, trial)
        return bool(w > 0.0)


def _finite_values(trial: Any, warn: bool = True) -> dict[int, float] | None:
    """The trial's intermediate values (step -> value), or None (with a warning) if one is not finite."""
    values = trial.intermediate_values
    if any(not math.isfinite(v) for v in values.values()):
        if warn:
            warnings.warn(f"trial {trial.number} reported a non-finite value: PairedPruner neither prunes it nor "
                          "compares other trials with it", RuntimeWarning, stacklevel=3)
        return None
    return dict(values)
