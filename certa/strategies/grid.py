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
    draws together. The choice is the highest mean over the J*K folds.

    When failed evaluations leave candidates with different folds, they are
    compared on the folds every candidate still in the run finished (paired,
    so a candidate neither gains nor loses by the folds it missed); without
    such a fold, on the mean over each candidate's successful folds. The
    ``estimates`` are each candidate's mean over its successful folds (a
    candidate with none ranks last). If the failures could have changed the
    choice (filling the missing scores with the lowest and highest score
    seen could make another candidate win), ``result()["warnings"]`` says so
    and ``certa.run`` warns with ``FailedEvaluationsWarning``.
    (``JKFoldSearchCV`` keeps scikit-learn's rule instead: a failed fit
    scores ``error_score``, NaN by default, and such a candidate ranks last.)

    Examples
    --------
    >>> from certa import FunctionEvaluator, JKFoldGrid, run
    >>> sel = run(JKFoldGrid(3, 2), FunctionEvaluator(lambda p, seed: p["mu"]), {"mu": [0.6, 0.8]})
    >>> sel.best_params
    {'mu': 0.8}
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
        self._fold_seeds: dict[tuple[int, int], int] = {}   # one seed per fold, shared by every candidate
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
        seed = self._fold_seeds.get((j, k))
        if seed is None:
            seed = self._fold_seeds[(j, k)] = derive_seed(self.seed, j, k)
        return Draw.unchecked(c, "fold", (j, k), seed, None)   # ints from range(): nothing to check

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
        ok = np.isfinite(flat)
        if ok.all():
            means = np.average(flat, axis=1)
            stds = np.sqrt(np.average((flat - means[:, None]) ** 2, axis=1))
            best, tied = choose_best(means)
            return {"best": best, "estimates": means, "std": stds, "scores": self._scores.copy(), "tied": tied,
                    "compared_on": "all folds"}
        counts = ok.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(counts > 0, np.where(ok, flat, 0.0).sum(axis=1) / np.maximum(counts, 1), np.nan)
            stds = np.sqrt(np.where(counts > 0, np.where(ok, (flat - means[:, None]) ** 2, 0.0).sum(axis=1)
                                    / np.maximum(counts, 1), np.nan))
        alive = [c for c in range(C) if c not in self._dropped and counts[c] > 0]
        common = ok[alive].all(axis=0) if alive else np.zeros(flat.shape[1], bool)
        basis = np.full(C, np.nan)
        if common.any():
            basis[alive] = flat[alive][:, common].mean(axis=1)
            compared_on = f"the {int(common.sum())} of {flat.shape[1]} folds every candidate finished"
        else:
            basis[alive] = means[alive]
            compared_on = "each candidate's successful folds (no fold was finished by every candidate)"
        best, tied = choose_best(basis)
        out = {"best": best, "estimates": means, "std": stds, "scores": self._scores.copy(), "tied": tied,
               "compared_on": compared_on, "compared_means": basis}
        note = self._failure_note(flat, ok, best, compared_on)
        if note:
            out["warnings"] = [note]
        return out

    def _failure_note(self, flat: np.ndarray, ok: np.ndarray, best: int, compared_on: str) -> str | None:
        """Why the failures could have changed the choice, or None if no filling of the missing scores could."""
        if not ok.any():
            return None
        low, high = float(flat[ok].min()), float(flat[ok].max())
        # scaled so that 1e100-sized scores cannot overflow in the sums
        scale = max(abs(low), abs(high), 1e-300)
        worst = np.where(ok, flat, low) / scale
        bestcase = np.where(ok, flat, high) / scale
        lower_best = worst[best].mean()
        rivals = [c for c in range(self.n_candidates) if c != best and bestcase[c].mean() > lower_best]
        hit = [c for c in range(self.n_candidates) if not ok[c].all()]
        if not rivals or not hit:
            return None
        n = flat.shape[1]
        names = ", ".join(f"candidate {c} ({n - int(ok[c].sum())} of {n} folds failed)" for c in hit[:10])
        return (f"failed evaluations could have changed the choice: {names}{' ...' if len(hit) > 10 else ''}; "
                f"candidates were compared on {compared_on}, and with the missing scores filled in, "
                f"{', '.join(f'candidate {c}' for c in rivals[:10])} could beat the choice (candidate {best}); see selection.failures, and rerun with "
                "retries= or after fixing the failures for a firm choice")
