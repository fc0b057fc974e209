"""Fixed-confidence selection: top-two Thompson sampling, batch Thompson sampling, and the
non-adaptive baseline, with FIESTA's Bayesian stopping rule or a delta-correct GLR rule."""
from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ..engine.draws import Draw, Outcome, derive_seed
from ..engine.strategy import Strategy
from ._belief import p_best
from ._fast import (SKIP_MARGIN, RunningStats, glr_should_stop_fast, p_best_upper_bound, posterior_from_stats,
                    thompson_sample_fast, top_two_sample_fast)
from ._validation import check_beta, check_choice, check_confidence, check_int

STOPPING_RULES = ("bayes", "glr")


class _Confident(Strategy):
    """Shared machinery of the fixed-confidence strategies.

    ``stopping="bayes"`` is FIESTA's rule: stop when the posterior P(best) of
    the leader reaches ``confidence``. It is cheap but it is **not** a
    frequentist guarantee: checked after every evaluation, its rate of wrong
    choices can exceed ``1 - confidence`` (see ``docs/adaptive.md``).
    ``stopping="glr"`` is the generalized likelihood ratio rule for Gaussian
    scores with unknown variances (Jourdan, Degenne & Kaufmann 2023) with a
    time-uniform threshold: it chooses a worse candidate with probability at
    most ``delta = 1 - confidence`` (for Gaussian scores), at the price of
    more evaluations.
    """

    #: Record P(best) after every evaluation (``belief_history``, the belief plot). The
    #: simulation turns it off: the quadrature is then skipped whenever a cheap upper
    #: bound shows that no candidate can reach the confidence (same stopping decisions).
    _track_belief = True

    def __init__(self, confidence: float, *, min_evals: int = 3, stopping: str = "bayes",
                 transform: str | None = None, max_evals: int | None = None) -> None:
        self.confidence = check_confidence(confidence)
        self.min_evals = check_int("min_evals", min_evals, 3)
        self.stopping = check_choice("stopping", stopping, STOPPING_RULES)
        self.transform = check_choice("transform", transform, (None, "logit"))
        self.max_evals = None if max_evals is None else check_int("max_evals", max_evals, 1)

    def _start(self) -> None:
        if self.n_candidates < 2:
            raise ValueError("a fixed-confidence selection needs at least two candidates")
        if self.max_evals is not None and self.max_evals < self.min_evals * self.n_candidates:
            raise ValueError(f"max_evals={self.max_evals} is below the {self.min_evals * self.n_candidates} "
                             f"evaluations of the initial round (min_evals x candidates)")
        self._scores: list[list[float]] = [[] for _ in range(self.n_candidates)]
        # running sufficient statistics of the (transformed) scores: the posterior and the
        # GLR statistic come from them instead of the full score lists (certa/strategies/_fast.py)
        self._stats = RunningStats(self.n_candidates, self.transform)
        self._asked = np.zeros(self.n_candidates, dtype=int)
        self._failed = np.zeros(self.n_candidates, dtype=int)
        self._rng = np.random.default_rng(derive_seed(self.seed, 2**31 - 1))
        self._init_queue = [c for _ in range(self.min_evals) for c in range(self.n_candidates)]
        self._told = 0
        self._stopped = False
        self._stop_reason = ""
        self._history: list[np.ndarray] = []
        self._best = 0
        self._p = np.full(self.n_candidates, 1.0 / self.n_candidates)
        self._post = None

    # -- helpers -------------------------------------------------------------------------
    def _new_draw(self, c: int) -> Draw:
        n = int(self._asked[c])
        self._asked[c] += 1
        return Draw(c, "split", (n,), seed=derive_seed(self.seed, c, n))

    def _ready(self) -> bool:
        return all(len(self._scores[c]) >= 3 for c in self._alive())

    def _live_stats(self) -> RunningStats:
        """The running statistics of the candidates not dropped (all of them if none is)."""
        if not self._dropped:
            return self._stats
        live, idx = copy.copy(self._stats), np.array(self._alive())
        live.n, live.mean, live.m2 = self._stats.n[idx], self._stats.mean[idx], self._stats.m2[idx]
        return live

    def _unview(self, i: int) -> int:
        """Candidate index of position ``i`` among the candidates not dropped."""
        return int(i) if not self._dropped else self._alive()[int(i)]

    def _expand(self, p: np.ndarray) -> np.ndarray:
        """Per-candidate array from one over the candidates not dropped (0 for the dropped)."""
        if not self._dropped:
            return p
        full = np.zeros(self.n_candidates)
        full[self._alive()] = p
        return full

    def _posterior(self):
        # computed once per tell: ask() after tell() reuses it; over the candidates not dropped
        if self._post is None:
            self._post = posterior_from_stats(self._live_stats())
        return self._post

    def _drop(self, candidate: int) -> None:
        # a dropped candidate is no longer re-queued, sampled or chosen
        self._init_queue = [c for c in self._init_queue if c != candidate]
        self._post, self._p = None, None
        alive = self._alive()
        if len(alive) <= 1 and not self._stopped:
            self._stopped = True
            self._stop_reason = "all candidates dropped" if not alive else "every other candidate dropped"
            if alive:
                self._best = alive[0]
        elif self._ready() and not self._init_queue and not self._stopped:
            self._update_belief()

    def _update_belief(self) -> None:
        if self.stopping == "bayes":
            loc, scale, df = self._posterior()
            if (not self._track_belief and self.confidence > 0.5 + SKIP_MARGIN
                    and p_best_upper_bound(loc, scale, df) < self.confidence - SKIP_MARGIN):
                # no candidate can reach the confidence: the quadrature could not make the
                # rule stop, so it is skipped (P(best) is computed when it is asked for)
                self._p = None
                return
            self._p = self._expand(p_best(loc, scale, df))
            if self._track_belief:
                self._history.append(self._p.copy())
            self._best = int(np.argmax(self._p))
            stop = self._p[self._best] >= self.confidence
        else:  # P(best) is not needed to decide; it is computed once, in result()
            self._p = None
            st = self._live_stats()
            stop, best = glr_should_stop_fast(st.mean, st.var(), st.n, 1.0 - self.confidence)
            self._best = self._unview(best)
        if stop:
            self._stopped, self._stop_reason = True, "confident"

    def _p_best(self) -> np.ndarray:
        if self._p is None:
            self._p = self._expand(p_best(*self._posterior())) if self._ready() and self._alive() \
                else np.full(self.n_candidates, np.nan)
            if self.stopping == "bayes" and self._ready():
                self._best = int(np.argmax(self._p))
        return self._p

    def _initial_ask(self) -> Draw | None:
        if self.max_evals is not None and int(self._asked.sum()) >= self.max_evals:
            return None  # the last draws are in flight; the run stops when they are told
        if self._init_queue:
            return self._new_draw(self._init_queue.pop(0))
        return None

    def tell(self, draw: Draw, outcome: Outcome) -> None:
        self._told += 1
        self._post = None
        if outcome.ok:
            self._scores[draw.candidate].append(outcome.score)
            self._stats.add(draw.candidate, outcome.score)
        else:
            self._failed[draw.candidate] += 1
            # a failed evaluation is replaced by another one of the same candidate
            if len(self._scores[draw.candidate]) < self.min_evals and draw.candidate not in self._dropped:
                self._init_queue.append(draw.candidate)
        if self._ready() and not self._init_queue and self._check_now():
            self._update_belief()
        if self.max_evals is not None and int(self._asked.sum()) >= self.max_evals and not self._stopped:
            # failed evaluations count: the run ends at max_evals whatever fails
            self._stopped, self._stop_reason = True, "max_evals"
            if not self._ready():  # too few scores for a posterior: the highest mean so far
                means = np.array([np.mean(self._scores[c]) if self._scores[c] and c not in self._dropped
                                  else -np.inf for c in range(self.n_candidates)])
                self._best = int(np.argmax(means))
            elif self.stopping == "glr":
                self._best = self._unview(np.argmax(self._live_stats().mean))
            else:
                self._best = int(np.argmax(self._p_best()))

    def _check_now(self) -> bool:
        """Whether to update the belief and test the stopping rule after this tell."""
        return True

    def _at_max_evals(self) -> bool:
        return self.max_evals is not None and int(self._asked.sum()) >= self.max_evals

    @property
    def finished(self) -> bool:
        return self._stopped

    def result(self) -> dict[str, Any]:
        means = np.array([np.mean(s) if s else np.nan for s in self._scores])
        p = self._p_best()  # (also sets the choice when the last P(best) was skipped)
        return {"best": int(self._best), "estimates": means, "p_best": p.copy(),
                "confidence": float(p[self._best]), "evaluations": self._asked.copy(),
                "failed": self._failed.copy(), "stop_reason": self._stop_reason or "not stopped",
                "belief_history": np.array(self._history), "stopping": self.stopping}


class TopTwoThompson(_Confident):
    """Fixed-confidence selection by top-two Thompson sampling (Russo 2016; FIESTA's TTTS).

    Each candidate is first evaluated ``min_evals`` times; then, one evaluation
    at a time, the next candidate is the posterior-sampled leader with
    probability ``beta`` and otherwise the challenger (the argmax of a fresh
    posterior sample that differs from the leader). Stops by ``stopping``
    (see the module documentation). Every evaluation is on a fresh split and
    seed derived from the run's seed.

    Parameters
    ----------
    confidence : float in (0, 1)
        1 - delta.
    beta : float in (0, 1) or "ids", default 0.5
        Probability of evaluating the leader. 0.5 is FIESTA's TTTS. ``"ids"`` is
        information-directed selection (You, Qin, Wang & Yang 2023): the challenger
        is always drawn, then the leader is played with probability
        ``h_I / (h_I + h_J)``, ``h_i = s_i^2 / N_i`` (the variance of each one's mean),
        which makes top-two sampling asymptotically optimal for Gaussian scores without
        a ``beta`` to tune. On the FIESTA paper's data it needs 5-8 % fewer
        evaluations than ``beta=0.5`` (``docs/adaptive.md``).
    min_evals : int >= 3, default 3
    stopping : {"bayes", "glr"}
    transform : {None, "logit"}
        Model scores in [0, 1] on the logit scale (scores of exactly 0 or 1 are fine).
    max_evals : int or None
        A hard cap on evaluations (the choice is then the current leader and
        ``stop_reason`` says so).
    """

    max_pending = 1

    def __init__(self, confidence: float, beta: float | str = 0.5, min_evals: int = 3, *, stopping: str = "bayes",
                 transform: str | None = None, max_evals: int | None = None) -> None:
        super().__init__(confidence, min_evals=min_evals, stopping=stopping, transform=transform, max_evals=max_evals)
        self.beta = check_beta(beta)

    def ask(self) -> Draw | None:
        d = self._initial_ask()
        if d is not None or not self._ready() or self._at_max_evals():
            return d
        loc, scale, df = self._posterior()
        return self._new_draw(self._unview(top_two_sample_fast(loc, scale, df, self.beta, self._rng)))


class BatchThompson(_Confident):
    """Asynchronous Thompson sampling for W parallel workers (FIESTA's BTS, Kandasamy et al. 2018).

    Up to ``n_workers`` evaluations are in flight; whenever one finishes, the
    free worker's next candidate is drawn from the current belief (no waiting
    for a whole batch). ``rule="thompson"`` samples the posterior argmax (the
    paper's BTS, greedy); ``rule="top_two"`` uses the top-two rule for each
    free worker, the less greedy batch version the FIESTA authors asked for,
    with ``beta`` as in :class:`TopTwoThompson` (a probability or ``"ids"``).
    Outcomes are told in the order they were asked, so the run is the same
    whatever the timing of the workers.
    """

    def __init__(self, confidence: float, n_workers: int = 4, *, rule: str = "top_two", beta: float | str = 0.5,
                 min_evals: int = 3, stopping: str = "bayes", transform: str | None = None,
                 max_evals: int | None = None) -> None:
        super().__init__(confidence, min_evals=min_evals, stopping=stopping, transform=transform, max_evals=max_evals)
        self.n_workers = check_int("n_workers", n_workers, 1)
        self.rule = check_choice("rule", rule, ("thompson", "top_two"))
        self.beta = check_beta(beta)

    @property
    def max_pending(self) -> int:  # type: ignore[override]
        return self.n_workers

    def ask(self) -> Draw | None:
        d = self._initial_ask()
        if d is not None or not self._ready() or self._at_max_evals():
            return d
        loc, scale, df = self._posterior()
        if self.rule == "thompson":
            return self._new_draw(self._unview(thompson_sample_fast(loc, scale, df, self._rng)))
        return self._new_draw(self._unview(top_two_sample_fast(loc, scale, df, self.beta, self._rng)))


class UniformUntilConfident(_Confident):
    """Non-adaptive fixed confidence (FIESTA's baseline): evaluate every candidate once per
    round until the stopping rule fires.

    ``check="evaluation"`` tests the stopping rule after every evaluation (a slightly stronger
    baseline); ``check="round"`` only after each complete round, as FIESTA's
    ``non_adaptive_fc`` does.
    """

    def __init__(self, confidence: float, min_evals: int = 3, *, stopping: str = "bayes",
                 transform: str | None = None, max_evals: int | None = None, n_workers: int = 1,
                 check: str = "evaluation") -> None:
        super().__init__(confidence, min_evals=min_evals, stopping=stopping, transform=transform, max_evals=max_evals)
        self.n_workers = check_int("n_workers", n_workers, 1)
        self.check = check_choice("check", check, ("evaluation", "round"))

    def _check_now(self) -> bool:
        return self.check == "evaluation" or self._told % self.n_candidates == 0

    @property
    def max_pending(self) -> int:  # type: ignore[override]
        return self.n_workers

    def ask(self) -> Draw | None:
        d = self._initial_ask()
        if d is not None:
            return d
        if not self._ready() or self._at_max_evals():
            return None
        c = int(self._asked.sum()) % self.n_candidates
        while c in self._dropped:  # the next candidate not dropped, in turn
            c = (c + 1) % self.n_candidates
        return self._new_draw(c)
