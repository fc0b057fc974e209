"""Wrapped progressive sampling: Paramsearch (van den Bosch 2004) and PSearch (Groenewald et al.).

Every surviving setting is trained on a training subset of the round's size and scored on an
evaluation set of matching size; after each round the worse settings are dropped and the
subset grows, until one setting is left or the data run out. The data side (one stratified
80/20 split, nested stratified subsets) is :class:`~certa.strategies._subset_plan.SubsetPlan`.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..engine.draws import Draw, Outcome, derive_seed
from ..engine.strategy import Strategy
from ._ahead import AHEAD_PER_WORKER, AheadBook
from ._floor import add_back_bins
from ._race import (
    budget_limit,
    check_cap,
    compare_with_baseline,
    confirm_vs_baseline,
    confirm_vs_baseline_folds,
    halving_counts,
    race_survivors,
)
from ._schedule import (
    PARAMSEARCH_MIN_SIZE,
    PSEARCH_FRACTIONS,
    _check_n_train,
    paramsearch_sizes,
    psearch_sizes,
    schedule_sizes,
)
from ._subset_plan import SubsetPlan, stratified_order

__all__ = [
    "PARAMSEARCH_MIN_SIZE",
    "PSEARCH_FRACTIONS",
    "ProgressiveSampling",
    "SubsetPlan",
    "paramsearch_sizes",
    "psearch_sizes",
    "race_survivors",
    "schedule_sizes",
    "stratified_order",
    "survivors",
]

#: The race's cap before issue #14's rerun (``cap=0.5``: at most half of a round's settings survive).
RACE_CAP = 0.5
#: Default cap of the race: a cost budget (see :func:`~certa.strategies._race.budget_limit`).
RACE_CAP_DEFAULT = "budget"
#: Default budget of ``cap="budget"``, in units of the halving race's cost on the same schedule.
RACE_BUDGET = 2.0
#: Default number of folds of the final confirmation against the baseline.
RACE_CONFIRM_FOLDS = 5
#: How the race's final choice treats the baseline: "gate" keeps it unless a test shows it beaten;
#: "evidence" chooses what the evidence favours and reports the test against the baseline as a claim.
BASELINE_RULES = ("gate", "evidence")
#: PSearch's floor, also the race's default floor.
PSEARCH_FLOOR = 0.2
#: Rounds ahead train on more data, so they take longer: the draws asked ahead and not yet taken by a
#: round hold at most ``AHEAD_SIZE * 2 * n_workers`` training sets of the current round's size (besides
#: the ``2 * n_workers`` draws), so that evaluations guessed far ahead do not hold the workers the
#: next round needs (virtual clock, times growing with the training size: 16 workers then finish no
#: later than 8; docs/adaptive.md "Every front on the clock").
AHEAD_SIZE = 3


def survivors(scores: np.ndarray, rule: str | float | Callable = "mean", floor: float | None = None,
              bin_width: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Which settings of one round survive; returns ``(survived, added_by_floor)`` masks.

    Parameters
    ----------
    scores : array of float
        The round's scores (NaN for a failed evaluation: it never survives).
    rule : "mean", "median", float or callable
        ``"mean"``: keep scores >= the mean of the round's scores (our Paramsearch rule);
        ``"median"``: keep scores >= the median (about half survive); a float ``q`` in
        (0, 1): keep the best ``ceil(q * n)`` settings and everything tied with the last
        of them; a callable maps the finite scores to a boolean mask. Settings tied
        with the best score always survive.
    floor : float or None
        PSearch's floor: if fewer than ``ceil(floor * n)`` settings survive (``n`` the
        number evaluated this round), the settings of the next-best score bins are
        added back, a whole bin at a time, until at least that many survive.
    bin_width : float or None
        Width of the score bins for the floor, hanging down from the top score;
        ``None``: one bin per distinct score (ties are never split).

    Examples
    --------
    >>> keep, added = survivors(np.array([0.9, 0.5, 0.4, 0.3, 0.2]), "mean", floor=0.5)
    >>> keep.tolist(), added.tolist()
    ([True, True, True, False, False], [False, False, True, False, False])
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError(f"scores must be a non-empty 1-D array, got shape {scores.shape}")
    if floor is not None and not (0 <= floor <= 1):
        raise ValueError(f"floor must be in [0, 1] or None, got {floor!r}")
    if bin_width is not None and not bin_width > 0:
        raise ValueError(f"bin_width must be positive or None, got {bin_width!r}")
    finite = np.isfinite(scores)
    keep = np.zeros(scores.size, dtype=bool)
    added = np.zeros(scores.size, dtype=bool)
    if not finite.any():
        return keep, added
    s = scores[finite]
    if callable(rule):
        mask = np.asarray(rule(s.copy()), dtype=bool)
        if mask.shape != s.shape:
            raise ValueError(f"survival rule returned a mask of shape {mask.shape}, expected {s.shape}")
    elif isinstance(rule, str):
        if rule == "mean":
            mask = s >= s.mean() - 1e-12
        elif rule == "median":
            mask = s >= np.median(s) - 1e-12
        else:
            raise ValueError(f"survival must be 'mean', 'median', a fraction or a callable, got {rule!r}")
    elif isinstance(rule, (float, np.floating)) and 0 < rule < 1:
        k = math.ceil(rule * s.size)
        mask = s >= np.sort(s)[::-1][k - 1]
    else:
        raise ValueError(f"survival must be 'mean', 'median', a fraction in (0, 1) or a callable, got {rule!r}")
    mask |= s == s.max()
    keep[finite] = mask
    if floor is not None:
        added = add_back_bins(keep, scores, finite, floor, bin_width)
    return keep, added


class ProgressiveSampling(Strategy):
    """Wrapped progressive sampling (Paramsearch / PSearch) as an ask/tell strategy.

    Round ``r`` evaluates every surviving setting on a ``"subset"`` draw
    ``Draw(c, "subset", (r,), seed=derive_seed(seed, r), size=sizes[r])``; the
    draws of a round are asked together (they are independent) and ``ask``
    returns ``None`` until the whole round has been told; then the survivors are
    computed and the next round starts. The run stops when one setting is left or
    after the last size. The choice is the best setting of the last round reached
    (ties: first in grid order), except under ``survival="race"`` with a
    ``baseline`` (see below). A grid of one setting is scored once, on the last
    size. Pair it with :class:`SubsetPlan`.

    Parameters
    ----------
    n_train : int
        Size of the training part (``SubsetPlan.n_train(n_samples)``).
    schedule : "paramsearch", "psearch" or list of fractions / sizes
        See :func:`schedule_sizes`.
    survival : "mean", "median", "race", float, callable or None
        ``"race"``: :func:`~certa.strategies._race.race_survivors` on the per-example
        scores every outcome must carry (``payload["per_example"]``: the scores of the
        round's evaluation examples, in the same order for every setting, whose mean
        is the score; :class:`~certa.engine.EstimatorEvaluator` with
        ``per_example=True`` gives them). Otherwise see :func:`survivors`; ``None``:
        ``"mean"`` for both published schedules.
    floor : float, None or "auto"
        PSearch's survival floor; ``"auto"``: 0.2 for ``"psearch"`` and for the race,
        none otherwise.
    bin_width : float or None
        Score-bin width for the floor (``None``: one bin per distinct score).
    confidence : float, default=0.95
        Race only: confidence level of its tests (see :func:`race_survivors`).
    cap : "budget", float, int, None or "auto"
        Race only. ``"budget"`` (``"auto"``): a round keeps every setting the test
        cannot drop unless the schedule's projected cost would then exceed ``budget``
        times the halving race's cost (cost model: a setting in a round costs the
        round's training size; :func:`~certa.strategies._race.budget_limit`); only
        then are the lowest-scoring cut. A float (e.g. ``0.5``, the rule of the
        earlier runs) or int: at most this fraction or number of a round's settings
        survive, besides the baseline.
    budget : float or "auto"
        Race with ``cap="budget"``: the budget in units of the halving race's cost,
        at least 1 (``"auto"``: 2.0).
    baseline : int or None
        Race only: index of a setting (the learner's default) that survives every
        round; in the last round the choice is the baseline unless another setting
        is shown better than it, and ``result()["baseline"]`` reports the verdict.
        With ``confirm_folds`` the final round only chooses the challenger (its best
        other setting) and the test is made on fresh evidence
        (:func:`~certa.strategies._race.confirm_vs_baseline`); with
        ``confirm_folds=None`` on the final round's examples, Bonferroni over the
        settings compared (:func:`~certa.strategies._race.compare_with_baseline`).
    confirm_folds : int, None or "auto"
        Race with a baseline: the challenger and the baseline are scored by
        ``confirm_folds``-fold cross-validation over the whole training part (the
        same folds for both; every training example predicted once by each), and
        the choice is the challenger only if it is better there (one-sided test at
        ``1 - confidence``). ``"auto"``: 5.
    baseline_rule : {"gate", "evidence"}, default "gate"
        Race with a baseline. ``"gate"``: the baseline stays the choice unless the
        test shows it beaten (above). ``"evidence"``: the choice is what the evidence
        favours -- the challenger if its mean score in the confirmation is higher than
        the baseline's (without a confirmation: the final round's leader; the
        baseline wins ties) -- and the test against the baseline is reported as a
        claim (``beat_baseline``), not used as a gate.
    min_size : int, default 1
        Smallest training subset of a round (see :func:`schedule_sizes`); the front
        passes :meth:`SubsetPlan.smallest_size`, so every round's subset holds every class.

    Attributes
    ----------
    sizes : list of int
        The training-set size of each round.

    Examples
    --------
    >>> from certa import FunctionEvaluator, run
    >>> strategy = ProgressiveSampling(10_000, "psearch")
    >>> sel = run(strategy, FunctionEvaluator(lambda p, seed: -abs(p["x"] - 3)), {"x": list(range(8))})
    >>> sel.best_params
    {'x': 3}

    Rounds ahead: while a round's last evaluations run and workers are idle
    (``n_workers``, set by the runner from the executor), later rounds are
    asked ahead, nearest first, for the settings most likely to reach them:
    round ``r + j`` is guessed to hold the best ``ceil(n f^j)`` of the round's
    ``n`` settings by their latest score told (``f`` the share that survived
    the rounds so far; the race's baseline always), at most ``2 * n_workers``
    asked ahead and not yet taken by a round, holding at most ``6 * n_workers``
    training sets of the current round's size (later rounds train on more).
    Each round still decides on the scores of its own members, so the rounds,
    survivors and choice are the same for any number of workers and any
    completion order. Evaluations asked ahead for a setting that does not
    reach their round are *spent ahead* (``result()["evaluations_ahead"]``,
    kept in the store, left out of the
    selection's evaluations; a resumed run asking the same draw reuses it).
    """

    max_pending = None  # the runner may ask a whole round at once; ask() returns None between rounds
    #: Asks later rounds ahead of its decisions (see above): the runner keeps ``n_workers`` running.
    asks_ahead = True

    def __init__(self, n_train: int, schedule: str | Sequence[float | int] = "psearch",
                 survival: str | float | Callable | None = None, floor: float | str | None = "auto",
                 bin_width: float | None = None, *, confidence: float = 0.95, cap: float | str | None = "auto",
                 baseline: int | None = None, budget: float | str | None = "auto",
                 confirm_folds: int | str | None = "auto", baseline_rule: str = "gate", min_size: int = 1) -> None:
        self.n_train = _check_n_train(n_train)
        self.sizes = schedule_sizes(schedule, self.n_train, min_size)
        self.min_size = int(min_size)
        self.schedule = schedule if isinstance(schedule, str) else [v if isinstance(v, (int, np.integer)) and not
                                                                    isinstance(v, bool) else float(v)
                                                                    for v in schedule]
        if survival is None:
            survival = "mean"
        if isinstance(survival, (int, np.integer)) and not isinstance(survival, bool):
            raise ValueError(f"survival as a number must be a fraction in (0, 1), got {survival!r}")
        race = isinstance(survival, str) and survival == "race"
        if not race:
            survivors(np.array([1.0]), survival)  # validates the rule
        self._survival = survival
        self.survival = survival if isinstance(survival, (str, float)) else \
            f"callable:{getattr(survival, '__qualname__', type(survival).__name__)}"
        if isinstance(floor, str):
            if floor != "auto":
                raise ValueError(f"floor must be a fraction in [0, 1], None or 'auto', got {floor!r}")
            floor = PSEARCH_FLOOR if schedule == "psearch" or race else None
        if floor is not None and (isinstance(floor, bool) or not isinstance(floor, (int, float)) or not 0 <= floor <= 1):
            raise ValueError(f"floor must be a fraction in [0, 1], None or 'auto', got {floor!r}")
        self.floor = None if floor is None else float(floor)
        if bin_width is not None and (isinstance(bin_width, bool) or not isinstance(bin_width, (int, float))
                                      or not bin_width > 0):
            raise ValueError(f"bin_width must be a positive number or None, got {bin_width!r}")
        self.bin_width = None if bin_width is None else float(bin_width)
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
            raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}")
        self.confidence = float(confidence)
        if isinstance(cap, str) and cap != "budget":
            if cap != "auto":
                raise ValueError(f"cap must be 'budget', a fraction in (0, 1], a count >= 1, None or 'auto', got {cap!r}")
            cap = RACE_CAP_DEFAULT if race else None
        self.cap = check_cap(cap)
        if isinstance(budget, str):
            if budget != "auto":
                raise ValueError(f"budget must be a number >= 1, None or 'auto', got {budget!r}")
            budget = RACE_BUDGET if race and self.cap == "budget" else None
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, float))
                                   or not budget >= 1):
            raise ValueError(f"budget must be a number >= 1 (units of the halving race's cost), got {budget!r}")
        self.budget = None if budget is None else float(budget)
        if self.cap == "budget" and self.budget is None:
            raise ValueError("cap='budget' needs a budget (a number >= 1, or 'auto')")
        if self.budget is not None and self.cap != "budget":
            raise ValueError(f"budget belongs to cap='budget', got cap={self.cap!r}")
        if isinstance(confirm_folds, str):
            if confirm_folds != "auto":
                raise ValueError(f"confirm_folds must be an int >= 2, None or 'auto', got {confirm_folds!r}")
            confirm_folds = RACE_CONFIRM_FOLDS if race and baseline is not None else None
        if confirm_folds is not None and (isinstance(confirm_folds, bool) or not isinstance(confirm_folds, (int, np.integer))
                                          or confirm_folds < 2):
            raise ValueError(f"confirm_folds must be an int >= 2 or None, got {confirm_folds!r}")
        self.confirm_folds = None if confirm_folds is None else int(confirm_folds)
        if baseline is not None and (isinstance(baseline, bool) or not isinstance(baseline, (int, np.integer))
                                     or baseline < 0):
            raise ValueError(f"baseline must be a candidate index (int >= 0) or None, got {baseline!r}")
        self.baseline = None if baseline is None else int(baseline)
        if self.confirm_folds is not None and (baseline is None or not race):
            raise ValueError("confirm_folds belongs to survival='race' with a baseline")
        if self.confirm_folds is not None and self.confirm_folds > self.n_train:
            raise ValueError(f"confirm_folds ({self.confirm_folds}) exceeds the training part ({self.n_train})")
        if not race and (self.cap is not None or self.baseline is not None):
            raise ValueError("cap and baseline belong to survival='race'; the published rules keep their own "
                             f"survival (got survival={self.survival!r}, cap={self.cap!r}, baseline={self.baseline!r})")
        if not isinstance(baseline_rule, str) or baseline_rule not in BASELINE_RULES:
            raise ValueError(f"baseline_rule must be one of {BASELINE_RULES}, got {baseline_rule!r}")
        if baseline_rule != "gate" and (self.baseline is None or not race):
            raise ValueError("baseline_rule belongs to survival='race' with a baseline")
        self.baseline_rule = baseline_rule
        if race and isinstance(self.cap, float) and self.floor is not None and self.cap < self.floor:
            raise ValueError(f"cap ({self.cap}) must not be below floor ({self.floor})")

    def spec(self) -> dict[str, Any]:
        out = super().spec()
        if not self._race:  # the published rules' spec (a run's identity in a store) stays as it was
            for k in ("confidence", "cap", "baseline", "budget", "confirm_folds"):
                out.pop(k, None)
        for k in ("budget", "confirm_folds"):  # a race of the earlier runs (cap=0.5, no confirmation) keeps its spec
            if out.get(k, 0) is None:
                out.pop(k)
        if out.get("baseline_rule") == "gate":  # the rule of the runs before issue 24 keeps their spec
            out.pop("baseline_rule")
        if self.sizes == schedule_sizes(self.schedule, self.n_train):  # min_size changed nothing: spec as before
            out.pop("min_size", None)
        return out

    @property
    def _race(self) -> bool:
        return isinstance(self._survival, str) and self._survival == "race"

    def _start(self) -> None:
        R, C = len(self.sizes), self.n_candidates
        if self.baseline is not None and self.baseline >= C:
            raise ValueError(f"baseline {self.baseline} is not a candidate index (there are {C} candidates)")
        self._scores = np.full((R, C), np.nan)
        self._durations = np.zeros((R, C))
        self._evaluated = np.zeros((R, C), dtype=bool)
        self._examples: dict[int, np.ndarray] = {}  # this round's per-example scores (race)
        self._alive = list(range(C))
        self._round = 0 if C > 1 else R - 1  # one setting: nothing to choose, score it once on the last size
        self._queue = list(self._alive)
        self._pending = 0
        self._rounds: list[dict[str, Any]] = []
        self._finished = False
        self._choice: int | None = None
        self._verdict: dict[str, Any] | None = None
        # cap="budget": the halving race's counts of unprotected settings and what the rounds have cost so far
        protected = int(self.baseline is not None and self.baseline < C)
        self._reference = halving_counts(max(1, C - protected), R)
        self._budget_total = None if self.budget is None else \
            self.budget * float(sum(k * s for k, s in zip(self._reference, self.sizes)))
        self._spent = 0.0
        self._confirm: dict[str, Any] | None = None  # the final confirmation against the baseline, when running
        self._book = AheadBook()   # draws asked ahead for later rounds: (candidate, round) -> draw
        self._n_asked = 0
        self._n_used = 0
        self._open_round()

    @property
    def total_draws(self) -> int | None:
        return None  # depends on the scores

    def _round_draw(self, c: int, r: int) -> Draw:
        self._n_asked += 1
        return Draw(c, "subset", (r,), seed=derive_seed(self.seed, r), size=self.sizes[r])

    def _open_round(self) -> None:
        """Round ``self._round`` takes its members' draws asked ahead (told ones are recorded now)."""
        r, members, self._queue, told = self._round, self._queue, [], []
        for c in members:
            claimed, outcome = self._book.claim((c, r))
            if not claimed:
                self._queue.append(c)
            else:
                self._pending += 1   # told now or, still running, when it comes
                if outcome is not None:
                    told.append((c, outcome))
        for c, outcome in told:   # the last one closes the round if every draw of it was asked ahead
            self._tell_round(Draw(c, "subset", (r,), seed=derive_seed(self.seed, r), size=self.sizes[r]), outcome)

    def ask(self) -> Draw | None:
        self._queue = [c for c in self._queue if (c[0] if isinstance(c, tuple) else c) not in self._dropped]
        if self._finished:
            return None
        if not self._queue:
            return self._ask_ahead()
        c = self._queue.pop(0)
        self._pending += 1
        r = self._round
        if isinstance(c, tuple):  # confirmation: fold k of K over the training part (see SubsetPlan.split)
            c, k = c
            K = self.confirm_folds
            self._n_asked += 1
            return Draw(c, "subset", (r, k, K), seed=derive_seed(self.seed, r), size=self.n_train - len(range(k, self.n_train, K)))
        return self._round_draw(c, r)

    def _ask_ahead(self) -> Draw | None:
        """A draw of a later round for a setting likely to reach it, nearest round first, best first: round
        ``r + j`` is guessed to hold the best ``ceil(n f^j)`` of the round's ``n`` settings by their latest
        score told (``f``: the share that survived the rounds so far, a half before the first is decided);
        within the bounds on the draws asked ahead (:data:`AHEAD_PER_WORKER`, :data:`AHEAD_SIZE`)."""
        w, r = self.n_workers, self._round
        if w <= 1 or self._confirm is not None or self._book.n_open >= AHEAD_PER_WORKER * w:
            return None
        members = [c for c in self._alive if c not in self._dropped]
        latest = {c: self._scores[q, c] for c in members for q in (r, r - 1)[:1 + (r > 0)] if self._evaluated[q, c]}
        ranked = sorted(latest, key=lambda c: (-np.nan_to_num(latest[c], nan=-np.inf), c))
        evaluated = sum(x["n_evaluated"] for x in self._rounds)
        share = sum(x["n_survived"] for x in self._rounds) / evaluated if evaluated else 0.5
        n = len(members)
        room = AHEAD_SIZE * AHEAD_PER_WORKER * w * self.sizes[r] - sum(self.sizes[q] for _, q in self._book.open_idents())
        for later in range(r + 1, len(self.sizes)):
            n = math.ceil(n * share)
            if n < 2 or self.sizes[later] > room:   # one setting left (no such round), or too large a draw ahead
                return None
            guess = ranked[:n] + ([self.baseline] if self.baseline in ranked[n:] else [])   # the race keeps it
            for c in guess:
                if (c, later) not in self._book:
                    return self._book.asked((c, later), self._round_draw(c, later))
        return None

    def tell(self, draw: Draw, outcome: Outcome) -> None:
        r = draw.index[0]
        if len(draw.index) == 1 and self._book.tell((draw.candidate, r), draw, outcome):
            return   # asked ahead: kept for its round, or spent ahead
        if r != self._round:
            raise RuntimeError(f"told a draw of round {r} during round {self._round}")
        if len(draw.index) == 3:
            self._n_used += 1
            self._tell_confirm(draw, outcome)
            return
        self._tell_round(draw, outcome)

    def _tell_round(self, draw: Draw, outcome: Outcome) -> None:
        r = draw.index[0]
        self._n_used += 1
        self._scores[r, draw.candidate] = outcome.score if outcome.ok else np.nan
        self._durations[r, draw.candidate] = outcome.duration
        self._evaluated[r, draw.candidate] = True
        if self._race and outcome.ok:
            pay = outcome.payload
            if not isinstance(pay, dict) or "per_example" not in pay:
                raise ValueError("survival='race' needs per-example scores: the evaluator must return "
                                 "payload={'per_example': [...]} (EstimatorEvaluator(per_example=True) does)")
            self._examples[draw.candidate] = np.asarray(pay["per_example"], dtype=float).ravel()
        self._pending -= 1
        if self._pending == 0 and not self._queue:
            self._close_round()

    def _drop(self, candidate: int) -> None:
        self._queue = [c for c in self._queue if (c[0] if isinstance(c, tuple) else c) != candidate]
        self._book.spend(lambda ident: ident[0] != candidate)
        if not self._finished and self._pending == 0 and not self._queue:
            if self._confirm is not None:
                self._close_confirm()
            else:
                self._close_round()

    def _start_confirm(self, challenger: int, final: dict[str, Any]) -> None:
        """After the last round: score the challenger and the baseline by K-fold CV over the training part."""
        K = self.confirm_folds
        self._confirm = {"challenger": challenger, "final": final, "examples": {}, "failed": False}
        self._round = len(self.sizes)  # the confirmation's draws carry this "round" (not a schedule round)
        self._queue = [(c, k) for k in range(K) for c in (challenger, self.baseline)]  # fold by fold: shared encoder fits
        self._pending = 0

    def _tell_confirm(self, draw: Draw, outcome: Outcome) -> None:
        c, k = draw.candidate, draw.index[1]
        if outcome.ok:
            pay = outcome.payload
            if not isinstance(pay, dict) or "per_example" not in pay:
                raise ValueError("survival='race' needs per-example scores: the evaluator must return "
                                 "payload={'per_example': [...]} (EstimatorEvaluator(per_example=True) does)")
            self._confirm["examples"][(c, k)] = np.asarray(pay["per_example"], dtype=float).ravel()
        else:
            self._confirm["failed"] = True
        self._pending -= 1
        if self._pending == 0 and not self._queue:
            self._close_confirm()

    def _close_confirm(self) -> None:
        conf = self._confirm
        K, ch, base = self.confirm_folds, conf["challenger"], self.baseline
        ex = conf["examples"]
        final = conf["final"]
        verdict = dict(final, evidence="final round (the confirmation failed)")
        if all((c, k) in ex for c in (ch, base) for k in range(K)):
            cv = confirm_vs_baseline_folds([ex[(ch, k)] for k in range(K)], [ex[(base, k)] for k in range(K)],
                                           n_train=self.n_train, confidence=self.confidence)
            if self.baseline_rule == "gate":
                choice = ch if cv["beat_baseline"] else base
            else:  # what the evidence favours; the test stays a claim (beat_baseline)
                choice = ch if cv["difference"] > 0 else base
            verdict = {"baseline": base, "challenger": ch, "choice": choice, "rule": self.baseline_rule,
                       "beat_baseline": cv["beat_baseline"], "difference": cv["difference"], "ci_low": cv["ci_low"],
                       "ci_high": cv["ci_high"], "pvalue": cv["pvalue"], "pvalue_adjusted": cv["pvalue"],
                       "n_compared": 1, "n_examples": cv["n_examples"], "confidence": self.confidence,
                       "round": final["round"], "evidence": f"{K}-fold cross-validation over the training part",
                       "test": cv["test"],
                       "n_challenger_only": cv.get("n_challenger_only"), "n_baseline_only": cv.get("n_baseline_only"),
                       "final_round": {k: final[k] for k in ("difference", "ci_low", "ci_high", "pvalue",
                                                             "n_examples")}}
        self._verdict = verdict
        self._choice = int(verdict["choice"])
        last = self._rounds[-1]
        last["survived"] = [c == self._choice for c in last["candidates"]]
        last["n_survived"] = 1
        last["vs_baseline"] = dict(verdict)
        self._confirm = None
        self._finished = True

    def _example_matrix(self, alive: np.ndarray) -> np.ndarray:
        rows = [self._examples.get(int(c)) for c in alive]
        width = {len(v) for v in rows if v is not None}
        if len(width) > 1:
            raise ValueError(f"per-example scores of one round differ in length ({sorted(width)}); the race needs "
                             "every setting of a round scored on the same examples")
        k = width.pop() if width else 1
        return np.array([np.full(k, np.nan) if v is None else v for v in rows])

    def _close_round(self) -> None:
        r = self._round
        alive = np.array(self._alive)
        scores = self._scores[r, alive]
        last = r == len(self.sizes) - 1
        record: dict[str, Any] = {}
        if last:
            keep, added = self._final(alive, scores, record)
        elif self._race:
            history = np.array([np.nanmean(self._scores[:r, c]) if r > 0 else 0.0 for c in alive])
            # ties left after the earlier rounds' mean score are cut at random (seeded), not by grid order
            jitter = np.random.default_rng(derive_seed(self.seed, r, 1)).random(len(alive))
            history = np.nan_to_num(history, nan=0.0) + 1e-9 * jitter
            cap = self.cap
            if cap == "budget":
                protected = int(self.baseline is not None and self.baseline in self._alive)
                self._spent += (len(alive) - protected) * self.sizes[r]
                cap = budget_limit(self.sizes, r, self._spent, self._budget_total, self._reference, self.floor,
                                   protected)
            res = race_survivors(self._example_matrix(alive), confidence=self.confidence, floor=self.floor,
                                 cap=cap, bin_width=self.bin_width,
                                 protect=alive == (-1 if self.baseline is None else self.baseline), tiebreak=history)
            keep, added = res["survived"], res["added_by_floor"]
            record = {"leader": int(alive[res["leader"]]) if res["leader"] >= 0 else -1,
                      "pvalues_adjusted": res["pvalues_adjusted"].tolist(), "cut_by_cap": res["cut_by_cap"].tolist(),
                      "cap": cap}
        else:
            keep, added = survivors(scores, self._survival, self.floor, self.bin_width)
        self._rounds.append({"round": r, "size": self.sizes[r], "candidates": alive.tolist(),
                             "scores": scores.tolist(), "survived": keep.tolist(), "added_by_floor": added.tolist(),
                             "n_evaluated": len(alive), "n_survived": int(keep.sum()),
                             "time": float(self._durations[r, alive].sum()), **record})
        self._examples = {}
        self._alive = alive[keep].tolist()
        if not last and len(self._alive) == 1 and self._race and self.baseline is not None:
            # the race left only one setting: it is the choice; say how it stands against the baseline
            self._choice = self._alive[0]
            self._verdict = self._no_challenger(r) if self._choice == self.baseline else None
        if last or len(self._alive) <= 1:   # nothing asked ahead is used any more
            self._book.spend()
        else:
            self._book.spend(lambda ident: ident[0] in self._alive)   # for a setting not kept: spent ahead
        if last and self._confirm is not None:
            return  # the confirmation's draws come next
        if last or len(self._alive) <= 1:
            self._finished = True
            return
        self._round = r + 1
        self._queue = list(self._alive)
        self._open_round()

    def spent_ahead(self) -> list[str]:
        """Keys of the draws told but not used: asked ahead for a setting that did not reach their round."""
        return list(self._book.spent_keys)

    def _no_challenger(self, r: int) -> dict[str, Any]:
        return {"baseline": self.baseline, "choice": self.baseline, "beat_baseline": False, "challenger": -1,
                "difference": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"),
                "pvalue": float("nan"), "pvalue_adjusted": float("nan"), "n_compared": 0,
                "n_examples": 0, "confidence": self.confidence, "round": r}

    def _final(self, alive: np.ndarray, scores: np.ndarray, record: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        added = np.zeros(len(alive), dtype=bool)
        finite = np.isfinite(scores)
        if not finite.any():
            return np.zeros(len(alive), dtype=bool), added
        choice = int(alive[np.flatnonzero(scores == np.nanmax(scores))[0]])
        r = self._round
        if self._race and self.baseline is not None and len(alive) > 1:
            rows = np.flatnonzero(alive == self.baseline)
            if len(rows) and finite[rows[0]]:
                verdict = compare_with_baseline(self._example_matrix(alive), int(rows[0]), confidence=self.confidence)
                if self.baseline_rule == "evidence":  # the final round's leader; the baseline wins ties
                    base_score = scores[rows[0]]
                    verdict["choice"] = int(rows[0]) if base_score >= np.nanmax(scores) else \
                        int(np.flatnonzero(scores == np.nanmax(scores))[0])
                choice = int(alive[verdict["choice"]])
                verdict["rule"] = self.baseline_rule
                verdict.update(choice=choice, baseline=self.baseline, round=r,
                               challenger=int(alive[verdict["challenger"]]) if verdict["challenger"] >= 0 else -1)
                if self.confirm_folds is not None and verdict["challenger"] >= 0:
                    # the final round chose the challenger (best other setting); fresh evidence decides
                    others = [(s, i) for i, s in enumerate(scores) if np.isfinite(s) and alive[i] != self.baseline]
                    row = min(others, key=lambda t: (-t[0], alive[t[1]]))[1]
                    challenger = int(alive[row])
                    X = self._example_matrix(alive)
                    fr = confirm_vs_baseline(X[row], X[rows[0]], confidence=self.confidence)
                    verdict.update({k: fr[k] for k in ("difference", "ci_low", "ci_high", "pvalue", "n_examples")},
                                   pvalue_adjusted=float("nan"), n_compared=1, challenger=challenger,
                                   evidence="final round (chooses the challenger; the confirmation decides)")
                    self._verdict = verdict
                    self._choice = self.baseline  # until the confirmation says otherwise
                    self._start_confirm(challenger, dict(verdict))
                    record["vs_baseline"] = dict(verdict)
                    return alive == self.baseline, added
                self._verdict = verdict
                record["vs_baseline"] = dict(verdict)
            else:  # the baseline failed: nothing to compare with
                self._verdict = dict(self._no_challenger(r), choice=choice, error="the baseline's evaluation failed")
        elif self._race and self.baseline is not None and len(alive) == 1 and alive[0] == self.baseline:
            self._verdict = self._no_challenger(r)
        self._choice = choice
        return alive == choice, added

    @property
    def finished(self) -> bool:
        return self._finished

    def _ranking(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Candidates best first: the choice, then later last round first, higher score there, grid order."""
        C = self.n_candidates
        evaluated = self._evaluated
        last_round = np.array([np.flatnonzero(evaluated[:, c]).max() if evaluated[:, c].any() else -1
                               for c in range(C)])
        score = np.array([self._scores[last_round[c], c] if last_round[c] >= 0 else np.nan for c in range(C)])
        filled = np.where(np.isnan(score), -np.inf, score)
        chosen = np.zeros(C, dtype=int)
        if self._choice is not None:
            chosen[self._choice] = 1
        return np.lexsort((np.arange(C), -filled, -last_round, -chosen)), last_round, score

    def result(self) -> dict[str, Any]:
        order, last_round, score = self._ranking()
        C = self.n_candidates
        rank = np.empty(C, dtype=int)
        # equal (last round, score) share a rank, as GridSearchCV's rank_test_score ("min"); the choice is alone first
        key = [(c == self._choice, last_round[c], score[c] if np.isfinite(score[c]) else -np.inf) for c in order]
        for pos, c in enumerate(order):
            rank[c] = pos + 1 if pos == 0 or key[pos] != key[pos - 1] else rank[order[pos - 1]]
        best = int(order[0])
        tied = [int(c) for pos, c in enumerate(order) if key[pos] == key[0]]
        out = {"best": best, "estimates": score, "last_round": last_round, "rank": rank,
               "ranking": order, "scores": self._scores.copy(), "sizes": list(self.sizes),
               "rounds": [dict(r) for r in self._rounds], "tied": tied,
               "evaluations_ahead": int(self._n_asked - self._n_used)}
        if self._race:
            out["baseline"] = None if self._verdict is None else dict(self._verdict)
        return out
