"""Incremental versions of the belief and stopping computations, for long simulations.

The reference functions in :mod:`._belief` and :mod:`._glr` recompute everything from the
full score lists after every evaluation. The fixed-confidence strategies instead keep
running sufficient statistics (count, mean and sum of squared deviations, Welford's
update) and derive the same posterior from them; :mod:`tests.test_fast_belief` checks
every function here against its reference to 1e-12.

* :class:`RunningStats` and :func:`posterior_from_stats` give ``_belief.posterior``.
* :func:`p_best_upper_bound` is a cheap, rigorous upper bound on ``max_i P(best)_i``; when
  it is below the confidence the (1 ms) quadrature cannot make the Bayesian rule stop,
  so the strategies skip it. It never changes a stopping decision.
* :func:`top_two_sample_fast` / :func:`thompson_sample_fast` consume the generator in
  exactly the same way as ``_belief.top_two_sample`` / ``thompson_sample`` (same
  choice for the same generator state) without re-validating their inputs each call;
  with a tolerance, :func:`top_two_sample_fast` is EB-TC_eps instead (no reference there).
* :func:`glr_should_stop_fast` is ``_glr.glr_should_stop_from_stats`` with the
  threshold cached and the exact statistic computed only for challengers that can matter.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import stdtr

from . import _belief, _glr
from ._belief import DEFAULT_LOGIT_EPS, DEFAULT_SD_FLOOR_FRACTION

#: Safety margin of the P(best) skip: larger than the quadrature's absolute error (<= 1e-4).
SKIP_MARGIN = 1e-3
# standardised offsets at which the upper bound of p_best_upper_bound is evaluated
_Z_GRID = np.concatenate([[-12.0, -8.0, -6.0, -5.0, -4.0], np.linspace(-3.5, 3.5, 15),
                          [4.0, 5.0, 6.0, 8.0, 12.0]])


class RunningStats:
    """Per-candidate count, mean and sum of squared deviations, updated one score at a time.

    Scores are transformed on entry (``transform="logit"`` clips to
    ``[logit_eps, 1 - logit_eps]`` first, as ``_belief.posterior`` does).

    Examples
    --------
    >>> s = RunningStats(2)
    >>> for c, x in [(0, 1.0), (0, 3.0), (1, 2.0)]:
    ...     _ = s.add(c, x)
    >>> s.n.tolist(), s.mean.tolist(), s.var().tolist()
    ([2.0, 1.0], [2.0, 2.0], [1.0, 0.0])
    """

    def __init__(self, n_candidates: int, transform: str | None = None,
                 logit_eps: float = DEFAULT_LOGIT_EPS) -> None:
        if isinstance(n_candidates, bool) or not isinstance(n_candidates, (int, np.integer)) or n_candidates < 1:
            raise ValueError(f"n_candidates must be a positive int, got {n_candidates!r}")
        if transform not in (None, "logit"):
            raise ValueError(f'transform must be None or "logit", got {transform!r}')
        self.transform = transform
        self.logit_eps = float(logit_eps)
        self.n = np.zeros(n_candidates)
        self.mean = np.zeros(n_candidates)
        self.m2 = np.zeros(n_candidates)
        self.lo = math.inf    # min / max / max |x| of all (transformed) scores: the
        self.hi = -math.inf   # reference-SD fallbacks of _belief.posterior use them
        self.abs_hi = 0.0

    def add(self, candidate: int, score: float) -> float:
        """Add one score; returns the transformed value."""
        x = float(score)
        if self.transform == "logit":
            if not 0.0 <= x <= 1.0:
                raise ValueError(f'transform="logit" needs scores in [0, 1], got {x!r}')
            c = min(max(x, self.logit_eps), 1.0 - self.logit_eps)
            x = math.log(c / (1.0 - c))
        n = self.n[candidate] + 1.0
        d = x - self.mean[candidate]
        self.mean[candidate] += d / n
        self.m2[candidate] += d * (x - self.mean[candidate])
        self.n[candidate] = n
        self.lo, self.hi = min(self.lo, x), max(self.hi, x)
        self.abs_hi = max(self.abs_hi, abs(x))
        return x

    def var(self) -> np.ndarray:
        """``ddof=0`` variance per candidate (0 where fewer than 1 score)."""
        return np.divide(self.m2, self.n, out=np.zeros_like(self.m2), where=self.n > 0)


def _reference_sd(means: np.ndarray, sds: np.ndarray, counts: np.ndarray,
                  lo: float, hi: float, abs_hi: float) -> float:
    # _belief._reference_sd with the score-list fallbacks taken from running min / max
    tiny = _belief._ZERO_SD_RTOL * np.maximum(1.0, np.abs(means))
    varying = sds > tiny
    if varying.any():
        return float(np.sqrt(np.sum(counts[varying] * sds[varying] ** 2) / np.sum(counts[varying])))
    spread = hi - lo
    if spread > _belief._ZERO_SD_RTOL * max(1.0, abs_hi):
        return spread
    return abs_hi if abs_hi > 0 else 1.0


def posterior_from_stats(stats: RunningStats, sd_floor_fraction: float = DEFAULT_SD_FLOOR_FRACTION
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``_belief.posterior`` of the scores summarised by ``stats`` (each candidate needs >= 3).

    Examples
    --------
    >>> s = RunningStats(2)
    >>> for c, x in [(0, .8), (0, .82), (0, .81), (0, .79), (1, .7), (1, .7), (1, .7)]:
    ...     _ = s.add(c, x)
    >>> loc, scale, df = posterior_from_stats(s)
    >>> df.tolist(), round(float(loc[0]), 3)
    ([2.0, 1.0], 0.805)
    """
    if not isinstance(stats, RunningStats):
        raise TypeError(f"stats must be a RunningStats, got {type(stats).__name__}")
    if (stats.n < 3).any():
        raise ValueError(f"every candidate needs at least 3 scores, got counts {stats.n.tolist()}")
    sds = np.sqrt(stats.m2 / stats.n)
    floor = sd_floor_fraction * _reference_sd(stats.mean, sds, stats.n, stats.lo, stats.hi, stats.abs_hi)
    df = stats.n - 2.0
    return stats.mean.copy(), np.maximum(sds, floor) / np.sqrt(df), df


def p_best_upper_bound(loc: np.ndarray, scale: np.ndarray, df: np.ndarray, n_rivals: int = 3) -> float:
    """An upper bound on ``max_i P(candidate i has the highest mean)`` (no quadrature).

    * A candidate whose ``loc`` is not the unique maximum has ``P_i <= 1/2``: ``mean_i -
      mean_L`` is symmetric about ``loc_i - loc_L <= 0`` for the leader ``L``.
    * For the unique leader ``L``, ``P_L = integral prod_{j != L} F_j dF_L`` with every
      ``F_j`` increasing, so on a grid ``x_0 < ... < x_m`` the upper Riemann-Stieltjes sum
      ``F_L(x_0) G(x_0) + sum_k (F_L(x_{k+1}) - F_L(x_k)) G(x_{k+1}) + 1 - F_L(x_m)``
      bounds it, with ``G = prod_j F_j`` over any subset of the rivals (dropping a factor
      ``F_j <= 1`` only loosens the bound): the ``n_rivals`` with the highest
      ``loc + 2 scale``. The grid is ``x = loc_L + z scale_L`` with 25 values of ``z``
      in ``[-12, 12]``.

    Examples
    --------
    >>> p_best_upper_bound(np.array([0.0, 0.0]), np.array([1.0, 1.0]), np.array([5.0, 5.0]))
    0.5
    >>> b = p_best_upper_bound(np.array([1.0, 0.0]), np.array([1.0, 1.0]), np.array([1e6, 1e6]))
    >>> bool(0.7602 <= b <= 0.85)   # the exact value is Phi(1/sqrt(2)) = 0.7602
    True
    """
    top = float(loc.max())
    leaders = np.flatnonzero(loc == top)
    if leaders.size > 1:
        return 0.5
    L = int(leaders[0])
    reach = loc + 2.0 * scale
    reach[L] = -np.inf
    rivals = np.argsort(reach)[::-1][:min(n_rivals, loc.size - 1)]
    rows = np.concatenate([[L], rivals])
    x = top + scale[L] * _Z_GRID
    F = stdtr(df[rows, None], (x[None, :] - loc[rows, None]) / scale[rows, None])
    FL, G = F[0], np.prod(F[1:], axis=0)
    bound = FL[0] * G[0] + float(np.dot(np.diff(FL), G[1:])) + (1.0 - FL[-1])
    return max(min(bound, 1.0), 0.5)


def thompson_sample_fast(loc: np.ndarray, scale: np.ndarray, df: np.ndarray, gen: np.random.Generator) -> int:
    """``_belief.thompson_sample`` for validated float arrays and a Generator."""
    return int(np.argmax(loc + scale * gen.standard_t(df, size=loc.shape)))


def top_two_sample_fast(loc: np.ndarray, scale: np.ndarray, df: np.ndarray, beta: float | str,
                        gen: np.random.Generator, max_resamples: int = 64, fallback=None,
                        tolerance: float = 0.0) -> int:
    """Top-two Thompson sampling with a short rejection phase and an exact fallback.

    Up to ``max_resamples`` re-draws, the same draws in the same order as
    ``_belief.top_two_sample`` (hence the same choice for the same generator state).
    When no challenger has appeared by then (the leader is nearly certain, so rejection
    would need about ``1 / (1 - P_leader)`` draws), the challenger is drawn from its
    exact distribution instead, ``P(best)`` by quadrature restricted to the other
    candidates and renormalised (``_belief.top_two_sample`` falls back to the argmax
    of that vector after 10,000 re-draws, which is cheaper per call only on average
    and is not the top-two distribution). ``fallback(leader) -> challenger``, when given,
    replaces that exact draw (the GLR rule passes the challenger that blocks its stop), and
    the re-draws are then capped at ``16384 / n_candidates`` (at least 4) as well.

    ``tolerance=eps > 0`` (epsilon-best identification) is EB-TC_eps (Jourdan, Degenne &
    Kaufmann, "An epsilon-best-arm identification algorithm for fixed-confidence and beyond",
    NeurIPS 2023): the leader is the candidate with the highest mean and the challenger is
    ``fallback(leader)``, which must be the transportation-cost challenger with the tolerance,
    ``argmin_j`` of the evidence that ``j`` is not more than ``eps`` above the leader
    (:func:`blocking_challenger`: the GLR pair statistic, the unknown-variance version of the
    paper's ``(m_L - m_j + eps) / sqrt(s_L^2/N_L + s_j^2/N_j)``); ``beta`` (or ``"ids"``) then
    picks between the two as without a tolerance. Candidates already ``eps``-dominated by the
    leader are not challengers, whereas the plain top-two challenger keeps separating near
    ties that the tolerance makes irrelevant. On the near-tie family of ``docs/adaptive.md``
    the highest-mean leader needed 3-4 % fewer evaluations than a Thompson-sampled one (with
    the Thompson version of the epsilon-aware challenger, re-draw until some ``j`` has
    ``theta_j > theta_leader + eps``); with the highest-mean leader that re-draw challenger
    and this one cost the same, and this one needs no re-draws. With ``eps = 0`` the rule and
    the generator's use are exactly the plain ones.

    Examples
    --------
    >>> top_two_sample_fast(np.array([0.0, 10.0]), np.array([1.0, 1.0]), np.array([5.0, 5.0]),
    ...                     1.0, np.random.default_rng(0))
    1
    """
    ids = beta == "ids"
    if tolerance > 0.0:
        if fallback is None:
            raise ValueError("tolerance > 0 needs the transportation-cost challenger as fallback")
        leader = int(np.argmax(loc))
        if loc.size == 1 or (not ids and gen.random() < beta):
            return leader
        challenger = int(fallback(leader))
        if ids and gen.random() < _belief.ids_leader_probability(scale, df, leader, challenger):
            return leader
        return challenger
    leader = int(np.argmax(loc + scale * gen.standard_t(df, size=loc.shape)))
    if fallback is not None:
        # the fallback is cheap (not a quadrature): with many candidates, spend at most about
        # 16,384 t draws looking for a challenger (unchanged up to 256 candidates)
        max_resamples = min(max_resamples, max(4, 16_384 // loc.size))
    if loc.size == 1 or (not ids and gen.random() < beta):
        return leader
    challenger = _challenger_fast(loc, scale, df, leader, gen, max_resamples, fallback)
    if ids and gen.random() < _belief.ids_leader_probability(scale, df, leader, challenger):
        return leader
    return challenger


def _challenger_fast(loc: np.ndarray, scale: np.ndarray, df: np.ndarray, leader: int,
                     gen: np.random.Generator, max_resamples: int, fallback=None) -> int:
    used, batch = 0, 16
    while used < max_resamples:
        size = min(batch, max_resamples - used)
        winners = np.argmax(loc + scale * gen.standard_t(df, size=(size, loc.size)), axis=1)
        other = np.flatnonzero(winners != leader)
        if other.size:
            return int(winners[other[0]])
        used += size
        batch = min(batch * 4, 4096)
    if fallback is not None:
        return int(fallback(leader))
    probs = _belief.p_best(loc, scale, df)
    others = np.flatnonzero(np.arange(loc.size) != leader)
    p_o = probs[others]
    if not p_o.sum() > 0.0:   # every other candidate has P(best) 0 to machine precision
        p_o = np.ones_like(p_o)
    cdf = np.cumsum(p_o)
    pick = int(np.searchsorted(cdf, gen.random() * cdf[-1], side="right"))
    return int(others[min(pick, others.size - 1)])


@functools.lru_cache(maxsize=4096)
def _log_threshold(delta: float, n_candidates: int) -> float:
    return _glr._log_threshold(delta, n_candidates)


def blocking_challenger(mean: np.ndarray, var: np.ndarray, counts: np.ndarray, leader: int,
                        tolerance: float = 0.0, sd_floor_fraction: float = DEFAULT_SD_FLOOR_FRACTION) -> int:
    """The challenger whose pair statistic with ``leader`` is (approximately) smallest: O(K).

    Uses the objective at the precision-weighted common mean, an upper bound on each
    ``Z_leader,j``; for candidates with a higher mean than the leader it is the
    leader's own weakest comparison either way. With ``tolerance`` the statistic is that of
    the alternative ``u_j >= u_leader + tolerance``: the transportation-cost challenger of
    EB-TC_eps (see :func:`top_two_sample_fast`).

    Examples
    --------
    >>> mean, var = np.array([1.0, 0.9, 0.5]), np.ones(3)
    >>> blocking_challenger(mean, var, np.array([1000.0, 1000.0, 40.0]), 0)       # the near tie
    1
    >>> blocking_challenger(mean, var, np.array([1000.0, 1000.0, 40.0]), 0, 0.5)  # 1 is eps-dominated
    2
    """
    v = _glr._floored_var(mean, var, counts, sd_floor_fraction)
    return int(np.argmin(_glr.approx_pair_statistics(mean, v, counts, leader, float(tolerance))))


def glr_min_statistic_fast(mean: np.ndarray, var: np.ndarray, counts: np.ndarray, tolerance: float = 0.0,
                           limit: float | None = None,
                           sd_floor_fraction: float = DEFAULT_SD_FLOOR_FRACTION) -> tuple[int, float]:
    """``(best, min_j Z_best,j)`` with exact work only for the challengers that can matter.

    Without ``limit`` the minimum is exact (as ``_glr.glr_pairwise_from_stats(...)[1].min()``);
    with ``limit`` it is exact when ``<= limit`` and otherwise only known to exceed it.
    """
    v = _glr._floored_var(mean, var, counts, sd_floor_fraction)
    return _glr._screened_min(mean, v, counts, float(tolerance), limit)


def _stop_screen(m: np.ndarray, v: np.ndarray, n: np.ndarray, eps: float, limit: float) -> tuple[int, float]:
    """``(best, z)`` with ``z > limit`` iff ``min_j Z_best,j > limit`` (the stopping test only).

    ``_glr._screened_min`` with a limit solves the exact pair statistic (a quintic) for every
    challenger whose cheap lower bound is below the limit, which late in a run of many
    candidates is most of them. Here they are solved in order of their cheap upper bound, in
    growing batches, and the first exact value below the limit ends the search (the rule
    cannot stop; ``z`` is then that value, not necessarily the minimum). Same decisions.
    """
    best = int(np.argmax(m))
    others = np.flatnonzero(np.arange(m.size) != best)
    if not others.size:
        return best, math.inf
    nb, mb, vb = n[best], m[best], v[best]
    no, mo, vo = n[others], m[others], v[others]
    gap = np.maximum(mb - mo + eps, 0.0)
    s0 = (no / vo) / (nb / vb + no / vo)    # the known-variance optimum of the common mean
    ui = mo - eps + gap * s0
    ub = _glr.log_e_process(nb, mb, vb, ui) + _glr.log_e_process(no, mo, vo, ui + eps)
    if ub.min() <= limit:
        return best, float(ub.min())
    grid = np.linspace(0.0, 1.0, 17)
    ui = (mo - eps)[:, None] + gap[:, None] * grid
    fi = _glr.log_e_process(nb, mb, vb, ui)
    fo = _glr.log_e_process(no[:, None], mo[:, None], vo[:, None], ui + eps)
    # the objective at the grid points bounds Z from above (they are feasible); on each cell
    # fi is increasing and fo decreasing in the common mean, which bounds Z from below
    ub = np.minimum(ub, (fi + fo).min(axis=1))
    if ub.min() <= limit:
        return best, float(ub.min())
    lb = (fi[:, 1:] + fo[:, :-1]).min(axis=1)
    need = np.flatnonzero(lb <= limit)
    low = float(lb.min())
    if not need.size:
        return best, low
    need = need[np.argsort(ub[need], kind="stable")]
    low = float(np.delete(lb, need).min()) if need.size < lb.size else math.inf
    start, size = 0, 4
    while start < need.size:
        part = need[start:start + size]
        z = _glr.pair_statistic(nb, mb, vb, no[part], mo[part], vo[part], eps)
        low = min(low, float(z.min()))
        if low <= limit:
            return best, low
        start, size = start + size, size * 4
    return best, low


def glr_should_stop_fast(mean: np.ndarray, var: np.ndarray, counts: np.ndarray, delta: float,
                         tolerance: float = 0.0,
                         sd_floor_fraction: float = DEFAULT_SD_FLOOR_FRACTION) -> tuple[bool, int]:
    """``_glr.glr_should_stop_from_stats`` with a cached threshold and screened challengers.

    Every challenger gets a cheap upper bound on its statistic (the objective at one
    feasible point) and a cheap lower bound; the exact statistic is computed only for
    those whose lower bound does not already exceed the threshold, most promising first,
    until one is below it (:func:`_stop_screen`). Same decisions as the reference (tested),
    with work linear in the number of candidates.

    Examples
    --------
    >>> glr_should_stop_fast(np.array([1.0, 0.0]), np.array([1.0, 1.0]), np.array([100.0, 100.0]), 0.05)
    (True, 0)
    """
    k = mean.size
    if k == 1:
        return True, 0
    limit = _log_threshold(float(delta), k)
    v = _glr._floored_var(mean, var, counts, sd_floor_fraction)
    best, zmin = _stop_screen(mean, v, counts, float(tolerance), limit)
    return bool(zmin > limit), best
