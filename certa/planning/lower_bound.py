"""Lower bound on the number of evaluations any delta-correct selection needs.

For Gaussian candidates with means ``mu`` and known variances ``sigma^2`` and a unique
best ``b``, Garivier & Kaufmann (2016, "Optimal best arm identification with fixed
confidence") show that every delta-correct strategy satisfies
``E[tau] >= T*(mu) kl(delta, 1 - delta)`` with the characteristic time::

    1 / T*(mu) = sup_{w in simplex} min_{j != b} (mu_b - mu_j)^2
                                             / (2 (sigma_b^2 / w_b + sigma_j^2 / w_j))

and ``kl`` the Bernoulli Kullback-Leibler divergence. ``w*`` (the argmax) is the optimal
share of evaluations per candidate. Not knowing the variances can only make the
problem harder, so the bound also holds for the unknown-variance case of
:mod:`certa.strategies._glr`.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from scipy.optimize import brentq, minimize_scalar

__all__ = ["bernoulli_kl", "characteristic_time", "characteristic_time_unknown_variance", "lower_bound"]


def _check_mu_sigma(mu: Any, sigma: Any) -> tuple[np.ndarray, np.ndarray]:
    arrays = []
    for name, value in (("mu", mu), ("sigma", sigma)):
        if isinstance(value, (str, bytes)):
            raise TypeError(f"{name} must be a 1-D array-like of numbers")
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a 1-D array-like of numbers") from None
        if arr.ndim == 0 and name == "sigma":
            arr = np.full(len(arrays[0]), float(arr))
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} contains NaN or infinite values")
        arrays.append(arr)
    m, s = arrays
    if m.size < 2:
        raise ValueError(f"mu must hold at least 2 candidates, got {m.size}")
    if s.size != m.size:
        raise ValueError(f"sigma must have the same length as mu, got {s.size} and {m.size}")
    if (s <= 0).any():
        raise ValueError(f"sigma must be > 0, got {s.tolist()}")
    return m, s


def bernoulli_kl(p: float, q: float) -> float:
    """Kullback-Leibler divergence between Bernoulli(p) and Bernoulli(q).

    Parameters
    ----------
    p, q : float
        Probabilities; ``p`` in [0, 1], ``q`` in (0, 1).

    Returns
    -------
    float
        ``p log(p / q) + (1 - p) log((1 - p) / (1 - q))`` (with ``0 log 0 = 0``).

    Examples
    --------
    >>> round(bernoulli_kl(0.05, 0.95), 6)   # (1 - 2 delta) log((1 - delta) / delta)
    2.649995
    """
    for name, v in (("p", p), ("q", q)):
        if not isinstance(v, numbers.Real) or isinstance(v, bool) or not np.isfinite(v):
            raise TypeError(f"{name} must be a real number, got {v!r}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p!r}")
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must be in (0, 1), got {q!r}")
    out = 0.0
    if p > 0:
        out += p * np.log(p / q)
    if p < 1:
        out += (1.0 - p) * np.log((1.0 - p) / (1.0 - q))
    return float(out)


def _time_for_answer(gaps2: np.ndarray, var_b: float, var_o: np.ndarray) -> tuple[float, float, np.ndarray]:
    """``T`` for one answer ``b``: ``1/T = sup_w min_j gaps2_j / (2 (var_b / w_b + var_o_j / w_j))``.

    Returns ``(T, w_b, w_others)``; ``gaps2`` are the squared distances to the alternatives.
    """
    if np.any(gaps2 == 0):
        return float("inf"), float("nan"), np.full(var_o.size, np.nan)

    def others_for(t: float, wb: float) -> np.ndarray:
        return var_o / (gaps2 / (2.0 * t) - var_b / wb)

    def value(wb: float) -> float:
        """Common value t of all constraints when the answer gets share wb."""
        t_max = wb * gaps2.min() / (2.0 * var_b)  # constraint j needs t < this
        def excess(t: float) -> float:
            return wb + others_for(t, wb).sum() - 1.0
        hi = t_max * (1.0 - 1e-15)
        if excess(hi) <= 0:  # numerically at the pole: essentially t_max
            return hi
        return brentq(excess, hi * 1e-18, hi, xtol=1e-300, rtol=1e-15, maxiter=500)

    res = minimize_scalar(lambda wb: -value(wb), bounds=(0.0, 1.0), method="bounded",
                          options={"xatol": 1e-12, "maxiter": 500})
    wb = float(res.x)
    t = value(wb)
    wo = others_for(t, wb)
    total = wb + wo.sum()
    wb, wo = wb / total, wo / total
    # report the objective at the returned weights (exactly what they achieve)
    achieved = np.min(gaps2 / (2.0 * (var_b / wb + var_o / wo)))
    return float(1.0 / achieved), wb, wo


def characteristic_time(mu: Any, sigma: Any, tolerance: float = 0.0) -> tuple[float, np.ndarray]:
    """Characteristic time ``T*(mu)`` and optimal allocation ``w*`` (Gaussian, known sigma).

    The objective ``w -> min_j Delta_j^2 / (2 (sigma_b^2/w_b + sigma_j^2/w_j))`` is concave
    on the simplex (each term is a scaled weighted harmonic mean of ``w_b`` and ``w_j``),
    and at its maximum all terms are equal (Garivier & Kaufmann 2016, Lemma 4 argument).
    So for a fixed ``w_b`` the common value ``t`` solves
    ``w_b + sum_j sigma_j^2 / (Delta_j^2 / (2 t) - sigma_b^2 / w_b) = 1`` (monotone in
    ``t``: :func:`scipy.optimize.brentq`), and the value is maximised over ``w_b`` by
    bounded Brent search (:func:`scipy.optimize.minimize_scalar`) -- a concave 1-D
    problem, so the result is the global optimum.

    With ``tolerance = eps > 0`` this is ``T*_eps(mu)``, the characteristic time of
    epsilon-best identification (Garivier & Kaufmann 2021; Jourdan, Degenne & Kaufmann
    2023): every candidate ``i`` within ``eps`` of the best is a right answer, the
    alternative to answer ``i`` is "some ``j`` is more than ``eps`` above ``i``", at
    squared distance ``(mu_i - mu_j + eps)^2``, and ``T*_eps`` is the smallest of the
    answers' times (the easiest right answer).

    Parameters
    ----------
    mu : array-like of shape (n_candidates,)
        Means (higher is better), at least 2.
    sigma : array-like of shape (n_candidates,) or float
        Standard deviations (> 0).
    tolerance : float >= 0, default 0

    Returns
    -------
    t_star : float
        ``T*(mu)`` or ``T*_eps(mu)`` (``inf`` if the best mean is not unique and eps = 0).
    w_star : ndarray of shape (n_candidates,)
        Optimal proportions (sum to 1); all NaN when ``t_star`` is infinite.

    Examples
    --------
    >>> t, w = characteristic_time([1.0, 0.0], [1.0, 1.0])   # 8 sigma^2 / Delta^2
    >>> round(t, 6), w.round(6).tolist()
    (8.0, [0.5, 0.5])
    >>> round(characteristic_time([1.0, 0.0], [1.0, 1.0], tolerance=1.0)[0], 6)   # 8 / (1 + 1)^2
    2.0
    """
    m, s = _check_mu_sigma(mu, sigma)
    if (isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real) or not np.isfinite(tolerance)
            or tolerance < 0):
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    eps = float(tolerance)
    answers = [int(np.argmax(m))] if eps == 0 else np.flatnonzero(m >= m.max() - eps).tolist()
    best_t, best_w = float("inf"), np.full(m.size, np.nan)
    for b in answers:
        others = np.flatnonzero(np.arange(m.size) != b)
        gaps2 = (m[b] - m[others] + eps) ** 2
        t, wb, wo = _time_for_answer(gaps2, float(s[b] ** 2), s[others] ** 2)
        if t < best_t:
            best_t = t
            best_w = np.empty(m.size)
            best_w[b], best_w[others] = wb, wo
    return best_t, best_w


def _unknown_variance_time_for_answer(m: np.ndarray, s: np.ndarray, b: int, eps: float,
                                      grid: int) -> tuple[float, np.ndarray]:
    """``T`` and weights for answer ``b`` with the unknown-variance divergences (see the module doc)."""
    others = np.flatnonzero(np.arange(m.size) != b)
    # per challenger j: the alternative puts b at u and j at u + eps, u in [m_j - eps, m_b]
    db, dj = [], []
    for j in others:
        u = np.linspace(m[j] - eps, m[b], grid)
        db.append(0.5 * np.log1p((m[b] - u) ** 2 / s[b] ** 2))
        dj.append(0.5 * np.log1p((m[j] - u - eps) ** 2 / s[j] ** 2))
    db, dj = np.array(db), np.array(dj)
    if (db[:, 0] <= 0).any():
        return float("inf"), np.full(m.size, np.nan)

    def pair(wb: float, wj: np.ndarray, idx: np.ndarray) -> np.ndarray:
        # inf over the grid of the weighted divergences (an upper bound on the inf: T is not overstated)
        return (wb * db[idx] + wj[:, None] * dj[idx]).min(axis=1)

    def w_for(t: float, wb: float) -> np.ndarray:
        """Smallest w_j reaching pair value t (inf if unreachable: sup over w_j is wb * db[:, 0])."""
        out = np.empty(others.size)
        for k in range(others.size):
            if t >= wb * db[k, 0]:
                out[k] = np.inf
                continue
            hi = 1.0
            while pair(wb, np.array([hi]), np.array([k]))[0] < t:
                hi *= 2.0
            out[k] = brentq(lambda w, k=k: pair(wb, np.array([w]), np.array([k]))[0] - t, 0.0, hi,
                            xtol=1e-13, rtol=1e-12)
        return out

    def value(wb: float) -> float:
        if wb <= 0:
            return 0.0
        hi = wb * db[:, 0].min()
        if wb + w_for(hi * (1 - 1e-12), wb).sum() <= 1.0:
            return hi
        return brentq(lambda t: wb + w_for(t, wb).sum() - 1.0, 0.0, hi * (1 - 1e-12), xtol=1e-14, rtol=1e-12)

    res = minimize_scalar(lambda wb: -value(wb), bounds=(0.0, 1.0), method="bounded",
                          options={"xatol": 1e-10, "maxiter": 200})
    wb = float(res.x)
    t = value(wb)
    w = np.empty(m.size)
    w[b] = wb
    w[others] = w_for(t, wb)
    w = w / w.sum()
    achieved = pair(w[b], w[others], np.arange(others.size)).min()
    return float(1.0 / achieved), w


def characteristic_time_unknown_variance(mu: Any, sigma: Any, tolerance: float = 0.0,
                                         grid: int = 2001) -> tuple[float, np.ndarray]:
    """Characteristic time ``T*_u(mu, sigma)`` of best-arm identification with unknown variances.

    ``1 / T*_u = sup_w min_{j != b} inf_u [w_b/2 log(1 + (mu_b - u)^2 / sigma_b^2)
    + w_j/2 log(1 + (mu_j - u - eps)^2 / sigma_j^2)]`` (Jourdan, Degenne & Kaufmann, ALT
    2023; with ``eps > 0`` the easiest right answer, as in :func:`characteristic_time`).
    Every delta-correct strategy that does not know the variances needs
    ``E[tau] >= T*_u kl(delta, 1 - delta)`` evaluations on Gaussian candidates.

    Computed as :func:`characteristic_time` (equal pair values at the optimum, found by
    root finding for a given share of the answer, maximised over that share), with the
    infimum over ``u`` taken on ``grid`` points. The divergences are not convex in ``u``
    (for large gaps the infimum moves only one of the two means), so no closed form.

    Parameters
    ----------
    mu : array-like of shape (n_candidates,)
    sigma : array-like of shape (n_candidates,) or float
    tolerance : float >= 0, default 0
    grid : int, default 2001
        Points of the grid for the infimum over the common mean (the result can only be
        slightly below the exact value).

    Returns
    -------
    t_star : float
    w_star : ndarray of shape (n_candidates,)

    Examples
    --------
    >>> t, w = characteristic_time_unknown_variance([1.0, 0.0], [1.0, 1.0])   # 2 / log(1 + 1/4)
    >>> round(t, 3), w.round(3).tolist()
    (8.963, [0.5, 0.5])
    """
    m, s = _check_mu_sigma(mu, sigma)
    if (isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real) or not np.isfinite(tolerance)
            or tolerance < 0):
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    if not isinstance(grid, numbers.Integral) or grid < 3:
        raise ValueError(f"grid must be an integer >= 3, got {grid!r}")
    eps = float(tolerance)
    answers = [int(np.argmax(m))] if eps == 0 else np.flatnonzero(m >= m.max() - eps).tolist()
    best_t, best_w = float("inf"), np.full(m.size, np.nan)
    for b in answers:
        t, w = _unknown_variance_time_for_answer(m, s, b, eps, int(grid))
        if t < best_t:
            best_t, best_w = t, w
    return best_t, best_w


def lower_bound(mu: Any, sigma: Any, delta: float, tolerance: float = 0.0) -> float:
    """Lower bound ``T*(mu) kl(delta, 1 - delta)`` on the expected number of evaluations.

    Any strategy that identifies the best of Gaussian candidates with error probability
    at most ``delta`` needs at least this many evaluations in expectation (Garivier &
    Kaufmann 2016, Theorem 1).

    Parameters
    ----------
    mu : array-like of shape (n_candidates,)
        True means, at least 2.
    sigma : array-like of shape (n_candidates,) or float
        True standard deviations (> 0).
    delta : float
        Error probability, in (0, 1).
    tolerance : float >= 0, default 0
        Epsilon-best identification: the bound ``T*_eps(mu) kl(delta, 1 - delta)``.

    Returns
    -------
    float
        The bound (``inf`` if the best mean is not unique).

    Examples
    --------
    >>> round(lower_bound([1.0, 0.0], 1.0, 0.05), 4)   # 8 * kl(0.05, 0.95)
    21.2
    """
    if (not isinstance(delta, numbers.Real) or isinstance(delta, bool)
            or not 0.0 < delta < 1.0):
        raise ValueError(f"delta must be a number in (0, 1), got {delta!r}")
    t_star, _ = characteristic_time(mu, sigma, tolerance)
    return t_star * bernoulli_kl(float(delta), 1.0 - float(delta))
