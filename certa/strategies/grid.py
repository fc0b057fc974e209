"""Exhaustive J-K-fold grid: every candidate on the same J repeated K-fold partitions."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.draws import Draw, Outcome, derive_seed
from ..engine.strategy import Strategy


def choose_best(means: np.ndarray) -> tuple[int, list[int]]:
    """Index of the highest mean and the candidates tied with it exactly.

    Tie rule (the same as ``GridSearchCV``'s ``rank_test_score``): among
    candidates whose mean scores are exactly equal at the top, the first in
    candidate (grid) order wins. Candidates with a NaN mean (a failed
    evaluation) rank below every finite mean.
    """
    means = np.asarray(means, dtype=float)
    if np.isnan(means).all():
        return 0, list(range(len(means)))
    filled = np.where(np.isnan(means), -np.inf, means)
    top = filled.max()
    tied = np.flatnonzero(filled == top)
    return int(tied[0]), [int(i) for i in tied]


class JKFoldGrid(Strategy):
    """Evaluate every candidate on every fold of J repeated K-fold partitions.

    Draws go partition by partition, fold by fold, candidate by candidate, so
    workers that cache per-fold work (a fitted vectorizer) see each fold's
    draws together. The choice is the highest mean over the J*K folds; a
    candidate with a failed fold gets a NaN mean and ranks last, as with
    ``GridSearchCV(error_score=np.nan)``.
    """

    def __init__(self, n_splits: int = 5, n_repeats: int = 1) -> None:
        # one split per partition is allowed (a user's own splits, e.g. ShuffleSplit(n_splits=1));
        # the fronts ask for K >= 2 when they make the partitions themselves
        for name, value, low in (("n_splits", n_splits, 1), ("n_repeats", n_repeats, 1)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"{name} must be an int, got {type(value).__name__}")
            if value < low:
                raise ValueError(f"{name} must be at least {low}, got {value}")
        self.n_splits = int(n_splits)
        self.n_repeats = int(n_repeats)

    @property
    def total_draws(self) -> int:
        return self.n_candidates * self.n_splits * self.n_repeats

    def _start(self) -> None:
        J, K, C = self.n_repeats, self.n_splits, self.n_candidates
        self._scores = np.full((C, J, K), np.nan)
        self._order = ((c, j, k) for j in range(J) for k in range(K) for c in range(C))
        self._told = 0
        self._asked = 0
        self._exhausted = False

    def ask(self) -> Draw | None:
        nxt = next(self._order, None)
        while nxt is not None and nxt[0] in self._dropped:  # a dropped candidate's folds stay NaN
            nxt = next(self._order, None)
        if nxt is None:
            self._exhausted = True
            return None
        c, j, k = nxt
        self._asked += 1
        return Draw(c, "fold", (j, k), seed=derive_seed(self.seed, j, k))

    def tell(self, draw: Draw, outcome: Outcome) -> None:
        j, k = draw.index
        self._scores[draw.candidate, j, k] = outcome.score if outcome.ok else np.nan
        self._told += 1

    @property
    def finished(self) -> bool:
        return self._told == self.total_draws or (self._exhausted and self._told >= self._asked)

    def result(self) -> dict[str, Any]:
        C = self.n_candidates
        flat = self._scores.reshape(C, -1)
        means = np.average(flat, axis=1)
        stds = np.sqrt(np.average((flat - means[:, None]) ** 2, axis=1))
        best, tied = choose_best(means)
        return {"best": best, "estimates": means, "std": stds, "scores": self._scores.copy(), "tied": tied}
