"""Bayesian belief about which candidate is best: FIESTA's model, from running statistics.

FIESTA (Moss et al. 2019) keeps, for every candidate, the posterior of its mean score
under a normal model with unknown mean and variance and a uniform (improper) prior
(Honda & Takemura 2014)::

    mean | scores  ~  xbar + sd / sqrt(n - 2) * T_{n-2}

where ``xbar`` and ``sd`` (``ddof=0``) are over the candidate's ``n >= 3`` observed scores
and ``T_nu`` is a standard Student-t variable with ``nu`` degrees of freedom. The strategies
keep running sufficient statistics (count, mean and sum of squared deviations, Welford's
update: :class:`RunningStats`) and derive the posterior from them (:func:`posterior_from_stats`)
instead of recomputing it from the full score lists after every evaluation. FIESTA then
estimates ``P(candidate i has the highest mean)`` by Monte Carlo with 100,000 x N draws
after every evaluation. Here the same quantity is the 1-D integral

    P_i = integral f_i(x) prod_{j != i} F_j(x) dx

(``f``/``F``: posterior density / CDF), computed by composite Gauss-Legendre quadrature
on breakpoints adapted to every candidate's location and scale (see :func:`p_best`):
absolute error below 1e-6 in practice (measured ~1e-8), under 1 ms for 8 candidates.
:func:`p_best_upper_bound` is a cheap, rigorous upper bound on ``max_i P(best)_i``: when it
is below the confidence the quadrature cannot make the Bayesian rule stop, so the strategies
skip it (it never changes a stopping decision).

Two defects of FIESTA are fixed, both documented in :func:`posterior_from_stats`:

* a candidate whose scores are all equal gets ``sd = 0``, a point-mass posterior and so a
  false certainty (two identical constant candidates each get "P(best) = 1" in FIESTA's
  Monte Carlo); here the posterior SD is floored relative to the noise of the others;
* the optional logit transform turns a score of exactly 0 or 1 into -inf / inf; here
  scores are clipped to ``[logit_eps, 1 - logit_eps]`` first.

``tests/_reference_belief.py`` computes the posterior from the full score lists, as FIESTA
does; ``tests/test_fast_belief.py`` checks this module against it to 1e-12.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from scipy.special import gammaln, stdtr, stdtrit

from ._validation import finite_1d_arrays

__all__ = [
    "DEFAULT_LOGIT_EPS",
    "DEFAULT_SD_FLOOR_FRACTION",
    "SKIP_MARGIN",
    "RunningStats",
    "p_best",
    "p_best_upper_bound",
    "posterior_from_stats",
    "reference_sd",
]

#: Scores are clipped to ``[eps, 1 - eps]`` before the logit transform. 1e-3 is the
#: Haldane-Anscombe continuity correction ``(k + 1/2) / (m + 1)`` of a perfect score on
#: a test set of m ~ 500 items, and maps 0 / 1 to -/+6.9 instead of -/+inf. Pass
#: ``logit_eps=1 / (2 * (m + 1))`` for a test set of m items.
DEFAULT_LOGIT_EPS = 1e-3

#: A candidate's score SD (``ddof=0``) is floored at this fraction of the reference SD
#: (the pooled SD of the candidates whose scores vary; see :func:`posterior_from_stats`).
DEFAULT_SD_FLOOR_FRACTION = 0.1

# A sample SD below this fraction of the scores' magnitude is floating-point noise of a
# constant sample (np.std([0.1] * 3) is 1.4e-17, not 0).
_ZERO_SD_RTOL = 1e-12

# --- quadrature design (see p_best) ---------------------------------------------------
_GL_ORDER = 8
_GL_X, _GL_W = np.polynomial.legendre.leggauss(_GL_ORDER)
# Standardised breakpoints of one candidate: spacing 1 near the centre (the t density
# with df = 1 has its poles at +-i, so a panel of width <= 1.5 keeps the Bernstein
# ellipse parameter >= 3 and the 8-point rule error ~ 3^-16), then geometric growth x3
# in the tails, where the density decays like a power of the distance.
_STD_BREAKS = np.array([0.0, 1.0, 2.0, 3.5, 7.0, 21.0, 63.0, 189.0, 567.0, 1701.0, 5103.0,
                        15309.0, 45927.0, 137781.0, 413343.0, 1240029.0])
# Tail masses used to cut the integration range (see p_best).
_UPPER_TAIL = 1e-4  # per-candidate mass above the upper cut
_LOWER_PRODUCT = 1e-9  # bound on prod_j F_j(lower cut)
_NEGLIGIBLE_TAIL = 1e-12  # breakpoints beyond this tail quantile are not needed
# A breakpoint closer than this fraction of its own candidate's local spacing to the
# previous kept breakpoint is dropped (merges the near-duplicate grids of overlapping
# candidates); panels are then at most 1.5x a candidate's own spacing.
_MERGE_FRACTION = 0.5

#: Safety margin of the P(best) skip: larger than the quadrature's absolute error (<= 1e-4).
SKIP_MARGIN = 1e-3
# standardised offsets at which the upper bound of p_best_upper_bound is evaluated
_Z_GRID = np.concatenate([[-12.0, -8.0, -6.0, -5.0, -4.0], np.linspace(-3.5, 3.5, 15),
                          [4.0, 5.0, 6.0, 8.0, 12.0]])


# ------------------------------------------------------------------------------------
# posterior
# ------------------------------------------------------------------------------------
class RunningStats:
    """Per-candidate count, mean and sum of squared deviations, updated one score at a time.

    Scores are transformed on entry (``transform="logit"`` clips to
    ``[logit_eps, 1 - logit_eps]`` first, see :func:`posterior_from_stats`).

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
        self.hi = -math.inf   # fallbacks of reference_sd use them
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


def reference_sd(means: np.ndarray, sds: np.ndarray, counts: np.ndarray,
                 lo: float, hi: float, abs_hi: float) -> float:
    """Reference noise level for the SD floor (see :func:`posterior_from_stats`).

    ``lo``, ``hi`` and ``abs_hi`` are the min, max and max absolute value of all the scores
    (the fallbacks when no candidate's scores vary).
    """
    tiny = _ZERO_SD_RTOL * np.maximum(1.0, np.abs(means))
    varying = sds > tiny
    if varying.any():
        return float(np.sqrt(np.sum(counts[varying] * sds[varying] ** 2) / np.sum(counts[varying])))
    spread = hi - lo
    if spread > _ZERO_SD_RTOL * max(1.0, abs_hi):
        return spread
    return abs_hi if abs_hi > 0 else 1.0


def posterior_from_stats(stats: RunningStats, sd_floor_fraction: float = DEFAULT_SD_FLOOR_FRACTION
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Student-t posterior of every candidate's mean score, as in FIESTA.

    For candidate ``k`` with ``n_k >= 3`` scores (after the optional transform of ``stats``)::

        loc_k = mean(scores_k)
        scale_k = max(sd_k, floor) / sqrt(n_k - 2)      sd_k = std(scores_k, ddof=0)
        df_k = n_k - 2

    i.e. ``mean_k | data ~ loc_k + scale_k * T_{df_k}``, the posterior under a normal
    model with unknown mean and variance and the uniform prior of Honda & Takemura
    (2014) used by FIESTA (Moss et al. 2019). Without the floor this is exactly FIESTA's
    formula (``fiesta.util.belief_calc``), so results are comparable with the paper.

    **SD floor.** A candidate whose scores are all equal has ``sd = 0`` and FIESTA gives
    it a point-mass posterior: two identical constant candidates then each look certain
    to be best, and a constant candidate above a noisy one gets P(best) = 1 after three
    evaluations. Equal scores do not show that a candidate's noise is zero, only that it
    is below the resolution of the metric (e.g. one test-set item). The floor is
    ``sd_floor_fraction`` times a reference SD (:func:`reference_sd`): the pooled
    within-candidate SD ``sqrt(sum n_k sd_k^2 / sum n_k)`` over the candidates whose scores
    vary (they measure the same metric on the same kind of splits, so their noise is the
    natural yardstick); if no candidate varies, the spread ``max - min`` of all scores; if
    all scores are equal, their magnitude (or 1 if all are 0). With the default fraction
    0.1 the floor is 1 % of the pooled variance, so it almost never binds for a
    candidate whose scores vary (results stay FIESTA's), while a constant candidate
    keeps a proper posterior: two identical constant candidates get P(best) = 1/2 each.

    **Logit transform.** ``RunningStats(transform="logit")`` maps bounded scores in [0, 1]
    (accuracy, F1) to the real line, after clipping them to ``[logit_eps, 1 - logit_eps]``
    so that 0 and 1 stay finite (:data:`DEFAULT_LOGIT_EPS`).

    Parameters
    ----------
    stats : RunningStats
        The scores of each candidate (higher is better), at least 3 each.
    sd_floor_fraction : float, default 0.1
        Floor on every candidate's score SD as a fraction of the reference SD; > 0.

    Returns
    -------
    loc, scale, df : ndarray of shape (n_candidates,)
        Location, scale and degrees of freedom of each posterior.

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
    floor = sd_floor_fraction * reference_sd(stats.mean, sds, stats.n, stats.lo, stats.hi, stats.abs_hi)
    df = stats.n - 2.0
    return stats.mean.copy(), np.maximum(sds, floor) / np.sqrt(df), df


# ------------------------------------------------------------------------------------
# P(best) by quadrature
# ------------------------------------------------------------------------------------
def _as_param_arrays(
    loc: Any, scale: Any, df: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    loc_a, scale_a, df_a = finite_1d_arrays(loc=loc, scale=scale, df=df)
    if not (loc_a.size == scale_a.size == df_a.size):
        raise ValueError(
            f"loc, scale and df must have the same length, got {loc_a.size}, "
            f"{scale_a.size} and {df_a.size}"
        )
    if (scale_a <= 0).any():
        raise ValueError(f"scale must be > 0 for every candidate, got {scale_a.tolist()}")
    if (df_a <= 0).any():
        raise ValueError(f"df must be > 0 for every candidate, got {df_a.tolist()}")
    return loc_a, scale_a, df_a


@functools.lru_cache(maxsize=1024)
def _std_grid(df: float) -> tuple[np.ndarray, np.ndarray]:
    """Standardised breakpoints of a t(df) density and each one's local spacing."""
    zmax = float(-stdtrit(df, _NEGLIGIBLE_TAIL))
    pos = _STD_BREAKS[: np.searchsorted(_STD_BREAKS, zmax) + 1]
    gaps = np.diff(pos)
    # local spacing of a breakpoint: the smaller of its two adjacent panels
    spacing = np.minimum(np.concatenate([[gaps[0]], gaps]),
                         np.concatenate([gaps, [gaps[-1]]]))
    z = np.concatenate([-pos[:0:-1], pos])
    g = np.concatenate([spacing[:0:-1], spacing])
    z.flags.writeable = False
    g.flags.writeable = False
    return z, g


@functools.lru_cache(maxsize=1024)
def _saturation_z(df: float) -> float:
    """|z| beyond which the t(df) CDF is 0 or 1 up to 1e-20."""
    return float(-stdtrit(df, 1e-20))


@functools.lru_cache(maxsize=4096)
def _t_quantile(df: float, p: float) -> float:
    return float(stdtrit(df, p))


def _saturated_cdf(z: np.ndarray, df: np.ndarray) -> np.ndarray:
    """t CDF of the standardised values ``z[j, :]`` with ``df[j]`` degrees of freedom.

    Far from a candidate its CDF is 0 or 1 to double precision (to 1e-20): ``stdtr`` is
    skipped there (it dominates the cost when candidates are well separated).
    """
    zsat = np.array([_saturation_z(float(d)) for d in df])
    live = np.abs(z) < zsat[:, None]
    if live.all():
        return stdtr(df[:, None], z)
    F = (z > 0).astype(float)
    F[live] = stdtr(np.broadcast_to(df[:, None], z.shape)[live], z[live])
    return F


def _log_t_pdf_norm(df: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return (gammaln(0.5 * (df + 1.0)) - gammaln(0.5 * df)
            - 0.5 * np.log(df * np.pi) - np.log(scale))


def _prod_others(F: np.ndarray) -> np.ndarray:
    """``out[i] = prod_{j != i} F[j]`` along axis 0, without dividing by ``F[i]``."""
    out = np.ones_like(F)
    if F.shape[0] > 1:
        out[1:] = np.cumprod(F[:-1], axis=0)
        out[:-1] *= np.cumprod(F[:0:-1], axis=0)[::-1]
    return out


def _panels(loc: np.ndarray, scale: np.ndarray, df: np.ndarray) -> tuple[np.ndarray, float]:
    """Breakpoints of the composite rule, and the upper cut ``b``."""
    K = loc.size
    dfs = [float(d) for d in df]
    q_low = _LOWER_PRODUCT ** (1.0 / K)
    upper = max(loc[k] - scale[k] * _t_quantile(dfs[k], _UPPER_TAIL) for k in range(K))
    lower = min(loc[k] + scale[k] * _t_quantile(dfs[k], q_low) for k in range(K))
    zs, gs = [], []
    for k in range(K):
        z, g = _std_grid(dfs[k])
        zs.append(loc[k] + scale[k] * z)
        gs.append(scale[k] * g)
    x = np.concatenate(zs)
    g = np.concatenate(gs)
    inside = (x > lower) & (x < upper)
    x, g = x[inside], g[inside]
    order = np.argsort(x, kind="stable")
    xs = x[order].tolist()
    gs_sorted = (_MERGE_FRACTION * g[order]).tolist()
    kept = [lower]
    last = lower
    for xv, gv in zip(xs, gs_sorted):
        if xv - last >= gv:
            kept.append(xv)
            last = xv
    kept.append(upper)
    return np.asarray(kept), upper


def _p_best_raw(loc: np.ndarray, scale: np.ndarray, df: np.ndarray) -> np.ndarray:
    """Unnormalised quadrature values of P(best) (they sum to 1 up to the error)."""
    K = loc.size
    if K == 1:
        return np.ones(1)
    breaks, upper = _panels(loc, scale, df)
    half = 0.5 * np.diff(breaks)
    mid = 0.5 * (breaks[1:] + breaks[:-1])
    x = (mid[:, None] + half[:, None] * _GL_X).ravel()
    w = (half[:, None] * _GL_W).ravel()
    dfc = df[:, None]
    z = (x[None, :] - loc[:, None]) / scale[:, None]
    F = _saturated_cdf(z, df)
    logf = _log_t_pdf_norm(df, scale)[:, None] - 0.5 * (dfc + 1.0) * np.log1p(z * z / dfc)
    integrand = np.exp(logf) * _prod_others(F)
    P = integrand @ w
    # Beyond ``upper`` every F_j >= 1 - 1e-4, so the tail of P_i lies between
    # sf_i * prod_{j != i} F_j(upper) and sf_i; take the midpoint (error <= 5e-9 * K).
    zu = (upper - loc) / scale
    sf = stdtr(df, -zu)
    others = _prod_others(stdtr(df, zu)[:, None])[:, 0]
    P += 0.5 * sf * (1.0 + others)
    # Below the lower cut the integrand of P_i is <= prod_j F_j(lower) <= 1e-9: ignored.
    return P


def p_best(loc: Any, scale: Any, df: Any) -> np.ndarray:
    """Probability that each candidate has the highest mean, by 1-D quadrature.

    With independent posteriors ``mean_i ~ loc_i + scale_i * T_{df_i}``::

        P_i = integral f_i(x) prod_{j != i} F_j(x) dx.

    The integral is computed by composite 8-point Gauss-Legendre quadrature. Every
    candidate contributes breakpoints at ``loc + scale * z`` with standardised ``z`` in
    ``0, +-1, +-2, +-3.5, +-7, +-21, +-63, ...`` (spacing 1 in the bulk, x3 geometric in
    the heavy tails, up to its 1e-12 tail quantile); near-duplicate breakpoints of
    overlapping candidates are merged. The range is cut below where
    ``prod_j F_j <= 1e-9`` (the neglected mass of each ``P_i`` is below that) and above
    where every candidate's upper tail is <= 1e-4; the part of ``P_i`` above the upper
    cut lies between ``sf_i(b) prod_{j != i} F_j(b)`` and ``sf_i(b)`` and is taken as
    their midpoint. The t CDF is :func:`scipy.special.stdtr`; the density is in closed
    form via ``gammaln``. Measured absolute error is below 1e-6 on random configurations
    (df = 1 to 1000, scales over 5 orders of magnitude, near-ties, 2 to 20 candidates;
    see the tests). The results are normalised to sum to exactly 1 (the raw sum is
    within 1e-6 of 1).

    Parameters
    ----------
    loc, scale, df : array-like of shape (n_candidates,)
        Posterior location, scale (> 0) and degrees of freedom (>= 1), e.g. from
        :func:`posterior_from_stats`.

    Returns
    -------
    ndarray of shape (n_candidates,)
        P(candidate i has the highest mean); sums to 1. Equal posteriors get equal
        probabilities.

    Examples
    --------
    >>> p = p_best([0.0, 0.0], [1.0, 1.0], [3.0, 3.0])
    >>> p.tolist()
    [0.5, 0.5]
    >>> p = p_best([1.0, 0.0], [1.0, 1.0], [1e6, 1e6])   # ~ normal: Phi(1 / sqrt(2))
    >>> round(float(p[0]), 4)
    0.7602
    """
    loc_a, scale_a, df_a = _as_param_arrays(loc, scale, df)
    if (df_a < 1).any():
        # the quadrature grid covers tails up to df = 1 (Cauchy); posterior() gives df >= 1
        raise ValueError(f"df must be >= 1 for every candidate, got {df_a.tolist()}")
    raw = _p_best_raw(loc_a, scale_a, df_a)
    raw = np.clip(raw, 0.0, None)
    return raw / raw.sum()


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
