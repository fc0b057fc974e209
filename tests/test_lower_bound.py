"""Tests of certa.planning.lower_bound: Garivier-Kaufmann characteristic time."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize
from scipy.special import rel_entr

from certa.planning.lower_bound import bernoulli_kl, characteristic_time, lower_bound


def objective(w, mu, sigma):
    """min_{j != best} Delta_j^2 / (2 (sigma_b^2 / w_b + sigma_j^2 / w_j)), rows of w."""
    w = np.atleast_2d(w)
    b = int(np.argmax(mu))
    others = [j for j in range(len(mu)) if j != b]
    with np.errstate(divide="ignore"):
        terms = [(mu[b] - mu[j]) ** 2
                 / (2 * (sigma[b] ** 2 / w[:, b] + sigma[j] ** 2 / w[:, j])) for j in others]
    return np.min(terms, axis=0)


@pytest.mark.parametrize("sigma, gap", [(1.0, 1.0), (0.3, 0.05), (2.0, 0.7)])
def test_two_equal_variance_arms_closed_form(sigma, gap):
    t_star, w = characteristic_time([gap, 0.0], [sigma, sigma])
    assert t_star == pytest.approx(8 * sigma ** 2 / gap ** 2, rel=1e-9)
    np.testing.assert_allclose(w, [0.5, 0.5], atol=1e-6)


@pytest.mark.parametrize("s1, s2", [(1.0, 3.0), (0.2, 0.05), (2.0, 0.5)])
def test_two_unequal_variance_arms_allocate_proportionally_to_sigma(s1, s2):
    # minimise s1^2/w + s2^2/(1-w): w = s1 / (s1 + s2), T* = 2 (s1 + s2)^2 / Delta^2
    gap = 0.4
    t_star, w = characteristic_time([0.0, -gap], [s1, s2])
    assert t_star == pytest.approx(2 * (s1 + s2) ** 2 / gap ** 2, rel=1e-9)
    np.testing.assert_allclose(w, [s1 / (s1 + s2), s2 / (s1 + s2)], atol=1e-6)


@pytest.mark.parametrize("mu, sigma", [
    ([1.0, 0.5, 0.2], [1.0, 2.0, 0.5]),
    ([0.0, 0.3, -0.1], [0.5, 0.5, 1.5]),
    ([0.9, 0.88, 0.5], [0.02, 0.03, 0.05]),
])
def test_three_arms_match_brute_force_grid(mu, sigma):
    mu, sigma = np.asarray(mu), np.asarray(sigma)
    t_star, w = characteristic_time(mu, sigma)
    step = 1 / 1000
    a, b = np.meshgrid(np.arange(1, 1000) * step, np.arange(1, 1000) * step, indexing="ij")
    keep = a + b < 1 - step / 2
    grid = np.column_stack([a[keep], b[keep], 1 - a[keep] - b[keep]])
    values = objective(grid, mu, sigma)
    best = int(np.argmax(values))
    # the optimum is at least as good as any grid point, and the grid gets close to it
    assert 1 / t_star >= values[best] * (1 - 1e-12)
    assert 1 / t_star <= values[best] * (1 + 2e-3)
    np.testing.assert_allclose(w, grid[best], atol=3e-3)


def test_random_instances_match_slsqp_on_the_epigraph_form():
    rng = np.random.default_rng(0)
    for _ in range(10):
        k = int(rng.integers(3, 8))
        mu, sigma = rng.normal(0, 1, k), rng.uniform(0.2, 2.0, k)
        t_star, w = characteristic_time(mu, sigma)
        b = int(np.argmax(mu))
        others = [j for j in range(k) if j != b]

        # maximise s subject to s <= Delta_j^2 / (2 (sigma_b^2/w_b + sigma_j^2/w_j))
        def cons(x, j):
            ww = x[:k]
            return (mu[b] - mu[j]) ** 2 / (2 * (sigma[b] ** 2 / ww[b]
                                                + sigma[j] ** 2 / ww[j])) - x[k]

        x0 = np.append(np.full(k, 1 / k), 0.0)
        res = optimize.minimize(
            lambda x: -x[k], x0, method="SLSQP",
            bounds=[(1e-9, 1)] * k + [(0, None)],
            constraints=[{"type": "eq", "fun": lambda x: x[:k].sum() - 1}]
            + [{"type": "ineq", "fun": cons, "args": (j,)} for j in others],
            options={"ftol": 1e-14, "maxiter": 1000})
        # status 8 ("positive directional derivative for linesearch") means SLSQP cannot improve
        # further at this ftol: accepted when the point is feasible (the value is checked below)
        assert res.success or res.status == 8, res.message
        assert abs(res.x[:k].sum() - 1) < 1e-9
        assert min(cons(res.x, j) for j in others) > -1e-10
        assert 1 / t_star == pytest.approx(res.x[k], rel=1e-5)
        assert 1 / t_star >= objective(res.x[:k] / res.x[:k].sum(), mu, sigma)[0] * (1 - 1e-9)
        np.testing.assert_allclose(w.sum(), 1.0)
        # at the optimum every challenger's constraint is active (equal values)
        terms = [(mu[b] - mu[j]) ** 2 / (2 * (sigma[b] ** 2 / w[b] + sigma[j] ** 2 / w[j]))
                 for j in others]
        np.testing.assert_allclose(terms, 1 / t_star, rtol=1e-6)


def test_lower_bound_is_t_star_times_bernoulli_kl():
    mu, sigma = [1.0, 0.7, 0.2, 0.0], [1.0, 0.5, 1.0, 2.0]
    t_star, _ = characteristic_time(mu, sigma)
    for delta in (0.001, 0.05, 0.3):
        kl = (1 - 2 * delta) * np.log((1 - delta) / delta)
        assert lower_bound(mu, sigma, delta) == pytest.approx(t_star * kl, rel=1e-12)


def test_bernoulli_kl_matches_scipy_relative_entropy():
    for p, q in [(0.05, 0.95), (0.3, 0.31), (0.0, 0.4), (1.0, 0.2)]:
        expected = rel_entr(p, q) + rel_entr(1 - p, 1 - q)
        assert bernoulli_kl(p, q) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_scalar_sigma_and_ties():
    t_star, _ = characteristic_time([1.0, 0.0, 0.0], 0.5)
    assert t_star == pytest.approx(characteristic_time([1.0, 0.0, 0.0], [0.5] * 3)[0])
    t_tie, w_tie = characteristic_time([1.0, 1.0, 0.0], [1.0, 1.0, 1.0])
    assert t_tie == np.inf and np.isnan(w_tie).all()
    assert lower_bound([1.0, 1.0], 1.0, 0.05) == np.inf


@pytest.mark.parametrize("call, match", [
    (lambda: characteristic_time([1.0], [1.0]), "at least 2"),
    (lambda: characteristic_time([1.0, 0.0], [1.0, 0.0]), "sigma"),
    (lambda: characteristic_time([1.0, 0.0], [1.0, 1.0, 1.0]), "same length"),
    (lambda: characteristic_time([1.0, np.nan], [1.0, 1.0]), "mu"),
    (lambda: lower_bound([1.0, 0.0], 1.0, 1.0), "delta"),
    (lambda: bernoulli_kl(0.5, 1.0), "q"),
    (lambda: bernoulli_kl(1.5, 0.5), "p"),
])
def test_bad_arguments_are_rejected(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()
