"""A delta-correct stopping rule on paired differences (common random numbers).

When every candidate is evaluated on the same rows (row ``k``: one split and seed, the same
for every candidate, :func:`certa.engine.draws.split_draw`), the evidence that ``i`` beats
``j`` is in the differences ``d_k = x_i,k - x_j,k`` over the rows both were evaluated on.
Scores of different models on one split are correlated (0.4-0.66 on FIESTA's TDSA table), so
``d`` varies less than two independent scores do and fewer rows decide the choice.

The one-sided e-process
-----------------------
For one sequence ``d_1..d_N`` (i.i.d. Gaussian, unknown mean and SD), a hypothesised mean
``u``, ``m`` the mean and ``v`` the ``ddof=0`` variance of the ``d``, ``e = m - u`` and
``rho = c / (N + c)``::

    M+_N(u) = 2 M_N(u) F_N( N e / sqrt((v + rho e^2) (N + c)) )

where ``M_N`` is the two-sided e-process of :func:`certa.strategies._glr.log_e_process`
(Lai 1976; Wang & Ramdas 2023) and ``F_N`` the Student-t CDF with ``N`` degrees of freedom.
``M+`` is the same construction with the mixture over the standardised effect ``theta``
restricted to ``theta > 0`` (a half-normal of precision ``c``): integrating the likelihood ratio
of ``(d_k - u) / |d_1 - u|`` over ``theta`` first gives, for each scale ``w = 1 / sd``, the
Gaussian factor of ``M`` times ``2 Phi(S w / sqrt(N + c))`` (``S = N e``); the remaining
integral over ``w`` (right Haar measure) is an expectation over ``W`` with ``W^2 A ~ chi^2_N``,
``A = N (v + rho e^2)``, and ``E[Phi(S W / sqrt(N + c))] = P(T_N <= sqrt(N) S / sqrt(A (N + c)))``
with ``T_N`` Student's t. At the true mean ``M+`` is a nonnegative martingale with ``M+_0 = 1``
(a mixture of likelihood-ratio martingales), so by Ville's inequality
``P(exists N: M+_N(mean) >= x) <= 1 / x`` (``tests/test_paired.py`` checks the closed form
against the defining double integral). The half-normal puts all its mass on the direction
the test looks in, so ``M+`` is up to twice ``M`` there: the statistic gains up to ``log 2``.

The statistic of ``i`` against ``j`` with tolerance ``eps >= 0`` is::

    W_ij = inf_{u <= -eps} log M+_N(u) = log M+_N(-eps)    (when m > -eps; else -inf)

(``M+`` grows as ``u`` moves away below ``m``: both factors increase with ``e``).

Elimination and stopping
------------------------
Rows are filled for every surviving candidate (the row's candidates are fixed before any of
its scores is seen, so each pair's differences stay i.i.d. whatever was eliminated when).
With ``K >= 3`` candidates the first row (``CONTRAST_ROWS = 1``) ranks, for each candidate ``j``,
the other survivors by their score on it (highest first; ties and candidates without a score:
after, by lowest index), and ``delta`` against ``j`` is spread over its rivals by that rank: the
rival ranked ``r`` gets ``w_r = r^-2 / sum_{s<K} s^-2`` of it (``RANK_POWER = 2``; with 8
candidates 0.66, 0.17, 0.07, 0.04, ...). The *contrast* statistic ``C_kj`` is ``W_kj`` computed
on the rows after the first only, and ``j`` is ruled out once, for some ``k``::

    C_kj(0) > log(1 / (w_r(k, j) delta))

(``CONTRAST_SHARE = 1``: all of ``delta`` goes to the rows after the first. The code also keeps
the rule of issue 23, with share ``a < 1``: ``(1 - a) delta`` split equally over the ``K - 1``
pairs on all rows, ``W_kj(0) > log((K - 1) / ((1 - a) delta))``, and ``a delta`` on the rivals by
rank; ``a = 1/2`` with everything on the first-ranked rival, ``RANK_POWER = inf``, was the
default before issue 32.) With two candidates there is one pair, on all rows, with all of
``delta``.

Running maxima count. The run stops when one candidate survives, or, with a tolerance, when for
a survivor ``i`` every other candidate ``j`` is ruled out or shown not more than ``eps`` better
than ``i`` (``C_ij(eps)`` above ``log(1 / (w_r(i, j) delta))``, or the pair's ``W_ij(eps)`` above
its threshold). In the code every statistic is put on one scale, the *evidence*: the statistic
plus ``log(a w_r)`` (contrast) or minus ``log((K - 1) / (1 - a))`` (pairs), compared with
``log(1 / delta)``.

Why the rank weights pay: the ``K - 1`` pairs against each candidate all share ``delta``,
although most of them are against candidates clearly worse than it and never gather evidence.
The first row already says which rivals are likely the ones to beat. Issue 23 put half of
``delta`` on the first-ranked rival alone (the *partner*); when the first row's leader is not the
best (TDSA: often, its three best models are within 0.6 SD of the differences), the close rivals'
contrasts are against each other and they leave by the pairs' threshold, ``log((K - 1) / (delta /
2))``. Spreading ``delta`` over the ranks keeps most of it on the first-ranked rival (3.41 nats at
delta 0.05 and ``K = 8``, 3.69 before) and a fair share on the second and third (4.8 and 5.6, 5.63
before), at the price of the first row for every pair: 7.6 % fewer evaluations on FIESTA's TDSA
replay, 2-8 % on the correlated Gaussian families (``docs/adaptive.md`` has the tables).

Why it is delta-correct. Let ``j*`` be the best candidate. A wrong answer ``i`` (more than
``eps`` below ``j*``) needs ``j*`` ruled out: by some ``k`` with ``C_kj*(0)`` (or ``W_kj*(0)``)
above its threshold, or by ``i`` with ``C_ij*(eps)`` (or ``W_ij*(eps)``). In each case the true
mean of the pair's differences (``mean_k - mean_j* <= 0``, or ``mean_i - mean_j* < -eps``) lies in
the set the infimum ranges over, so the pair's ``sup_N M+(true)`` passed the threshold. The
weights are fixed by the first row, and the rows after it are independent of it, so given the
first row each ``C_kj*`` is one pair's e-process on fresh i.i.d. differences: by Ville's
inequality it passes ``log(1 / (w delta))`` with probability at most ``w delta``, and the weights
against ``j*`` sum to at most ``a`` (the same pair's ``C(0)`` and ``C(eps)`` are one event: both are
at most ``log M+(true)``). The pairs on all rows add at most ``(1 - a) delta``. At most ``delta``
in all, whatever the order of evaluations and however often the rule is checked. The confidence
reached for a recommendation ``i``, ``1 - exp(-min_j E_ij)`` with ``E_ij`` the evidence above, is
valid at any time by the same argument (:func:`paired_confidence`).

The early exit
--------------
With the precision ``c = 1`` alone, ``M+`` gathers at most ``((N - 1) / 2) log(1 + N / c) + log 2``
from ``N`` differences, whatever their size (its scale is unknown): 2.1 nats from 3, 3.1 from 4,
so a candidate however far behind its first-ranked rival (``log(1 / (w_1 delta))`` = 3.35-3.41
at delta 0.05 with 5 to 8 candidates) leaves after 6 rows at the earliest. A lower precision lifts
that ceiling (6.4 nats from 3 differences at ``c = 0.01``) at the price of slower evidence for small
effects. So the contrast against a candidate in the *lower third of the first row* (its rank
among the survivors above ``EXIT_RANK_SHARE = 2/3`` of their number) uses a mixture::

    M_N(u) = sum_k w_k M+_N(u; c_k),   EXIT_MIXTURE = (c, w): (1, 0.7), (0.01, 0.3)

and every other pair keeps ``PRIOR_MIXTURE`` (``c = 1`` alone). A weighted sum of test martingales
for the same differences (weights summing to 1) is a test martingale, and the weights are fixed by
the first row, which the contrast's rows come after: given the first row, each contrast is still
one pair's e-process on fresh i.i.d. differences, and "Why it is delta-correct" holds unchanged. Every
component grows as ``u`` moves away below ``m``, so the infimum over ``u <= -eps`` is still at
``u = -eps``. A candidate whose differences with its first-ranked rival are about 20 of their SDs
below now leaves after its 4th row instead of its 6th (``tests/test_paired_exit.py``); the close
candidates, mostly in the upper part of the first row, do not pay for it (``docs/adaptive.md``,
"The early exit").

The certified tolerance
-----------------------
A run that stops before its target (a budget, ``max_evals``, a splitter's last row) still states
what it has shown: the smallest ``eps >= 0`` such that the recommendation ``i``'s evidence against
every rival ``j`` not ruled out, ``max(C_ij(eps) + log(a w_r), W_ij(eps) - offset)`` on the values
now (or the running maxima at the run's own tolerance and at 0), passes ``log(1 / delta)``
(:func:`certified_tolerances`). "``i`` is within ``eps`` of the best with confidence ``1 - delta``"
then holds although ``eps`` was chosen from the data: if the best ``j*`` is more than ``eps`` above
``i``, either ``j*`` was ruled out (the events of "Why it is delta-correct"), or ``i``'s statistic
against ``j*`` at ``eps`` passed its threshold; ``M+(u)`` only grows as ``u`` moves below ``-eps``,
so the pair's e-process at its true mean (below ``-eps``) passed it too, at that time: the same
event as for a fixed tolerance, of probability at most ``w delta`` by Ville's inequality, whatever
the stopping time and the ``eps``. A confidence sequence for the gap, in short; the wrong-claim
rate is measured by simulation in ``docs/adaptive.md`` ("The best for a budget").

Compared with the unpaired rule (:mod:`._glr`): one sequence per pair instead of two, a
threshold of ``log(1 / (w_r delta))`` instead of ``log(K - 1) + 4.74``, and the
variance of the differences instead of the sum of two variances. What is proven: for jointly
Gaussian scores with any correlation (rows i.i.d.); replayed and bounded scores are calibrated
by simulation (``docs/adaptive.md``).

Zero variance: the variance of a pair's differences is floored at ``0.01`` times the mean of
the two candidates' score variances (``M+`` decreases as ``v`` grows, so a floor only
lowers the statistic).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import stdtr

from ._glr import PRIOR_PRECISION, _check_delta, _check_n_candidates, log_e_process

__all__ = [
    "CONTRAST_ROWS",
    "CONTRAST_SHARE",
    "EXIT_MIXTURE",
    "EXIT_RANK_SHARE",
    "PRIOR_MIXTURE",
    "RANK_POWER",
    "certified_tolerances",
    "contrast_mixture",
    "contrast_partners",
    "first_row_positions",
    "log_e_process_mixture",
    "log_e_process_one_sided",
    "paired_confidence",
    "paired_offsets",
    "paired_statistic",
    "paired_threshold",
    "rank_shares",
    "rival_weights",
]

#: Floor of a pair's difference variance, as a fraction of the mean of its two score variances.
DIFF_VAR_FLOOR = 0.01

#: Share ``a`` of delta given to the rows after the first, the rivals weighted by their rank on the
#: first row (``K >= 3``); the rest, ``1 - a``, goes to every pair on all rows, split equally.
CONTRAST_SHARE = 1.0

#: The rival ranked ``r``-th on the first row gets ``r^-p / sum_{s < K} s^-p`` of that share.
RANK_POWER = 2.0

#: Rows after which the ranks are fixed; the contrast uses the rows after them.
CONTRAST_ROWS = 1

#: The pairs' e-process: a mixture of one-sided e-processes, ``((precision c_k, weight w_k), ...)``
#: (module documentation, "The early exit").
PRIOR_MIXTURE: tuple[tuple[float, float], ...] = ((PRIOR_PRECISION, 1.0),)

#: The early exit: the contrast against a candidate in the lower part of the first row (its rank
#: among the survivors above ``EXIT_RANK_SHARE`` times their number: the lower third) uses this
#: mixture instead (``docs/adaptive.md``, "The early exit": the variants measured).
EXIT_MIXTURE: tuple[tuple[float, float], ...] = ((PRIOR_PRECISION, 0.7), (0.01, 0.3))
EXIT_RANK_SHARE = 2.0 / 3.0


def log_e_process_one_sided(n, mean, var, u, c: float = PRIOR_PRECISION) -> np.ndarray:
    """``log M+_N(u)``: the one-sided e-process against ``mean <= u`` (module documentation).

    Parameters
    ----------
    n, mean, var : array-like
        Number of differences (>= 1), their mean and ``ddof=0`` variance (> 0).
    u : array-like
        Hypothesised mean.
    c : float
        Precision of the half-normal mixture over the standardised effect.

    Examples
    --------
    >>> float(log_e_process_one_sided(1, 0.0, 1.0, 0.0))   # no evidence: 2 * sqrt(1/2) * 1/2
    -0.34657359027997264
    >>> bool(log_e_process_one_sided(30, 1.0, 1.0, 0.0) > log_e_process_one_sided(30, -1.0, 1.0, 0.0))
    True
    """
    n = np.asarray(n, dtype=float)
    e = np.asarray(mean, dtype=float) - np.asarray(u, dtype=float)
    var = np.asarray(var, dtype=float)
    rho = c / (n + c)
    arg = n * e / np.sqrt((var + rho * e * e) * (n + c))
    with np.errstate(divide="ignore"):
        return log_e_process(n, mean, var, u, c) + np.log(2.0 * stdtr(n, arg))


def log_e_process_mixture(n, mean, var, u, mixture=None) -> np.ndarray:
    """``log sum_k w_k M+_N(u; c_k)``: a mixture of one-sided e-processes over prior precisions.

    ``mixture``: ``((c_1, w_1), (c_2, w_2), ...)``, precisions ``c_k > 0`` and weights ``w_k >= 0``
    summing to at most 1 (default :data:`PRIOR_MIXTURE`); a weight may be an array that broadcasts
    against the other arguments (one mixture per pair). Each ``M+(c_k)`` is a test martingale for
    the same differences, so their weighted sum is one too (module documentation, "The early exit").

    Examples
    --------
    >>> float(log_e_process_mixture(1, 0.0, 1.0, 0.0, ((1.0, 1.0),)))   # one component: M+ itself
    -0.34657359027997264
    >>> a = float(log_e_process_one_sided(3, 1.0, 0.01, 0.0, 1.0))
    >>> b = float(log_e_process_one_sided(3, 1.0, 0.01, 0.0, 0.01))
    >>> m = float(log_e_process_mixture(3, 1.0, 0.01, 0.0, ((1.0, 0.5), (0.01, 0.5))))
    >>> bool(abs(m - np.log(0.5 * np.exp(a) + 0.5 * np.exp(b))) < 1e-12)
    True
    """
    out = None
    for c, w in _check_mixture(PRIOR_MIXTURE if mixture is None else mixture):
        wa = np.asarray(w, dtype=float)
        if wa.ndim and not bool(np.all(wa > 0)):   # per-pair weights: compute the component where it counts
            shape = np.broadcast_shapes(*(np.shape(a) for a in (n, mean, var, u)), wa.shape)
            live = np.broadcast_to(wa > 0, shape)
            term = np.full(shape, -np.inf)
            if live.any():
                args = [np.broadcast_to(np.asarray(a, dtype=float), shape)[live] for a in (n, mean, var, u)]
                with np.errstate(divide="ignore", invalid="ignore"):
                    term[live] = np.log(np.broadcast_to(wa, shape)[live]) + log_e_process_one_sided(*args, c)
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                term = np.log(wa) + log_e_process_one_sided(n, mean, var, u, c)
            term = np.where(wa > 0, term, -np.inf)
        out = term if out is None else np.logaddexp(out, term)
    return out


def _check_mixture(mixture: Any) -> list[tuple[float, Any]]:
    try:
        comps = [(float(c), w if np.ndim(w) else float(w)) for c, w in mixture]
    except (TypeError, ValueError):
        comps = []
    ok = bool(comps) and all(c > 0 and math.isfinite(c) for c, _ in comps)
    if ok:
        ws = [np.asarray(w, dtype=float) for _, w in comps]
        ok = all(bool(np.all((w >= 0) & np.isfinite(w))) for w in ws) and bool(np.all(sum(ws) <= 1.0 + 1e-12))
    if not ok:
        raise ValueError("mixture must be ((precision > 0, weight >= 0), ...) with weights summing to at most 1, "
                         f"got {mixture!r}")
    return comps


def paired_statistic(n, mean, var, tolerance: float = 0.0, mixture=None) -> np.ndarray:
    """``W = inf_{u <= -tolerance} log M_N(u)`` for differences ``d = x_i - x_j`` (broadcasts, the
    tolerance too),
    ``M`` the mixture of one-sided e-processes :func:`log_e_process_mixture` (``mixture``: default
    :data:`PRIOR_MIXTURE`).

    ``-inf`` where ``mean <= -tolerance`` (no evidence that ``i`` is not worse) or ``n < 1``.

    Examples
    --------
    >>> round(float(paired_statistic(20, 0.5, 0.25)), 3)
    5.637
    >>> float(paired_statistic(20, -0.1, 0.25))
    -inf
    """
    n = np.asarray(n, dtype=float)
    mean = np.asarray(mean, dtype=float)
    var = np.asarray(var, dtype=float)
    tol = np.asarray(tolerance, dtype=float)
    live = (mean > -tol) & (n >= 1) & (var > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = log_e_process_mixture(np.maximum(n, 1.0), mean, np.where(var > 0, var, 1.0), -tol, mixture)
    return np.where(live, w, -np.inf)


def paired_threshold(delta: float, n_candidates: int) -> float:
    """``log(1 / delta)``: the threshold the evidence (:func:`paired_offsets`) must pass.

    Examples
    --------
    >>> round(paired_threshold(0.05, 8), 4)
    2.9957
    """
    _check_n_candidates(n_candidates)
    return -math.log(_check_delta(delta))


def contrast_share(n_candidates: int, share: float | None = None) -> float:
    """The share of delta the contrast gets: ``CONTRAST_SHARE`` (or ``share``), 0 with two candidates."""
    k = _check_n_candidates(n_candidates)
    a = CONTRAST_SHARE if share is None else float(share)
    if not 0.0 <= a <= 1.0:
        raise ValueError(f"contrast_share must be in [0, 1], got {share!r}")
    return 0.0 if k == 2 else a


def paired_offsets(n_candidates: int, share: float | None = None) -> tuple[float, float]:
    """What the pairs' and the contrast's statistics pay to become evidence:
    ``log((K - 1) / (1 - a))`` (``inf`` when ``a = 1``: no pair on all rows) and ``log(1 / a)``
    (``inf`` without a contrast); a contrast's statistic against the rival ranked ``r`` pays
    ``log(1 / a) + log(1 / s_r)`` in all (:func:`rank_shares`).

    A pair's statistic ``W`` rules a candidate out at level ``delta`` once ``W - offset`` passes
    ``log(1 / delta)``.

    Examples
    --------
    >>> paired_offsets(8)                              # all of delta on the ranked rivals
    (inf, 0.0)
    >>> [round(x, 4) for x in paired_offsets(8, 0.5)]  # log 14, log 2
    [2.6391, 0.6931]
    >>> paired_offsets(2)                               # one pair: all of delta on it
    (0.0, inf)
    """
    k = _check_n_candidates(n_candidates)
    a = contrast_share(k, share)
    if a == 0.0:
        return math.log(k - 1), math.inf
    return (math.inf if a == 1.0 else math.log((k - 1) / (1.0 - a))), math.log(1.0 / a)


def rank_shares(n_candidates: int, power: float | None = None) -> np.ndarray:
    """``s_r = r^-p / sum_{s=1}^{K-1} s^-p`` for the ranks ``r = 1..K-1`` (sum 1), ``p = RANK_POWER``;
    ``power=inf`` puts everything on rank 1.

    Examples
    --------
    >>> rank_shares(4).round(3).tolist()                # 1, 1/4, 1/9 over 49/36
    [0.735, 0.184, 0.082]
    >>> rank_shares(3, math.inf).tolist()
    [1.0, 0.0]
    """
    k = _check_n_candidates(n_candidates)
    p = RANK_POWER if power is None else float(power)
    if not p >= 0.0:
        raise ValueError(f"power must be >= 0, got {power!r}")
    if math.isinf(p):
        return np.eye(1, k - 1).ravel()
    s = np.arange(1, k, dtype=float) ** -p
    return s / s.sum()


def rival_ranks(means: np.ndarray, survivors: list[int]) -> np.ndarray:
    """``rank[k, j]``: the rank (1 = first) of survivor ``k`` among the survivors other than ``j`` by
    mean, highest first (ties and candidates without a mean: after, by lowest index); 0 where
    ``k = j`` or ``k`` is not a survivor.

    Examples
    --------
    >>> rival_ranks(np.array([0.5, 0.7, 0.6]), [0, 1, 2]).tolist()
    [[0, 2, 2], [1, 0, 1], [2, 1, 0]]
    """
    k = len(means)
    m = np.asarray(means, dtype=float)
    order = sorted(survivors, key=lambda c: (-m[c] if np.isfinite(m[c]) else math.inf, c))
    out = np.zeros((k, k), dtype=int)
    for j in range(k):
        r = 0
        for c in order:
            if c != j:
                r += 1
                out[c, j] = r
    return out


def rival_weights(means: np.ndarray, survivors: list[int], power: float | None = None) -> np.ndarray:
    """``w[k, j]``: the share of the contrast's delta on "``k`` is better than ``j``", ``s_r`` of
    :func:`rank_shares` with ``r`` the rank of ``k`` among the survivors other than ``j``
    (:func:`rival_ranks`); 0 where ``k`` is not ranked. Each column sums to at most 1.

    Examples
    --------
    >>> w = rival_weights(np.array([0.5, 0.7, 0.6]), [0, 1, 2])
    >>> w[:, 0].round(2).tolist()                       # against 0: 1 ranked first, 2 second
    [0.0, 0.8, 0.2]
    """
    ranks = rival_ranks(means, survivors)
    s = np.concatenate([[0.0], rank_shares(len(means), power)])
    return s[ranks]


def first_row_positions(means: np.ndarray, survivors: list[int]) -> np.ndarray:
    """Each survivor's rank (1 = first) among the survivors by mean, highest first (ties and
    candidates without a mean: after, by lowest index); 0 for the others.

    Examples
    --------
    >>> first_row_positions(np.array([0.5, 0.7, np.nan, 0.6]), [0, 1, 2, 3]).tolist()
    [3, 1, 4, 2]
    """
    m = np.asarray(means, dtype=float)
    order = sorted(survivors, key=lambda c: (-m[c] if np.isfinite(m[c]) else math.inf, c))
    out = np.zeros(m.size, dtype=int)
    out[order] = np.arange(1, len(order) + 1)
    return out


def contrast_mixture(positions: np.ndarray, n_survivors: Any) -> tuple[tuple[float, np.ndarray], ...]:
    """The contrast's mixture for every pair ``[..., k, j]`` (:func:`log_e_process_mixture`, weights of
    shape ``(..., 1, K)``): :data:`EXIT_MIXTURE` where ``j`` is in the lower part of the first row
    (``positions[..., j] > EXIT_RANK_SHARE * n_survivors``, :func:`first_row_positions`),
    :data:`PRIOR_MIXTURE` elsewhere.

    Examples
    --------
    >>> mix = contrast_mixture(np.array([1, 2, 3, 4]), 4)
    >>> [(c, w.ravel().tolist()) for c, w in mix]
    [(0.01, [0.0, 0.0, 0.3, 0.3]), (1.0, [1.0, 1.0, 0.7, 0.7])]
    """
    pos = np.asarray(positions)
    lower = pos > EXIT_RANK_SHARE * np.asarray(n_survivors, dtype=float)[..., None]
    comps: dict[float, list[float]] = {}
    for c, w in PRIOR_MIXTURE:
        comps.setdefault(float(c), [0.0, 0.0])[0] += float(w)
    for c, w in EXIT_MIXTURE:
        comps.setdefault(float(c), [0.0, 0.0])[1] += float(w)
    return tuple((c, np.where(lower, w_low, w_top)[..., None, :]) for c, (w_top, w_low) in sorted(comps.items()))


def contrast_partners(means: np.ndarray, survivors: list[int]) -> np.ndarray:
    """Each candidate's partner: the survivor other than itself with the highest mean (ties: lowest
    index; rank 1 of :func:`rival_ranks`); ``-1`` where there is none.

    Examples
    --------
    >>> contrast_partners(np.array([0.5, 0.7, 0.6]), [0, 1, 2]).tolist()
    [1, 2, 1]
    """
    ranks = rival_ranks(means, survivors)
    first = ranks == 1
    return np.where(first.any(axis=0), np.argmax(first, axis=0), -1)


def certified_tolerances(evidence: Any, limit: float, upper: np.ndarray, iterations: int = 60) -> np.ndarray:
    """For each rival, the smallest tolerance ``eps`` in ``[0, upper]`` whose evidence passes ``limit``:
    ``evidence(eps)`` (an array of tolerances, one per rival -> one evidence per rival) is nondecreasing
    in ``eps`` (module documentation: ``M+`` grows as ``u = -eps`` moves away below the mean), so the
    smallest ``eps`` is found by bisection, to ``upper * 2^-iterations``, rounded up. ``inf`` where even
    ``upper`` does not pass (a few rows cannot carry the evidence, however large the tolerance).

    The *certified tolerance* of a recommendation is the largest of these over its rivals (those not
    ruled out): the recommendation is within it of the best with the run's confidence, at any stop
    (:meth:`certa.strategies.PairedElimination.certified_tolerance`).

    Examples
    --------
    >>> f = lambda eps: 10.0 * eps                        # evidence 10 eps: passes 3 at eps 0.3
    >>> float(certified_tolerances(f, 3.0, np.array([1.0]))[0].round(6))
    0.3
    >>> certified_tolerances(f, 3.0, np.array([0.1])).tolist()
    [inf]
    """
    hi = np.asarray(upper, dtype=float).copy()
    lo = np.zeros_like(hi)
    done = evidence(lo) >= limit
    ok = done | (evidence(hi) >= limit)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        above = evidence(mid) >= limit
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
    return np.where(done, 0.0, np.where(ok, hi, np.inf))


def paired_confidence(evidence_min: float) -> float:
    """Confidence ``1 - exp(-E)`` reached with evidence ``E`` against every rival (>= 0).

    Examples
    --------
    >>> round(paired_confidence(paired_threshold(0.05, 4)), 6)
    0.95
    >>> paired_confidence(-math.inf)
    0.0
    """
    if evidence_min == math.inf:
        return 1.0
    if not evidence_min > -math.inf:
        return 0.0
    return max(0.0, 1.0 - math.exp(-evidence_min))


class PairTable:
    """Running sums of the paired differences ``x_i - x_j`` over the rows both were scored on."""

    def __init__(self, n_candidates: int) -> None:
        k = int(n_candidates)
        self.n = np.zeros((k, k))
        self.s = np.zeros((k, k))
        self.ss = np.zeros((k, k))
        self.score_n = np.zeros(k)
        self.score_s = np.zeros(k)
        self.score_ss = np.zeros(k)

    def add_row(self, scores: dict[int, float]) -> None:
        """Add one row's finite scores (candidate -> score)."""
        if not scores:
            return
        idx = np.fromiter(scores.keys(), dtype=int)
        x = np.fromiter(scores.values(), dtype=float)
        d = x[:, None] - x[None, :]
        ix = np.ix_(idx, idx)
        self.n[ix] += 1.0
        self.s[ix] += d
        self.ss[ix] += d * d
        self.score_n[idx] += 1.0
        self.score_s[idx] += x
        self.score_ss[idx] += x * x

    def means(self) -> np.ndarray:
        """Mean score of each candidate over its own rows (nan without a score)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.score_s / self.score_n

    def statistics(self, tolerance: float = 0.0, mixture: Any = None) -> np.ndarray:
        """``W[i, j]``: the evidence against ``mean_j >= mean_i + tolerance`` (``-inf`` on the diagonal
        and for pairs with fewer than 2 common rows); ``mixture`` as in :func:`log_e_process_mixture`."""
        return pair_statistics(self.n, self.s, self.ss, self.score_n, self.score_s, self.score_ss, tolerance,
                               mixture)

    def pair_statistic(self, i: np.ndarray, j: np.ndarray, tolerance: Any = 0.0, mixture: Any = None) -> np.ndarray:
        """``W[i, j]`` for the given pairs only (``i != j``), as :meth:`statistics` would give them
        (``tolerance`` may be one per pair; ``mixture``'s weights one per pair)."""
        sv = score_variance(self.score_n, self.score_s, self.score_ss)
        return pair_values(self.n[i, j], self.s[i, j], self.ss[i, j], sv[i], sv[j], tolerance, mixture)


def score_variance(score_n: np.ndarray, score_s: np.ndarray, score_ss: np.ndarray) -> np.ndarray:
    """``ddof=0`` variance of each candidate's scores from running sums (0 without a score)."""
    sn = np.maximum(score_n, 1.0)
    sm = score_s / sn
    return np.maximum(score_ss / sn - sm * sm, 0.0)


def pair_values(n: np.ndarray, s: np.ndarray, ss: np.ndarray, var_i: np.ndarray, var_j: np.ndarray,
                tolerance: Any = 0.0, mixture: Any = None) -> np.ndarray:
    """``W`` of pairs ``(i, j)`` given their running sums of ``x_i - x_j`` and the two candidates' score
    variances (any shape, element by element), with the variance floor; ``-inf`` below 2 common rows."""
    nn = np.maximum(n, 1.0)
    m = s / nn
    v = np.maximum(ss / nn - m * m, 0.0)
    v = np.maximum(v, DIFF_VAR_FLOOR * 0.5 * (var_i + var_j))
    w = np.array(np.broadcast_to(paired_statistic(n, m, v, tolerance, mixture), np.shape(n)))
    w[n < 2] = -np.inf
    return w


def pair_statistics(n: np.ndarray, s: np.ndarray, ss: np.ndarray, score_n: np.ndarray, score_s: np.ndarray,
                    score_ss: np.ndarray, tolerance: float = 0.0, mixture: Any = None) -> np.ndarray:
    """``W[..., i, j]`` from running sums of the pairs' differences (``n, s, ss``: ``(..., K, K)``) and
    of the scores (``(..., K)``), with the variance floor; any leading shape (rows = runs); ``mixture``
    as in :func:`log_e_process_mixture` (weights broadcast against ``(..., K, K)``)."""
    sv = score_variance(score_n, score_s, score_ss)
    w = pair_values(n, s, ss, sv[..., :, None], sv[..., None, :], tolerance, mixture)
    k = n.shape[-1]
    w[..., np.arange(k), np.arange(k)] = -np.inf
    return w
