"""The GLR stopping test as the strategies run it after every evaluation, and its blocking challenger.

:mod:`._glr` defines the statistic, the threshold and the rule from sufficient statistics
(``glr_should_stop_from_stats``: every challenger's exact pair statistic). Here the same
decisions are made with exact work only for the challengers that can matter, and with the
threshold cached (:func:`glr_should_stop_screened`, :func:`glr_min_statistic`);
``tests/test_glr.py`` and ``tests/test_fast_belief.py`` check them against ``_glr``.
:func:`blocking_challenger` is the challenger whose pair statistic with the leader is
smallest, which the top-two rule plays when re-drawing finds no challenger.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from . import _glr
from ._posterior import DEFAULT_SD_FLOOR_FRACTION

__all__ = ["blocking_challenger", "glr_min_statistic", "glr_should_stop_screened"]


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
    EB-TC_eps (see :func:`._sampling.top_two_sample`).

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


def glr_min_statistic(mean: np.ndarray, var: np.ndarray, counts: np.ndarray, tolerance: float = 0.0,
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
    best, pairs = _glr._leader_pairs(m, v, n, eps)
    if pairs is None:
        return best, math.inf
    ub = pairs.ub
    if ub.min() <= limit:
        return best, float(ub.min())
    fi, fo = pairs.on_grid(eps, 17)
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
        z = _glr.pair_statistic(pairs.nb, pairs.mb, pairs.vb, pairs.no[part], pairs.mo[part], pairs.vo[part], eps)
        low = min(low, float(z.min()))
        if low <= limit:
            return best, low
        start, size = start + size, size * 4
    return best, low


def glr_should_stop_screened(mean: np.ndarray, var: np.ndarray, counts: np.ndarray, delta: float,
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
    >>> glr_should_stop_screened(np.array([1.0, 0.0]), np.array([1.0, 1.0]), np.array([100.0, 100.0]), 0.05)
    (True, 0)
    """
    k = mean.size
    if k == 1:
        return True, 0
    limit = _log_threshold(float(delta), k)
    v = _glr._floored_var(mean, var, counts, sd_floor_fraction)
    best, zmin = _stop_screen(mean, v, counts, float(tolerance), limit)
    return bool(zmin > limit), best
