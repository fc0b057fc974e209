"""Planning by simulation: how many evaluations will a strategy need, and how often is it right?"""
from __future__ import annotations

import copy
import json
import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine.draws import derive_seed
from ..engine.evaluators import Evaluator, FunctionEvaluator, execute
from ..engine.runner import run
from ..engine.strategy import Strategy
from .clock import as_durations, clock_run


def _own_rng(seed: int, candidate: int) -> np.random.Generator:
    """The candidate's own stream for an evaluation seed: independent between candidates even
    when a paired strategy gives every candidate on a row the same seed."""
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(int(candidate),)))


class GaussianScores:
    """Simulated candidate ``i`` scores ``Normal(means[i], sds[i])``, independent between
    candidates (picklable)."""

    def __init__(self, means: Sequence[float], sds: Sequence[float]) -> None:
        self.means = np.asarray(means, dtype=float)
        self.sds = np.asarray(sds, dtype=float)

    def __call__(self, params: dict, seed: int) -> float:
        i = params["candidate"]
        return float(_own_rng(seed, i).normal(self.means[i], self.sds[i]))


class RungGaussianScores(Evaluator):
    """Simulated scores of a screen (:class:`certa.strategies.ScreenThenRace`): candidate ``i`` scores
    ``Normal(rung_means[k][i], sds[i])`` on rung ``k`` (a draw of size ``sizes[k]``) and
    ``Normal(means[i], sds[i])`` at full size, independent between candidates (picklable)."""

    def __init__(self, means: Sequence[float], sds: Sequence[float], rung_means: Sequence[Sequence[float]],
                 sizes: Sequence[int]) -> None:
        self.full = GaussianScores(means, sds)
        self.rungs = {int(n): GaussianScores(m, sds) for n, m in zip(sizes, rung_means, strict=True)}

    def evaluate(self, params: dict, draw: Any) -> float:
        return (self.full if draw.size is None else self.rungs[int(draw.size)])(params, draw.seed)

    def fingerprint(self) -> str:
        return "rung-gaussian"


def _check_rung_means(strategy: Strategy, rung_means: Any, n: int) -> np.ndarray:
    """``rung_means`` as a ``(rungs, n)`` array, one row per rung of a screening ``strategy``."""
    sizes = getattr(strategy, "sizes", None)
    if sizes is None or not getattr(strategy, "screens", False):
        raise ValueError(f"rung_means gives the means at each rung's training size: it needs a screening strategy "
                         f"(ScreenThenRace), got {type(strategy).__name__}")
    r = np.asarray(rung_means, dtype=float)
    if r.shape != (len(sizes), n) or not np.all(np.isfinite(r)):
        raise ValueError(f"rung_means must hold one row of {n} finite means per rung ({len(sizes)} rungs: sizes "
                         f"{list(sizes)}), got shape {r.shape}")
    return r


class ReplayScores:
    """Replays observed scores, drawn at random with replacement as the FIESTA paper does
    with its 500 scores per model.

    ``paired=False``: each evaluation of candidate ``i`` draws one of its stored scores from
    its own random position. ``paired=True``: the table's rows are paired (row ``r`` is one
    split and seed for every candidate, as in FIESTA's TDSA table, so every column has the
    same length); the row is drawn from the evaluation's seed alone, so every candidate
    evaluated with the same seed (a paired run's row) gets its score from the same row.
    """

    def __init__(self, table: Mapping[str, Sequence[float]], paired: bool = False) -> None:
        self.names = list(table)
        self.table = [np.asarray(table[n], dtype=float) for n in self.names]
        self.paired = bool(paired)
        if self.paired and len({t.size for t in self.table}) > 1:
            raise ValueError("paired rows need one score per row for every candidate; the table's lists have "
                             f"lengths {sorted({t.size for t in self.table})}")

    def __call__(self, params: dict, seed: int) -> float:
        i = params["candidate"]
        scores = self.table[i]
        rng = np.random.default_rng(seed) if self.paired else _own_rng(seed, i)
        return float(scores[rng.integers(scores.size)])


@dataclass
class WallTime:
    """The virtual clock's part of a :class:`SimulationReport` (``simulate(workers=W)``): per run."""

    workers: int
    durations: str
    wall: np.ndarray
    occupancy: np.ndarray
    started: np.ndarray
    ahead: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        w = self.wall
        return {"workers": self.workers, "durations": self.durations, "wall_mean": float(w.mean()),
                "wall_sd": float(w.std(ddof=1)) if w.size > 1 else 0.0, "wall_min": float(w.min()),
                "wall_p05": float(np.quantile(w, 0.05)), "wall_p95": float(np.quantile(w, 0.95)),
                "wall_max": float(w.max()), "occupancy_mean": float(np.nanmean(self.occupancy)),
                "busy_workers_mean": float(np.nanmean(self.occupancy) * self.workers),
                "started_mean": float(self.started.mean()), "ahead_mean": float(self.ahead.mean()),
                "ahead_max": int(self.ahead.max())}

    def __str__(self) -> str:
        d = self.to_dict()
        return "\n".join([
            f"on {self.workers} workers (virtual clock; evaluation time: {self.durations}):",
            (f"  wall time: mean {d['wall_mean']:.4g} (SD {d['wall_sd']:.3g}; 5-95 %: {d['wall_p05']:.4g} to "
             f"{d['wall_p95']:.4g})"),
            f"  workers busy: {d['occupancy_mean']:.1%} of the time ({d['busy_workers_mean']:.1f} of {self.workers})",
            (f"  evaluations started: mean {d['started_mean']:.1f}; spent ahead (not used by the decision): mean "
             f"{d['ahead_mean']:.1f}, max {d['ahead_max']}")])


@dataclass
class SimulationReport:
    """Outcome of :func:`simulate`."""

    strategy: dict[str, Any]
    names: list[str]
    true_best: int
    n_runs: int
    evaluations: np.ndarray
    chosen: np.ndarray
    lower_bound: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    tolerance: float = 0.0
    true_means: np.ndarray | None = None
    t_star: float | None = None
    confidence_reached: np.ndarray | None = None
    clock: WallTime | None = None

    @property
    def wall(self) -> np.ndarray | None:
        """Per run, the wall time on the virtual clock (``simulate(workers=...)``; else None)."""
        return None if self.clock is None else self.clock.wall

    @property
    def occupancy(self) -> np.ndarray | None:
        """Per run, the workers' mean occupancy on the virtual clock (``simulate(workers=...)``; else None)."""
        return None if self.clock is None else self.clock.occupancy

    @property
    def correct(self) -> np.ndarray:
        """Per run: chose the true best, or (with a tolerance) a candidate within it of the best."""
        if self.tolerance > 0 and self.true_means is not None:
            return self.true_means[self.chosen] >= self.true_means.max() - self.tolerance
        return self.chosen == self.true_best

    @property
    def p_correct(self) -> float:
        return float(np.mean(self.correct))

    @property
    def se_correct(self) -> float:
        p = self.p_correct
        return math.sqrt(max(p * (1 - p), 1e-12) / self.n_runs)

    def to_dict(self) -> dict[str, Any]:
        d = {"strategy": self.strategy, "candidates": self.names, "true_best": self.names[self.true_best],
             "n_runs": self.n_runs, "evaluations_min": int(self.evaluations.min()),
             "evaluations_mean": float(self.evaluations.mean()), "evaluations_max": int(self.evaluations.max()),
             "p_correct": self.p_correct, "se_correct": self.se_correct,
             "wrong_choice_rate": 1 - self.p_correct,
             "chosen_counts": {self.names[i]: int(c) for i, c in zip(*np.unique(self.chosen, return_counts=True))}}
        d["tolerance"] = self.tolerance
        if self.t_star is not None:
            d["t_star"] = self.t_star
        if self.lower_bound is not None:
            d["lower_bound"] = self.lower_bound
            d["ratio_to_lower_bound"] = float(self.evaluations.mean() / self.lower_bound)
            d["lower_bound_applies"] = self.strategy.get("stopping", "bayes") in ("glr", "paired")  # proven rules only
        if self.confidence_reached is not None and np.isfinite(self.confidence_reached).any():
            d["confidence_reached_mean"] = float(np.nanmean(self.confidence_reached))
            d["confidence_reached_min"] = float(np.nanmin(self.confidence_reached))
        if self.clock is not None:
            d.update(self.clock.to_dict())
        d.update(self.extra)
        return d

    def __str__(self) -> str:
        d = self.to_dict()
        lines = [f"{self.n_runs} simulated runs of {self.strategy.get('strategy')}",
                 f"evaluations: min {d['evaluations_min']}, mean {d['evaluations_mean']:.1f}, max {d['evaluations_max']}",
                 (f"chose the true best ({d['true_best']}) in {self.p_correct:.1%} of runs (SE {self.se_correct:.1%})"
                  if self.tolerance == 0 else
                  f"chose a candidate within {self.tolerance:g} of the best ({d['true_best']}) in {self.p_correct:.1%} "
                  f"of runs (SE {self.se_correct:.1%})")]
        if "confidence_reached_mean" in d:
            lines.append(f"confidence reached at the end of a run: mean {d['confidence_reached_mean']:.4f}, "
                         f"min {d['confidence_reached_min']:.4f}")
        if self.t_star is not None:
            name = "T*(mu)" if self.tolerance == 0 else f"T*_eps(mu) (eps {self.tolerance:g})"
            lines.append(f"characteristic time {name}: {self.t_star:.2f}")
        if self.lower_bound is not None:
            lines.append(f"lower bound on the mean evaluations of any delta-correct method: {self.lower_bound:.1f} "
                         f"(this strategy: {d['ratio_to_lower_bound']:.2f}x)")
            rule = self.strategy.get("stopping", "bayes")
            if rule in ("bayes", "gk16"):
                what = ("the Bayes stopping rule is not one" if rule == "bayes" else
                        "the gk16 rule's heuristic threshold is calibrated by simulation, not proven")
                lines.append(f"  (the bound is for methods wrong with probability at most delta; {what}, so it may "
                             "use fewer evaluations than the bound: use --stopping glr for a delta-correct rule)")
        if "screen_miss_rate" in d:
            within = "" if self.tolerance == 0 else f" (within {self.tolerance:g})"
            lines.append(f"the screen: {d['finalists_mean']:.1f} finalists on average; none of them is the true "
                         f"best{within} in {d['screen_miss_rate']:.1%} of runs (SE {d['screen_miss_se']:.1%}): "
                         "measured, not claimed")
            if self.strategy.get("race_budget") is not None:   # the best for a budget: its claim is the certified one
                lines.append(f"the race among the finalists chose their best in {1 - d['finalist_wrong_rate']:.1%} of "
                             "runs (for a budget: what it claims is the certified tolerance, below)")
            else:
                lines.append(f"the race among the finalists chose one more than {self.tolerance:g} below their best "
                             f"in {d['finalist_wrong_rate']:.1%} of runs (claimed: at most "
                             f"{1 - self.strategy.get('confidence', 0.95):.3g})")
        if "certified_wrong_rate" in d and self.strategy.get("confidence") is not None:
            among = " among the finalists" if "screen_miss_rate" in d else ""
            lines.append(f"the certified tolerance (median {d['certified_median']:.3g}, stated in "
                         f"{d['certified_share']:.1%} of runs) was exceeded{among} in {d['certified_wrong_rate']:.1%} "
                         f"of runs (SE {d['certified_wrong_se']:.1%}; claimed: at most "
                         f"{1 - self.strategy['confidence']:.3g})")
        if self.clock is not None:
            lines.append(str(self.clock))
        return "\n".join(lines)


DRIVERS = ("direct", "runner")


def run_direct(strategy: Strategy, evaluator: FunctionEvaluator, n_candidates: int, seed: int) -> dict[str, Any]:
    """One simulated run without the runner's bookkeeping; returns ``strategy.result()``.

    The same loop as :func:`certa.engine.runner.run` with the inline executor and no
    store: up to ``max_pending`` draws are asked (2 when the strategy sets none, as the
    runner does for one worker), each evaluated with the engine's ``execute`` the moment it
    is asked, and outcomes are told in the order asked. Hence the same result as ``run``
    for the same seed (checked in the tests).

    Examples
    --------
    >>> from certa.strategies import TopTwoThompson
    >>> ev = FunctionEvaluator(GaussianScores([0.0, 3.0], [1.0, 1.0]))
    >>> run_direct(TopTwoThompson(0.9), ev, 2, seed=1)["best"]
    1
    """
    if not isinstance(strategy, Strategy):
        raise TypeError(f"strategy must be a certa Strategy, got {type(strategy).__name__}")
    params = [{"candidate": i} for i in range(n_candidates)]
    capacity = strategy.max_pending if strategy.max_pending is not None else 2
    strategy.start(n_candidates, int(seed))
    queue: deque = deque()
    while True:
        while not strategy.finished and len(queue) < capacity:
            draw = strategy.ask()
            if draw is None:
                break
            queue.append((draw, execute(evaluator, params[draw.candidate], draw, 1, None)))
        if strategy.finished or not queue:
            if not strategy.finished and not queue:
                raise RuntimeError(f"{type(strategy).__name__} is not finished but asks for nothing")
            break
        strategy.tell(*queue.popleft())
    return strategy.result()


def _one_run(strategy: Strategy, evaluator: FunctionEvaluator, n_candidates: int, seed: int,
             driver: str, clock: tuple | None = None) -> tuple:
    """``(evaluations, chosen, confidence)`` of one run, plus on the virtual clock ``(wall, busy
    fraction, started, spent ahead)``."""
    strat = copy.deepcopy(strategy)
    # the per-step belief history is not reported: lets the Bayesian rule skip the quadrature
    # whenever a bound shows it cannot stop (same decisions, see thompson._Confident)
    if hasattr(strat, "_track_belief"):
        strat._track_belief = False
    if clock is not None:
        workers, durations, max_in_flight, labels = clock
        r = clock_run(strat, evaluator, n_candidates, workers=workers, durations=durations, seed=seed,
                      max_in_flight=max_in_flight, names=labels)
        n_eval = int(np.sum(r.result["evaluations"])) if "evaluations" in r.result else r.evaluations
        return (n_eval, int(r.result["best"]), float(r.result.get("confidence", np.nan)), r.wall, r.occupancy,
                r.started, r.ahead, r.result.get("finalists"), _certified(r.result))
    if driver == "direct":
        res = run_direct(strat, evaluator, n_candidates, seed)
        n_eval = int(np.sum(res["evaluations"])) if "evaluations" in res else -1
        return n_eval, int(res["best"]), float(res.get("confidence", np.nan)), res.get("finalists"), _certified(res)
    sel = run(strat, evaluator, [{"candidate": i} for i in range(n_candidates)], random_state=seed)
    res = sel.result
    return ((int(np.sum(res["evaluations"])) if "evaluations" in res else sel.n_evaluations), sel.best_index,
            float(res.get("confidence", np.nan)), res.get("finalists"), _certified(res))


def _certified(result: dict[str, Any]) -> float:
    """The tolerance a run certified at its confidence (nan for a strategy that states none)."""
    return float(result.get("certified_tolerance", np.nan))


def _run_chunk(strategy: Strategy, evaluator: FunctionEvaluator, n_candidates: int, random_state: int,
               runs: Sequence[int], driver: str, clock: tuple | None = None) -> list[tuple]:
    return [_one_run(strategy, evaluator, n_candidates, derive_seed(random_state, r), driver, clock) for r in runs]


def simulate(strategy: Strategy, *, means: Sequence[float] | None = None, sds: Sequence[float] | None = None,
             table: Mapping[str, Sequence[float]] | None = None, n_runs: int = 500, random_state: int = 0,
             names: Sequence[str] | None = None, n_jobs: int = 1, driver: str = "direct",
             paired_rows: bool = False, workers: int | None = None, durations: Any = None,
             max_in_flight: int | None = None, rung_means: Sequence[Sequence[float]] | None = None) -> SimulationReport:
    """Run ``strategy`` ``n_runs`` times against simulated candidates.

    Give either ``means`` and ``sds`` (Gaussian candidates) or ``table``
    (observed scores per candidate, replayed at random). Run ``r`` has its own
    seed ``derive_seed(random_state, r)``, so the report does not depend on
    ``n_jobs``. ``paired_rows=True`` (``table`` only) replays the table's rows whole: every
    candidate evaluated with one seed scores from the same row (:class:`ReplayScores`); a
    paired strategy then sees the table's correlation between candidates. ``driver="direct"`` runs the strategy's ask/tell loop without the
    runner's bookkeeping (same results as ``driver="runner"``, which goes through
    :func:`certa.engine.runner.run`, about 10x faster).

    ``workers=W`` plays each run on a virtual clock with ``W`` workers
    (:func:`certa.planning.clock.clock_run`: the runner's scheduling rules, evaluations taking
    ``durations``) and adds to the report the wall time of each run, the workers' occupancy, the
    evaluations started and those spent ahead. ``durations`` (with ``workers``): a constant, a
    ``"lognormal:MEAN,SD"``-style string, a scipy frozen distribution, a function
    ``(candidate, rng) -> seconds``, recorded times per candidate name, or
    :func:`~certa.planning.clock.durations_from_store`'s; default 1 (wall time in evaluation
    times). ``max_in_flight`` is the runner's, for fixed plans.

    ``rung_means`` (with ``means``, for a screening strategy, :class:`certa.strategies.ScreenThenRace`):
    a score model per rung, one row of means per rung's training size (``means`` are the full-size
    ones, what the choice is judged by); the report adds the screen's miss rate (runs whose finalists
    hold no candidate within the tolerance of the true best) and the race's wrong-choice rate among
    the finalists (runs whose choice is more than the tolerance below the best finalist: at most
    ``1 - confidence`` for a calibrated race).

    For a strategy that certifies a tolerance when it stops (the paired rule, and screen then race:
    ``result()["certified_tolerance"]``) the report adds how often that claim was wrong,
    ``certified_wrong_rate`` (the choice more than the certified tolerance below the best, of the
    finalists for a screen; at most ``1 - confidence`` for a calibrated rule), with its median.

    Returns
    -------
    SimulationReport
        Evaluations spent per run (every evaluation asked, including those in
        flight when the strategy stopped), the choice of each run, the share
        of runs that chose the true best and, for Gaussian candidates with a
        fixed-confidence strategy, the lower bound ``T*(mu) kl(delta, 1-delta)``.

    Examples
    --------
    >>> from certa.strategies import TopTwoThompson
    >>> rep = simulate(TopTwoThompson(0.9), means=[0.0, 1.0], sds=[1.0, 1.0], n_runs=5)
    >>> rep.n_runs
    5
    >>> rep2 = simulate(TopTwoThompson(0.9), means=[0.0, 1.0], sds=[1.0, 1.0], n_runs=5, driver="runner")
    >>> bool((rep.evaluations == rep2.evaluations).all())
    True

    On 4 workers, each evaluation taking 0.5 s: top-two asks one evaluation at a time, so one
    worker of 4 is busy and a run takes 0.5 s per evaluation:

    >>> rep = simulate(TopTwoThompson(0.9), means=[0.0, 1.0], sds=[1.0, 1.0], n_runs=5, workers=4, durations=0.5)
    >>> bool((rep.wall == 0.5 * rep.evaluations).all()), rep.occupancy.round(3).tolist()
    (True, [0.25, 0.25, 0.25, 0.25, 0.25])
    """
    if not isinstance(strategy, Strategy):
        raise TypeError(f"strategy must be a certa Strategy, got {type(strategy).__name__}")
    if isinstance(n_runs, bool) or not isinstance(n_runs, int) or n_runs < 1:
        raise ValueError(f"n_runs must be a positive int, got {n_runs!r}")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive int, got {n_jobs!r}")
    if driver not in DRIVERS:
        raise ValueError(f"driver must be one of {DRIVERS}, got {driver!r}")
    if (table is None) == (means is None):
        raise ValueError("give either means (with sds) or table, not both or neither")
    if paired_rows and table is None:
        raise ValueError("paired_rows replays a table's rows whole: give table")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1):
        raise ValueError(f"workers must be a positive int or None, got {workers!r}")
    if workers is not None and driver != "direct":
        raise ValueError(f"workers plays the runs on the virtual clock, its own driver: leave driver at 'direct', got "
                         f"{driver!r}")
    if workers is None and (durations is not None or max_in_flight is not None):
        raise ValueError("durations and max_in_flight plan a wall time on the virtual clock: give workers too")
    lower = None
    t_star = None
    tolerance = float(getattr(strategy, "tolerance", 0.0))
    if table is not None:
        if not isinstance(table, Mapping) or len(table) < 2:
            raise ValueError("table must map at least two candidate names to lists of observed scores")
        for k, v in table.items():
            if isinstance(v, (str, bytes, Mapping)) or not hasattr(v, "__len__") or len(v) < 1:
                raise ValueError(f"table[{k!r}] must be a non-empty list of finite scores, got {v!r:.80}")
            bad = next((x for x in v if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.number))),
                       None) if not isinstance(v, np.ndarray) or v.dtype.kind not in "iuf" else None
            if bad is not None:
                raise ValueError(f"table[{k!r}] must hold numbers (scores), got {bad!r} of type {type(bad).__name__}")
            if not np.all(np.isfinite(np.asarray(v, dtype=float))):
                raise ValueError(f"table[{k!r}] must be a non-empty list of finite scores")
        source: Any = ReplayScores(table, paired=paired_rows)
        labels = list(table)
        true_means = np.array([np.mean(t) for t in source.table])
    else:
        if sds is None:
            raise ValueError("means needs sds (one standard deviation per candidate)")
        m, s = np.asarray(means, dtype=float), np.asarray(sds, dtype=float)
        if s.size == 1 and m.ndim == 1:   # one SD for every candidate
            s = np.full(m.shape, float(s.reshape(-1)[0]))
        if m.ndim != 1 or m.shape != s.shape or m.size < 2:
            raise ValueError(f"means and sds must be 1-D of the same length (or one SD for all), at least 2 "
                             f"candidates; got {m.size} means and {s.size} SDs")
        if np.any(s <= 0) or not np.all(np.isfinite(m)) or not np.all(np.isfinite(s)):
            raise ValueError("sds must be positive and means and sds finite")
        source = GaussianScores(m, s) if rung_means is None else \
            RungGaussianScores(m, s, _check_rung_means(strategy, rung_means, m.size), strategy.sizes)
        labels = list(names) if names is not None else [f"c{i}" for i in range(m.size)]
        true_means = m
        if hasattr(strategy, "confidence") and (np.sum(m == m.max()) == 1 or tolerance > 0):
            from .lower_bound import bernoulli_kl, characteristic_time

            t_star = float(characteristic_time(m, s, tolerance)[0])
            delta = 1.0 - strategy.confidence
            lower = t_star * bernoulli_kl(delta, 1.0 - delta)
    if np.sum(true_means == true_means.max()) > 1 and tolerance == 0:
        raise ValueError("the simulated candidates have no unique best (two equal highest means)")
    true_best = int(np.argmax(true_means))
    if rung_means is not None and table is not None:
        raise ValueError("rung_means is a Gaussian score model per rung: give it with means and sds, not table")
    evaluator = source if isinstance(source, Evaluator) else FunctionEvaluator(source)
    K = len(labels)
    clock = None
    if workers is not None:
        from ..engine.scheduling import check_max_in_flight

        model = as_durations(1.0 if durations is None else durations)
        model.bind(labels)  # a recorded time for every candidate: refused here, before any run
        clock = (int(workers), model, check_max_in_flight(max_in_flight), labels)
    if n_jobs == 1 or n_runs < 2:
        pairs = _run_chunk(strategy, evaluator, K, random_state, range(n_runs), driver, clock)
    else:
        from joblib.externals.loky import get_reusable_executor  # joblib's copy (see executors.py)

        # many small chunks balance the load; results are put back in run order
        n_chunks = min(n_runs, 8 * n_jobs)
        chunks = [list(c) for c in np.array_split(np.arange(n_runs), n_chunks)]
        pool = get_reusable_executor(max_workers=n_jobs, timeout=60)
        futures = [pool.submit(_run_chunk, strategy, evaluator, K, random_state, c, driver, clock) for c in chunks]
        pairs = [p for f in futures for p in f.result()]
    spent = np.array([p[0] for p in pairs], dtype=int)
    chosen = np.array([p[1] for p in pairs], dtype=int)
    reached = np.array([p[2] for p in pairs], dtype=float)
    report = SimulationReport(strategy=strategy.spec(), names=labels, true_best=true_best, n_runs=n_runs,
                              evaluations=spent, chosen=chosen, lower_bound=lower, tolerance=tolerance,
                              true_means=np.asarray(true_means, dtype=float), t_star=t_star,
                              confidence_reached=reached)
    if rung_means is not None:
        report.extra.update(_screen_rates([p[-2] for p in pairs], chosen, np.asarray(true_means, dtype=float),
                                          tolerance))
    certified = np.array([p[-1] for p in pairs], dtype=float)
    if np.isfinite(certified).any() or np.isinf(certified).any():
        report.extra.update(_certified_rates(certified, [p[-2] for p in pairs], chosen,
                                             np.asarray(true_means, dtype=float)))
    if clock is not None:
        report.clock = WallTime(workers=clock[0], durations=clock[1].description,
                                wall=np.array([p[3] for p in pairs], dtype=float),
                                occupancy=np.array([p[4] for p in pairs], dtype=float),
                                started=np.array([p[5] for p in pairs], dtype=int),
                                ahead=np.array([p[6] for p in pairs], dtype=int))
    return report


def _certified_rates(certified: np.ndarray, finalists: list, chosen: np.ndarray, means: np.ndarray) -> dict[str, Any]:
    """How often the certified tolerance was wrong: the choice more than it below the best (of the
    finalists, for a screen), over the runs (one that certified none, ``inf``, claims nothing)."""
    best = np.array([means[list(f)].max() if f else means.max() for f in finalists])
    gap = best - means[chosen]
    wrong = gap > certified + 1e-12
    n = certified.size
    finite = certified[np.isfinite(certified)]
    return {"certified_wrong_rate": float(wrong.mean()),
            "certified_wrong_se": math.sqrt(max(wrong.mean() * (1 - wrong.mean()), 1e-12) / n),
            "certified_share": float(finite.size / n),
            "certified_median": float(np.median(finite)) if finite.size else float("nan"),
            "certified_mean": float(finite.mean()) if finite.size else float("nan"),
            "gap_mean": float(gap.mean())}


def _screen_rates(finalists: list, chosen: np.ndarray, means: np.ndarray, tolerance: float) -> dict[str, Any]:
    """The screen's miss rate and the race's wrong-choice rate among the finalists, over the runs."""
    top = means.max()
    missed = np.array([not np.any(means[list(f or [])] >= top - tolerance) for f in finalists])
    wrong = np.array([bool(f) and means[c] < means[list(f)].max() - tolerance for f, c in zip(finalists, chosen)])
    n = len(finalists)
    se = math.sqrt(max(missed.mean() * (1 - missed.mean()), 1e-12) / n)
    return {"screen_miss_rate": float(missed.mean()), "screen_miss_se": se, "finalist_wrong_rate": float(wrong.mean()),
            "finalists_mean": float(np.mean([len(f or []) for f in finalists]))}


def load_score_table(path: str) -> dict[str, list[float]]:
    """Read ``{"name": [score, ...], ...}`` from a JSON file.

    Raises
    ------
    ValueError
        Naming the file (and the line and column for malformed JSON) if it is not UTF-8
        text, not JSON, or not a mapping of names to lists of numbers (booleans are refused).
    """
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a UTF-8 text file (a binary file?): byte {exc.start}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: line {exc.lineno}, column {exc.colno}: invalid JSON ({exc.msg})") from None
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise ValueError(f"{path}: expected a JSON object mapping candidate names to lists of scores")
    for name, scores in data.items():
        for i, v in enumerate(scores):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ValueError(f"{path}: scores of {name!r} must be numbers, item {i} is {json.dumps(v)}")
    return data
