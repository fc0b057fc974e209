"""The result of a run: the choice, the estimates, and every evaluation."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .candidates import Candidate
from .draws import NON_FINITE_ERROR, Draw, Outcome

_COLUMNS = ("order", "candidate", "name", "kind", "index", "seed", "size", "score", "status", "error", "attempts",
            "duration", "key")


class Selection:
    """What a run decided, and the evidence.

    Attributes
    ----------
    candidates : list of Candidate
    best_index : int
        Index of the chosen candidate.
    result : dict
        The strategy's decision and its per-candidate estimates.
    evaluations : pandas.DataFrame
        One row per evaluated draw in the order the strategy was told:
        candidate, name, kind, index, seed, size, score, status, error,
        attempts, duration and the evaluator's details (fit time, ...).
    failures : pandas.DataFrame
        The rows of ``evaluations`` whose status is not ``"ok"``.
    dropped : dict
        Name -> reason of each candidate dropped because its evaluations kept failing.
    payloads : dict
        Draw key -> what the evaluator kept (e.g. predictions), if anything.
    finished : bool
        Whether the strategy reached its decision (``False`` for a run read back
        by ``certa.load`` while it was still going or after it was killed).
    method : str or None
        Set by ``certa.load``: ``"jkfold"``, ``"bandit"``, ``"progressive"``,
        ``"quantification"`` or ``"nested"``.
    info : dict
        Set by ``certa.load``: what the store says of the run (settings, times, path).
    transient : dict
        Draw key -> objects the evaluator handed back in this process only (e.g. fitted
        models); absent for evaluations reused from a store.
    """

    finished: bool = True
    method: str | None = None

    def __init__(self, candidates: list[Candidate], told: list[tuple[Draw, Outcome, int]], result: dict[str, Any],
                 seed: int, strategy: dict[str, Any], n_reused: int = 0) -> None:
        self.candidates = candidates
        self.result = result
        self.seed = seed
        self.strategy = strategy
        self.n_reused = n_reused
        self.info: dict[str, Any] = {}
        # what is needed to tell the run again (certa.reporting.loading.belief_history, anytime results)
        self._told = told
        self._strategy_object: Any = None
        self._max_failures: int | None = None
        self.payloads: dict[str, Any] = {}
        self.transient: dict[str, Any] = {}
        # built column by column (a dict per row costs seconds at 100,000s of evaluations)
        names = [c.name for c in candidates]
        draws = [d for d, _, _ in told]
        outs = [o for _, o, _ in told]
        columns: dict[str, list] = {
            "order": list(range(len(told))), "candidate": [d.candidate for d in draws],
            "name": [names[d.candidate] for d in draws], "kind": [d.kind for d in draws],
            "index": [d.index for d in draws], "seed": [d.seed for d in draws], "size": [d.size for d in draws],
            "score": [o.score for o in outs], "status": [o.status for o in outs], "error": [o.error for o in outs],
            "attempts": [o.attempt for o in outs], "duration": [o.duration for o in outs],
            "key": [d.key for d in draws]}
        for row, outcome in enumerate(outs):   # the evaluator's details: a column each (None where absent)
            for k, v in outcome.details.items():
                col = columns.get(k)
                if col is None:
                    col = columns[k] = [None] * len(told)
                col[row] = v
        for draw, outcome in zip(draws, outs):
            if outcome.payload is not None:
                self.payloads[draw.key] = outcome.payload
            if outcome.transient is not None:
                self.transient[draw.key] = outcome.transient
        if told:
            self.evaluations = pd.DataFrame(columns)
        else:
            self.evaluations = pd.DataFrame(columns=list(_COLUMNS))

    def __getstate__(self) -> dict[str, Any]:
        # the strategy object may hold unpicklable state (generators); it is rebuilt from its spec
        state = dict(self.__dict__)
        state["_strategy_object"] = None
        return state

    @property
    def best_index(self) -> int:
        return int(self.result["best"])

    @property
    def best(self) -> Candidate:
        return self.candidates[self.best_index]

    @property
    def best_params(self) -> dict[str, Any]:
        return dict(self.best.params)

    @property
    def best_score(self) -> float:
        return float(self.result["estimates"][self.best_index])

    @property
    def failures(self) -> pd.DataFrame:
        ev = self.evaluations
        return ev[ev["status"] != "ok"].reset_index(drop=True)

    @property
    def dropped(self) -> dict[str, str]:
        """Candidates dropped because their evaluations kept failing (name -> why)."""
        return dict(self.result.get("dropped", {}))

    @property
    def n_evaluations(self) -> int:
        return len(self.evaluations)

    def summary(self) -> pd.DataFrame:
        """Per candidate: evaluations, failures, mean and SD of the scores, the strategy's estimate.

        One pass over the evaluations (grouped by candidate), so it takes about as long for
        100,000 candidates as reading their evaluations.
        """
        ev = self.evaluations
        n_cand = len(self.candidates)
        if len(ev):
            cand = ev["candidate"].to_numpy(dtype=np.intp)
            ok = (ev["status"] == "ok").to_numpy(dtype=bool)
            score = pd.to_numeric(ev["score"], errors="coerce").to_numpy(dtype=float)
            n_all = np.bincount(cand, minlength=n_cand)
            n_ok = np.bincount(cand[ok], minlength=n_cand)
            sums = np.bincount(cand[ok], weights=score[ok], minlength=n_cand)
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = np.where(n_ok > 0, sums / np.maximum(n_ok, 1), np.nan)
                dev = score[ok] - mean[cand[ok]]
                ss = np.bincount(cand[ok], weights=dev * dev, minlength=n_cand)
                sd = np.where(n_ok > 1, np.sqrt(ss / np.maximum(n_ok - 1, 1)), np.nan)
        else:
            n_all = n_ok = np.zeros(n_cand, dtype=int)
            mean = sd = np.full(n_cand, np.nan)
        df = pd.DataFrame({"candidate": np.arange(n_cand), "name": [c.name for c in self.candidates],
                           "n_evaluations": n_all.astype(int), "n_failed": (n_all - n_ok).astype(int),
                           "mean": mean, "sd": sd,
                           "estimate": np.asarray(self.result["estimates"], dtype=float)[:n_cand]}).set_index("candidate")
        if "p_best" in self.result:
            df["p_best"] = self.result["p_best"]
        gone = self.result.get("dropped_candidates")
        if gone is None:   # a result written before the indices were kept: by name
            gone = [c.index for c in self.candidates if c.name in self.dropped]
        df["dropped"] = [c.index in set(gone) for c in self.candidates]
        return df

    def __repr__(self) -> str:
        return (f"Selection(best={self.best.name!r}, score={self.best_score:.4g}, "
                f"evaluations={self.n_evaluations}, failed={len(self.failures)})")


def note_dropped(result: dict[str, Any], dropped: dict[int, str], candidates: list[Candidate],
                 told: list[tuple[Draw, Outcome, int]]) -> str | None:
    r"""Record the dropped candidates in ``result`` and narrow its guarantee to the others.

    The one place where a run's result learns of its dropped candidates (the runner,
    a run cut short, and ``certa.load`` call it): ``result["dropped"]`` maps each
    name to why, ``result["dropped_candidates"]`` lists their indices (names may repeat),
    ``result["dropped_counts"]`` to its evaluations, failures and
    non-finite (NaN or infinite) scores, and a ``result["guarantee"]`` (the confidence
    in words, of every front that states one) gets "among the N candidates left"
    and what was dropped: a strategy's confidence covers only the candidates it
    still compares. Returns the note the runner warns with (``None``: nothing dropped).

    Examples
    --------
    >>> from certa.engine.candidates import as_candidates
    >>> cands = as_candidates({"x": [0, 1, 2]})
    >>> told = [(Draw(2, "split", (i,)), Outcome.failure("evaluation returned a non-finite score (nan)"), 1)
    ...         for i in range(5)]
    >>> res = {"guarantee": "the best with confidence 0.97"}
    >>> note = note_dropped(res, {2: "5 evaluations in a row failed"}, cands, told)
    >>> print(note.replace("; ", ";\n"))
    candidate 'x=2' was dropped (all 5 evaluations returned a non-finite score, NaN or inf);
    the choice and its confidence are among the 2 candidates left
    >>> print(res["guarantee"].replace("; ", ";\n"))
    the best with confidence 0.97 among the 2 candidates left;
    dropped: 'x=2' (all 5 evaluations returned a non-finite score, NaN or inf)
    """
    if not dropped:
        return None
    result["dropped"] = {candidates[c].name: why for c, why in dropped.items()}
    result["dropped_candidates"] = sorted(int(c) for c in dropped)
    counts: dict[str, dict[str, int]] = {}
    words = []
    for c in dropped:
        outs = [o for d, o, _ in told if d.candidate == c and o.status != "dropped"]
        failed = [o for o in outs if not o.ok]
        nan = sum(isinstance(o.error, str) and o.error.startswith(NON_FINITE_ERROR) for o in failed)
        counts[candidates[c].name] = {"evaluations": len(outs), "failed": len(failed), "non_finite": nan}
        if len(failed) == len(outs) and nan == len(outs):
            what = f"all {len(outs)} evaluations returned a non-finite score, NaN or inf"
        else:
            what = (f"all {len(outs)} evaluations failed" if len(failed) == len(outs)
                    else f"{len(failed)} of {len(outs)} evaluations failed")
            what += f", {nan} with a non-finite score (NaN or inf)" if nan else ""
        words.append((candidates[c].name, what))
    result["dropped_counts"] = counts
    left = len(candidates) - len(dropped)
    shown = "; ".join(f"{name!r} ({what})" for name, what in words[:5]) \
        + (f"; and {len(words) - 5} more" if len(words) > 5 else "")
    if isinstance(result.get("guarantee"), str):
        result["guarantee"] = f"{result['guarantee']} among the {left} candidates left; dropped: {shown}"
    scope = f"the choice{' and its confidence are' if 'guarantee' in result else ' is'} among the {left} candidates left"
    if len(words) == 1:
        return f"candidate {words[0][0]!r} was dropped ({words[0][1]}); {scope}"
    return f"{len(words)} candidates were dropped: {shown}; {scope}"
