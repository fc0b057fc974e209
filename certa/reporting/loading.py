"""Read a run back from its store: ``certa.load``, and the summary ``certa show`` prints."""
from __future__ import annotations

import gc
import inspect
import json
import math
import os
from collections import deque
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd

from ..engine.candidates import Candidate
from ..engine.draws import Draw, Outcome
from ..engine.selection import Selection, note_dropped
from ..engine.store import read_snapshot
from ..engine.strategy import Strategy

#: The method a strategy (and evaluator) stands for.
METHODS = {"JKFoldGrid": "jkfold", "TopTwoThompson": "bandit", "BatchThompson": "bandit",
           "UniformUntilConfident": "bandit", "SequentialHalving": "bandit", "EqualAllocation": "bandit",
           "PairedElimination": "bandit", "ScreenThenRace": "bandit",
           "ProgressiveSampling": "progressive", "OneShot": "quantification"}


def _strategy_classes() -> dict[str, type]:
    from .. import strategies  # noqa: F401 - registers every strategy class
    from ..strategies import grid, one_shot  # noqa: F401

    found: dict[str, type] = {}
    todo = [Strategy]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            found.setdefault(sub.__name__, sub)
            todo.append(sub)
    return found


def _normal(spec: dict[str, Any]) -> str:
    return json.dumps(spec, sort_keys=True, default=repr)


def rebuild_strategy(spec: dict[str, Any]) -> Strategy | None:
    """The strategy a store's spec describes, or ``None`` if it cannot be rebuilt exactly.

    The strategy is built from the spec's entries that are arguments of its
    class, and accepted only if it gives back the same spec.
    """
    cls = _strategy_classes().get(spec.get("strategy", ""))
    if cls is None:
        return None
    params = inspect.signature(cls.__init__).parameters
    kwargs = {k: v for k, v in spec.items() if k in params and k != "self"}
    try:
        strategy = cls(**kwargs)
    except (TypeError, ValueError):
        return None
    return strategy if _normal(strategy.spec()) == _normal(spec) else None


def _ident(draw: Draw) -> tuple:
    """What the draw's store key is made of, as a tuple: the same draws, the same tuple (cheaper than the key)."""
    return (draw.candidate, draw.kind, draw.index, draw.size)


def _final_outcomes(rows: list, retries: int | None) -> dict[tuple, tuple[Draw, Outcome]]:
    """Per draw (:func:`_ident`), the outcome the runner would use: the first success, else the last attempt.

    In the order each draw was first recorded. One pass, one dict lookup per row: 100,000s of rows.
    """
    out: dict[tuple, tuple[Draw, Outcome] | None] = {}   # None: no success yet (its attempts in ``failed``)
    failed: dict[tuple, list] = {}
    for row in rows:
        d = row.draw
        key = (d.candidate, d.kind, d.index, d.size)   # _ident, inlined
        if out.get(key) is None:   # new, or no success yet
            if row.outcome.ok:
                out[key] = (d, row.outcome)   # a key keeps the place it was first recorded at
            else:
                out[key] = None
                failed.setdefault(key, []).append(row)
    for key, attempts in failed.items():
        if out[key] is None:
            if retries is None or len(attempts) > retries:
                out[key] = (attempts[-1].draw, attempts[-1].outcome)
            else:   # retries left: the runner would try it again
                del out[key]
    return out  # type: ignore[return-value]


def _replay(strategy: Strategy, n_candidates: int, seed: int, outcomes: dict[tuple, tuple[Draw, Outcome]],
            max_failures: int | None = None):
    """Tell the stored outcomes to the strategy in the order the runner told them; stop at the first gap.

    Candidates are dropped after ``max_failures`` failures in a row, as the runner did."""
    strategy.start(n_candidates, seed)
    streak = [0] * n_candidates
    capacity = strategy.max_pending if strategy.max_pending is not None else 1_000_000
    queue: deque[Draw] = deque()
    told: list[tuple[Draw, Outcome, int]] = []
    ask, tell, find = strategy.ask, strategy.tell, outcomes.get   # looked up once: 100,000s of rounds
    while not strategy.finished:
        while len(queue) < capacity:
            draw = ask()
            if draw is None:
                break
            queue.append(draw)
        if not queue:
            break
        if queue[0].candidate in getattr(strategy, "_dropped", ()):  # the runner answered it without evaluating
            tell(queue.popleft(), Outcome.failure("candidate dropped", status="dropped"))
            continue
        d = queue[0]
        found = find((d.candidate, d.kind, d.index, d.size))   # _ident, inlined
        if found is None:
            break
        draw = queue.popleft()
        stored, outcome = found
        tell(draw, outcome)
        # the stored draw when it is the same (its key is then computed once, for the evaluations and attempts)
        told.append((stored if stored == draw else draw, outcome, outcome.attempt))
        if max_failures is not None:
            c = draw.candidate
            streak[c] = 0 if outcome.ok else streak[c] + 1
            if streak[c] >= max_failures and c not in strategy.dropped:
                strategy.drop(c, f"{streak[c]} evaluations in a row failed; last: {outcome.error}")
    return told


def _fallback_result(candidates: list[Candidate], told: list[tuple[Draw, Outcome, int]]) -> dict[str, Any]:
    sums = np.zeros(len(candidates))
    counts = np.zeros(len(candidates))
    for draw, outcome, _ in told:
        if outcome.ok:
            sums[draw.candidate] += outcome.score
            counts[draw.candidate] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    best = int(np.nanargmax(means)) if np.isfinite(means).any() else 0
    return {"best": best, "estimates": means}


def load(store: str | os.PathLike) -> Selection:
    """The run kept in a store, as a :class:`~certa.Selection`, whatever state the run is in.

    Works on a finished run, on a run that was killed half-way, and on a run
    still going in another process (the file is opened read-only). The stored
    outcomes are told again to the run's strategy, rebuilt from the store, in
    the order the runner told them, so the result is the strategy's own (for a
    finished run: exactly the run's); nothing is evaluated.

    Parameters
    ----------
    store : str or os.PathLike
        A SQLite store written by any certa run (``store=`` of a search or of ``certa.run``).

    Returns
    -------
    Selection
        As returned by the run, plus: ``finished`` (whether the strategy reached
        its decision; if not, ``best`` is the leader so far: for a fixed-confidence bandit the
        strategy's own anytime answer, with ``result["confidence"]`` the confidence reached for
        it and ``result["target_reached"]`` False; for a fixed-budget bandit the surviving
        candidate with the highest mean and the GLR confidence for it; otherwise the highest
        mean), ``method`` (``"jkfold"``, ``"bandit"``, ``"progressive"``,
        ``"quantification"`` or ``"nested"``), ``info`` (what the store says of the
        run: settings, evaluator, times, store path) and ``attempts`` (every
        recorded attempt, retries and evaluations not yet used included).
        ``evaluations`` has one ``param_<name>`` column per candidate parameter.

    Examples
    --------
    >>> import tempfile, os
    >>> from certa import FunctionEvaluator, JKFoldGrid, run, load
    >>> path = os.path.join(tempfile.mkdtemp(), "run.sqlite")
    >>> _ = run(JKFoldGrid(2, 1), FunctionEvaluator(lambda p, seed: p["x"]), {"x": [1, 2]}, store=path)
    >>> sel = load(path)
    >>> sel.best_params, sel.finished, list(sel.evaluations["param_x"])
    ({'x': 2}, True, [1, 2, 1, 2])
    """
    with paused_gc():   # 100,000s of rows: objects without cycles, that the collector would walk again and again
        return _load(store)


@contextmanager
def paused_gc():
    """Python's cycle collector paused while a store's rows become objects (reference counting still frees them).

    Reading 200,000 rows makes millions of small objects (draws, outcomes, tuples), none in a
    reference cycle; the collector, run every few hundred allocations, walks the ever larger
    heap again and again: half the time of :func:`load` on a 100,000-candidate store. It runs
    again, as it was, afterwards.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _load(store: str | os.PathLike) -> Selection:
    snapshot = read_snapshot(store)  # read-only: nothing is written to the store or its directory
    meta, rows, stamps = snapshot.meta, snapshot.rows, snapshot.recorded_at
    if "description" not in meta:
        raise ValueError(f"store {os.fspath(store)!r} holds no run yet (no description in its meta table)")
    try:
        desc = json.loads(meta["description"])
    except json.JSONDecodeError as exc:
        raise ValueError(f"store {os.fspath(store)!r} is damaged: its run description is not valid JSON ({exc})") from None
    if not isinstance(desc, dict):
        raise ValueError(f"store {os.fspath(store)!r} is damaged: its run description is not a JSON object")
    names = list(desc.get("candidates", []))
    params = desc.get("params") or [{} for _ in names]
    candidates = [Candidate(i, str(n), dict(p)) for i, (n, p) in enumerate(zip(names, params))]
    seed = int(desc.get("seed", 0))
    spec = dict(desc.get("strategy", {}))
    outcomes = _final_outcomes(rows, desc.get("retries"))
    strategy = rebuild_strategy(spec) if candidates else None
    finished = False
    result: dict[str, Any] | None = None
    if strategy is not None:
        try:
            told = _replay(strategy, len(candidates), seed, outcomes, desc.get("max_failures"))
            finished = bool(strategy.finished)
            result = strategy.result()
            if strategy.asks_ahead:   # recorded, not used by the decision: spent ahead (or not yet used)
                result["evaluations_ahead"] = len(set(outcomes) - {_ident(d) for d, _, _ in told})
            note_dropped(result, strategy.dropped, candidates, told)
        except Exception:  # noqa: BLE001 - an unfinished strategy may not have a result yet
            result = None
    if strategy is None or result is None:
        if strategy is None:
            told = [(d, o, o.attempt) for d, o in outcomes.values()]
        result = _fallback_result(candidates, told)
    if not finished and "confidence" in result:
        # a bandit cut short: its own anytime answer (recommendation and the confidence reached
        # for it), as the strategy gives it at any time (the same as RunInterrupted.selection)
        result = {**result, "stop_reason": "not stopped (run not finished)"}
    elif not finished:  # no decision yet: the leader so far is the candidate with the highest mean
        leader = _fallback_result(candidates, told)
        result = {**result, "best": leader["best"]}
    selection = Selection(candidates=candidates, told=told, result=result, seed=seed, strategy=spec)
    selection._max_failures = desc.get("max_failures")
    selection.finished = finished
    selection.method = _method(spec, desc)
    ev = selection.evaluations
    keys = sorted({k for c in candidates for k in c.params})
    for k in keys:
        ev[f"param_{k}"] = [candidates[c].params.get(k) for c in ev["candidate"]] if len(ev) else []
    attempts = pd.DataFrame(  # column by column: fast for any number of rows
        {"seq": [r.seq for r in rows], "key": [r.draw.key for r in rows],
         "candidate": [r.draw.candidate for r in rows],
         "name": [names[r.draw.candidate] if r.draw.candidate < len(names) else "?" for r in rows],
         "kind": [r.draw.kind for r in rows], "index": [r.draw.index for r in rows],
         "attempt": [r.outcome.attempt for r in rows], "status": [r.outcome.status for r in rows],
         "score": [r.outcome.score for r in rows], "error": [r.outcome.error for r in rows],
         "duration": [r.outcome.duration for r in rows], "recorded_at": [stamps.get(r.seq, math.nan) for r in rows]},
        columns=["seq", "key", "candidate", "name", "kind", "index", "attempt", "status", "score", "error",
                 "duration", "recorded_at"])
    selection.attempts = attempts
    created = float(meta["created_at"]) if "created_at" in meta else math.nan
    last = float(attempts["recorded_at"].max()) if len(attempts) else math.nan
    selection.info = {"store": os.fspath(store), "strategy": spec, "evaluator": desc.get("evaluator"),
                      "seed": seed, "retries": desc.get("retries"), "created_at": created,
                      "last_recorded_at": last, "n_attempts": len(attempts),
                      "evaluation_seconds": float(attempts["duration"].sum()) if len(attempts) else 0.0,
                      "wall_seconds": (last - created) if len(attempts) else 0.0,
                      "total_draws": getattr(strategy, "total_draws", None) if strategy is not None else None,
                      "rebuilt": strategy is not None}
    return selection


def _method(spec: dict[str, Any], desc: dict[str, Any]) -> str:
    if desc.get("evaluator") == "_SelectionEvaluator":
        return "nested"
    return METHODS.get(spec.get("strategy", ""), "other")


#: Most numbers (evaluations x candidates) :func:`belief_history` computes (8 bytes each).
BELIEF_CELLS = 50_000_000


def belief_history(selection: Selection) -> np.ndarray:
    """Every candidate's posterior P(best) after each evaluation of a fixed-confidence run.

    A run does not compute it as it goes (the Bayesian stopping rule only needs the leader's
    P(best), see :class:`certa.strategies._leader_belief.LeaderBelief`): the run's outcomes are told
    again, in the same order, to a copy of its strategy that records the full P(best) vector
    after each one, so the history is exactly what the run believed. Nothing is evaluated.
    The result is kept in ``selection.result["belief_history"]``. With ``stopping="glr"`` the
    posterior is not what decides the stop; the confidence that rule gave its recommendation
    after each evaluation is kept alongside, in ``selection.result["confidence_history"]``.

    Returns
    -------
    ndarray of shape (n_updates, n_candidates)
        One row per evaluation from the first at which every candidate had 3 scores.

    Raises
    ------
    ValueError
        If the selection is not a fixed-confidence run, or if the history would hold more than
        :data:`BELIEF_CELLS` numbers (many candidates: ``certa report`` then leaves the figure out).
    """
    import copy

    hist = np.asarray(selection.result.get("belief_history", []), dtype=float)
    if hist.size:
        return hist
    strategy = selection._strategy_object
    strategy = copy.deepcopy(strategy) if strategy is not None else rebuild_strategy(dict(selection.strategy))
    if strategy is None or not hasattr(strategy, "_track_belief"):
        raise ValueError("this selection has no belief history (not a fixed-confidence run)")
    n_updates = len(selection._told)
    if n_updates * len(selection.candidates) > BELIEF_CELLS:
        raise ValueError(f"the belief history of {len(selection.candidates):,} candidates over {n_updates:,} "
                         f"evaluations would hold {n_updates * len(selection.candidates):,} numbers (more than "
                         f"{BELIEF_CELLS:,}); read the P(best) at the end in selection.result['p_best']")
    strategy._track_belief = True
    outcomes = {_ident(draw): (draw, outcome) for draw, outcome, _ in selection._told}
    _replay(strategy, len(selection.candidates), selection.seed, outcomes, selection._max_failures)
    replayed = strategy.result()
    hist = np.asarray(replayed["belief_history"], dtype=float)
    if not hist.size:
        raise ValueError("this selection has no belief history yet (fewer than 3 scores of some candidate)")
    selection.result["belief_history"] = hist
    if "confidence_history" in replayed:
        selection.result["confidence_history"] = np.asarray(replayed["confidence_history"], dtype=float)
    return hist
