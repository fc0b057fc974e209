"""The unknown-variance characteristic time (Jourdan, Degenne & Kaufmann 2023) and the batch
driver's experimental stopping-rule hook."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from certa.planning.batch import GaussianSampler, simulate_top_two_batch
from certa.planning.lower_bound import characteristic_time, characteristic_time_unknown_variance
from certa.strategies import _glr


def kl_unknown(mu, sigma, lam):
    return 0.5 * math.log1p((mu - lam) ** 2 / sigma ** 2)


def pair_value(w, mu, sigma, b, j, eps=0.0):
    """inf over the common mean by scipy (a dense grid, then bounded Brent around its minimum)."""
    f = lambda u: w[b] * kl_unknown(mu[b], sigma[b], u) + w[j] * kl_unknown(mu[j], sigma[j], u + eps)
    us = np.linspace(mu[j] - eps, mu[b], 20001)
    vals = np.array([f(u) for u in us[::50]])
    k = int(np.argmin(vals)) * 50
    res = optimize.minimize_scalar(f, bounds=(us[max(k - 60, 0)], us[min(k + 60, us.size - 1)]),
                                   method="bounded", options={"xatol": 1e-12})
    return min(float(res.fun), f(us[0]), f(us[-1]))


def test_two_symmetric_candidates_closed_form():
    # w = (1/2, 1/2) by symmetry; for a gap below 2 SD the infimum is at the midpoint:
    # 1/T = 2 * (1/2) * (1/2) log(1 + gap^2 / (4 sigma^2))
    for gap, sd in ((1.0, 1.0), (0.5, 2.0), (1.8, 1.0)):
        t, w = characteristic_time_unknown_variance([gap, 0.0], [sd, sd])
        assert t == pytest.approx(2 / math.log1p(gap ** 2 / (4 * sd ** 2)), rel=1e-6)
        np.testing.assert_allclose(w, [0.5, 0.5], atol=1e-4)   # a flat optimum


def test_large_gap_moves_mostly_one_mean():
    # gap 6 SD, w = (1/2, 1/2) by symmetry: the infimum is near an end (u ~ 0.17), not at the
    # midpoint ((1/2) log(1 + 9) = 1.15 against about (1/4) log(1 + 36) = 0.90)
    f = lambda u: 0.25 * math.log1p((6.0 - u) ** 2) + 0.25 * math.log1p(u ** 2)
    res = optimize.minimize_scalar(f, bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-12})
    assert 0.1 < res.x < 0.3 and res.fun < f(3.0) and res.fun < f(0.0)
    t, _ = characteristic_time_unknown_variance([6.0, 0.0], [1.0, 1.0])
    assert t == pytest.approx(1 / res.fun, rel=1e-5)


def test_is_larger_than_known_variance_and_agrees_for_small_gaps():
    mu, sd = np.array([0.0, -1.5, -3.0, -4.5, -6.0]), np.ones(5)
    tk, tu = characteristic_time(mu, sd)[0], characteristic_time_unknown_variance(mu, sd)[0]
    assert tu > 1.5 * tk
    small = mu * 1e-3
    assert characteristic_time_unknown_variance(small, sd)[0] == pytest.approx(characteristic_time(small, sd)[0],
                                                                               rel=1e-3)


@pytest.mark.parametrize("mu, sigma, eps", [
    ([0.0, -1.0, -3.0], [1.0, 2.0, 1.0], 0.0),
    ([0.0, -0.05, -1.0], [1.0, 1.0, 1.0], 0.1),
])
def test_optimal_against_a_brute_force_over_the_simplex(mu, sigma, eps):
    mu, sigma = np.array(mu), np.array(sigma)
    t, w = characteristic_time_unknown_variance(mu, sigma, eps)
    answers = [0] if eps == 0 else [i for i in range(3) if mu[i] >= mu.max() - eps]

    def value(w_, b):
        return min(pair_value(w_, mu, sigma, b, j, eps) for j in range(3) if j != b)

    # the returned weights achieve 1/T (checked with an independent infimum) ...
    b_star = max(answers, key=lambda b: value(w, b))
    assert value(w, b_star) == pytest.approx(1 / t, rel=1e-4)
    # ... and no weights on a simplex grid do better, for any right answer
    best = 0.0
    for a in np.linspace(0.02, 0.96, 48):
        for c in np.linspace(0.02, 0.98 - a, 24):
            w_ = np.array([a, c, 1 - a - c])
            best = max(best, max(value(w_, b) for b in answers))
    assert best <= (1 / t) * (1 + 1e-4)
    assert best >= (1 / t) * 0.95     # the grid comes close: the optimum is not overstated


def test_stop_rule_hook_and_forced_counts():
    sampler = GaussianSampler([0.0, -1.0, -2.0], [1.0, 1.0, 1.0])
    # a rule that stops after 20 evaluations: every run stops there, choosing the highest mean
    rep = simulate_top_two_batch(sampler, confidence=0.95, beta="ids", n_runs=50, random_state=1,
                                 stop_rule=lambda m, v, n, e: (e >= 20, np.argmax(m, axis=1)))
    assert (rep.evaluations == 20).all()
    np.testing.assert_array_equal(rep.chosen, np.argmax(rep.means, axis=1))
    np.testing.assert_array_equal(rep.forced, 9)    # only the first round of 3 per candidate
    # the shipped rule: the first round is min_count per candidate, plus count-limited evaluations
    rep = simulate_top_two_batch(sampler, confidence=0.95, beta="ids", n_runs=50, random_state=1)
    first = 3 * _glr.min_count(0.05, 3)
    assert (rep.forced >= first).all() and (rep.forced <= rep.evaluations).all()
    assert (rep.counts.min(axis=1) >= _glr.min_count(0.05, 3)).all()
