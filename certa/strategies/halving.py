"""Fixed-budget selection: sequential halving (Karnin et al. 2013, as in FIESTA) and equal allocation."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine.draws import Draw, Outcome, derive_seed
from ..engine.strategy import Strategy
from ._ahead import AHEAD_PER_WORKER, AheadBook
from ._anytime import anytime_confidence
from ._validation import check_int


def _fresh_draw(seed: int, candidate: int, n: int) -> Draw:
    """The n-th evaluation of a candidate: its own fresh split and model seed."""
    return Draw(candidate, "split", (n,), seed=derive_seed(seed, candidate, n))


class _Rounds(Strategy):
    """Shared machinery: rounds of draws asked together, scores per candidate, a fixed budget.

    A candidate's draws are numbered in the order its rounds give them (``_next``), so its
    ``n``-th draw is the same whatever was asked before it; its scores are kept in that order."""

    @property
    def total_draws(self) -> int:
        return self.budget

    def _start_scores(self) -> None:
        k = self.n_candidates
        self._scores: list[list[float]] = [[] for _ in range(k)]
        self._failed = np.zeros(k, dtype=int)
        self._queue: list[tuple[int, int]] = []    # the round's (candidate, draw index) not yet asked
        self._outstanding = 0                       # the round's draws asked and not yet told
        self._next = np.zeros(k, dtype=int)         # each candidate's next draw index given to a round
        self._frontier = np.zeros(k, dtype=int)     # each candidate's next draw index not yet asked
        self._n_asked = 0                           # every draw asked (ahead included)

    def _number(self, candidates: list[int]) -> list[tuple[int, int]]:
        """The next draw index of each candidate, in order (a candidate listed twice gets two)."""
        out = []
        for c in candidates:
            out.append((c, int(self._next[c])))
            self._next[c] += 1
        return out

    def _ask_draw(self, c: int, n: int) -> Draw:
        self._frontier[c] = max(self._frontier[c], n + 1)
        self._n_asked += 1
        return _fresh_draw(self.seed, c, n)

    def _ask_from_queue(self) -> Draw | None:
        if not self._queue:
            return None
        c, n = self._queue.pop(0)
        self._outstanding += 1
        return self._ask_draw(c, n)

    def _record(self, draw: Draw, outcome: Outcome) -> None:
        self._outstanding -= 1
        self._add(draw.candidate, outcome)

    def _add(self, c: int, outcome: Outcome) -> None:
        if outcome.ok:
            self._scores[c].append(outcome.score)
        else:
            self._failed[c] += 1

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
    the finalists, best first, so exactly ``budget`` evaluations are used.
    Every evaluation is on a fresh split and seed (a candidate's ``n``-th
    evaluation always the same draw). Ties in a mean are broken by
    candidate order.

    Rounds ahead: while a round's last evaluations run and workers are idle
    (``n_workers``, which the runner sets from the executor), the next round's
    evaluations are asked ahead for the candidates most likely to be kept (the
    better half of the round by the means told so far), at most ``2 * n_workers``
    asked ahead and not yet taken by a round. A round still decides on the
    scores of its own members only, in the order one worker would see them, so
    the rounds, the eliminations, the evaluations each candidate gets and the
    choice are the same for any number of workers and any completion order (one
    exception, as for every strategy: a candidate dropped after ``max_failures``
    failures in a row may be dropped sooner with more workers). Evaluations asked
    ahead for a candidate that is then not kept are *spent ahead*: counted in
    ``result()["evaluations_ahead"]``, kept in the store (a resumed run asking the
    same draw reuses it) and left out of the selection's evaluations. ``budget``
    is what the decision uses; the evaluations spent ahead come on top of it, at
    most ``2 * n_workers`` per round decided. ``ahead=False`` never asks ahead
    (then ``budget`` is every evaluation made, whatever the workers).

    Parameters
    ----------
    budget : int
        Total number of evaluations; at least the sum over rounds of the
        number of survivors (every survivor gets one evaluation per round).
    ahead : bool, default True
        Ask the next round ahead for the likely survivors while workers idle.
        Not part of the run's identity (:meth:`spec`): it changes which
        evaluations run when, never the decision.
    """

    def __init__(self, budget: int, *, ahead: bool = True) -> None:
        self.budget = check_int("budget", budget, 2)
        if not isinstance(ahead, (bool, np.bool_)):
            raise TypeError(f"ahead must be a bool, got {type(ahead).__name__}")
        self._ahead = bool(ahead)

    #: Asks the next round ahead of its decision (see above): the runner keeps ``n_workers``
    #: evaluations running and tells what finished before asking more.
    asks_ahead = True

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
        self._book = AheadBook()
        self._survivors = list(range(self.n_candidates))
        self._round = -1
        self._spent = 0
        self._history: list[dict[str, Any]] = []
        self._done = False
        self._next_round()

    def _share(self, round_: int, n_survivors: int) -> tuple[int, int]:
        """``(per, extra)`` of round ``round_`` with ``n_survivors``: evaluations per survivor, and
        one more for the ``extra`` best (the last round only), given the budget spent before it."""
        left_rounds = len(self._sizes) - round_
        left_budget = self.budget - self._spent
        # every later round needs at least one evaluation per survivor
        reserve = sum(self._sizes[round_ + 1:])
        share = min(max(left_budget // left_rounds, n_survivors), left_budget - reserve)
        per = share // n_survivors
        return per, (share - per * n_survivors if left_rounds == 1 else 0)

    def _next_round(self) -> None:
        self._round += 1
        per, extra = self._share(self._round, len(self._survivors))
        order = sorted(self._survivors, key=lambda c: (-self._means()[c], c)) if self._round else self._survivors
        members = [c for _ in range(per) for c in self._survivors] + order[:extra]
        self._spent += len(members)
        self._queue = []
        for c, n in self._number(members):
            claimed, outcome = self._book.claim((c, n))
            if not claimed:
                self._queue.append((c, n))
            elif outcome is None:   # asked ahead and still running: told to this round
                self._outstanding += 1
            else:                   # asked ahead and told: this round's now
                self._add(c, outcome)
        if not self._queue and not self._outstanding:
            self._close_round()

    def ask(self) -> Draw | None:
        draw = self._ask_from_queue()
        return draw if draw is not None else self._ask_ahead()

    def _ask_ahead(self) -> Draw | None:
        """The next draw of the next round for the candidates likely to be kept (the better half of the
        round by the means told so far, best first), round robin; ``None`` past the bound or with one worker."""
        w = self.n_workers
        if not self._ahead or w <= 1 or self._done or self._book.n_open >= AHEAD_PER_WORKER * w \
                or self._round + 1 >= len(self._sizes):
            return None
        means = self._means()
        ranked = sorted(self._survivors, key=lambda c: (-means[c], c))
        n_keep = math.ceil(len(ranked) / 2)
        if n_keep <= 1:   # this round decides the last survivor
            return None
        per, _ = self._share(self._round + 1, n_keep)
        guess = [c for c in ranked[:n_keep] if c not in self._dropped and np.isfinite(means[c])]   # scored so far
        for j in range(per):
            for c in guess:
                if self._frontier[c] == self._next[c] + j:
                    n = int(self._frontier[c])
                    return self._book.asked((c, n), self._ask_draw(c, n))
        return None

    def tell(self, draw: Draw, outcome: Outcome) -> None:
        if self._book.tell((draw.candidate, int(draw.index[0])), draw, outcome):
            return   # asked ahead: kept for the round that takes it, or spent ahead
        self._record(draw, outcome)
        if self._queue or self._outstanding or self._done:
            return
        self._close_round()

    def _drop(self, candidate: int) -> None:
        # its queued draws go back to the budget; it leaves the survivors
        removed = sum(1 for c, _ in self._queue if c == candidate)
        self._queue = [(c, n) for c, n in self._queue if c != candidate]
        self._spent -= removed
        self._book.spend(lambda ident: ident[0] != candidate)
        if self._done:
            return
        alive = [c for c in self._survivors if c not in self._dropped]
        if not alive:  # the last survivors were dropped: the best other candidate, if any
            others = self._alive()
            means = self._means()
            self._survivors = [max(others, key=lambda c: (means[c], -c))] if others else self._survivors[:1]
            self._finish()
            return
        self._survivors = alive
        if len(alive) == 1:
            self._finish()
        elif not self._queue and not self._outstanding:
            self._close_round()

    def _finish(self) -> None:
        self._done = True
        self._book.spend()   # nothing asked ahead is used any more

    def _close_round(self) -> None:
        means = self._means()
        ranked = sorted(self._survivors, key=lambda c: (-means[c], c))
        keep = ranked[: math.ceil(len(ranked) / 2)]
        self._history.append({"round": self._round, "survivors": list(self._survivors),
                              "means": {c: float(means[c]) for c in self._survivors}, "kept": keep})
        self._survivors = keep
        self._book.spend(lambda ident: ident[0] in keep)   # asked ahead for a candidate not kept: spent
        if len(keep) == 1 or self._round + 1 >= len(self._sizes):
            self._survivors = keep[:1]
            self._finish()
        else:
            self._next_round()

    def spent_ahead(self) -> list[str]:
        """Keys of the draws told but not used: asked ahead for a candidate that was then not kept."""
        return list(self._book.spent_keys)

    @property
    def finished(self) -> bool:
        return self._done

    def result(self) -> dict[str, Any]:
        """The last survivor; before the end (a run cut short), the survivor with the highest mean."""
        best = int(self._survivors[0])
        if not self._done:
            means = self._means()
            best = int(max(self._survivors, key=lambda c: (means[c], -c)))
        counts = self._counts()
        return {"best": best, "estimates": self._means(), "evaluations": counts,
                "rounds": self._history, "spent": int(counts.sum()),
                "evaluations_ahead": int(self._n_asked - counts.sum()),
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
        members = [c for c in range(self.n_candidates)] * (self.budget // self.n_candidates)
        self._queue = self._number(members + list(range(self.budget % self.n_candidates)))
        self._told = 0
        self._skipped = 0

    def ask(self) -> Draw | None:
        return self._ask_from_queue()

    def tell(self, draw: Draw, outcome: Outcome) -> None:
        self._record(draw, outcome)
        self._told += 1

    def _drop(self, candidate: int) -> None:
        self._skipped += sum(1 for c, _ in self._queue if c == candidate)
        self._queue = [(c, n) for c, n in self._queue if c != candidate]

    @property
    def finished(self) -> bool:
        return self._told + self._skipped == self.budget

    def result(self) -> dict[str, Any]:
        means = self._means()
        means[list(self._dropped)] = -np.inf  # never chosen while another candidate is left
        best = int(np.argmax(means))
        return {"best": best, "estimates": means, "evaluations": self._counts(),
                **anytime_confidence(self._scores, best, self._dropped, self.budget)}
