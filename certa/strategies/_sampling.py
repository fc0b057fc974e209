"""Which candidate to evaluate next: Thompson and top-two Thompson sampling of FIESTA's posterior.

:func:`thompson_sample` draws once from every candidate's posterior (:mod:`._posterior`) and
evaluates the argmax; :func:`top_two_sample` is FIESTA's TTTS (Russo 2016), with
information-directed selection (:func:`ids_leader_probability`) as an alternative to a fixed
``beta`` and EB-TC_eps with a tolerance. Inputs are validated float arrays and a Generator
(the strategies call them after every evaluation); ``tests/_reference_belief.py`` holds the
validated versions that re-draw as FIESTA does, and ``tests/test_fast_belief.py`` checks that
these make the same choice for the same generator state.
"""
from __future__ import annotations

import numpy as np

from ._posterior import p_best

__all__ = ["ids_leader_probability", "thompson_sample", "top_two_sample"]


def ids_leader_probability(scale: np.ndarray, df: np.ndarray, leader: int, challenger: int) -> float:
    """Information-directed selection (You, Qin, Wang & Yang, COLT 2023): P(play the leader).

    For Gaussian candidates the pairwise information of the top-two pair (I, J) is
    ``C = (m_I - m_J)^2 / (2 (s_I^2/p_I + s_J^2/p_J))`` with ``p`` the shares of the
    evaluations; IDS plays I with probability ``h_I / (h_I + h_J)`` with
    ``h_i = p_i dC/dp_i``, i.e. ``h_i = s_i^2 / N_i``, the variance of candidate i's mean.
    With a leader that settles on the best candidate 1, the shares then satisfy
    ``N_1^2 / s_1^2 = sum_j N_j^2 / s_j^2``, the optimality condition of Gaussian best-arm
    identification (for two candidates: ``N_i`` proportional to ``s_i``), with no
    ``beta`` to tune. ``s_i^2`` (``ddof=0``, floored) and ``N_i`` are read off FIESTA's
    posterior: ``scale = s / sqrt(N - 2)`` and ``df = N - 2``, so
    ``h_i = scale_i^2 df_i / (df_i + 2)``.

    Examples
    --------
    >>> ids_leader_probability(np.array([1.0, 1.0]), np.array([8.0, 1.0]), 0, 1)  # N = 10 vs 3
    0.7058823529411765
    """
    df_a = np.asarray(df, dtype=float)
    h = np.asarray(scale, dtype=float) ** 2 * df_a / (df_a + 2.0)
    hi, hj = float(h[leader]), float(h[challenger])
    if not hi + hj > 0.0:   # both SDs zero (cannot happen with the SD floor): no preference
        return 0.5
    return hi / (hi + hj)


def thompson_sample(loc: np.ndarray, scale: np.ndarray, df: np.ndarray, gen: np.random.Generator) -> int:
    """Thompson sampling: the argmax of one draw from every candidate's posterior.

    Candidate ``i`` is returned with probability ``P_i`` of :func:`~._posterior.p_best`.

    Examples
    --------
    >>> thompson_sample(np.array([0.0, 10.0]), np.array([1.0, 1.0]), np.array([5.0, 5.0]),
    ...                 np.random.default_rng(0))
    1
    """
    return int(np.argmax(loc + scale * gen.standard_t(df, size=loc.shape)))


def top_two_sample(loc: np.ndarray, scale: np.ndarray, df: np.ndarray, beta: float | str,
                   gen: np.random.Generator, max_resamples: int = 64, fallback=None,
                   tolerance: float = 0.0) -> int:
    """Top-two Thompson sampling (Russo 2016, FIESTA's TTTS), a short rejection phase and an exact fallback.

    Draw once from every posterior; the argmax is the *leader*. With probability ``beta``
    return the leader; otherwise draw again until the argmax differs from the leader (the
    *challenger*) and return it. FIESTA samples the leader and challenger from its Monte Carlo
    P(best) vector ``pi`` instead (``np.random.choice(..., p=pi)`` until different), which has
    exactly the same distribution. Up to ``max_resamples`` re-draws, the same draws in the
    same order as the reference ``top_two_sample`` of ``tests/_reference_belief.py`` (hence
    the same choice for the same generator state).
    When no challenger has appeared by then (the leader is nearly certain, so rejection
    would need about ``1 / (1 - P_leader)`` draws), the challenger is drawn from its
    exact distribution instead, ``P(best)`` by quadrature restricted to the other
    candidates and renormalised (the reference falls back to the argmax
    of that vector after 10,000 re-draws, which is cheaper per call only on average
    and is not the top-two distribution). ``fallback(leader) -> challenger``, when given,
    replaces that exact draw (the GLR rule passes the challenger that blocks its stop), and
    the re-draws are then capped at ``16384 / n_candidates`` (at least 4) as well.

    ``tolerance=eps > 0`` (epsilon-best identification) is EB-TC_eps (Jourdan, Degenne &
    Kaufmann, "An epsilon-best-arm identification algorithm for fixed-confidence and beyond",
    NeurIPS 2023): the leader is the candidate with the highest mean and the challenger is
    ``fallback(leader)``, which must be the transportation-cost challenger with the tolerance,
    ``argmin_j`` of the evidence that ``j`` is not more than ``eps`` above the leader
    (:func:`._stopping.blocking_challenger`: the GLR pair statistic, the unknown-variance version of the
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
    >>> top_two_sample(np.array([0.0, 10.0]), np.array([1.0, 1.0]), np.array([5.0, 5.0]),
    ...                1.0, np.random.default_rng(0))
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
        if ids and gen.random() < ids_leader_probability(scale, df, leader, challenger):
            return leader
        return challenger
    leader = int(np.argmax(loc + scale * gen.standard_t(df, size=loc.shape)))
    if fallback is not None:
        # the fallback is cheap (not a quadrature): with many candidates, spend at most about
        # 16,384 t draws looking for a challenger (unchanged up to 256 candidates)
        max_resamples = min(max_resamples, max(4, 16_384 // loc.size))
    if loc.size == 1 or (not ids and gen.random() < beta):
        return leader
    challenger = _challenger(loc, scale, df, leader, gen, max_resamples, fallback)
    if ids and gen.random() < ids_leader_probability(scale, df, leader, challenger):
        return leader
    return challenger


def _challenger(loc: np.ndarray, scale: np.ndarray, df: np.ndarray, leader: int,
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
    probs = p_best(loc, scale, df)
    others = np.flatnonzero(np.arange(loc.size) != leader)
    p_o = probs[others]
    if not p_o.sum() > 0.0:   # every other candidate has P(best) 0 to machine precision
        p_o = np.ones_like(p_o)
    cdf = np.cumsum(p_o)
    pick = int(np.searchsorted(cdf, gen.random() * cdf[-1], side="right"))
    return int(others[min(pick, others.size - 1)])
