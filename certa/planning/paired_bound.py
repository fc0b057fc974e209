"""Lower bounds on the evaluations of fixed-confidence selection on *paired rows*.

The paired model (:class:`certa.strategies.PairedElimination`): row ``r`` is one split and seed
shared by the candidates evaluated on it, and a row's scores ``x_r`` are drawn i.i.d. from a
Gaussian ``N(mu, Sigma)`` -- ``Sigma`` the covariance of one row's scores across candidates (the
correlation of models scored on the same split). A procedure chooses, before seeing a row, which
candidates it evaluates on it (its *member set* ``S``); each evaluation costs one. Let ``b`` be the
unique best candidate, ``a_j = e_b - e_j`` and ``gap_j = mu_b - mu_j``.

The change-of-measure argument of Garivier & Kaufmann (2016; Kaufmann, Cappe & Garivier 2016,
Lemma 1) applies to any choice of member sets made from the past: for every alternative ``lambda``
whose best is not ``b``, ``sum_S E[N_S] KL_S(mu, lambda) >= kl(delta, 1 - delta)``, with ``N_S`` the
number of rows with member set ``S`` and ``KL_S = (mu - lambda)_S' Sigma_SS^-1 (mu - lambda)_S / 2``.
With ``w_S`` the share of the *evaluations* spent on rows with member set ``S`` (rows per
evaluation ``w_S / |S|``), the information per evaluation is ``I(w) = sum_S w_S J_S``, ``J_S =
P_S' Sigma_SS^-1 P_S / |S|``, the closest alternative on the half-space ``lambda_j >= lambda_b``
is at ``gap_j^2 / (2 a_j' I(w)^-1 a_j)``, and every delta-correct procedure needs::

    E[evaluations] >= T*(mu, Sigma) kl(delta, 1 - delta),
    T*(mu, Sigma) = inf_w max_{j != b} 2 a_j' I(w)^-1 a_j / gap_j^2.

Three versions, from the most restricted procedures to all of them:

* **uniform rows** (every candidate on every row, ``w`` all on the full set): ``I = Sigma^-1 / K``,
  ``a_j' Sigma a_j = V_bj = Var(x_b - x_j)``, so ``rows >= kl / min_j (gap_j^2 / (2 V_bj))`` and
  evaluations ``= K`` times that (:func:`uniform_rows_time`, exact);
* **pairwise differences** (:func:`pairwise_time`): *not* a bound for every procedure. It is the
  cost of the design "the best on every row, ``j`` on ``n_j = 2 V_bj kl / gap_j^2`` of them", the
  rows a procedure needs when it judges each ``j`` by the differences ``x_b - x_j`` on the rows it
  shares with the best only, as :class:`~certa.strategies.PairedElimination` does:
  ``max_j n_j + sum_j n_j`` evaluations. Every design it describes is feasible below, so it is at
  least the best allocation's ``T*``;
* **the best allocation** (:func:`best_allocation_time`): the convex program over the member-set
  shares ``w``. With a known ``Sigma`` the generalised least-squares estimate of ``mu_b - mu_j``
  from rows with different member sets uses the other candidates as control variates (rows
  ``{b, k}`` and ``{j, k}`` say something about ``mu_b - mu_j``), so the optimum may put rows on
  member sets that no pairwise procedure would use. ``a' I(w)^-1 a`` is convex in ``w`` (the matrix
  fractional function of a linear map), so this is a convex problem over the ``2^K - 1`` member
  sets. It is solved by column generation (SLSQP on the epigraph over a growing family of member
  sets) and certified by duality: for any weights ``lambda`` on the constraints and any ``w``,
  convexity of ``G(w) = sum_j lambda_j 2 a_j' I(w)^-1 a_j / gap_j^2`` gives
  ``inf_w' G(w') >= 2 G(w) - max_S sum_j lambda_j 2 (u_j' J_S u_j) / gap_j^2`` (``u_j = I(w)^-1 a_j``;
  the tangent plane minimised over the vertices of the simplex, using ``sum_S w_S u' J_S u = u' I u``),
  and ``T* >= inf G``. The best ``lambda`` for a ``w`` is a small linear program. The result is an
  interval ``[lower, upper]`` that contains ``T*``; the bound uses ``lower``.

Not knowing ``Sigma`` (certa estimates it) can only make the problem harder, so the best allocation's
bound holds for certa's unknown-variance rule when rows are Gaussian (and the uniform one for any
procedure that puts every candidate on every row); the pairwise value is a reference. On replayed tables (TDSA, the cached fits
of ``benchmarks/peers.py``) the rows are not Gaussian: the bounds are then those of the Gaussian
model with the table's mean and covariance, a reference and not a theorem about the table.
With a diagonal ``Sigma`` member sets give nothing (``J_S`` is the sum of singleton ``J``'s) and
the best allocation equals the unpaired bound of :mod:`.lower_bound`.
"""
from __future__ import annotations

import itertools
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import linprog, minimize

from .lower_bound import bernoulli_kl

__all__ = ["PairedTime", "best_allocation_time", "pair_difference_variances", "paired_lower_bound",
           "pairwise_time", "uniform_rows_time"]

#: Largest number of candidates for the best allocation (every one of the 2^K - 1 member sets is priced).
MAX_CANDIDATES_BEST = 12


def _check_mu_cov(mu: Any, cov: Any) -> tuple[np.ndarray, np.ndarray, int]:
    if isinstance(mu, (str, bytes)) or isinstance(cov, (str, bytes)):
        raise TypeError("mu and cov must be array-likes of numbers")
    try:
        m = np.asarray(mu, dtype=float)
        s = np.asarray(cov, dtype=float)
    except (TypeError, ValueError):
        raise TypeError("mu and cov must be array-likes of numbers") from None
    if m.ndim != 1 or m.size < 2:
        raise ValueError(f"mu must be 1-D with at least 2 candidates, got shape {m.shape}")
    if s.shape != (m.size, m.size):
        raise ValueError(f"cov must have shape ({m.size}, {m.size}), got {s.shape}")
    if not (np.isfinite(m).all() and np.isfinite(s).all()):
        raise ValueError("mu and cov must be finite")
    if not np.allclose(s, s.T, rtol=1e-10, atol=1e-14 * max(1.0, float(np.abs(s).max()))):
        raise ValueError("cov must be symmetric")
    b = int(np.argmax(m))
    if np.sum(m == m[b]) > 1:
        raise ValueError("mu must have a unique best candidate (the bound is infinite otherwise)")
    return m, 0.5 * (s + s.T), b


def pair_difference_variances(cov: Any, best: int) -> np.ndarray:
    """``V_bj = Var(x_b - x_j) = Sigma_bb + Sigma_jj - 2 Sigma_bj`` for every ``j`` (0 at ``j = b``).

    Examples
    --------
    >>> pair_difference_variances([[1.0, 0.5], [0.5, 1.0]], 0).tolist()   # 2 (1 - r)
    [0.0, 1.0]
    """
    s = np.asarray(cov, dtype=float)
    d = np.diag(s)
    return d[best] + d - 2.0 * s[best]


def _pair_times(m: np.ndarray, s: np.ndarray, b: int) -> np.ndarray:
    """``t_j = 2 V_bj / gap_j^2``: rows the pair ``(b, j)`` needs per unit of ``kl``."""
    others = np.flatnonzero(np.arange(m.size) != b)
    v = pair_difference_variances(s, b)[others]
    if (v <= 0).any():
        raise ValueError("cov gives a pair of candidates whose difference has no variance")
    return 2.0 * v / (m[b] - m[others]) ** 2


def uniform_rows_time(mu: Any, cov: Any) -> tuple[float, float]:
    """``(rows, evaluations)`` per unit of ``kl(delta, 1 - delta)`` when every row has every candidate.

    ``rows = max_j 2 V_bj / gap_j^2`` (exact: the alternative closest to ``mu`` in the metric
    ``Sigma^-1`` on the half-space ``lambda_j >= lambda_b``), ``evaluations = K rows``.

    Examples
    --------
    >>> uniform_rows_time([1.0, 0.0], [[1.0, 0.5], [0.5, 1.0]])   # 2 * 2 (1 - 0.5) / 1, twice
    (2.0, 4.0)
    """
    m, s, b = _check_mu_cov(mu, cov)
    rows = float(_pair_times(m, s, b).max())
    return rows, m.size * rows


def pairwise_time(mu: Any, cov: Any) -> float:
    """Evaluations per unit of ``kl`` of the pairwise design: ``max_j t_j + sum_j t_j``, ``t_j = 2 V_bj / gap_j^2``.

    The cost of judging each ``j`` by its differences with the best on ``t_j kl`` shared rows (the
    best on every row). A reference for procedures that use only those differences, not a bound for
    every procedure (:func:`best_allocation_time` is).

    Examples
    --------
    >>> pairwise_time([1.0, 0.0, -1.0], np.eye(3))   # t = (4, 1): 4 + 5
    9.0
    """
    m, s, b = _check_mu_cov(mu, cov)
    t = _pair_times(m, s, b)
    return float(t.max() + t.sum())


@dataclass
class PairedTime:
    """``T*`` of the best allocation, certified: ``lower <= T* <= upper`` (evaluations per unit of ``kl``).

    ``weights``: member set (a tuple of candidates) -> share of the evaluations, at the allocation
    that achieves ``upper``; ``rounds``: column-generation rounds.
    """

    lower: float
    upper: float
    weights: dict[tuple[int, ...], float] = field(default_factory=dict)
    rounds: int = 0

    @property
    def gap(self) -> float:
        """Relative width of the certificate, ``(upper - lower) / upper``."""
        return (self.upper - self.lower) / self.upper


class _Design:
    """Information per evaluation of every member set, and the constraints' pieces."""

    def __init__(self, m: np.ndarray, s: np.ndarray, b: int) -> None:
        k = m.size
        self.k, self.b = k, b
        self.others = np.flatnonzero(np.arange(k) != b)
        self.a = np.zeros((k, self.others.size))
        self.a[b, :] = 1.0
        self.a[self.others, np.arange(self.others.size)] = -1.0
        self.c = 2.0 / (m[b] - m[self.others]) ** 2
        self.sets = [c for r in range(1, k + 1) for c in itertools.combinations(range(k), r)]
        self.J = np.zeros((len(self.sets), k, k))
        for i, st in enumerate(self.sets):
            ix = np.ix_(st, st)
            self.J[i][ix] = np.linalg.inv(s[ix]) / len(st)

    def info(self, w: np.ndarray, fam: np.ndarray) -> np.ndarray:
        return np.tensordot(w, self.J[fam], axes=1)

    def values(self, w: np.ndarray, fam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``g_j(w) = c_j a_j' I^-1 a_j`` and ``u_j = I^-1 a_j`` (columns)."""
        u = np.linalg.solve(self.info(w, fam), self.a)
        return self.c * np.einsum("kj,kj->j", self.a, u), u

    def prices(self, u: np.ndarray) -> np.ndarray:
        """``h[S, j] = c_j u_j' J_S u_j`` for every member set."""
        return np.einsum("kj,skl,lj->sj", u, self.J, u) * self.c


def _solve_restricted(d: _Design, fam: np.ndarray, w0: np.ndarray) -> np.ndarray:
    """``min_w max_j g_j(w)`` on the simplex over the member sets ``fam``: L-BFGS on a log-sum-exp
    smoothing of the maximum (temperature lowered in steps), ``w`` a softmax of free parameters."""
    scale = float(d.values(w0, fam)[0].max())
    w_best, f_best = w0, scale

    def objective(theta: np.ndarray, tau: float) -> tuple[float, np.ndarray]:
        z = np.exp(theta - theta.max())
        w = z / z.sum()
        g, u = d.values(w, fam)
        r = g / (scale * tau)
        p = np.exp(r - r.max())
        f = tau * (r.max() + np.log(p.sum()))
        p /= p.sum()
        grad_w = -np.einsum("kj,skl,lj,j->s", u, d.J[fam], u, d.c * p) / scale
        return f, w * (grad_w - w @ grad_w)

    theta = np.log(np.maximum(w0, 1e-300))
    for tau in (1e-1, 1e-2, 1e-3, 1e-4, 1e-5):
        res = minimize(objective, theta, args=(tau,), jac=True, method="L-BFGS-B",
                       options={"maxiter": 2000, "gtol": 1e-12, "ftol": 1e-15})
        theta = np.clip(res.x - res.x.max(), -700.0, 0.0)
        w = np.exp(theta) / np.exp(theta).sum()
        f = float(d.values(w, fam)[0].max())
        if f < f_best:
            w_best, f_best = w, f
    return w_best


def best_allocation_time(mu: Any, cov: Any, *, rtol: float = 1e-3, max_rounds: int = 60) -> PairedTime:
    """``T*(mu, Sigma)`` over every allocation of rows to member sets, with a duality certificate.

    Parameters
    ----------
    mu : array-like of shape (K,)
        Mean score of each candidate (higher is better), a unique best, ``2 <= K <= 12``.
    cov : array-like of shape (K, K)
        Covariance of one row's scores, positive definite.
    rtol : float
        Stop once ``(upper - lower) / upper <= rtol``.
    max_rounds : int
        Column-generation rounds at most (the certificate is valid whenever it stops).

    Returns
    -------
    PairedTime
        ``lower <= T* <= upper`` evaluations per unit of ``kl(delta, 1 - delta)``.

    Examples
    --------
    >>> t = best_allocation_time([1.0, 0.0], [[1.0, 0.5], [0.5, 1.0]])   # pairs: 2 * 2 (1 - 0.5) * 2 / 1
    >>> round(t.lower, 4), round(t.upper, 4), max(t.weights, key=t.weights.get)
    (4.0, 4.0, (0, 1))
    """
    m, s, b = _check_mu_cov(mu, cov)
    if m.size > MAX_CANDIDATES_BEST:
        raise ValueError(f"best_allocation_time prices all 2^K - 1 member sets: K must be <= "
                         f"{MAX_CANDIDATES_BEST}, got {m.size}")
    if np.linalg.eigvalsh(s).min() <= 1e-12 * max(1.0, float(np.abs(np.diag(s)).max())):
        raise ValueError("cov must be positive definite for the best allocation")
    if not isinstance(max_rounds, numbers.Integral) or max_rounds < 1:
        raise ValueError(f"max_rounds must be an integer >= 1, got {max_rounds!r}")
    d = _Design(m, s, b)
    k = m.size
    start = {(i,) for i in range(k)} | {tuple(range(k))} | {tuple(sorted((b, j))) for j in d.others}
    fam = np.array(sorted(d.sets.index(st) for st in start))
    w = np.full(fam.size, 1.0 / fam.size)
    lower, upper = 0.0, np.inf
    best_w, best_fam = w, fam
    rounds = 0
    for rounds in range(1, max_rounds + 1):
        w = _solve_restricted(d, fam, w)
        g, u = d.values(w, fam)
        if g.max() < upper:
            upper, best_w, best_fam = float(g.max()), w, fam
        h = d.prices(u)                       # (sets, j)
        n = g.size
        # max over lambda in the simplex of 2 g.lambda - max_S h_S.lambda: variables (lambda, z)
        lp = linprog(np.append(-2.0 * g, 1.0), A_ub=np.hstack([h, -np.ones((h.shape[0], 1))]),
                     b_ub=np.zeros(h.shape[0]), A_eq=np.append(np.ones(n), 0.0)[None, :], b_eq=[1.0],
                     bounds=[(0.0, None)] * n + [(None, None)], method="highs")
        lam = lp.x[:n]
        lower = max(lower, float(2.0 * g @ lam - (h @ lam).max()))
        if upper - lower <= rtol * upper:
            break
        score = h @ lam
        new = [i for i in np.argsort(-score)[: max(4, k)] if i not in set(fam.tolist())]
        if not new:
            break
        fam = np.append(fam, new)
        w = np.append(w * 0.9, np.full(len(new), 0.1 / len(new)))
    weights = {d.sets[i]: float(x) for i, x in zip(best_fam, best_w) if x > 1e-6}
    return PairedTime(lower=lower, upper=upper, weights=weights, rounds=rounds)


def paired_lower_bound(mu: Any, cov: Any, delta: float, allocation: str = "best") -> float:
    """Evaluations ``T kl(delta, 1 - delta)`` for ``allocation`` ``"best"`` (every procedure, the
    certified lower end), ``"uniform"`` (every candidate on every row) or ``"pairwise"`` (the
    pairwise design, see :func:`pairwise_time`).

    Examples
    --------
    >>> round(paired_lower_bound([1.0, 0.0], np.eye(2), 0.05), 3)   # 8 kl(0.05, 0.95): the unpaired bound
    21.2
    """
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be a number in (0, 1), got {delta!r}")
    kl = bernoulli_kl(float(delta), 1.0 - float(delta))
    if allocation == "best":
        return best_allocation_time(mu, cov).lower * kl
    if allocation == "uniform":
        return uniform_rows_time(mu, cov)[1] * kl
    if allocation == "pairwise":
        return pairwise_time(mu, cov) * kl
    raise ValueError(f"allocation must be 'best', 'uniform' or 'pairwise', got {allocation!r}")
