"""Whether a run screens (issue 33): the fronts' ``screen`` argument, the rule that decides it
when not given, and the :class:`certa.strategies.ScreenThenRace` it builds.

The rule (``docs/screen.md``, "The default decides"): screen when there are at least
:data:`MIN_CANDIDATES` candidates and the screen's most cost is below the plain race's least
(:func:`break_even`): by the count alone on a large grid, else when an evaluation's time grows with
the training size at least like ``size^break_even``, measured before the run by timing a few
candidates on the first rows of the screen's first and last rungs (:func:`cost_exponent`; the run
reuses those evaluations). Fits whose cost does not shrink with the
training size (k-NN, where prediction dominates) and small grids race every candidate at full size.
"""
from __future__ import annotations

import functools
import math
import time
from typing import Any

import numpy as np

from ..engine.draws import Draw
from ..engine.evaluators import Evaluator
from ..strategies._paired import EXIT_MIXTURE, EXIT_RANK_SHARE, PRIOR_MIXTURE, log_e_process_mixture, rank_shares
from ..strategies.screen import FACTOR, MIN_FINALISTS, RUNG_BUDGET, ScreenThenRace, rung_counts, rung_rows, screen_sizes
from ._budget import default_max_evals, resolve_max_evals

__all__ = ["EXIT_ROWS", "MIN_CANDIDATES", "RACE_ROWS", "ReusingEvaluator", "ScreenDecision", "break_even", "check_screen",
           "cost_exponent", "decide_screen", "first_rows", "plain_race_least", "probe_draws", "screen_cost", "screen_strategy"]

#: The rule screens a grid of at least this many candidates (fewer: at most one rung, little to save).
MIN_CANDIDATES = 16
#: Candidates timed by the rule (spread over the grid), each at two sizes.
PROBES = 6
#: Each timed this many times; the shortest counts (other jobs on the machine only add time).
REPEATS = 3
#: The default of a screened run (``tolerance="auto"``, ``max_evals="auto"``) is the best for a budget:
#: the race runs for the best until it has spent this many full-size evaluations per candidate of the
#: grid (GridSearchCV(cv=5) spends 5), at least :data:`RACE_MIN_ROWS` rows per finalist, and then
#: states the tolerance it has certified (docs/screen.md, "What the default asks").
RACE_PER_CANDIDATE = 1.0
RACE_MIN_ROWS = 10

class ScreenDecision(dict):
    """What decided ``screen`` (JSON-able): ``screen`` (bool), ``reason``, and the timings if measured."""


def check_screen(screen: Any) -> bool | str:
    """``screen`` as given: True, False or "auto" (``None`` is "auto")."""
    if screen is None or (isinstance(screen, str) and screen == "auto"):
        return "auto"
    if isinstance(screen, (bool, np.bool_)):
        return bool(screen)
    raise ValueError(f"screen must be True, False or 'auto', got {screen!r}")


def probe_draws(candidate: int, sizes: list[int], n_candidates: int, n_train: int, seed: int,
                repeats: int = REPEATS) -> list[list[Draw]]:
    """The timing draws of one probe candidate, exactly the draws the screen asks for it (same key, seed
    and size), so their outcomes can serve the run: rows ``0 .. repeats-1`` of the first rung (at
    ``sizes[0]``) and of the last rung (at ``sizes[-1]``; with one rung, of the race at ``n_train``),
    at most as many rows as the rung has."""
    from ..engine.draws import row_seed
    from ..strategies.screen import rung_rows, rung_seed

    counts = rung_counts(n_candidates, len(sizes))
    rows0 = max(1, min(repeats, rung_rows(counts[0])))
    out = [[Draw(candidate, "subset", (0, r), seed=row_seed(rung_seed(seed, 0), r), size=sizes[0])
            for r in range(rows0)]]
    last = len(sizes) - 1
    if last > 0:
        rows = max(1, min(repeats, rung_rows(counts[last])))
        out.append([Draw(candidate, "subset", (last, r), seed=row_seed(rung_seed(seed, last), r), size=sizes[last])
                    for r in range(rows)])
    else:
        out.append([Draw(candidate, "split", (r,), seed=row_seed(seed, r)) for r in range(repeats)])
    return out


def cost_exponent(evaluator: Evaluator, candidates: list, n_train: int, seed: int,
                  probes: int = PROBES, *, sizes: list[int] | None = None,
                  memo: dict | None = None) -> tuple[float, list[list[float]]]:
    """``a`` in ``time ~ size^a``: a few candidates (spread over the list) timed at the screen's first
    and last rung sizes (``sizes``; default :func:`screen_sizes`, e.g. ``n_train / 27`` and ``n_train / 3``
    for 64 candidates), the shortest of up to :data:`REPEATS` evaluations each, in this process. The
    evaluations are the run's own draws (:func:`probe_draws`: different rows of the rung, so no cache
    of a repeated evaluation can hide the cost); their results go to ``memo`` (draw key -> result),
    which the run then uses instead of evaluating them again. The time is the whole evaluation's
    (fit and score: what the run spends) in CPU time of this process, all its threads.

    Returns ``(a, [[t_small, t_large], ...])``; ``a`` is the log of the ratio of the summed times over
    the log of the ratio of the sizes.
    """
    k = len(candidates)
    if sizes is None:
        sizes = screen_sizes(k, n_train)
    if not sizes:
        raise ValueError(f"{k} candidates on {n_train} training examples leave no rung to time")
    large = sizes[-1] if len(sizes) > 1 else n_train
    picks = sorted({int(round(i * (k - 1) / max(probes - 1, 1))) for i in range(min(probes, k))})
    times = []
    found: dict[str, Any] = {}
    for c in picks:
        row = []
        for draws in probe_draws(c, sizes, k, n_train, seed):
            best = math.inf
            for draw in draws:
                t0 = time.process_time()
                try:
                    found[draw.key] = evaluator.evaluate(candidates[c].params, draw)
                except Exception:  # noqa: BLE001 - a failing candidate says nothing of cost; the run records failures
                    best = math.nan
                    break
                best = min(best, time.process_time() - t0)
            if not math.isfinite(best):
                row = []
                break
            row.append(best)
        if row:
            times.append(row)
    if memo is not None:
        memo.update(found)
    if not times:
        return float("nan"), times
    ts, tl = sum(t[0] for t in times), sum(t[1] for t in times)
    a = math.log(max(tl, 1e-9) / max(ts, 1e-9)) / math.log(large / sizes[0])
    return a, times


class ReusingEvaluator(Evaluator):
    """``evaluator`` with the results of the rule's timing evaluations (``memo``: draw key -> result) handed
    back when the run asks for the same draw of the same candidate (each once), so the timing is not paid
    twice. Everything else, the fingerprint included, is ``evaluator``'s."""

    def __init__(self, evaluator: Evaluator, memo: dict, candidates: list) -> None:
        self.evaluator = evaluator
        self.memo = {k: (candidates[int(k.split("/")[1][1:])].params, v) for k, v in memo.items()}

    def evaluate(self, params: dict[str, Any], draw: Draw) -> Any:
        hit = self.memo.pop(draw.key, None)
        if hit is not None and hit[0] == params:
            return hit[1]
        return self.evaluator.evaluate(params, draw)

    def fingerprint(self) -> str:
        return self.evaluator.fingerprint()

    def fingerprint_parts(self) -> dict[str, str]:
        return self.evaluator.fingerprint_parts()

    def check_candidates(self, candidates: list) -> None:
        self.evaluator.check_candidates(candidates)

    def __getattr__(self, name: str) -> Any:
        if name in ("evaluator", "memo") or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.evaluator, name)


def resolve_tolerance(tolerance: Any) -> float:
    """``tolerance="auto"``: 0 (the best; a screened run's default adds a budget, :func:`race_budget`)."""
    if isinstance(tolerance, str):
        if tolerance != "auto":
            raise ValueError(f"tolerance must be a number >= 0 or 'auto', got {tolerance!r}")
        return 0.0
    return tolerance


def race_budget(n_candidates: int, n_finalists: int) -> int:
    """The default race's budget, in full-size evaluations: :data:`RACE_PER_CANDIDATE` per candidate of
    the grid, at least :data:`RACE_MIN_ROWS` rows of ``n_finalists``.

    Examples
    --------
    >>> race_budget(250, 10), race_budget(64, 3), race_budget(20, 7)
    (250, 64, 70)
    """
    return int(max(math.ceil(RACE_PER_CANDIDATE * n_candidates), RACE_MIN_ROWS * n_finalists))


def race_plan(tolerance: Any, max_evals: Any, n_candidates: int, n_finalists: int) -> tuple[float, int | None, int | None]:
    """A screened race's ``(tolerance, max_evals, race_budget)``. Both ``"auto"``: the best for a
    budget (tolerance 0, :func:`race_budget`); a given tolerance: the best within it at the confidence
    (``max_evals="auto"``: 200 evaluations per finalist); a given ``max_evals``: a cap."""
    tol = resolve_tolerance(tolerance)
    if isinstance(max_evals, str):
        resolve_max_evals(max_evals, 0)   # "auto", or a clear error
        if isinstance(tolerance, str):
            return tol, None, race_budget(n_candidates, n_finalists)
        max_evals = default_max_evals(n_finalists)
    return tol, max_evals, None


def n_train_of(n_samples: int, test_size: Any) -> int | None:
    """The training part of a random split of ``n_samples`` (``None`` if ``test_size`` cannot split them)."""
    from sklearn.model_selection._split import _validate_shuffle_split

    try:
        return int(_validate_shuffle_split(n_samples, test_size, None)[0])
    except (ValueError, TypeError):
        return None


@functools.lru_cache(maxsize=256)
def first_rows(n_candidates: int, confidence: float = 0.95) -> tuple[int, int]:
    """``(race rows, exit rows)``: the earliest row at which the paired race of ``n_candidates`` can rule
    a candidate out, one in the upper two thirds of the first row (its contrast with the prior
    precision alone) and one in the lower third (the early exit's mixture): the first row ``N`` whose
    contrast (``N - 1`` differences after the first row) can carry ``log(1 / (w_1 delta))`` against
    the first-ranked rival, at the most the e-process gathers from ``N - 1`` differences whatever
    their size (:mod:`certa.strategies._paired`, "The early exit").

    Examples
    --------
    >>> first_rows(64), first_rows(64, 0.8)
    ((6, 4), (5, 3))
    """
    need = math.log(1.0 / (float(rank_shares(max(int(n_candidates), 3))[0]) * (1.0 - float(confidence))))

    def first(mixture: Any) -> int:
        for n in range(2, 1000):   # the most n - 1 differences carry: their mean huge against their SD
            if float(log_e_process_mixture(n - 1, 1.0, 1e-14, 0.0, mixture)) >= need:
                return n
        return 1000

    return first(PRIOR_MIXTURE), first(EXIT_MIXTURE)


#: At confidence 0.95 the plain paired race rules nothing out before its 6th row (its first row ranks
#: each candidate's rivals, the e-processes need 5 more), except a candidate in the lower third of the
#: first row, whose contrast mixes in the early exit (docs/adaptive.md, "The early exit") and can leave
#: at its 4th: :func:`plain_race_least` counts both, at the run's confidence (:func:`first_rows`).
RACE_ROWS, EXIT_ROWS = first_rows(MIN_CANDIDATES)


def screen_cost(n_candidates: int, sizes: list[int], n_train: int, exponent: float,
                budget: int | None = RUNG_BUDGET, confidence: float = 0.95) -> float:
    """The most the screen costs, in full-size evaluations, if an evaluation's time grows like
    ``size^exponent``: every rung's rows (:func:`~certa.strategies.screen.rung_rows`) for the most
    candidates it can hold, each at ``(size / n_train)^exponent``, and the finalists' first
    rows at full size (the race's first row that can rule one out, :func:`first_rows`: 6 at 0.95).

    Examples
    --------
    >>> screen_cost(64, [44, 133, 400], 1200, 0.0)     # 64 x 2 + 22 x 5 + 8 x 10 + 3 x 6
    336.0
    """
    counts = rung_counts(n_candidates, len(sizes))
    cost = sum(c * rung_rows(c, budget=budget) * (s / n_train) ** exponent for c, s in zip(counts, sizes))
    return float(cost + first_rows(n_candidates, confidence)[0] * counts[-1])


def plain_race_least(n_candidates: int, confidence: float = 0.95) -> int:
    """What the plain paired race surely spends, in full-size evaluations: its first rows that can rule a
    candidate out (:func:`first_rows`: 6 at confidence 0.95) of every candidate, fewer (4) for those in
    the lower third of the first row (ranks above ``EXIT_RANK_SHARE * n``), who can leave early.

    Examples
    --------
    >>> plain_race_least(64), plain_race_least(24)      # 42 x 6 + 22 x 4, 16 x 6 + 8 x 4
    (340, 128)
    >>> plain_race_least(24, 0.8)                       # 16 x 5 + 8 x 3
    104
    """
    n = int(n_candidates)
    low = n - int(math.floor(EXIT_RANK_SHARE * n + 1e-9))
    race, exit_ = first_rows(n, confidence)
    return race * n - (race - exit_) * low


def break_even(n_candidates: int, sizes: list[int], n_train: int, confidence: float = 0.95) -> float:
    """The smallest exponent at which the screen's most (:func:`screen_cost`) is at most what the plain
    race surely spends (:func:`plain_race_least`): ``0.0`` when the screen pays
    even if a fit's time did not shrink with the data, ``inf`` when it never pays (below exponent 3).

    Examples
    --------
    >>> break_even(64, [44, 133, 400], 1200), break_even(250, [178, 533, 1600], 4800)
    (0.0, 0.0)
    >>> round(break_even(16, [80], 240), 2), round(break_even(24, [27, 80], 240), 2)
    (0.63, 0.28)
    """
    plain = plain_race_least(n_candidates, confidence)

    def cost(a: float) -> float:
        return screen_cost(n_candidates, sizes, n_train, a, confidence=confidence)

    if cost(0.0) <= plain:
        return 0.0
    lo, hi = 0.0, 3.0
    if cost(hi) > plain:
        return math.inf
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cost(mid) > plain else (lo, mid)
    return hi


def decide_screen(screen: bool | str, n_candidates: int, n_train: int | None, *, timer: Any = None,
                  why_not: str | None = None, confidence: float = 0.95) -> ScreenDecision:
    """Apply the rule. ``timer()`` -> :func:`cost_exponent`'s result, called only when the count does not
    decide (:func:`break_even` above 0, at the run's ``confidence``); ``why_not``: a reason the run
    cannot screen (e.g. a ``cv`` splitter), refused if ``screen=True``."""
    if why_not is not None:
        if screen is True:
            raise ValueError(f"screen=True cannot be used here: {why_not}")
        return ScreenDecision(screen=False, reason=why_not)
    sizes = screen_sizes(n_candidates, n_train) if n_train else []
    if screen is False:
        return ScreenDecision(screen=False, reason="screen=False")
    if not sizes:
        if screen is True:
            raise ValueError(f"screen=True: {n_candidates} candidates on {n_train} training examples leave no rung "
                             f"(a rung keeps 1/{FACTOR} of its candidates, at least {MIN_FINALISTS}, and trains on "
                             "at least 20 examples)")
        return ScreenDecision(screen=False, reason=f"{n_candidates} candidates: too few for a rung")
    if screen is True:
        return ScreenDecision(screen=True, reason="screen=True", sizes=sizes)
    if n_candidates < MIN_CANDIDATES:
        return ScreenDecision(screen=False, reason=f"{n_candidates} candidates < {MIN_CANDIDATES}", sizes=sizes)
    need = break_even(n_candidates, sizes, int(n_train), confidence)
    if need == 0.0:
        most = screen_cost(n_candidates, sizes, int(n_train), 0.0, confidence=confidence)
        return ScreenDecision(screen=True, sizes=sizes, break_even=0.0,
                              reason=f"{n_candidates} candidates: the screen's rungs and the finalists' first "
                                     f"{first_rows(n_candidates, confidence)[0]} rows cost at most {most:.0f}"
                                     f" full-size evaluations, fewer than the plain race's least "
                                     f"({plain_race_least(n_candidates, confidence)}), even if a fit's time did not "
                                     "shrink with the data")
    a, times = timer()
    ok = bool(np.isfinite(a) and a >= need)
    verdict = (f"{n_candidates} candidates >= {MIN_CANDIDATES} and time ~ size^{a:.2f}"
               f" {'>=' if ok else '<'} size^{need:.2f}, where the screen starts to pay") if np.isfinite(a) else \
        "the timing evaluations failed"
    return ScreenDecision(screen=ok, reason=verdict, exponent=a, times=times, sizes=sizes, break_even=need)


def screen_strategy(decision: ScreenDecision, n_candidates: int, confidence: float, n_train: int, *,
                    tolerance: Any, max_evals: Any) -> ScreenThenRace:
    """The :class:`ScreenThenRace` of a decision to screen, its race as :func:`race_plan` says
    (both ``"auto"``: the best for a budget)."""
    sizes = decision["sizes"]
    most = max(rung_counts(n_candidates, len(sizes))[-1], MIN_FINALISTS)
    tol, cap, budget = race_plan(tolerance, max_evals, n_candidates, most)
    return ScreenThenRace(confidence, sizes, n_train=n_train, tolerance=tol, max_evals=cap, race_budget=budget)


def why_no_screen(strategy: Any, paired: Any, stopping: Any, beta: Any, rows: Any, rows_name: str) -> str | None:
    """Why a run with these arguments cannot screen (``None``: it can): the screen races with the paired
    rule on its own random rows."""
    if not isinstance(strategy, str):
        return "a given Strategy object runs as given"
    if strategy not in ("auto", "paired"):
        return f"strategy={strategy!r} (the screen races with the paired rule: strategy 'auto' or 'paired')"
    if paired is False or (strategy == "auto" and (stopping is not None or beta is not None)):
        return "an unpaired strategy (the screen races with the paired rule)"
    if rows is not None:
        return f"{rows_name} gives the rows (the screen draws its own random splits)"
    return None


def screen_or_race(screen: Any, strategy: Any, candidates: list, evaluator: Evaluator, seed: int, *,
                   n_train: int | None, why_not: str | None, confidence: float, tolerance: Any, max_evals: Any,
                   race: Any, store: Any = None) -> tuple[Any, ScreenDecision, Evaluator]:
    """The run's strategy, the decision and the evaluator to run with: a :class:`ScreenThenRace` when the
    rule (or ``screen=True``) says so, else ``race(tolerance)`` (the fronts' usual strategy, with
    ``tolerance="auto"`` resolved). With ``screen="auto"`` and a ``store`` that holds a run, its decision
    is kept (a resumed run does not time again). When the rule timed evaluations and the run screens,
    the evaluator hands their results back to the run (:class:`ReusingEvaluator`): the timing
    evaluations are rows of the screen's first and last rungs."""
    mode = check_screen(screen)
    decision = stored_decision(store) if mode == "auto" and why_not is None else None
    memo: dict[str, Any] = {}
    if decision is None:
        sizes = screen_sizes(len(candidates), n_train) if n_train else []
        decision = decide_screen(mode, len(candidates), n_train, why_not=why_not, confidence=confidence,
                                 timer=lambda: cost_exponent(evaluator, candidates, int(n_train), seed, sizes=sizes,
                                                             memo=memo))
    if decision["screen"]:
        if memo:
            evaluator = ReusingEvaluator(evaluator, memo, candidates)
        return screen_strategy(decision, len(candidates), confidence, int(n_train), tolerance=tolerance,
                               max_evals=max_evals), decision, evaluator
    return race(resolve_tolerance(tolerance)), decision, evaluator


def stored_decision(store: Any) -> ScreenDecision | None:
    """The decision of the run a store holds (resuming keeps it, whatever the timing would say now):
    ``None`` when there is no store, it is empty or not readable (the run then reports the store itself)."""
    import json
    import os

    if store is None or not os.path.isfile(store):
        return None
    try:
        from ..engine.store import SQLiteStore

        st = SQLiteStore.open_read_only(store)
        try:
            spec = json.loads(st.meta().get("description", "{}")).get("strategy", {})
        finally:
            st.close()
    except Exception:  # noqa: BLE001 - an unreadable store is the runner's to report
        return None
    name = spec.get("strategy") if isinstance(spec, dict) else None
    if name == "ScreenThenRace":
        return ScreenDecision(screen=True, reason="resumed: the store's run screens", sizes=list(spec["sizes"]))
    if name is not None:
        return ScreenDecision(screen=False, reason=f"resumed: the store's run does not screen ({name})")
    return None


def race_finalists(selection: Any, estimator: Any, X: Any, y: Any, candidates: list, *, confidence: float,
                   tolerance: Any, scoring: Any, fit_params: dict, seed: int, n_train: int, stratified: bool,
                   store: Any, run_kw: dict) -> tuple[Any, list[int], str]:
    """``ProgressiveSearchCV(race=True)``: the paired race at full size among the schedule's finalists
    (the settings of its last round that held two or more), with its guarantee among them.

    Returns ``(race selection, finalists, guarantee in words)``; the race's store is ``store`` with
    ``-race`` before its suffix (its own run: another strategy and plan)."""
    import os

    from ..engine.candidates import Candidate
    from ..engine.evaluators import EstimatorEvaluator
    from ..engine.plans import RandomSplitPlan
    from ..engine.runner import run
    from ..strategies import PairedElimination
    from ..strategies.screen import screen_caption

    res = selection.result
    last = np.asarray(res["last_round"])   # each setting's last round
    finalists: list[int] = []
    top = -1
    for top in sorted({int(r) for r in last if r >= 0}, reverse=True):   # the last round with two or more
        finalists = [int(c) for c in np.flatnonzero(last >= top)]
        if len(finalists) >= 2:
            break
    if len(finalists) < 2:
        raise ValueError("race=True: the schedule evaluated fewer than two settings, nothing to race")
    sizes = list(res["sizes"])[:top + 1]
    tol, cap, budget = race_plan(tolerance, "auto", len(candidates), len(finalists))
    strategy = PairedElimination(confidence, tolerance=tol, max_evals=cap, budget=budget)
    cands = [Candidate(i, candidates[c].name, dict(candidates[c].params)) for i, c in enumerate(finalists)]
    test_size = 1.0 - n_train / (len(y) if y is not None else len(X))
    evaluator = EstimatorEvaluator(estimator, X, y, RandomSplitPlan(test_size, stratified), scoring,
                                   fit_params=fit_params)
    race_store = None
    if store is not None:
        root, ext = os.path.splitext(os.fspath(store))
        race_store = f"{root}-race{ext or '.sqlite'}"
    race = run(strategy, evaluator, cands, random_state=seed, store=race_store, **run_kw)
    r = race.result
    from ..strategies._guarantee import _fmt_conf, fmt_tolerance, states_certified

    conf, certified = float(r["confidence"]), float(r.get("certified_tolerance", np.inf))
    if states_certified(r.get("stop_reason", ""), certified, conf, confidence):
        what, conf_text = f"within {fmt_tolerance(certified)} of the best", _fmt_conf(confidence)
        tail = f"; the best itself with confidence {_fmt_conf(conf)}"
    else:
        what = "the best" if tol == 0 else f"within {tol:g} of the best"
        conf_text, tail = _fmt_conf(conf), ""
    text = (f"{what} of the schedule's {len(finalists)} finalists at full size with confidence "
            f"{conf_text} (frequentist, delta-correct for Gaussian scores, from paired "
            f"differences on common rows){tail}; finalists: the settings of the schedule's rounds on "
            f"{screen_caption(sizes, n_train)} (what the schedule dropped is not claimed)")
    return race, finalists, text


def simulation_screen(strategy: str, n_candidates: int | None, n_train: int | None, n_rungs: int, confidence: float,
                      tolerance: float, max_evals: int | None) -> ScreenThenRace:
    """``certa simulate --rung-means``: the screen the fronts would run for ``n_candidates`` on ``n_train``
    examples, checked against the number of rungs the score model gives."""
    if n_train is None or n_candidates is None:
        raise ValueError("--rung-means needs --means (the full-size means) and --n-train (the full training size)")
    if strategy not in ("auto", "paired"):
        raise ValueError(f"--rung-means simulates screen, then race (the paired rule): --strategy {strategy!r} "
                         "does not screen")
    sizes = screen_sizes(n_candidates, n_train)
    if n_rungs != len(sizes):
        raise ValueError(f"--rung-means gives {n_rungs} rung(s); {n_candidates} candidates on --n-train {n_train} "
                         f"make {len(sizes)} (sizes {sizes}): give one group of {n_candidates} means per rung")
    if tolerance == 0 and max_evals is None:   # the fronts' default: the best for a budget
        tolerance, max_evals = "auto", "auto"
    return screen_strategy(ScreenDecision(screen=True, sizes=sizes), n_candidates, confidence, n_train,
                           tolerance=tolerance, max_evals=max_evals or "auto")
