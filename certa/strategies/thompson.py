"""Fixed-confidence selection: top-two Thompson sampling, batch Thompson sampling, and the
non-adaptive baseline, with FIESTA's Bayesian stopping rule or a delta-correct GLR rule."""
from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np

from ..engine.draws import Draw, Outcome, derive_seed
from ..engine.strategy import Strategy
from ._gk16 import gk16_confidence, gk16_statistic, gk16_threshold
from ._glr import (
    check_tolerance,
    count_limited,
    glr_delta_reached,
    glr_threshold,
    min_count,
)
from ._guarantee import guarantee_text
from ._leader_belief import LeaderBelief
from ._posterior import (
    DEFAULT_SD_FLOOR_FRACTION,
    SKIP_MARGIN,
    RunningStats,
    p_best,
    p_best_upper_bound,
    posterior_from_stats,
)
from ._sampling import thompson_sample, top_two_sample
from ._stopping import blocking_challenger, glr_min_statistic, glr_should_stop_screened
from ._validation import check_beta, check_choice, check_confidence, check_int

STOPPING_RULES = ("bayes", "glr", "gk16")
#: Defaults a user gets (docs/adaptive.md, "Defaults"): the delta-correct rule and IDS.
DEFAULT_STOPPING = "glr"
DEFAULT_BETA = "ids"
#: FIESTA's exact algorithm (Moss et al. 2019, TTTS with its Bayesian stopping rule): the settings
#: behind ``strategy="fiesta"`` on every front.
FIESTA_SETTINGS = {"beta": 0.5, "stopping": "bayes"}


class _Confident(Strategy):
    """Shared machinery of the fixed-confidence strategies.

    ``stopping="bayes"`` is FIESTA's rule: stop when the posterior P(best) of
    the leader reaches ``confidence``. It is cheap but it is **not** a
    frequentist guarantee: checked after every evaluation, its rate of wrong
    choices can exceed ``1 - confidence`` (see ``docs/adaptive.md``).
    ``stopping="glr"`` is a likelihood-ratio rule for Gaussian scores with
    unknown variances whose threshold holds uniformly over time (the
    scale-invariant e-process of Lai 1976 / Wang & Ramdas 2023, see
    :mod:`certa.strategies._glr`): it chooses a candidate more than
    ``tolerance`` below the best with probability at most
    ``delta = 1 - confidence`` (for Gaussian scores).

    ``tolerance`` (epsilon-best identification): stop once the chosen
    candidate is within ``tolerance`` of the best with the stated confidence;
    near-ties, where the choice hardly matters, then stop early. Whatever ends
    the run (confidence reached, ``max_evals``), :meth:`result` reports the
    confidence reached for the recommendation (for ``"glr"`` the smallest
    delta at which the rule would have stopped, valid at any time).
    """

    #: Record every candidate's P(best) after every evaluation in ``result()["belief_history"]``
    #: (and, for ``stopping="glr"``, the confidence the rule gives its recommendation in
    #: ``result()["confidence_history"]``).
    #: Off: the Bayesian rule then needs only the leader's P(best), updated incrementally
    #: (:class:`._leader_belief.LeaderBelief`), and skips even that whenever a cheap upper bound shows
    #: that no candidate can reach the confidence (same stopping decisions). The history of a
    #: finished run is rebuilt on demand by :func:`certa.reporting.loading.belief_history`.
    _track_belief = False

    def __init__(self, confidence: float, *, min_evals: int = 3, stopping: str = DEFAULT_STOPPING,
                 transform: str | None = None, max_evals: int | None = None, tolerance: float = 0.0) -> None:
        self.confidence = check_confidence(confidence)
        self.tolerance = check_tolerance(tolerance)
        if self.tolerance > 0 and transform is not None:
            raise ValueError("tolerance is in the scores' units and cannot be combined with transform="
                             f"{transform!r}; give tolerance=0 or transform=None")
        self.min_evals = check_int("min_evals", min_evals, 3)
        self.stopping = check_choice("stopping", stopping, STOPPING_RULES)
        self.transform = check_choice("transform", transform, (None, "logit"))
        self.max_evals = None if max_evals is None else check_int("max_evals", max_evals, 1)

    def _start(self) -> None:
        if self.n_candidates < 2:
            raise ValueError("a fixed-confidence selection needs at least two candidates")
        n_init = self._initial_evals()
        if self.max_evals is not None and self.max_evals < n_init * self.n_candidates:
            raise ValueError(f"max_evals={self.max_evals} is below the {n_init * self.n_candidates} "
                             f"evaluations of the initial round ({n_init} per candidate)")
        self._scores: list[list[float]] = [[] for _ in range(self.n_candidates)]
        # running sufficient statistics of the (transformed) scores: the posterior and the
        # GLR statistic come from them instead of the full score lists (certa/strategies/_posterior.py)
        self._stats = RunningStats(self.n_candidates, self.transform)
        self._asked = np.zeros(self.n_candidates, dtype=int)
        self._failed = np.zeros(self.n_candidates, dtype=int)
        self._rng = np.random.default_rng(derive_seed(self.seed, 2**31 - 1))
        self._n_init = self._initial_evals()
        self._limit = glr_threshold(1.0 - self.confidence, self.n_candidates)
        self._init_queue = [c for _ in range(self._n_init) for c in range(self.n_candidates)]
        self._told = 0
        self._stopped = False
        self._stop_reason = ""
        self._history: list[np.ndarray] = []
        self._confidence_history: list[float] = []
        self._best = 0
        self._p = None   # P(best) of every candidate, computed when asked for (nan before 3 scores each)
        self._post = None
        self._is_ready = False
        self._leader_belief = LeaderBelief()

    def _initial_evals(self) -> int:
        """Evaluations per candidate before adapting: ``min_evals``, and for ``"glr"`` at least the
        count below which the rule cannot rule a candidate out (``_glr.min_count``)."""
        if self.stopping == "glr":
            return max(self.min_evals, min_count(1.0 - self.confidence, self.n_candidates))
        return self.min_evals

    # -- helpers -------------------------------------------------------------------------
    def _new_draw(self, c: int) -> Draw:
        n = int(self._asked[c])
        self._asked[c] += 1
        return Draw(c, "split", (n,), seed=derive_seed(self.seed, c, n))

    def _ready(self) -> bool:
        # once every candidate left has 3 scores it stays so (scores only grow, drops only remove)
        if not self._is_ready:
            self._is_ready = all(len(self._scores[c]) >= 3 for c in self._alive())
        return self._is_ready

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
            if not self._track_belief and self.tolerance == 0.0 and self.confidence > 0.5:
                # Only the candidate with the highest location can have P(best) > 1/2 (see
                # p_best_upper_bound), so only its P(best) decides; it is updated incrementally.
                # The full vector is computed when it is asked for (result()).
                self._p = None
                top = np.flatnonzero(loc == loc.max())
                if (top.size > 1 or (self.confidence > 0.5 + SKIP_MARGIN
                                     and p_best_upper_bound(loc, scale, df) < self.confidence - SKIP_MARGIN)):
                    return   # no candidate can reach the confidence
                leader = int(top[0])
                if self._leader_belief(loc, scale, df, leader) >= self.confidence:
                    self._best = self._unview(leader)
                    self._stopped, self._stop_reason = True, "confident"
                return
            self._p = self._expand(p_best(loc, scale, df))
            if self._track_belief:
                self._history.append(self._p.copy())
            self._best = int(np.argmax(self._p))
            stop = self._bayes_confidence() >= self.confidence
        elif self.stopping == "gk16":
            self._p = None
            best, g = self._gk16()
            self._best = self._unview(best)
            stop = g > gk16_threshold(1.0 - self.confidence, self._n_told_ok())
            if self._track_belief:
                self._history.append(self._expand(p_best(*self._posterior())))
                self._confidence_history.append(gk16_confidence(g, self._n_told_ok()))
        else:  # P(best) is not needed to decide; it is computed once, in result()
            self._p = None
            st = self._live_stats()
            stop, best = glr_should_stop_screened(st.mean, st.var(), st.n, 1.0 - self.confidence, self.tolerance)
            self._best = self._unview(best)
            if self._track_belief:   # the posterior is not what decides here; it is kept for the plot
                self._history.append(self._expand(p_best(*self._posterior())))
                self._confidence_history.append(self._glr_confidence())
                self._best = self._unview(best)
        if stop:
            self._stopped, self._stop_reason = True, "confident"

    def _bayes_confidence(self) -> float:
        """Posterior probability that the leader is within ``tolerance`` of the best."""
        if self.tolerance == 0.0:
            return float(self._p[self._best])
        loc, scale, df = self._posterior()
        pos = self._alive().index(self._best) if self._dropped else self._best   # position in the live view
        shifted = loc.copy()
        shifted[pos] += self.tolerance   # mean_b + eps >= every mean_j
        return float(p_best(shifted, scale, df)[pos])

    def _n_told_ok(self) -> int:
        return int(sum(len(self._scores[c]) for c in self._alive()))

    def _gk16(self) -> tuple[int, float]:
        """``(best, min_j G_best,j)`` over the candidates left (:mod:`._gk16`), variances floored."""
        from ._glr import _floored_var

        st = self._live_stats()
        v = _floored_var(st.mean, st.var(), st.n, DEFAULT_SD_FLOOR_FRACTION)
        return gk16_statistic(st.mean, v, st.n, self.tolerance)

    def _glr_confidence(self) -> float:
        st = self._live_stats()
        if st.n.size < 2:
            return 1.0
        best, zmin = glr_min_statistic(st.mean, st.var(), st.n, self.tolerance)
        self._best = self._unview(best)
        return 1.0 - glr_delta_reached(zmin, st.n.size)

    def _p_best(self) -> np.ndarray:
        if self._p is None:
            self._p = self._expand(p_best(*self._posterior())) if self._ready() and self._alive() \
                else np.full(self.n_candidates, np.nan)
            if self.stopping == "bayes" and self._ready():
                self._best = int(np.argmax(self._p))
        return self._p

    def _fallback(self):
        """Challenger when the posterior is nearly sure of the leader: for ``"glr"`` or a
        tolerance the one blocking the stop (smallest pair statistic with the tolerance, the
        transportation-cost challenger), else ``None`` (exact top-two draw)."""
        if self.stopping == "bayes" and self.tolerance == 0.0:
            return None
        st = self._live_stats()
        return lambda leader: blocking_challenger(st.mean, st.var(), st.n, leader, self.tolerance)

    def ask(self) -> Draw | None:
        d = self._initial_ask()
        if d is not None or not self._ready() or self._at_max_evals():
            return d
        return self._next_draw()

    def _next_draw(self) -> Draw:
        """The next draw once the initial evaluations are asked (each strategy's sampling rule)."""
        raise NotImplementedError

    def _top_two_draw(self) -> Draw:
        """The next draw by the top-two rule (``self.beta``; EB-TC_eps with a tolerance)."""
        loc, scale, df = self._posterior()
        return self._new_draw(self._unview(top_two_sample(loc, scale, df, self.beta, self._rng,
                                                          fallback=self._fallback(), tolerance=self.tolerance)))

    def _initial_ask(self) -> Draw | None:
        if self.max_evals is not None and int(self._asked.sum()) >= self.max_evals:
            return None  # the last draws are in flight; the run stops when they are told
        if self._init_queue:
            return self._new_draw(self._init_queue.pop(0))
        if self.stopping == "glr" and self._ready():
            # a challenger with too few scores to be ruled out, however far below it looks
            # (its SD is unknown), is evaluated before the sampling rule takes over
            st = self._live_stats()
            if st.n.size >= 2:
                slack = count_limited(st.n, int(np.argmax(st.mean)), self._limit)
                j = int(np.argmin(slack))
                if slack[j] <= 0:
                    return self._new_draw(self._unview(j))
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
            if len(self._scores[draw.candidate]) < self._n_init and draw.candidate not in self._dropped:
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
            elif self.stopping in ("glr", "gk16"):
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
        """The recommendation and the confidence reached for it, whatever ended the run.

        Valid at any point of a run (stopped or not): ``best`` is the rule's current
        recommendation (the highest mean for ``"glr"``, the highest P(best) for ``"bayes"``; the
        highest mean while some candidate has fewer than 3 scores) and ``confidence`` what the
        rule gives it now (``nan`` before 3 scores each). ``target_reached`` says whether the run
        stopped because ``confidence`` reached ``target_confidence``.
        """
        means = np.array([np.mean(s) if s else np.nan for s in self._scores])
        p = self._p_best()  # (also sets the choice when the last P(best) was skipped)
        if not self._ready():
            reached = float("nan")
            alive = [c for c in self._alive() if self._scores[c]]
            if alive and not self._stopped:   # the highest mean so far
                self._best = max(alive, key=lambda c: (means[c], -c))
        elif self.stopping == "glr":
            reached = self._glr_confidence()
        elif self.stopping == "gk16":
            best, g = self._gk16() if len(self._alive()) >= 2 else (0, np.inf)
            if len(self._alive()) >= 2:
                self._best = self._unview(best)
            reached = gk16_confidence(g, self._n_told_ok())
        else:
            reached = self._bayes_confidence()
        return {"best": int(self._best), "estimates": means, "p_best": p.copy(),
                "confidence": reached, "target_confidence": self.confidence, "tolerance": self.tolerance,
                "target_reached": self._stop_reason == "confident",
                "guarantee": guarantee_text(reached, self.tolerance, self.stopping),
                "evaluations": self._asked.copy(),
                "failed": self._failed.copy(), "stop_reason": self._stop_reason or "not stopped",
                "belief_history": np.array(self._history), "stopping": self.stopping,
                **({"confidence_history": np.array(self._confidence_history)}
                   if self.stopping in ("glr", "gk16") else {})}


class TopTwoThompson(_Confident):
    """Fixed-confidence selection by top-two Thompson sampling (Russo 2016; FIESTA's TTTS).

    Each candidate is first evaluated ``min_evals`` times; then, one evaluation
    at a time, the next candidate is the posterior-sampled leader with
    probability ``beta`` and otherwise the challenger (the argmax of a fresh
    posterior sample that differs from the leader). Stops by ``stopping``
    (see the module documentation). Every evaluation is on a fresh split and
    seed derived from the run's seed.

    With ``tolerance > 0`` the sampling rule is EB-TC_eps (Jourdan, Degenne & Kaufmann,
    NeurIPS 2023): the leader is the candidate with the highest mean and the challenger
    the one with the least evidence that it is not more than ``tolerance`` above the leader
    (the smallest GLR pair statistic with the tolerance), so near ties that the tolerance makes
    irrelevant are no longer separated; ``beta`` picks between the two as above
    (:func:`certa.strategies._sampling.top_two_sample`, ``docs/adaptive.md``).

    Parameters
    ----------
    confidence : float in (0, 1)
        1 - delta.
    beta : float in (0, 1) or "ids", default "ids"
        Probability of evaluating the leader. 0.5 is FIESTA's TTTS. ``"ids"`` (the default) is
        information-directed selection (You, Qin, Wang & Yang 2023): the challenger
        is always drawn, then the leader is played with probability
        ``h_I / (h_I + h_J)``, ``h_i = s_i^2 / N_i`` (the variance of each one's mean),
        which makes top-two sampling asymptotically optimal for Gaussian scores without
        a ``beta`` to tune. On the FIESTA paper's data it needs 5-8 % fewer
        evaluations than ``beta=0.5`` (``docs/adaptive.md``).
    min_evals : int >= 3, default 3
    stopping : {"glr", "bayes", "gk16"}, default "glr"
        ``"glr"``: delta-correct (wrong with probability at most ``1 - confidence``);
        ``"bayes"``: FIESTA's posterior rule, cheaper but without that guarantee;
        ``"gk16"``: the unknown-variance GLR with the anchors' heuristic threshold
        ``log((1 + log t) / delta)`` (:mod:`certa.strategies._gk16`), opt-in: its confidence is
        calibrated by simulation, not proven (``docs/adaptive.md``).
        ``TopTwoThompson(confidence, beta=0.5, stopping="bayes")`` is FIESTA's exact
        algorithm (``strategy="fiesta"`` on the fronts).
    transform : {None, "logit"}
        Model scores in [0, 1] on the logit scale (scores of exactly 0 or 1 are fine).
    max_evals : int or None
        A hard cap on evaluations (the choice is then the current leader and
        ``stop_reason`` says so).
    """

    max_pending = 1

    def __init__(self, confidence: float, beta: float | str = DEFAULT_BETA, min_evals: int = 3, *,
                 stopping: str = DEFAULT_STOPPING,
                 transform: str | None = None, max_evals: int | None = None, tolerance: float = 0.0) -> None:
        super().__init__(confidence, min_evals=min_evals, stopping=stopping, transform=transform, max_evals=max_evals,
                         tolerance=tolerance)
        self.beta = check_beta(beta)

    def _next_draw(self) -> Draw:
        return self._top_two_draw()


class _InFlight:
    """A strategy that keeps a configured number of draws in flight (its constructor's ``n_workers``)."""

    _in_flight: int = 1

    @property
    def in_flight(self) -> int:
        """Evaluations asked and not yet told at most: the constructor's ``n_workers`` (part of
        :meth:`spec`); not :attr:`~certa.engine.strategy.Strategy.n_workers`, the executor's workers,
        which the runner sets and which does not change what this strategy asks."""
        return self._in_flight

    @property
    def max_pending(self) -> int:  # type: ignore[override]
        return self._in_flight

    def spec(self) -> dict[str, Any]:
        return {**super().spec(), "n_workers": self._in_flight}


class BatchThompson(_InFlight, _Confident):
    """Asynchronous Thompson sampling for W parallel workers (FIESTA's BTS, Kandasamy et al. 2018).

    Up to ``n_workers`` evaluations are in flight; whenever one finishes, the
    free worker's next candidate is drawn from the current belief (no waiting
    for a whole batch). ``rule="thompson"`` samples the posterior argmax (the
    paper's BTS, greedy); ``rule="top_two"`` uses the top-two rule for each
    free worker, the less greedy batch version the FIESTA authors asked for,
    with ``beta`` as in :class:`TopTwoThompson` (a probability or ``"ids"``; with a
    ``tolerance``, EB-TC_eps as in :class:`TopTwoThompson`).
    Outcomes are told in the order they were asked, so the run is the same
    whatever the timing of the workers.

    ``stopping=None`` (the default) is ``"glr"`` for ``rule="top_two"`` and ``"bayes"``
    for ``rule="thompson"``: plain Thompson sampling evaluates the losing candidates too
    rarely for the GLR rule to stop (3 candidates 0.5 and 1.5 SD apart: still running after
    100,000 evaluations, 43 of them on the two losers), so an explicit
    ``rule="thompson", stopping="glr"`` warns.
    """

    def __init__(self, confidence: float, n_workers: int = 4, *, rule: str = "top_two",
                 beta: float | str = DEFAULT_BETA, min_evals: int = 3, stopping: str | None = None,
                 transform: str | None = None, max_evals: int | None = None, tolerance: float = 0.0) -> None:
        rule = check_choice("rule", rule, ("thompson", "top_two"))
        if stopping is None:
            stopping = "bayes" if rule == "thompson" else DEFAULT_STOPPING
        elif rule == "thompson" and stopping == "glr":
            warnings.warn("BatchThompson(rule='thompson', stopping='glr') rarely stops: plain Thompson "
                          "sampling starves the losing candidates of the evaluations the GLR rule needs; "
                          "use rule='top_two' (the default) or stopping='bayes'", UserWarning, stacklevel=2)
        super().__init__(confidence, min_evals=min_evals, stopping=stopping, transform=transform, max_evals=max_evals,
                         tolerance=tolerance)
        self._in_flight = check_int("n_workers", n_workers, 1)
        self.rule = rule
        self.beta = check_beta(beta)

    def _next_draw(self) -> Draw:
        if self.rule == "thompson":
            loc, scale, df = self._posterior()
            return self._new_draw(self._unview(thompson_sample(loc, scale, df, self._rng)))
        return self._top_two_draw()


class UniformUntilConfident(_InFlight, _Confident):
    """Non-adaptive fixed confidence (FIESTA's baseline): evaluate every candidate once per
    round until the stopping rule fires.

    ``check="evaluation"`` tests the stopping rule after every evaluation (a slightly stronger
    baseline); ``check="round"`` only after each complete round, as FIESTA's
    ``non_adaptive_fc`` does.
    """

    def __init__(self, confidence: float, min_evals: int = 3, *, stopping: str = DEFAULT_STOPPING,
                 transform: str | None = None, max_evals: int | None = None, n_workers: int = 1,
                 check: str = "evaluation", tolerance: float = 0.0) -> None:
        super().__init__(confidence, min_evals=min_evals, stopping=stopping, transform=transform, max_evals=max_evals,
                         tolerance=tolerance)
        self._in_flight = check_int("n_workers", n_workers, 1)
        self.check = check_choice("check", check, ("evaluation", "round"))

    def _check_now(self) -> bool:
        return self.check == "evaluation" or self._told % self.n_candidates == 0

    def _next_draw(self) -> Draw:
        c = int(self._asked.sum()) % self.n_candidates
        while c in self._dropped:  # the next candidate not dropped, in turn
            c = (c + 1) % self.n_candidates
        return self._new_draw(c)
