"""The virtual clock: a strategy's run on ``W`` workers played out in simulated time.

:func:`clock_run` runs any :class:`~certa.engine.strategy.Strategy` with the runner's rules
(:func:`certa.engine.scheduling.scheduling_limits`: how many draws may be asked but not yet
told, how many submitted; outcomes told in the order asked; the executor running ``W`` of the
submitted evaluations at once, first in first out), but an evaluation takes a simulated time
drawn from a duration model (:class:`Durations`) instead of real time. Scores come from a score
model (:class:`~certa.planning.simulate.GaussianScores`, :class:`~certa.planning.simulate.ReplayScores`
or any ``score(params, seed)``), so 16-256 workers can be planned on a laptop.
:func:`certa.simulate` with ``workers=W`` repeats it over many runs and reports the wall time.

Each draw's duration derives from the run's seed and the draw's key alone, so a draw takes the
same simulated time whatever the number of workers and whatever else was asked before it: runs
on different numbers of workers compare draw for draw.
"""
from __future__ import annotations

import heapq
import json
import math
import zlib
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine.draws import Draw, Outcome
from ..engine.evaluators import Evaluator, FunctionEvaluator, execute
from ..engine.scheduling import AskTellLoop, check_max_in_flight, scheduling_limits
from ..engine.strategy import Strategy

#: Spawn-key tag of the duration streams (apart from every score seed).
_DURATION_KEY = 2**31 - 11


def _check_time(value: Any, what: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{what} must be a number of seconds, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{what} must be finite and >= 0 (seconds), got {value!r}")
    return v


class Durations:
    """How long each evaluation takes on the virtual clock (seconds, or any time unit).

    Build one with :func:`as_durations` (from a constant, a scipy frozen distribution, a
    function, recorded times per candidate), :func:`parse_duration` (the CLI's ``--duration``)
    or :func:`durations_from_store` (the times a certa store recorded).

    Subclasses implement :meth:`sample`; :meth:`for_draw` seeds it from the run's seed and the
    draw's key, so a draw's duration does not depend on the order of the asks.
    """

    description = "durations"

    def sample(self, candidate: int, rng: np.random.Generator) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def bind(self, names: Sequence[str]) -> Durations:
        """This model for candidates ``names`` (index ``i`` is ``names[i]``); checks it covers them."""
        return self

    def for_draw(self, draw: Draw, seed: int) -> float:
        """The duration of ``draw`` in the run with root seed ``seed``."""
        key = zlib.crc32(draw.key.encode("utf-8"))
        rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(_DURATION_KEY, key)))
        value = self.sample(draw.candidate, rng)
        try:
            return _check_time(value, "a duration")
        except ValueError:
            raise ValueError(f"{self.description} gave the duration {value!r} for candidate {draw.candidate} "
                             f"(draw {draw.key}); evaluation times must be finite numbers >= 0") from None

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.description}>"


class ConstantDurations(Durations):
    """Every evaluation takes ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = _check_time(seconds, "durations")
        if self.seconds <= 0:
            raise ValueError(f"a constant duration must be > 0, got {seconds!r}")
        self.description = f"constant {self.seconds:g}"

    def sample(self, candidate: int, rng: np.random.Generator) -> float:
        return self.seconds


class DistributionDurations(Durations):
    """Every evaluation's time drawn from one scipy frozen distribution (``dist.rvs``)."""

    def __init__(self, dist: Any, description: str | None = None) -> None:
        if not callable(getattr(dist, "rvs", None)):
            raise TypeError(f"expected a scipy frozen distribution (with .rvs), got {type(dist).__name__}")
        self.dist = dist
        if description is None:
            name = getattr(getattr(dist, "dist", None), "name", type(dist).__name__)
            description = f"{name} (mean {float(dist.mean()):.4g})" if callable(getattr(dist, "mean", None)) \
                else str(name)
        self.description = description

    def sample(self, candidate: int, rng: np.random.Generator) -> float:
        return float(np.asarray(self.dist.rvs(random_state=rng)).reshape(-1)[0])


class FunctionDurations(Durations):
    """Durations from ``function(candidate, rng) -> seconds`` (``rng`` a numpy Generator)."""

    def __init__(self, function: Callable[[int, np.random.Generator], float]) -> None:
        if not callable(function):
            raise TypeError(f"expected a function (candidate, rng) -> seconds, got {type(function).__name__}")
        self.function = function
        self.description = f"function {getattr(function, '__name__', type(function).__name__)}"

    def sample(self, candidate: int, rng: np.random.Generator) -> float:
        return self.function(int(candidate), rng)


class RecordedDurations(Durations):
    """Each candidate's evaluations take one of its recorded times, drawn at random.

    ``times`` maps each candidate's name to its recorded times (or is a list, one list per
    candidate index). A candidate with no recorded time takes one of all candidates' times
    (``pooled``) when ``fallback=True``; else binding fails naming it.
    """

    def __init__(self, times: Mapping[str, Sequence[float]] | Sequence[Sequence[float]], *, fallback: bool = False,
                 source: str | None = None) -> None:
        items = list(times.items()) if isinstance(times, Mapping) else list(enumerate(times))
        if not items:
            raise ValueError("recorded durations: no candidate has any")
        self.times: dict[Any, np.ndarray] = {}
        for name, values in items:
            if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
                values = [values]
            arr = np.array([_check_time(v, f"durations[{name!r}]") for v in values], dtype=float)
            if arr.size:
                self.times[name] = arr
        if not self.times:
            raise ValueError("recorded durations: no candidate has any")
        pooled = np.concatenate(list(self.times.values()))
        if not (pooled > 0).any():
            raise ValueError("recorded durations are all 0: nothing to plan a wall time with")
        self.pooled = pooled
        self.fallback = bool(fallback)
        self.by_index: list[np.ndarray] | None = None if isinstance(times, Mapping) else list(self.times.values())
        n = sum(a.size for a in self.times.values())
        self.description = (f"recorded in {source}" if source else "recorded") + \
            f" ({n} times of {len(self.times)} candidates, mean {pooled.mean():.4g})"

    def bind(self, names: Sequence[str]) -> RecordedDurations:
        bound = RecordedDurations.__new__(RecordedDurations)
        bound.__dict__.update(self.__dict__)
        if self.by_index is not None and all(isinstance(k, int) for k in self.times):
            if len(self.times) != len(names):
                raise ValueError(f"durations: {len(self.times)} lists of times for {len(names)} candidates")
            return bound
        missing = [n for n in names if n not in self.times]
        if missing and not self.fallback:
            raise ValueError(f"durations: no recorded time for candidates {missing[:5]}"
                             f"{' ...' if len(missing) > 5 else ''}; durations has {sorted(map(str, self.times))[:8]}")
        if len(missing) == len(names):
            raise ValueError(f"durations: none of the candidates {list(names)[:5]} has a recorded time (the store's "
                             f"candidates are {sorted(map(str, self.times))[:8]}); name the simulated candidates as "
                             "the store does (--names, or a --table with the same names)")
        bound.by_index = [self.times.get(n, self.pooled) for n in names]
        return bound

    def sample(self, candidate: int, rng: np.random.Generator) -> float:
        if self.by_index is None:
            raise RuntimeError("RecordedDurations.bind(names) first: the times are kept by candidate name")
        times = self.by_index[candidate]
        return float(times[rng.integers(times.size)])


def as_durations(value: Any) -> Durations:
    """A :class:`Durations` from what a user gives.

    Parameters
    ----------
    value : Durations, float, str, scipy frozen distribution, callable, mapping or list
        A number: every evaluation takes that long. A string: :func:`parse_duration`'s
        ``"0.25"``, ``"lognormal:MEAN,SD"``, ``"uniform:LOW,HIGH"`` or ``"exponential:MEAN"``.
        A scipy frozen distribution: each evaluation's time is a draw from it. A callable:
        ``f(candidate, rng) -> seconds``. A mapping of candidate names (or a list, by candidate
        index) to recorded times: each evaluation takes one of its candidate's times.

    Examples
    --------
    >>> as_durations(0.25).description
    'constant 0.25'
    >>> as_durations({"a": [1.0, 2.0], "b": [3.0]}).bind(["a", "b"]).description
    'recorded (3 times of 2 candidates, mean 2)'
    """
    if isinstance(value, Durations):
        return value
    if isinstance(value, str):
        return parse_duration(value)
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("durations must be a number of seconds, a distribution, a function or recorded times, got a bool")
    if isinstance(value, (int, float, np.integer, np.floating)):
        return ConstantDurations(value)
    if callable(getattr(value, "rvs", None)):
        return DistributionDurations(value)
    if callable(value):
        return FunctionDurations(value)
    if isinstance(value, Mapping) or (isinstance(value, (list, tuple, np.ndarray)) and len(value) > 0):
        return RecordedDurations(value)
    raise TypeError("durations must be a number of seconds, a 'lognormal:MEAN,SD'-style string, a scipy frozen "
                    "distribution, a function (candidate, rng) -> seconds, or recorded times per candidate; got "
                    f"{type(value).__name__}")


_SPECS = {"lognormal": 2, "uniform": 2, "exponential": 1}


def parse_duration(text: str) -> Durations:
    """Durations from the CLI's ``--duration`` text.

    ``"0.25"``: every evaluation takes 0.25 s. ``"lognormal:MEAN,SD"``: a lognormal with that
    mean and standard deviation of the times themselves (not of their log).
    ``"uniform:LOW,HIGH"`` and ``"exponential:MEAN"`` likewise.

    Examples
    --------
    >>> d = parse_duration("lognormal:2,0.5")
    >>> round(float(d.dist.mean()), 6), round(float(d.dist.std()), 6)
    (2.0, 0.5)
    """
    from scipy import stats

    if not isinstance(text, str):
        raise TypeError(f"a duration spec must be a str, got {type(text).__name__}")
    spec = text.strip()
    head, sep, rest = spec.partition(":")
    if not sep:
        try:
            value = float(spec)
        except ValueError:
            raise ValueError(f"duration {text!r}: expected seconds (e.g. 0.25) or one of "
                             f"{', '.join(k + ':...' for k in _SPECS)} (e.g. lognormal:0.3,0.1)") from None
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"duration {text!r}: a constant duration must be a finite number > 0")
        return ConstantDurations(value)
    kind = head.strip().lower()
    if kind not in _SPECS:
        raise ValueError(f"duration {text!r}: unknown distribution {head!r}; expected one of {sorted(_SPECS)}")
    try:
        args = [float(a) for a in rest.split(",")]
    except ValueError:
        raise ValueError(f"duration {text!r}: {kind} takes {_SPECS[kind]} comma-separated numbers") from None
    if len(args) != _SPECS[kind] or not all(math.isfinite(a) for a in args):
        raise ValueError(f"duration {text!r}: {kind} takes {_SPECS[kind]} finite comma-separated numbers")
    if kind == "lognormal":
        mean, sd = args
        if mean <= 0 or sd < 0:
            raise ValueError(f"duration {text!r}: lognormal needs a mean > 0 and an SD >= 0")
        sigma = math.sqrt(math.log1p((sd / mean) ** 2))
        dist = stats.lognorm(s=sigma, scale=mean * math.exp(-sigma ** 2 / 2)) if sd > 0 else None
        return DistributionDurations(dist, f"lognormal (mean {mean:g}, SD {sd:g})") if dist is not None \
            else ConstantDurations(mean)
    if kind == "uniform":
        low, high = args
        if low < 0 or high <= low:
            raise ValueError(f"duration {text!r}: uniform needs 0 <= LOW < HIGH")
        return DistributionDurations(stats.uniform(loc=low, scale=high - low), f"uniform ({low:g} to {high:g})")
    (mean,) = args
    if mean <= 0:
        raise ValueError(f"duration {text!r}: exponential needs a mean > 0")
    return DistributionDurations(stats.expon(scale=mean), f"exponential (mean {mean:g})")


def durations_from_store(path: str) -> RecordedDurations:
    """The evaluation times a certa SQLite store recorded, per candidate name.

    Every attempt that succeeded counts (``Outcome.duration``, the seconds the evaluation took
    in its worker). A simulated candidate the store has no time for takes one of all
    candidates' times.

    Raises
    ------
    ValueError
        If ``path`` is not a certa store or recorded no successful evaluation with a time.
    """
    from ..engine.store import SQLiteStore

    store = SQLiteStore.open_read_only(path)
    try:
        description = json.loads(store.meta().get("description") or "{}")
        rows = store.load()
    finally:
        store.close()
    names = description.get("candidates") or []
    times: dict[str, list[float]] = {}
    for row in rows:
        o = row.outcome
        if o.ok and o.duration > 0:
            c = row.draw.candidate
            name = names[c] if 0 <= c < len(names) else f"c{c}"
            times.setdefault(name, []).append(float(o.duration))
    if not times:
        raise ValueError(f"store {path!r} recorded no successful evaluation with a duration: nothing to plan with")
    return RecordedDurations(times, fallback=True, source=str(path))


@dataclass
class ClockRun:
    """One run on the virtual clock (:func:`clock_run`).

    Attributes
    ----------
    wall : float
        Simulated time from the first ask to the tell that finished the strategy.
    busy : float
        Worker time spent evaluating before ``wall`` (evaluations still running at the end
        count up to ``wall``).
    workers : int
    evaluations : int
        Draws the strategy asked.
    started : int
        Evaluations a worker started before the end (the rest were still queued, and a real run
        cancels them).
    told : int
        Outcomes told to the strategy.
    ahead : int
        Evaluations spent ahead: the strategy's ``result["evaluations_ahead"]`` when it reports
        one, else the draws asked but never told.
    result : dict
        ``strategy.result()``.
    """

    wall: float
    busy: float
    workers: int
    evaluations: int
    started: int
    told: int
    ahead: int
    result: dict[str, Any] = field(repr=False)

    @property
    def occupancy(self) -> float:
        """The workers' mean occupancy: ``busy / (workers * wall)``."""
        return self.busy / (self.workers * self.wall) if self.wall > 0 else math.nan


@dataclass
class _Job:
    draw: Draw
    outcome: Outcome
    duration: float
    order: int
    start: float = math.nan
    finish: float = math.nan
    collected: bool = False


class _Clock(AskTellLoop):
    """The runner's loop (:class:`~certa.engine.scheduling.AskTellLoop`) on simulated time: an
    evaluation runs when one of ``W`` workers is free, first submitted first, and takes its
    simulated duration; the loop waits by moving the clock to the next evaluation to finish."""

    def __init__(self, strategy: Strategy, evaluator: Evaluator, params: list[dict], model: Durations, workers: int,
                 seed: int, capacity: int, max_running: int) -> None:
        super().__init__(strategy, len(params), capacity, max_running, strategy.asks_ahead)
        self.evaluator, self.params, self.model, self.W, self.seed = evaluator, params, model, workers, seed
        self.running: list[_Job] = []          # submitted, not yet collected
        self.waiting: deque[_Job] = deque()    # submitted, not yet started (the executor's queue)
        self.active: list[tuple[float, int, _Job]] = []   # on a worker: (finish, order, job)
        self.jobs: list[_Job] = []
        self.now, self.told = 0.0, 0

    def n_running(self) -> int:
        return len(self.running)

    def ready(self, job: _Job) -> bool:
        return job.collected

    def submit(self, draw: Draw) -> _Job:
        duration = self.model.for_draw(draw, self.seed)
        outcome = execute(self.evaluator, self.params[draw.candidate], draw, 1, None)
        outcome.duration = duration
        job = _Job(draw, outcome, duration, len(self.jobs))
        self.jobs.append(job)
        if len(self.active) < self.W:
            self.start(job)
        else:
            self.waiting.append(job)
        self.running.append(job)
        return job

    def start(self, job: _Job) -> None:
        job.start, job.finish = self.now, self.now + job.duration
        heapq.heappush(self.active, (job.finish, job.order, job))

    def advance(self) -> None:
        """Move the clock to the next evaluation to finish; collect every one finished by then."""
        self.now = self.active[0][0]
        while self.active and self.active[0][0] <= self.now:
            heapq.heappop(self.active)[2].collected = True
        while self.waiting and len(self.active) < self.W:
            self.start(self.waiting.popleft())
        self.running = [j for j in self.running if not j.collected]

    def tell(self, job: _Job) -> None:
        self.strategy.tell(job.draw, job.outcome)
        self.told += 1


def clock_run(strategy: Strategy, score: Evaluator | Callable[[dict, int], float], n_candidates: int, *,
              workers: int, durations: Any = 1.0, seed: int = 0, max_in_flight: int | None = None,
              names: Sequence[str] | None = None) -> ClockRun:
    """Run ``strategy`` once on ``workers`` virtual workers; return its simulated wall time.

    The loop is the runner's (:func:`certa.engine.runner.run`): ``strategy.set_workers(workers)``,
    then asks while the strategy is not finished and the limits of
    :func:`~certa.engine.scheduling.scheduling_limits` allow, evaluations run ``workers`` at a
    time in the order submitted, and outcomes are told in the order asked. Evaluations never
    fail or retry here (a score model's evaluation is told as it comes back).

    Parameters
    ----------
    strategy : Strategy
        Used as given (not copied): pass a fresh one per run.
    score : Evaluator or callable
        ``score(params, seed) -> float`` with ``params = {"candidate": i}`` (a score model such
        as :class:`~certa.planning.simulate.GaussianScores`), or a ``FunctionEvaluator`` of one.
    n_candidates : int
    workers : int
        Evaluations run at once.
    durations : see :func:`as_durations`
        Evaluation times (default: each takes 1, so the wall time is in evaluation times).
    seed : int
        The run's root seed (the strategy's and the durations').
    max_in_flight : int or None
        As in :func:`~certa.engine.runner.run` (fixed plans only).
    names : list of str, optional
        Candidate names, for durations recorded by name (default ``c0, c1, ...``).

    Returns
    -------
    ClockRun

    Examples
    --------
    A fixed plan of 10 evaluations taking 2 s each, on 4 workers, ends after ``ceil(10/4) * 2``:

    >>> from certa.strategies import EqualAllocation
    >>> r = clock_run(EqualAllocation(10), lambda params, seed: 0.0, 2, workers=4, durations=2.0)
    >>> r.wall, r.evaluations, round(r.occupancy, 3)
    (6.0, 10, 0.833)
    """
    if not isinstance(strategy, Strategy):
        raise TypeError(f"strategy must be a certa Strategy, got {type(strategy).__name__}")
    evaluator = score if isinstance(score, Evaluator) else FunctionEvaluator(score) if callable(score) else None
    if evaluator is None:
        raise TypeError(f"score must be a function (params, seed) -> float or an Evaluator, got {type(score).__name__}")
    for what, v in (("workers", workers), ("n_candidates", n_candidates)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{what} must be a positive int, got {v!r}")
    max_in_flight = check_max_in_flight(max_in_flight)
    labels = list(names) if names is not None else [f"c{i}" for i in range(n_candidates)]
    if len(labels) != n_candidates:
        raise ValueError(f"names must give {n_candidates} names, got {len(labels)}")
    model = as_durations(durations).bind(labels)
    W, K, seed = int(workers), int(n_candidates), int(seed)
    params = [{"candidate": i} for i in range(K)]

    strategy.set_workers(W)
    capacity, max_running = scheduling_limits(strategy.max_pending, W, max_in_flight, asks_ahead=strategy.asks_ahead)
    strategy.start(K, seed)
    clock = _Clock(strategy, evaluator, params, model, W, seed, capacity, max_running)
    clock.loop()
    now, jobs, told = clock.now, clock.jobs, clock.told
    busy = sum(min(j.finish, now) - j.start for j in jobs if j.start <= now)
    result = strategy.result()
    ahead = result.get("evaluations_ahead")
    ahead = len(jobs) - told if ahead is None else int(np.sum(ahead))
    return ClockRun(wall=now, busy=float(busy), workers=W, evaluations=len(jobs),
                    started=sum(1 for j in jobs if j.start <= now), told=told, ahead=ahead, result=result)
