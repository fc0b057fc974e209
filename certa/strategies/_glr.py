"""A delta-correct stopping rule for best-candidate identification, unknown variances.

FIESTA stops when its Bayesian ``max P(best) >= 1 - delta``. Under continuous monitoring
(checking after every evaluation) that rule does not keep the frequentist probability of
choosing a worse candidate below ``delta``. This module gives a generalized-likelihood-ratio
style rule for Gaussian scores whose means *and* variances are unknown and may differ
between candidates, built on a published time-uniform result, checked by simulation.

The per-candidate e-process (Lai 1976; Wang & Ramdas 2023)
----------------------------------------------------------
For one candidate with scores ``x_1..x_N`` (i.i.d. Gaussian, unknown mean and SD), a
hypothesised mean ``u`` and ``d = m - u`` (``m`` the mean, ``v`` the ``ddof=0``
variance of the scores)::

    M_N(u) = sqrt(c / (N + c)) * ((v + d^2) / (v + d^2 c / (N + c)))^(N / 2)

This is the likelihood ratio of the scale-invariant statistic ``(x_k - u) / |x_1 - u|``
with a Gaussian mixture ``N(0, 1/c)`` over the standardised effect ``(mean - u) / sd``
and the right Haar measure ``dsd / sd`` over the SD: integrating the Gaussian likelihood
over the effect gives ``sqrt(c/(N+c)) exp(S^2 / (2 sd^2 (N+c)))`` with ``S = N d``,
and then over ``sd`` gives the ratio above, with ``V = sum (x_k - u)^2 = N (v + d^2)``
and ``V - S^2/(N+c) = N (v + d^2 c/(N+c))``. It is the "test martingale in a reduced
filtration" of Wang & Ramdas, *Anytime-valid t-tests and confidence sequences for
Gaussian means with unknown variance* (arXiv:2310.03722, 2023; their construction
swaps the flat mixture over the mean of Lai, *On confidence sequences*, Ann. Statist.
1976, for a Gaussian one). At the true mean it is a nonnegative martingale with
``M_1 = 1`` (``tests/test_glr.py`` checks the closed form against the defining double
integral with scipy), so Ville's inequality gives, for every ``x >= 1``::

    P(exists N: M_N(mean) >= x) <= 1 / x.                                        (1)

``c`` (:data:`PRIOR_PRECISION`, 1) is the mixture's precision: the e-process grows
fastest for an effect near ``1 / sqrt(c)`` SDs; it is fixed in advance, never fitted.
Whatever the data, ``M_N <= ((N + c) / c)^((N - 1) / 2)``: a candidate with few scores
cannot be ruled out however far below it looks (its scale is unknown), so the rule cannot
stop before every candidate has :func:`min_count` scores; the strategies evaluate each
candidate that many times first.

Pair statistic and threshold
----------------------------
With ``i`` the candidate of the highest mean and tolerance ``eps >= 0`` ("within eps of
the best"), the statistic against a challenger ``j`` is::

    Z_ij = inf_{u_j >= u_i + eps} log M^i_{N_i}(u_i) + log M^j_{N_j}(u_j)

and the rule stops, recommending ``i``, when ``min_j Z_ij > log z_delta`` with::

    log z_delta = log(K - 1) + y_delta,   (1 + y_delta) e^{-y_delta} = delta
    i.e.  y_delta = -W_{-1}(-delta / e) - 1                                        (2)

(``W_{-1}`` the lower branch of Lambert's W; :func:`glr_threshold`).

Why it is delta-correct. Each candidate's scores form their own i.i.d. sequence, and
the candidates are independent; which candidate is evaluated when does not matter for
bounds that hold for *every* N. Let ``j*`` be the best candidate. By (1), the sups
``X_i = sup_N M^i_N(mean_i)`` of the ``K - 1`` other candidates and ``Y = sup_N
M^{j*}_N(mean_{j*})`` are independent with ``P(X >= x) <= 1/x``. If the rule stops
recommending a candidate ``i`` more than ``eps`` below ``j*``, the true means
``(mean_i, mean_j*)`` satisfy ``mean_j* >= mean_i + eps`` and so lie in the set the
infimum ranges over: ``log X_i + log Y >= Z_ij* > log z``. The error probability is
therefore at most ``P(Y max_i X_i > z)``. Given ``Y``, a union bound over the ``K - 1``
candidates gives ``P(max_i X_i > z / Y) <= min(1, a Y)`` with ``a = (K - 1) / z``, and
``E[min(1, a Y)] = int_0^1 P(Y > s / a) ds <= int_0^1 min(1, a / s) ds = a (1 + log(1/a))``.
With ``a = e^{-y_delta}`` this is ``(1 + y_delta) e^{-y_delta} = delta``, whatever the
sampling rule and however often the rule is checked. (The union bound is taken only over
the ``X_i``, the best candidate's ``Y`` being shared by every wrong answer; a union over
the ``K - 1`` pairs of ``P(X_i Y > z) <= (1 + log z)/z``, the law of a product of two
uniforms, gives the larger ``log z_delta`` that solves ``(1 + log z)/z = delta/(K - 1)``:
7.31 against 6.94 at delta 0.05 and K = 10. For K = 2 both are the same.)
The same argument shows that the **confidence reached**, ``1 - (1 + y) e^{-y}`` with
``y = Z - log(K - 1)`` and ``Z = min_j Z_ij`` (0 when ``y <= 0``; :func:`glr_confidence`),
is valid at any time: the probability that it is ever at least ``1 - delta`` while the
recommendation is wrong is at most ``delta``.

Why this is cheaper than the rule it replaces. The previous rule (Jourdan, Degenne &
Kaufmann, ALT 2023, with the constants of their code) bounded each candidate's mean and
variance separately and added two per-candidate thresholds: at delta 0.05 and two
candidates with 164 scores each its threshold was 36.7 against 5.0 here (4.75 for
``log z_delta`` plus the mixture's ``(1/2) log((N + c)/c)`` per candidate, which the
statistic pays instead). ``docs/adaptive.md`` gives the breakdown.

What is proven and what is not: delta-correctness holds for independent Gaussian scores
(per candidate i.i.d. with its own unknown mean and variance), for any sampling rule and
any checking times. Real scores are bounded and discrete; ``benchmarks/adaptive.py calibration``
measures the rate on bounded, heavy-tailed (Student t, 3 df) and replayed scores, where
it is not a theorem.

Computing the infimum. On the boundary ``u_j = u_i + eps`` (the infimum is there: each
term grows with ``|m - u|``) ``Z_ij = inf_t g(t)``, ``g(t) = f_i(t) + f_j(t + eps)``,
``t`` in ``[m_j - eps, m_i]``, with ``f_i`` decreasing and ``f_j(. + eps)`` increasing
there. On a cell ``[t_k, t_{k+1}]`` therefore ``g >= f_i(t_{k+1}) + f_j(t_k + eps)``;
the minimum of these cell bounds over a grid, refined three times around its smallest
cell, is a **rigorous lower bound** on ``Z_ij`` (within about 1e-3 of it). Using a lower
bound can only make the rule stop later and the reported confidence lower.

Zero variance. A candidate whose scores are all equal has ``v = 0``. Variances are
floored at ``(0.1 * pooled SD)^2`` as in :func:`certa.strategies._posterior.posterior_from_stats`;
``M`` decreases as ``v`` grows, so the floor only lowers the statistic.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from scipy.special import lambertw

from ._posterior import DEFAULT_SD_FLOOR_FRACTION, reference_sd
from ._validation import as_score_list, finite_1d_arrays

__all__ = [
    "PRIOR_PRECISION",
    "glr_confidence",
    "glr_delta_reached",
    "glr_pairwise",
    "glr_pairwise_from_stats",
    "glr_should_stop",
    "glr_should_stop_from_stats",
    "glr_statistic",
    "glr_threshold",
    "log_e_process",
    "min_count",
    "pair_statistic",
]

#: Precision ``c`` of the Gaussian mixture over the standardised effect (module doc).
PRIOR_PRECISION = 1.0


# ------------------------------------------------------------------------------------
# validation
# ------------------------------------------------------------------------------------
def _check_delta(delta: Any) -> float:
    if (not isinstance(delta, numbers.Real) or isinstance(delta, bool)
            or not 0.0 < float(delta) < 1.0):
        raise ValueError(f"delta must be a number in (0, 1), got {delta!r}")
    return float(delta)


def _check_n_candidates(n_candidates: Any) -> int:
    if (not isinstance(n_candidates, numbers.Integral) or isinstance(n_candidates, bool)
            or n_candidates < 2):
        raise ValueError(f"n_candidates must be an integer >= 2, got {n_candidates!r}")
    return int(n_candidates)


def check_tolerance(tolerance: Any) -> float:
    """A tolerance ``eps >= 0`` (finite real)."""
    if (isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real)
            or not math.isfinite(float(tolerance)) or tolerance < 0):
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    return float(tolerance)


def _check_stats(mean: Any, var: Any, counts: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m, v, n = finite_1d_arrays(mean=mean, var=var, counts=counts)
    if not (m.size == v.size == n.size):
        raise ValueError(
            f"mean, var and counts must have the same length, got {m.size}, {v.size}, {n.size}"
        )
    if (v < 0).any():
        raise ValueError(f"var must be >= 0, got {v.tolist()}")
    if (n < 1).any() or (n != np.round(n)).any():
        raise ValueError(f"counts must be integers >= 1, got {n.tolist()}")
    return m, v, n


def _stats_from_scores(scores_per_candidate: Sequence[Any]) -> tuple[np.ndarray, ...]:
    scores = as_score_list(scores_per_candidate, min_n=1)
    mean = np.array([s.mean() for s in scores])
    var = np.array([s.var(ddof=0) for s in scores])
    counts = np.array([s.size for s in scores], dtype=float)
    return mean, var, counts


def _floored_var(mean: np.ndarray, var: np.ndarray, counts: np.ndarray,
                 sd_floor_fraction: float) -> np.ndarray:
    # reference_sd's last fallbacks use the scores; the means stand in for them here.
    ref = reference_sd(mean, np.sqrt(var), counts, float(mean.min()), float(mean.max()), float(np.abs(mean).max()))
    return np.maximum(var, (sd_floor_fraction * ref) ** 2)


# ------------------------------------------------------------------------------------
# the per-candidate e-process and the pair statistic (vectorised, broadcasting)
# ------------------------------------------------------------------------------------
def log_e_process(n: Any, mean: Any, var: Any, u: Any, c: float = PRIOR_PRECISION) -> np.ndarray:
    """``log M_N(u)`` of one candidate (module documentation), broadcast over the inputs.

    Parameters
    ----------
    n, mean, var : array-like
        Number of scores (>= 1), their mean and ``ddof=0`` variance (> 0).
    u : array-like
        Hypothesised true mean.
    c : float
        Precision of the mixture over the standardised effect.

    Examples
    --------
    >>> float(log_e_process(1, 0.3, 0.0 + 1e-300, 0.0))   # M_1 = 1 whatever the score
    0.0
    >>> round(float(log_e_process(10, 1.0, 1.0, 0.0, c=4.0)), 4)   # 0.5 log(4/14) + 5 log(2 / (1 + 4/14))
    1.5828
    """
    n = np.asarray(n, dtype=float)
    d2 = (np.asarray(mean, dtype=float) - np.asarray(u, dtype=float)) ** 2
    var = np.asarray(var, dtype=float)
    rho = c / (n + c)
    return 0.5 * np.log(rho) + 0.5 * n * np.log1p((1.0 - rho) * d2 / (var + rho * d2))


def _polymul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Product of polynomials given by coefficients (lowest degree first) along the last axis."""
    out = np.zeros(a.shape[:-1] + (a.shape[-1] + b.shape[-1] - 1,))
    for k in range(b.shape[-1]):
        out[..., k:k + a.shape[-1]] += a * b[..., k:k + 1]
    return out


def pair_statistic(n_i: Any, m_i: Any, v_i: Any, n_j: Any, m_j: Any, v_j: Any,
                   tolerance: float = 0.0, c: float = PRIOR_PRECISION) -> np.ndarray:
    """``Z_ij = inf_{u_j >= u_i + eps} log M^i(u_i) + log M^j(u_j)``, exactly.

    ``i`` must have the higher mean (``m_i >= m_j``); variances must be > 0 (floored).
    Broadcasts over all arguments, so one call serves every challenger of every run.
    With ``D = m_i - m_j + eps`` and ``u_j = u_i + eps = m_j + D s``, ``s`` in [0, 1], the
    stationary points of the objective solve (``r_a = v_a / D^2``, ``rho_a = c / (N_a + c)``)::

        N_j (1 - rho_j) r_j s (r_i + (1 - s)^2)(r_i + rho_i (1 - s)^2)
            = N_i (1 - rho_i) r_i (1 - s)(r_j + s^2)(r_j + rho_j s^2),

    a quintic in ``s``; its real roots in [0, 1] (eigenvalues of the companion matrices,
    all pairs at once) and both end points are compared.

    Examples
    --------
    >>> round(float(pair_statistic(40, 1.0, 1.0, 40, 0.0, 1.0)), 4)
    4.969
    """
    arrs = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (n_i, m_i, v_i, n_j, m_j, v_j)))
    shape = arrs[0].shape
    n_i, m_i, v_i, n_j, m_j, v_j = (a.reshape(-1) for a in arrs)
    eps = float(tolerance)
    gap = np.maximum(m_i - m_j + eps, 0.0)
    out = log_e_process(n_i, m_i, v_i, m_i, c) + log_e_process(n_j, m_j, v_j, m_j, c)  # gap 0: both at their means
    live = gap > 0.0
    if live.any():
        ni, nj, d = n_i[live], n_j[live], gap[live]
        ri, rj = v_i[live] / d ** 2, v_j[live] / d ** 2
        rho_i, rho_j = c / (ni + c), c / (nj + c)
        one = np.ones_like(d)
        zero = np.zeros_like(d)
        s = np.stack([zero, one], axis=-1)                     # s
        u = np.stack([one, -one], axis=-1)                     # 1 - s
        u2, s2 = _polymul(u, u), _polymul(s, s)
        left = _polymul(_polymul((nj * (1 - rho_j) * rj)[:, None] * s, ri[:, None] * np.eye(1, 3, 0)[0] + u2),
                        ri[:, None] * np.eye(1, 3, 0)[0] + rho_i[:, None] * u2)
        right = _polymul(_polymul((ni * (1 - rho_i) * ri)[:, None] * u, rj[:, None] * np.eye(1, 3, 0)[0] + s2),
                         rj[:, None] * np.eye(1, 3, 0)[0] + rho_j[:, None] * s2)
        poly = left - right                                    # degree 5, leading coefficient > 0
        monic = poly[:, :-1] / poly[:, -1:]
        comp = np.zeros((d.size, 5, 5))
        comp[:, 1:, :-1] = np.eye(4)
        comp[:, :, -1] = -monic
        roots = np.linalg.eigvals(comp)
        real = np.abs(roots.imag) <= 1e-7 * (1.0 + np.abs(roots.real))
        cand = np.where(real, np.clip(roots.real, 0.0, 1.0), 0.0)
        cand = np.concatenate([cand, np.zeros((d.size, 1)), np.ones((d.size, 1))], axis=1)
        lo = (m_j[live] - eps)[:, None] + d[:, None] * cand    # u_i; u_j = u_i + eps
        vals = (log_e_process(ni[:, None], m_i[live][:, None], v_i[live][:, None], lo, c)
                + log_e_process(nj[:, None], m_j[live][:, None], v_j[live][:, None], lo + eps, c))
        out[live] = vals.min(axis=1)
    return out.reshape(shape)


def approx_pair_statistics(m: np.ndarray, v: np.ndarray, n: np.ndarray, leader: Any, eps: float) -> np.ndarray:
    """Smallest objective of ``Z_leader,j`` at five common means (the precision-weighted one and
    points towards the leader's mean), for every ``j`` (inf at the leader).

    An upper bound on ``Z`` when the leader has the higher mean; any leading shape (rows = runs).
    """
    lead = np.asarray(leader)[..., None] if m.ndim > 1 else int(leader)
    take = (lambda a: np.take_along_axis(a, lead, axis=-1)) if m.ndim > 1 else (lambda a: a[lead])
    mb, nb, vb = take(m), take(n), take(v)
    gap = np.maximum(mb - m + eps, 0.0)
    wb, wo = nb / vb, n / v
    out = np.full(m.shape, np.inf)
    for s in (wo / (wb + wo), 0.5, 0.8, 0.95, 1.0):   # a few feasible common means
        ui = m - eps + gap * s
        out = np.minimum(out, log_e_process(nb, mb, vb, ui) + log_e_process(n, m, v, ui + eps))
    if m.ndim > 1:
        np.put_along_axis(out, lead, np.inf, axis=-1)
    else:
        out[lead] = np.inf
    return out


class _Pairs(NamedTuple):
    """The leader's statistics (``b``), its challengers' (``o``), and the objective of each pair
    at the known-variance optimum of the common mean (``ub``: an upper bound on ``Z``)."""

    nb: float
    mb: float
    vb: float
    no: np.ndarray
    mo: np.ndarray
    vo: np.ndarray
    gap: np.ndarray
    ub: np.ndarray

    def on_grid(self, eps: float, points: int) -> tuple[np.ndarray, np.ndarray]:
        """Both terms of the objective at ``points`` common means evenly spaced over each pair's range."""
        grid = np.linspace(0.0, 1.0, points)
        ui = (self.mo - eps)[:, None] + self.gap[:, None] * grid
        fi = log_e_process(self.nb, self.mb, self.vb, ui)
        fo = log_e_process(self.no[:, None], self.mo[:, None], self.vo[:, None], ui + eps)
        return fi, fo


def _leader_pairs(m: np.ndarray, v: np.ndarray, n: np.ndarray, eps: float) -> tuple[int, _Pairs | None]:
    """The candidate of the highest mean and its pairs with every other (None: no other)."""
    best = int(np.argmax(m))
    others = np.flatnonzero(np.arange(m.size) != best)
    if not others.size:
        return best, None
    nb, mb, vb = n[best], m[best], v[best]
    no, mo, vo = n[others], m[others], v[others]
    gap = np.maximum(mb - mo + eps, 0.0)
    wb, wo = nb / vb, no / vo
    s0 = wo / (wb + wo)        # the known-variance optimum of the common mean
    ui = mo - eps + gap * s0
    ub = log_e_process(nb, mb, vb, ui) + log_e_process(no, mo, vo, ui + eps)
    return best, _Pairs(nb, mb, vb, no, mo, vo, gap, ub)


def _screened_min(m: np.ndarray, v: np.ndarray, n: np.ndarray, eps: float,
                  limit: float | None = None) -> tuple[int, float]:
    """``(best, min_j Z_best,j)`` with exact work only for the challengers that can matter.

    Every pair first gets a cheap upper bound (the objective at the precision-weighted
    point) and a cheap rigorous lower bound (monotone bounds on 8 cells, see the module
    documentation); the exact quintic solve runs only for pairs whose lower bound is
    below ``limit`` (the stopping threshold) or, without a limit, below the smallest
    upper bound. With ``limit``, the returned value is exact when it is ``<= limit``
    ... and otherwise a lower bound ``> limit`` (enough to decide the stop).
    """
    best, pairs = _leader_pairs(m, v, n, eps)
    if pairs is None:
        return best, math.inf
    ub = pairs.ub
    if limit is not None and ub.min() <= limit:
        return best, float(ub.min())   # cannot stop; an upper bound on the minimum
    fi, fo = pairs.on_grid(eps, 9)
    lb = (fi[:, 1:] + fo[:, :-1]).min(axis=1)
    target = limit if limit is not None else float(ub.min())
    need = lb <= target
    if not need.any():
        return best, float(lb.min())
    z = pair_statistic(pairs.nb, pairs.mb, pairs.vb, pairs.no[need], pairs.mo[need], pairs.vo[need], eps)
    rest = lb[~need]
    return best, float(min(z.min(), rest.min() if rest.size else math.inf))


def glr_pairwise_from_stats(
    mean: Any,
    var: Any,
    counts: Any,
    *,
    tolerance: float = 0.0,
    sd_floor_fraction: float = DEFAULT_SD_FLOOR_FRACTION,
) -> tuple[int, np.ndarray]:
    """Statistics ``Z_{best, j}`` from sufficient statistics.

    Parameters
    ----------
    mean, var, counts : array-like of shape (n_candidates,)
        Empirical mean, ``ddof=0`` variance (>= 0) and number of scores (>= 1).
    tolerance : float >= 0, default 0
        ``eps``: the alternative is "some candidate is more than eps above the best".
    sd_floor_fraction : float, default 0.1
        Variances are floored at ``(sd_floor_fraction * pooled SD)^2`` (module doc).

    Returns
    -------
    best : int
        Index of the highest empirical mean (the first one on exact ties).
    z : ndarray of shape (n_candidates,)
        ``z[j] = Z_{best, j}`` (a rigorous lower bound); ``z[best] = inf``.

    Examples
    --------
    >>> best, z = glr_pairwise_from_stats([1.0, 0.0], [1.0, 1.0], [40, 40])
    >>> best, round(float(z[1]), 2)
    (0, 4.97)
    """
    m, v, n = _check_stats(mean, var, counts)
    eps = check_tolerance(tolerance)
    if not (isinstance(sd_floor_fraction, numbers.Real) and sd_floor_fraction > 0):
        raise ValueError(f"sd_floor_fraction must be > 0, got {sd_floor_fraction!r}")
    v = _floored_var(m, v, n, float(sd_floor_fraction))
    return _pairwise(m, v, n, eps)


def _pairwise(m: np.ndarray, v: np.ndarray, n: np.ndarray, eps: float) -> tuple[int, np.ndarray]:
    best = int(np.argmax(m))
    z = np.full(m.size, np.inf)
    others = np.flatnonzero(np.arange(m.size) != best)
    if others.size:
        z[others] = pair_statistic(n[best], m[best], v[best], n[others], m[others], v[others], eps)
    return best, z


def glr_pairwise(
    scores_per_candidate: Sequence[Any],
    *,
    tolerance: float = 0.0,
    sd_floor_fraction: float = DEFAULT_SD_FLOOR_FRACTION,
) -> tuple[int, np.ndarray]:
    """Statistic of the empirical best against every other candidate, from the scores.

    Parameters
    ----------
    scores_per_candidate : sequence of 1-D array-like
        Observed scores of each candidate (higher is better), at least 1 each.
    tolerance : float >= 0, default 0
        ``eps`` of epsilon-best identification.
    sd_floor_fraction : float, default 0.1
        Variance floor (see the module documentation).

    Returns
    -------
    best : int
    z : ndarray of shape (n_candidates,)
        ``z[j] = Z_{best, j}``; ``z[best] = inf``.

    Examples
    --------
    >>> best, z = glr_pairwise([[1.0, 2.0, 3.0], [0.0, 1.0, 2.0]])
    >>> best
    0
    """
    m, v, n = _stats_from_scores(scores_per_candidate)
    return glr_pairwise_from_stats(m, v, n, tolerance=tolerance, sd_floor_fraction=sd_floor_fraction)


def glr_statistic(
    scores_per_candidate: Sequence[Any],
    *,
    tolerance: float = 0.0,
    sd_floor_fraction: float = DEFAULT_SD_FLOOR_FRACTION,
) -> tuple[int, float]:
    """Empirical best and ``min_j Z_{best, j}`` (``inf`` with a single candidate).

    Examples
    --------
    >>> glr_statistic([[1.0, 2.0, 3.0], [0.0, 1.0, 2.0], [5.0, 6.0, 7.0]])[0]
    2
    """
    best, z = glr_pairwise(scores_per_candidate, tolerance=tolerance, sd_floor_fraction=sd_floor_fraction)
    return best, float(z.min())


# ------------------------------------------------------------------------------------
# threshold and confidence
# ------------------------------------------------------------------------------------
def _log_threshold(delta: float, n_candidates: int) -> float:
    # eq. (2): log(K - 1) + y, (1 + y) e^{-y} = delta (for delta < 1, y > 0)
    y = -float(np.real(lambertw(-delta / math.e, -1))) - 1.0
    return math.log(n_candidates - 1) + y


def glr_threshold(delta: float, n_candidates: int) -> float:
    """``log z_delta = log(K - 1) + y``, ``y`` the root ``> 0`` of ``(1 + y) e^{-y} = delta``, eq. (2).

    Parameters
    ----------
    delta : float
        Target error probability, in (0, 1).
    n_candidates : int
        Total number of candidates K (>= 2): the union bound is over the K - 1 others.

    Returns
    -------
    float

    Examples
    --------
    >>> round(glr_threshold(0.05, 2), 4)
    4.7439
    >>> round(glr_threshold(0.05, 10) - glr_threshold(0.05, 2), 4)   # log 9
    2.1972
    """
    return _log_threshold(_check_delta(delta), _check_n_candidates(n_candidates))


def min_count(delta: float, n_candidates: int, c: float = PRIOR_PRECISION) -> int:
    """Smallest ``N`` with ``((N - 1) / 2) log((N + c) / c) > log z_delta``.

    A challenger with fewer scores has ``M <= ((N + c)/c)^((N - 1)/2) <= z_delta`` and the
    rule cannot stop (module documentation).

    Examples
    --------
    >>> min_count(0.05, 2), min_count(0.01, 10)
    (6, 9)
    """
    limit = glr_threshold(delta, n_candidates)
    n = 2
    while (n - 1) / 2 * math.log((n + c) / c) <= limit:
        n += 1
    return n


#: Margin (in log units) of :func:`count_limited`: a challenger is evaluated first while its
#: largest possible statistic is within this of the threshold.
FORCE_MARGIN = 1.0


def count_limited(counts: np.ndarray, best: np.ndarray | int, limit: float, c: float = PRIOR_PRECISION) -> np.ndarray:
    """Candidates whose few scores alone keep the rule from stopping (any leading shape).

    ``Z_bj <= ((N_j - 1)/2) log((N_j + c)/c) - (1/2) log((N_b + c)/c)`` (``u_i = u_j = m_b``);
    where that bound is within :data:`FORCE_MARGIN` of ``limit`` the challenger ``j`` cannot
    be ruled out without more scores, however far below it looks. Returns the bound minus
    ``limit + FORCE_MARGIN`` (``<= 0``: count-limited; ``+inf`` for the best itself).
    """
    n = np.asarray(counts, dtype=float)
    nb = np.take_along_axis(n, np.asarray(best)[..., None], axis=-1) if n.ndim > 1 else n[int(best)]
    bound = (n - 1) / 2 * np.log((n + c) / c) - 0.5 * np.log((nb + c) / c) - (limit + FORCE_MARGIN)
    if n.ndim > 1:
        np.put_along_axis(bound, np.asarray(best)[..., None], np.inf, axis=-1)
    else:
        bound[int(best)] = np.inf
    return bound


def glr_delta_reached(z_min: float, n_candidates: int) -> float:
    """Smallest delta at which the rule would stop with statistic ``z_min``.

    ``(1 + y) e^{-y}`` with ``y = z_min - log(K - 1)``, and 1 when ``y <= 0`` (eq. (2)).

    Examples
    --------
    >>> round(glr_delta_reached(glr_threshold(0.05, 3), 3), 6)
    0.05
    """
    k = _check_n_candidates(n_candidates)
    z = float(z_min)
    if math.isnan(z):
        raise ValueError("z_min must be a number")
    if z == math.inf:
        return 0.0
    y = z - math.log(k - 1)
    if y <= 0.0:
        return 1.0
    return min(1.0, (1.0 + y) * math.exp(-y))


def glr_confidence(
    mean: Any,
    var: Any,
    counts: Any,
    *,
    tolerance: float = 0.0,
    sd_floor_fraction: float = DEFAULT_SD_FLOOR_FRACTION,
) -> tuple[int, float]:
    """Recommendation and the confidence ``1 - delta`` reached for it (anytime-valid).

    Examples
    --------
    >>> best, conf = glr_confidence([1.0, 0.0], [1.0, 1.0], [100, 100])
    >>> best, conf > 0.999
    (0, True)
    """
    best, z = glr_pairwise_from_stats(mean, var, counts, tolerance=tolerance,
                                      sd_floor_fraction=sd_floor_fraction)
    if z.size == 1:
        return best, 1.0
    return best, 1.0 - glr_delta_reached(float(z.min()), z.size)


# ------------------------------------------------------------------------------------
# stopping rule
# ------------------------------------------------------------------------------------
def glr_should_stop_from_stats(
    mean: Any,
    var: Any,
    counts: Any,
    delta: float,
    *,
    tolerance: float = 0.0,
    sd_floor_fraction: float = DEFAULT_SD_FLOOR_FRACTION,
) -> tuple[bool, int]:
    """Stopping rule from sufficient statistics (see :func:`glr_should_stop`).

    Returns
    -------
    stop : bool
        True when ``Z_{best, j} > log z_delta`` for every other candidate ``j``.
    best_index : int

    Examples
    --------
    >>> glr_should_stop_from_stats([1.0, 0.0], [1.0, 1.0], [100, 100], 0.05)
    (True, 0)
    """
    d = _check_delta(delta)
    best, z = glr_pairwise_from_stats(mean, var, counts, tolerance=tolerance,
                                      sd_floor_fraction=sd_floor_fraction)
    if z.size == 1:
        return True, best
    return bool(z.min() > _log_threshold(d, z.size)), best


def glr_should_stop(
    scores_per_candidate: Sequence[Any],
    delta: float,
    *,
    tolerance: float = 0.0,
    sd_floor_fraction: float = DEFAULT_SD_FLOOR_FRACTION,
) -> tuple[bool, int]:
    """Whether the evidence identifies the best candidate (within ``tolerance``) with error at most ``delta``.

    Valid uniformly over time: it may be checked after every evaluation and with any
    (adaptive) choice of which candidate to evaluate; see the module documentation for
    the assumptions (independent Gaussian scores per candidate).

    Parameters
    ----------
    scores_per_candidate : sequence of 1-D array-like
        Observed scores of each candidate (higher is better), at least 1 each.
    delta : float
        Target probability of choosing a candidate more than ``tolerance`` below the best.
    tolerance : float >= 0, default 0
    sd_floor_fraction : float, default 0.1

    Returns
    -------
    stop : bool
    best_index : int
        The empirical best (the recommendation).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> scores = [rng.normal(1.0, 1.0, 100), rng.normal(0.0, 1.0, 100)]
    >>> glr_should_stop(scores, 0.05)
    (True, 0)
    >>> glr_should_stop([s[:5] for s in scores], 0.05)
    (False, 0)
    """
    m, v, n = _stats_from_scores(scores_per_candidate)
    return glr_should_stop_from_stats(m, v, n, delta, tolerance=tolerance, sd_floor_fraction=sd_floor_fraction)
