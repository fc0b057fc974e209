"""The result of a run: the choice, the estimates, and every evaluation."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .candidates import Candidate
from .draws import Draw, Outcome


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
        rows = []
        self.payloads: dict[str, Any] = {}
        self.transient: dict[str, Any] = {}
        for order, (draw, outcome, _) in enumerate(told):
            row = {"order": order, "candidate": draw.candidate, "name": candidates[draw.candidate].name,
                   "kind": draw.kind, "index": draw.index, "seed": draw.seed, "size": draw.size,
                   "score": outcome.score, "status": outcome.status, "error": outcome.error,
                   "attempts": outcome.attempt, "duration": outcome.duration, "key": draw.key}
            row.update(outcome.details)
            rows.append(row)
            if outcome.payload is not None:
                self.payloads[draw.key] = outcome.payload
            if outcome.transient is not None:
                self.transient[draw.key] = outcome.transient
        self.evaluations = pd.DataFrame(rows)
        if self.evaluations.empty:
            self.evaluations = pd.DataFrame(columns=["order", "candidate", "name", "kind", "index", "seed",
                                                     "size", "score", "status", "error", "attempts",
                                                     "duration", "key"])

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
        """Per candidate: evaluations, failures, mean and SD of the scores, the strategy's estimate."""
        ev = self.evaluations
        out = []
        for c in self.candidates:
            sub = ev[ev["candidate"] == c.index] if len(ev) else ev
            ok = sub[sub["status"] == "ok"]["score"].to_numpy(dtype=float) if len(sub) else np.array([])
            out.append({"candidate": c.index, "name": c.name, "n_evaluations": len(sub),
                        "n_failed": int((sub["status"] != "ok").sum()) if len(sub) else 0,
                        "mean": float(ok.mean()) if ok.size else np.nan,
                        "sd": float(ok.std(ddof=1)) if ok.size > 1 else np.nan,
                        "estimate": float(self.result["estimates"][c.index])})
        df = pd.DataFrame(out).set_index("candidate")
        if "p_best" in self.result:
            df["p_best"] = self.result["p_best"]
        df["dropped"] = [c.name in self.dropped for c in self.candidates]
        return df

    def __repr__(self) -> str:
        return (f"Selection(best={self.best.name!r}, score={self.best_score:.4g}, "
                f"evaluations={self.n_evaluations}, failed={len(self.failures)})")
