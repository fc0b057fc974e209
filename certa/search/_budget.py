"""Fixed-confidence runs that never surprise: a default cap, an early near-tie warning, and a
warning when the target confidence is missed (shared by BanditSearchCV, bandit_select, certa select).

The default cap (``max_evals="auto"``) is :data:`EVALS_PER_CANDIDATE` evaluations per candidate.
A near tie can make a fixed-confidence target cost without limit (the evaluations needed grow as
``1 / gap^2``); the cap bounds it, and :class:`NearTieMonitor` says so early, from the running
means and SDs, with a tolerance that would fit (``docs/adaptive.md``, "Default cap").
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..engine.callbacks import Callback, Evaluation, RunView, check_callbacks
from ..engine.selection import Selection
from ..engine.strategy import Strategy
from ..planning.lower_bound import bernoulli_kl, lower_bound

__all__ = ["EVALS_PER_CANDIDATE", "NearTieWarning", "TargetNotReachedWarning", "default_max_evals"]

#: ``max_evals="auto"``: this many evaluations per candidate. By :func:`estimated_cost`, 400
#: evaluations separate two candidates about half the scores' SD apart at confidence 0.95; closer
#: ones are near ties, where a tolerance is the cheaper statement.
EVALS_PER_CANDIDATE = 200
#: What the shipped GLR rule spends, as a multiple of the lower bound ``T* kl(delta, 1 - delta)``:
#: 3.5-5x on the calibration families (docs/adaptive.md). Used for the near-tie estimate.
COST_OVER_LOWER_BOUND = 4.0
#: Candidate tolerances suggested by the near-tie warning, in units of a power of ten.
_NICE = (1.0, 2.0, 5.0)


class TargetNotReachedWarning(UserWarning):
    """A fixed-confidence run ended without reaching its target confidence (e.g. at ``max_evals``)."""


class NearTieWarning(UserWarning):
    """Early in a fixed-confidence run: near ties make the target costly (more than the cap)."""


def default_max_evals(n_candidates: int) -> int:
    """The cap ``max_evals="auto"`` gives a fixed-confidence run: 200 evaluations per candidate.

    Examples
    --------
    >>> default_max_evals(6)
    1200
    """
    return EVALS_PER_CANDIDATE * int(n_candidates)


def resolve_max_evals(max_evals: Any, n_candidates: int) -> int | None:
    """``"auto"`` -> :func:`default_max_evals`; ``None`` (no cap) and ints pass through."""
    if isinstance(max_evals, str):
        if max_evals != "auto":
            raise ValueError(f"max_evals must be a positive int, 'auto' or None, got {max_evals!r}")
        return default_max_evals(n_candidates)
    return max_evals


def is_fixed_confidence(strategy: Strategy) -> bool:
    """A strategy that runs until a target confidence (it has a ``confidence`` and a ``max_evals``)."""
    return isinstance(getattr(strategy, "confidence", None), float) and hasattr(strategy, "max_evals") \
        and hasattr(strategy, "tolerance")


def estimated_cost(means: np.ndarray, sds: np.ndarray, confidence: float, tolerance: float) -> float:
    """About how many evaluations the run needs if the running means and SDs were the truth:
    :data:`COST_OVER_LOWER_BOUND` times the lower bound ``T*_eps kl(delta, 1 - delta)``."""
    return COST_OVER_LOWER_BOUND * lower_bound(means, sds, 1.0 - confidence, tolerance)


def suggest_tolerance(cost: Any, scale: float, budget: float) -> float | None:
    """The smallest tolerance of the form 1, 2 or 5 times a power of ten (from 1/1000 to 10 times
    ``scale``, the scores' SD) whose estimated ``cost(tolerance)`` fits ``budget``."""
    top = int(math.floor(math.log10(scale)))
    for exponent in range(top - 3, top + 2):
        for unit in _NICE:
            eps = unit * 10.0 ** exponent
            if cost(eps) <= budget:
                return float(f"{eps:.1g}")
    return None


class NearTieMonitor(Callback):
    """Warns once, early in a fixed-confidence run, when the target will likely cost more than the cap.

    After the first rows (``first_check`` evaluations per candidate told), and again each time the
    number of evaluations doubles, it takes the running estimates as if they were the truth and
    estimates the evaluations the run needs: for an unpaired run from the means and SDs
    (:func:`estimated_cost`); for a paired run (``paired=True``: every candidate left evaluated on
    each row) from the mean and SD of the paired differences to the leader, row by row. If that is
    more than ``max_evals`` (or, with no cap, than :func:`default_max_evals`), it warns with a
    :class:`NearTieWarning` naming the closest candidates and a tolerance whose estimated cost fits
    the cap. Evaluations reused from a store count like new ones.
    """

    def __init__(self, confidence: float, tolerance: float, max_evals: int | None, first_check: int = 10,
                 paired: bool = False) -> None:
        self.confidence, self.tolerance, self.max_evals = float(confidence), float(tolerance), max_evals
        self.first_check, self.paired = int(first_check), bool(paired)
        self.warned: str | None = None

    def on_run_start(self, run: RunView) -> None:
        k = len(run.candidates)
        self._budget = self.max_evals if self.max_evals is not None else default_max_evals(k)
        self._rows: list[dict[tuple, float]] = [{} for _ in range(k)]   # per candidate: draw index -> score
        self._next = self.first_check * k   # evaluations told at the next check
        self.warned = None

    def on_evaluation(self, run: RunView, evaluation: Evaluation) -> None:
        if self.warned is not None:
            return
        if evaluation.outcome.ok:
            self._rows[evaluation.draw.candidate][evaluation.draw.index] = float(evaluation.outcome.score)
        n = run.n_evaluations
        if n < self._next:
            return
        self._next = 2 * n
        self._check(n)

    def _check(self, n_told: int) -> None:
        scores = [np.array(list(r.values())) for r in self._rows]
        if any(s.size < 3 for s in scores) and not self.paired:
            return
        means = np.array([s.mean() if s.size else -np.inf for s in scores])
        order = np.argsort(-means)
        a, b = int(order[0]), int(order[1])
        cost_at = self._paired_cost(a) if self.paired else self._unpaired_cost(scores, means, a)
        if cost_at is None:
            return
        cost = cost_at(self.tolerance, False)
        if cost <= self._budget:
            return
        cap = f"max_evals={self._budget}" if self.max_evals is not None else \
            f"the default cap of {self._budget} ({len(self._rows)} candidates x {EVALS_PER_CANDIDATE})"
        need = "without limit (an exact tie)" if not math.isfinite(cost) else f"about {cost:,.0f} evaluations"
        target = f"confidence {self.confidence:g}" + (f" within {self.tolerance:g}" if self.tolerance else "")
        spread = (f"paired differences' SD {self._diff_sd(a, b):.2g}" if self.paired else
                  f"score SDs {np.std(scores[a], ddof=1):.2g} and {np.std(scores[b], ddof=1):.2g}")
        message = (f"near tie: after {n_told} evaluations the two best candidates are {means[a] - means[b]:.3g} "
                   f"apart (means {means[a]:.4g} and {means[b]:.4g}, {spread}); reaching {target} would take "
                   f"{need} at these estimates, more than {cap}, so the run will likely stop at the cap "
                   "without reaching its target")
        # the suggestion must hold if the gaps are smaller than they look (early means overstate a
        # near tie's gap): gaps shrunk by two standard errors, floored at 0
        scale = max(float(np.max([np.std(s, ddof=1) for s in scores if s.size > 1])), 1e-12)
        eps = suggest_tolerance(lambda e: cost_at(e, True), scale, self._budget)
        if eps is not None and eps > self.tolerance:
            message += (f". tolerance={eps:g} (choose a candidate within {eps:g} of the best) would take "
                        f"about {cost_at(eps, True):,.0f} even if the gaps are two standard errors smaller "
                        "than they look")
        self.warned = message
        warnings.warn(message, NearTieWarning, stacklevel=2)

    def _unpaired_cost(self, scores: list[np.ndarray], means: np.ndarray, a: int):
        sds = np.array([np.std(s, ddof=1) for s in scores])
        positive = sds[sds > 0]
        if positive.size == 0:
            return None   # constant scores: nothing to estimate from
        sds = np.where(sds > 0, sds, positive.min())
        counts = np.array([s.size for s in scores])
        se = np.sqrt(sds[a] ** 2 / counts[a] + sds ** 2 / counts)
        shrunk = means[a] - np.maximum(means[a] - means - 2.0 * se, 0.0)
        return lambda eps, shrink: estimated_cost(shrunk if shrink else means, sds, self.confidence, eps)

    def _diff(self, a: int, j: int) -> np.ndarray:
        ra, rj = self._rows[a], self._rows[j]
        return np.array([ra[r] - rj[r] for r in ra if r in rj])

    def _diff_sd(self, a: int, j: int) -> float:
        d = self._diff(a, j)
        return float(np.std(d, ddof=1)) if d.size > 1 else float("nan")

    def _paired_cost(self, a: int):
        """Rows each challenger needs (kl(delta, 1 - delta) 2 sd_d^2 / (gap_d + eps)^2, the one-sample
        Gaussian bound on its paired differences to the leader); the leader and the last challenger
        run every row, the others until theirs; times COST_OVER_LOWER_BOUND."""
        delta = 1.0 - self.confidence
        kl = bernoulli_kl(delta, 1.0 - delta)
        pairs = []
        for j in range(len(self._rows)):
            d = self._diff(a, j) if j != a else np.array([])
            if d.size >= 3:
                pairs.append((float(d.mean()), float(np.std(d, ddof=1)), d.size))
        if not pairs:
            return None

        def cost(eps: float, shrink: bool) -> float:
            need = []
            for gap, sd, n in pairs:
                g = (max(gap - 2.0 * sd / math.sqrt(n), 0.0) if shrink else gap) + eps
                need.append(0.0 if sd == 0 and g > 0 else (math.inf if g <= 0 else kl * 2.0 * sd ** 2 / g ** 2))
            return COST_OVER_LOWER_BOUND * (max(need) + sum(need))
        return cost


def with_near_tie_monitor(strategy: Strategy, callbacks: Any) -> list[Callback]:
    """The user's ``callbacks``, after a :class:`NearTieMonitor` if ``strategy`` is fixed-confidence."""
    hooks = check_callbacks(callbacks)
    if is_fixed_confidence(strategy) and not getattr(strategy, "screens", False):   # a screen mixes training sizes
        hooks.insert(0, NearTieMonitor(strategy.confidence, strategy.tolerance, strategy.max_evals,
                                       paired=bool(getattr(strategy, "paired", False))))
    return hooks


def target_missed(selection: Selection) -> str | None:
    """E.g. "target confidence 0.9 not reached (stopped at max_evals=200)"; ``None`` if it was reached
    (or the run has no target: a fixed budget, the best for a budget's end, or it was interrupted)."""
    res = selection.result
    if res.get("target_confidence") is None or res.get("target_reached", True) or not selection.finished:
        return None
    if res.get("stop_reason") == "budget":   # the best for a budget: its planned end, the tolerance certified
        return None
    reason = res.get("stop_reason", "?")
    why = f"stopped at max_evals={selection.strategy.get('max_evals')}" if reason == "max_evals" \
        else f"stopped: {reason}"
    return f"target confidence {res['target_confidence']:g} not reached ({why})"


def warn_if_target_missed(selection: Selection, front: str) -> str | None:
    """Warn (:class:`TargetNotReachedWarning`) if the run missed its target; return :func:`target_missed`."""
    text = target_missed(selection)
    if text is not None:
        reason = selection.result.get("stop_reason")
        advice = ("raise max_evals, give a tolerance or lower the confidence" if reason == "max_evals"
                  else "give cv more splits (e.g. more n_repeats), a tolerance or a lower confidence"
                  if reason == "out of splits" else "see the dropped candidates")
        warnings.warn(f"{front}: {text}: the choice {selection.best.name!r} is "
                      f"{selection.result.get('guarantee', '')}; {advice}", TargetNotReachedWarning, stacklevel=3)
    return text
