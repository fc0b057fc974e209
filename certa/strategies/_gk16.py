"""An opt-in stopping rule with the anchors' heuristic threshold (``stopping="gk16"``); NOT proven.

The generalized likelihood ratio for Gaussian scores with unknown variances (Jourdan, Degenne
& Kaufmann, *Dealing with unknown variances in best-arm identification*, ALT 2023), of the
empirical best ``i`` against a challenger ``j`` with tolerance ``eps``::

    G_ij = inf_u  N_i/2 log(1 + (m_i - u)^2 / v_i) + N_j/2 log(1 + (m_j - u - eps)^2 / v_j)

(``u`` from ``m_j - eps`` to ``m_i``; ``v`` the ``ddof=0`` variances, floored as for the belief),
compared with the exploration rate the anchors' own experiments use (Garivier & Kaufmann,
*Optimal best arm identification with fixed confidence*, COLT 2016;
``explo(t, n, delta) = log((log(t) + 1) / delta)`` in their code)::

    stop when  min_j G_ij > log((1 + log t) / delta),   t = evaluations so far.

This threshold is a heuristic: no theorem makes the rule delta-correct (the proven thresholds
grow with the number of candidates and carry more than ``log log t``). certa keeps it as an
opt-in because it is what the anchors' published numbers used; its wrong-choice rate is
measured by simulation on the calibration families (``docs/adaptive.md``), and its
``guarantee`` says "calibrated by simulation, not proven". The default stays the proven rule.

The confidence reported for a recommendation is ``1 - (1 + log t) exp(-min_j G_ij)`` (0 below):
the delta at which the rule would stop now, with the same caveat.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["GRID", "gk16_confidence", "gk16_statistic", "gk16_statistic_batch", "gk16_threshold"]

#: Points of the first grid over ``u``; the minimum is then refined twice around the best cell.
GRID = 65


def _objective(mb, nb, vb, m, n, v, eps, u):
    return 0.5 * nb * np.log1p((mb - u) ** 2 / vb) + 0.5 * n * np.log1p((m - eps - u) ** 2 / v)


def gk16_statistic(mean: np.ndarray, var: np.ndarray, counts: np.ndarray, tolerance: float = 0.0
                   ) -> tuple[int, float]:
    """``(best, min_j G_best,j)`` of the unknown-variance GLR (module documentation).

    ``var`` must be > 0 (floored). ``inf`` with a single candidate; a challenger with
    ``m_j + eps >= m_i`` has ``G = 0`` (nothing to rule out).

    Examples
    --------
    >>> best, g = gk16_statistic(np.array([1.0, 0.0]), np.array([1.0, 1.0]), np.array([10.0, 10.0]))
    >>> best, round(g, 4)     # u = 1/2 by symmetry: 2 * 5 log(1 + 1/4)
    (0, 2.2314)
    """
    m = np.asarray(mean, dtype=float)
    if m.size < 2:
        return int(np.argmax(m)), math.inf
    best, g = gk16_statistic_batch(m[None], np.asarray(var, dtype=float)[None],
                                   np.asarray(counts, dtype=float)[None], tolerance)
    return int(best[0]), float(g[0])


def gk16_statistic_batch(mean: np.ndarray, var: np.ndarray, counts: np.ndarray, tolerance: float = 0.0
                         ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`gk16_statistic` for many runs at once (arrays of shape ``(runs, K)``, ``K >= 2``)."""
    m, v, n = (np.asarray(a, dtype=float) for a in (mean, var, counts))
    r = np.arange(m.shape[0])
    best = np.argmax(m, axis=1)
    mb, nb, vb = (a[r, best][:, None, None] for a in (m, n, v))
    lo = m - tolerance
    hi = np.maximum(m[r, best][:, None], lo)
    s = np.linspace(0.0, 1.0, GRID)
    for _ in range(3):
        u = lo[..., None] + (hi - lo)[..., None] * s
        f = _objective(mb, nb, vb, m[..., None], n[..., None], v[..., None], tolerance, u)
        k = np.argmin(f, axis=-1)
        step = (hi - lo) / (GRID - 1)
        centre = lo + step * k
        lo, hi = np.maximum(centre - step, lo), np.minimum(centre + step, hi)
    g = f.min(axis=-1)
    g[m + tolerance >= m[r, best][:, None]] = 0.0
    g[r, best] = np.inf
    return best, g.min(axis=1)


def gk16_threshold(delta: float, t: float) -> float:
    """``log((1 + log t) / delta)``, the heuristic exploration rate (``t >= 1`` evaluations).

    Examples
    --------
    >>> round(gk16_threshold(0.05, 100), 4)
    4.7194
    """
    return math.log((1.0 + math.log(max(float(t), 1.0))) / float(delta))


def gk16_confidence(g: float, t: float) -> float:
    """``1 - (1 + log t) exp(-g)``, clipped to [0, 1]: the delta at which the rule would stop now.

    Examples
    --------
    >>> round(gk16_confidence(gk16_threshold(0.05, 100), 100), 6)
    0.95
    """
    if g == math.inf:
        return 1.0
    return float(min(1.0, max(0.0, 1.0 - (1.0 + math.log(max(float(t), 1.0))) * math.exp(-g))))
