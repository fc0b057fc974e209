"""Fixed-budget selection: sequential halving (Karnin et al. 2013, as in FIESTA) and equal allocation."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine.draws import Draw, Outcome, derive_seed
from ..engine.strategy import Strategy
from ._anytime import anytime_confidence
from ._validation import check_int


def _fresh_draw(seed: int, candidate: int, n: int) -> Draw:
    """The n-th evaluation of a candidate: its own fresh split and model seed."""
    return Draw(candidate, "split", (n,), seed=derive_seed(seed, candidate, n))


class _Rounds(Strategy):
    """Shared machinery: rounds of draws asked together, scores per candidate, a fixed budget."""

    @property
    def total_draws(self) -> int:
        return self.budget

    def _start_scores(self) -> None:
        self._scores: list[list[float]] = [[] for _ in range(self.n_candidates)]
        self._failed = np.zeros(self.n_candidates, dtype=int)
        self._queue: list[int] = []
        self._outstanding = 0

    def _ask_from_queue(self) -> Draw | None:
        if not self._queue:
            return None
        c = self._queue.pop(0)
        n = len(self._scores[c]) + self._failed[c] + self._asked_extra[c]
        self._asked_extra[c] += 1
        self._outstanding += 1
        return _fresh_draw(self.seed, c, int(n))

    def _record(self, draw: Draw, outcome: Outcome) -> None:
        self._outstanding -= 1
        self._asked_extra[draw.candidate] -= 1
        if outcome.ok:
            self._scores[draw.candidate].append(outcome.score)
        else:
            self._failed[draw.candidate] += 1

    def _means(self) -> np.ndarray:
        return np.array([np.mean(s) if s else -np.inf for s in self._scores])

    def _counts(self) -> np.ndarray:
        return np.array([len(s) for s in self._scores]) + self._failed


class SequentialHalving(_Rounds):
    """Fixed-budget best-candidate identification by sequential halving.

    ``ceil(log2 N)`` rounds; in each, the surviving candidates share the
    round's part of the budget equally, then the worse half (by mean of all
    their scores so far) is dropped. Unlike FIESTA, which floors every
    allocation and leaves part of the budget unused, certa carries each
    round's remainder into the next round and spends the final remainder on
    the finalists, best first, so exactly ``budget`` evaluations are made.
    Every evaluation is on a fresh split and seed. Ties in a mean are broken
    by candidate order.

    Parameters
    ----------
    budget : int
        Total number of evaluations; at least the sum over rounds of the
        number of survivors (every survivor gets one evaluation per round).
    """

    def __init__(self, budget: int) -> None:
        self.budget = check_int("budget", budget, 2)

    @staticmethod
    def rounds_for(n_candidates: int) -> list[int]:
        """Number of survivors in each round."""
        sizes = [n_candidates]
        while sizes[-1] > 1:
            sizes.append(math.ceil(sizes[-1] / 2))
        return sizes[:-1] if len(sizes) > 1 else sizes

    def _start(self) -> None:
        if self.n_candidates < 2:
            raise ValueError("SequentialHalving needs at least two candidates")
        self._sizes = self.rounds_for(self.n_candidates)
        need = sum(self._sizes)
        if self.budget < need:
            raise ValueError(f"budget={self.budget} is too small for {self.n_candidates} candidates: sequential "
                             f"halving needs at least {need} (one evaluation per survivor per round)")
        self._start_scores()
        self._asked_extra = np.zeros(self.n_candidates, dtype=int)
        self._survivors = list(range(self.n_candidates))
        self._round = -1
        self._spent = 0
        self._history: list[dict[str, Any]] = []
        self._done = False
        self._next_round()

    def _next_round(self) -> None:
        self._round += 1
        R = len(self._sizes)
        left_rounds = R - self._round
        left_budget = self.budget - self._spent
        # every later round needs at least one evaluation per survivor
        reserve = sum(self._sizes[self._round + 1:])
        share = min(max(left_budget // left_rounds, len(self._survivors)), left_budget - reserve)
        per = share // len(self._survivors)
        extra = share - per * len(self._survivors) if left_rounds == 1 else 0
        order = sorted(self._survivors, key=lambda c: (-self._means()[c], c)) if self._round else self._survivors
        queue = [c for _ in range(per) for c in self._survivors]
        queue += order[:extra]
        self._queue = queue
        self._spent += len(queue)

    def ask(self) -> Draw | None:
        return self._ask_from_queue()

    def tell(self, draw: Draw, outcome: Outcome) -> None:
        self._record(draw, outcome)
        if self._queue or self._outstanding:
            return
        self._close_round()

    def _drop(self, candidate: int) -> None:
        # its queued draws go back to the budget; it leaves the survivors
        removed = self._queue.count(candidate)
        self._queue = [c for c in self._queue if c != candidate]
        self._spent -= removed
        if self._done:
            return
        alive = [c for c in self._survivors if c not in self._dropped]
        if not alive:  # the last survivors were dropped: the best other candidate, if any
            others = self._alive()
            means = self._means()
            self._survivors = [max(others, key=lambda c: (means[c], -c))] if others else self._survivors[:1]
            self._done = True
            return
        self._survivors = alive
        if len(alive) == 1:
            self._done = True
        elif not self._queue and not self._outstanding:
            self._close_round()

    def _close_round(self) -> None:
        means = self._means()
        ranked = sorted(self._survivors, key=lambda c: (-means[c], c))
        keep = ranked[: math.ceil(len(ranked) / 2)]
        self._history.append({"round": self._round, "survivors": list(self._survivors),
                              "means": {c: float(means[c]) for c in self._survivors}, "kept": keep})
        self._survivors = keep
        if len(keep) == 1 or self._round + 1 >= len(self._sizes):
            self._survivors = keep[:1]
            self._done = True
        else:
            self._next_round()

    @property
    def finished(self) -> bool:
        return self._done

    def result(self) -> dict[str, Any]:
        """The last survivor; before the end (a run cut short), the survivor with the highest mean."""
        best = int(self._survivors[0])
        if not self._done:
            means = self._means()
            best = int(max(self._survivors, key=lambda c: (means[c], -c)))
        return {"best": best, "estimates": self._means(), "evaluations": self._counts(),
                "rounds": self._history, "spent": int(self._counts().sum()),
                **anytime_confidence(self._scores, best, self._dropped, self.budget)}


class EqualAllocation(_Rounds):
    """Non-adaptive fixed budget: every candidate gets ``budget // N`` evaluations (the
    remainder to the first candidates); choose the highest mean."""

    def __init__(self, budget: int) -> None:
        self.budget = check_int("budget", budget, 1)

    def _start(self) -> None:
        if self.budget < self.n_candidates:
            raise ValueError(f"budget={self.budget} is smaller than the number of candidates ({self.n_candidates})")
        self._start_scores()
        self._asked_extra = np.zeros(self.n_candidates, dtype=int)
        self._queue = [c for c in range(self.n_candidates)] * (self.budget // self.n_candidates)
        self._queue += list(range(self.budget % self.n_candidates))
        self._told = 0
        self._skipped = 0

    def ask(self) -> Draw | None:
        return self._ask_from_queue()

    def tell(self, draw: Draw, outcome: Outcome) -> None:
        self._record(draw, outcome)
        self._told += 1

    def _drop(self, candidate: int) -> None:
        self._skipped += self._queue.count(candidate)
        self._queue = [c for c in self._queue if c != candidate]

    @property
    def finished(self) -> bool:
        return self._told + self._skipped == self.budget

    def result(self) -> dict[str, Any]:
        means = self._means()
        means[list(self._dropped)] = -np.inf  # never chosen while another candidate is left
        best = int(np.argmax(means))
        return {"best": best, "estimates": means, "evaluations": self._counts(),
                **anytime_confidence(self._scores, best, self._dropped, self.budget)}
