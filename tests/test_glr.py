"""Tests of certa.strategies._glr: the unknown-variance stopping rule (Lai / Wang-Ramdas e-process)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from certa.planning.lower_bound import lower_bound
from certa.strategies._glr import (
    PRIOR_PRECISION,
    glr_confidence,
    glr_delta_reached,
    glr_pairwise,
    glr_pairwise_from_stats,
    glr_should_stop,
    glr_should_stop_from_stats,
    glr_statistic,
    glr_threshold,
    log_e_process,
    pair_statistic,
)
from certa.strategies._stopping import glr_min_statistic as glr_min_statistic_fast
from certa.strategies._stopping import glr_should_stop_screened as glr_should_stop_fast


# ------------------------------------------------------------------------------------
# the per-candidate e-process
# ------------------------------------------------------------------------------------
def e_process_by_definition(x, u, c):
    """Mixture likelihood ratio by numerical integration (independent of the closed form).

    Numerator: Gaussian likelihood with mean u + sd * theta, theta ~ N(0, 1/c)
    (Gauss-Hermite, 60 nodes), integrated over sd with the right Haar measure d sd / sd;
    denominator: mean u, integrated over sd the same way (scipy quad, on log sd).
    """
    y = np.asarray(x, dtype=float) - u
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)      # weight exp(-t^2 / 2)
    theta = nodes / math.sqrt(c)
    weights = weights / math.sqrt(2 * math.pi)

    def null(log_sd):
        return float(np.prod(stats.norm.pdf(y, 0.0, math.exp(log_sd))))

    def alt(log_sd):
        sd = math.exp(log_sd)
        lik = np.prod(stats.norm.pdf(y[None, :], sd * theta[:, None], sd), axis=1)
        return float(np.dot(weights, lik))

    centre = math.log(float(np.sqrt(np.mean(y * y))))
    lo, hi = centre - 12, centre + 12
    den = integrate.quad(null, lo, hi, points=[centre], limit=200, epsabs=0, epsrel=1e-11)[0]
    num = integrate.quad(alt, lo, hi, points=[centre], limit=200, epsabs=0, epsrel=1e-11)[0]
    return num / den


@pytest.mark.parametrize("n, u, c", [(2, 0.3, 4.0), (3, -0.5, 1.0), (5, 0.8, 4.0), (4, 0.0, 10.0)])
def test_e_process_closed_form_matches_the_defining_integral(n, u, c):
    x = np.random.default_rng(n).normal(0.2, 0.7, n)
    got = log_e_process(n, x.mean(), x.var(), u, c)
    assert float(got) == pytest.approx(math.log(e_process_by_definition(x, u, c)), abs=2e-6)


def test_e_process_starts_at_one():
    for x in (0.3, -5.0, 100.0):
        assert float(log_e_process(1, x, 1e-300, 0.0)) == pytest.approx(0.0, abs=1e-12)


def sup_log_e_process(rng, n_paths, horizon, c=PRIOR_PRECISION):
    x = rng.normal(0.0, 1.0, (n_paths, horizon))   # true mean 0; any SD (the process is scale free)
    n = np.arange(1, horizon + 1, dtype=float)
    m = np.cumsum(x, axis=1) / n
    v = np.maximum(np.cumsum(x * x, axis=1) / n - m * m, 1e-300)
    return log_e_process(n, m, v, 0.0, c).max(axis=1)


@pytest.mark.parametrize("alpha", [0.2, 0.05])
def test_ville_inequality_holds_on_simulated_streams(alpha):
    n_paths = 4000
    sup = sup_log_e_process(np.random.default_rng(1), n_paths, 400)
    rate = float(np.mean(sup >= math.log(1 / alpha)))
    assert rate <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / n_paths)
    assert rate > alpha / 20  # not vacuous: the bound is not far from tight


def test_product_of_two_sups_has_the_uniform_product_tail():
    # P(sup M^1 sup M^2 >= z) <= (1 + log z) / z: the bound the threshold is built on
    rng = np.random.default_rng(2)
    n_paths = 4000
    total = sup_log_e_process(rng, n_paths, 300) + sup_log_e_process(rng, n_paths, 300)
    for log_z in (2.0, 3.0, 4.0):
        bound = (1 + log_z) * math.exp(-log_z)
        rate = float(np.mean(total >= log_z))
        assert rate <= bound + 3 * math.sqrt(bound * (1 - bound) / n_paths)


# ------------------------------------------------------------------------------------
# the pair statistic
# ------------------------------------------------------------------------------------
def pair_by_grid(ni, mi, vi, nj, mj, vj, eps, c=PRIOR_PRECISION):
    """inf over u_j >= u_i + eps on a fine 2-D grid plus a bounded Brent polish."""
    def obj(ui, uj):
        return log_e_process(ni, mi, vi, ui, c) + log_e_process(nj, mj, vj, uj, c)

    span = abs(mi - mj) + eps + 5 * math.sqrt(max(vi, vj))
    ui = np.linspace(mi - span, mi + span, 801)
    uj = np.linspace(mj - span, mj + span, 801)
    grid = obj(ui[:, None], uj[None, :])
    grid[uj[None, :] < ui[:, None] + eps] = np.inf
    best2d = float(grid.min())
    # on the boundary line, refined by Brent from the best grid point
    line = lambda t: float(obj(t, t + eps))
    ts = np.linspace(mj - eps, mi, 4001)
    vals = np.array([line(t) for t in ts])
    k = int(np.argmin(vals))
    res = optimize.minimize_scalar(line, bounds=(ts[max(k - 1, 0)], ts[min(k + 1, ts.size - 1)]),
                                   method="bounded", options={"xatol": 1e-12})
    return min(best2d, float(vals[k]), float(res.fun))


def test_pair_statistic_is_the_constrained_infimum():
    rng = np.random.default_rng(3)
    for _ in range(25):
        ni, nj = rng.integers(2, 400, 2)
        vi, vj = 10 ** rng.uniform(-2, 1, 2)
        mi = rng.normal()
        mj = mi - abs(rng.normal()) * rng.choice([1.0, 0.05])
        eps = float(rng.choice([0.0, 0.02, 0.3]))
        want = pair_by_grid(ni, mi, vi, nj, mj, vj, eps)
        got = float(pair_statistic(ni, mi, vi, nj, mj, vj, eps))
        assert got == pytest.approx(want, rel=1e-6, abs=1e-6)


def test_pairwise_and_tie_behaviour():
    best, z = glr_pairwise_from_stats([0.5, 0.5, 0.1], [1.0, 1.0, 1.0], [10, 10, 10])
    assert best == 0 and z[0] == np.inf
    # an exact tie: both e-processes at their own means, log M = 0.5 log(c/(n+c)) < 0 each
    assert z[1] == pytest.approx(2 * 0.5 * math.log(PRIOR_PRECISION / (10 + PRIOR_PRECISION)))
    scores = [np.array([0.0, 1.0, 2.0]), np.array([3.0, 4.0, 6.0]), np.array([1.0, 1.5, 2.5])]
    best, z = glr_pairwise(scores)
    best2, z2 = glr_pairwise_from_stats([s.mean() for s in scores], [s.var() for s in scores], [3, 3, 3])
    assert best == best2 == 1 and np.allclose(z, z2)
    assert glr_statistic(scores) == (1, pytest.approx(min(z[0], z[2])))


def test_tolerance_lowers_the_statistic_needed_and_zero_tolerance_is_the_plain_rule():
    m, v, n = [1.0, 0.95], [1.0, 1.0], [600, 600]
    _, z0 = glr_pairwise_from_stats(m, v, n)
    _, z1 = glr_pairwise_from_stats(m, v, n, tolerance=0.3)
    assert z1[1] > z0[1] + 1.0      # "0.95 is not 0.3 above 1.0" is far easier to show
    assert glr_should_stop_from_stats(m, v, n, 0.05)[0] is False
    assert glr_should_stop_from_stats(m, v, n, 0.05, tolerance=0.3) == (True, 0)


def test_variance_floor_only_lowers_the_statistic():
    scores = [[0.9] * 6, [0.8, 0.85, 0.75, 0.8, 0.82, 0.78]]
    _, z_small = glr_pairwise(scores, sd_floor_fraction=0.01)
    _, z_big = glr_pairwise(scores, sd_floor_fraction=0.5)
    assert np.isfinite(z_small[1]) and z_big[1] < z_small[1]


def test_screened_statistic_equals_the_reference():
    rng = np.random.default_rng(11)
    stops = 0
    for _ in range(300):
        k = int(rng.integers(2, 30))
        counts = rng.integers(2, 400, k).astype(float)
        mean = rng.normal(0, 0.4, k)
        var = rng.uniform(0.0, 1.0, k) * (rng.random(k) > 0.05)   # some zero variances
        for delta, eps in ((0.05, 0.0), (0.01, 0.0), (0.05, 0.1)):
            got = glr_should_stop_fast(mean, var, counts, delta, eps)
            assert got == glr_should_stop_from_stats(mean, var, counts, delta, tolerance=eps)
            stops += got[0]
            zf = glr_min_statistic_fast(mean, var, counts, eps)[1]
            zr = glr_pairwise_from_stats(mean, var, counts, tolerance=eps)[1].min()
            assert zf == pytest.approx(zr, rel=1e-9, abs=1e-9)
    assert 50 < stops < 850


# ------------------------------------------------------------------------------------
# threshold and confidence reached
# ------------------------------------------------------------------------------------
@pytest.mark.parametrize("delta, k", [(0.05, 2), (0.01, 2), (0.05, 10), (0.2, 1000), (1e-6, 5)])
def test_threshold_solves_its_equation(delta, k):
    # log z = log(K - 1) + y with (1 + y) e^{-y} = delta, i.e. a (1 + log(1/a)) = delta for a = (K-1)/z
    y = optimize.brentq(lambda y: (1 + y) * math.exp(-y) - delta, 0.0, 200.0, xtol=1e-14)
    assert glr_threshold(delta, k) == pytest.approx(math.log(k - 1) + y, rel=1e-10)
    a = (k - 1) * math.exp(-glr_threshold(delta, k))
    assert a * (1 + math.log(1 / a)) == pytest.approx(delta, rel=1e-9)
    assert glr_delta_reached(glr_threshold(delta, k), k) == pytest.approx(delta, rel=1e-9)


def test_threshold_is_below_the_pairwise_union_bound():
    # the pairwise union solves (1 + log z)/z = delta/(K-1); sharing the best's sup is cheaper for K > 2
    for delta, k in ((0.05, 2), (0.05, 5), (0.05, 10), (0.01, 100)):
        pairwise = optimize.brentq(lambda y: (1 + y) * math.exp(-y) - delta / (k - 1), 0.0, 200.0, xtol=1e-14)
        if k == 2:
            assert glr_threshold(delta, k) == pytest.approx(pairwise, rel=1e-10)
        else:
            assert glr_threshold(delta, k) < pairwise - 0.2


@pytest.mark.parametrize("k", [2, 5, 10])
def test_shared_best_bound_by_simulation(k):
    # the error bound of the rule: P(Y max_i X_i > z) <= delta when Y and the X_i are independent
    # with P(X >= x) <= 1/x; exact for X = 1/U, so the simulated rate must be close to delta
    # (the only slack is the union over the max: 1 - (1 - 1/x)^(K-1) <= (K-1)/x)
    rng = np.random.default_rng(k)
    n = 400_000
    delta = 0.05
    log_z = glr_threshold(delta, k)
    log_y = -np.log(rng.random(n))
    log_x = (-np.log(rng.random((n, k - 1)))).max(axis=1)
    rate = float(np.mean(log_x + log_y > log_z))
    se = math.sqrt(delta * (1 - delta) / n)
    assert rate <= delta + 3 * se
    assert rate >= 0.8 * delta   # nearly tight: the threshold is not conservative for uniform e-values


def test_rule_bound_on_simulated_e_processes():
    # the same with the real e-processes: best at mean 0 and K - 1 = 4 others, sup over 300 scores each
    rng = np.random.default_rng(3)
    n_paths, k = 3000, 5
    y = sup_log_e_process(rng, n_paths, 300)
    x = np.max([sup_log_e_process(rng, n_paths, 300) for _ in range(k - 1)], axis=0)
    for delta in (0.3, 0.1):
        rate = float(np.mean(x + y > glr_threshold(delta, k)))
        assert rate <= delta + 3 * math.sqrt(delta * (1 - delta) / n_paths)


def test_delta_reached_edges_and_monotonicity():
    assert glr_delta_reached(-3.0, 4) == 1.0
    assert glr_delta_reached(math.log(3), 4) == 1.0
    assert glr_delta_reached(math.inf, 4) == 0.0
    vals = [glr_delta_reached(z, 5) for z in (1.0, 3.0, 6.0, 9.0)]
    assert vals == sorted(vals, reverse=True) and vals[0] == 1.0
    best, conf = glr_confidence([1.0, 0.0], [1.0, 1.0], [30, 30])
    _, z = glr_pairwise_from_stats([1.0, 0.0], [1.0, 1.0], [30, 30])
    assert best == 0 and conf == pytest.approx(1 - (1 + z[1]) * math.exp(-z[1]))
    _, conf3 = glr_confidence([1.0, 0.0, -5.0], [1.0, 1.0, 1.0], [30, 30, 30])
    _, z3 = glr_pairwise_from_stats([1.0, 0.0, -5.0], [1.0, 1.0, 1.0], [30, 30, 30])
    y = z3.min() - math.log(2)
    assert conf3 == pytest.approx(1 - (1 + y) * math.exp(-y))


# ------------------------------------------------------------------------------------
# the whole rule: simulated wrong-choice rate under continuous monitoring
# ------------------------------------------------------------------------------------
FAMILIES = {
    "two close": (np.array([0.5, 0.0]), np.array([1.0, 1.0])),
    "five spread": (np.array([1.0, 0.6, 0.3, 0.0, -0.5]), np.array([1.0, 0.5, 1.5, 1.0, 1.0])),
    "one best + five near-ties": (np.array([1.5] + [0.02 * j for j in range(1, 6)]), np.ones(6)),
}


def round_robin_runs(mu, sigma, delta, n_runs, seed, tolerance=0.0, max_rounds=3000):
    """Every candidate once per round, the rule checked after every evaluation."""
    rng = np.random.default_rng(seed)
    k = mu.size
    chosen, sizes = [], []
    for _ in range(n_runs):
        n = np.zeros(k)
        s1 = np.zeros(k)
        s2 = np.zeros(k)
        done = None
        for t in range(max_rounds * k):
            a = t % k
            x = rng.normal(mu[a], sigma[a])
            n[a] += 1
            s1[a] += x
            s2[a] += x * x
            if t >= 2 * k:
                m = s1 / n
                v = np.maximum(s2 / n - m * m, 0.0)
                stop, best = glr_should_stop_fast(m, v, n, delta, tolerance)
                if stop:
                    done = (best, t + 1)
                    break
        assert done is not None, "the rule must stop within the horizon"
        chosen.append(done[0])
        sizes.append(done[1])
    return np.array(chosen), np.array(sizes)


def _assert_delta_correct(family, n_runs, seed, delta=0.05):
    mu, sigma = FAMILIES[family]
    chosen, sizes = round_robin_runs(mu, sigma, delta, n_runs, seed)
    wrong = float(np.mean(chosen != np.argmax(mu)))
    assert wrong <= delta + 3 * math.sqrt(delta * (1 - delta) / n_runs), (family, wrong)
    # a delta-correct rule cannot beat the Garivier-Kaufmann lower bound on average
    assert sizes.mean() >= lower_bound(mu, sigma, delta)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_rule_wrong_choice_rate_is_at_most_delta(family):
    _assert_delta_correct(family, n_runs=25, seed=10, delta=0.2)


@pytest.mark.slow
@pytest.mark.parametrize("family", list(FAMILIES))
def test_rule_wrong_choice_rate_is_at_most_delta_many_runs(family):
    _assert_delta_correct(family, n_runs=1000, seed=11)


def test_tolerance_rule_is_correct_on_near_ties():
    # means 0, -0.05, -1: with tolerance 0.3 either of the first two is a right answer
    mu, sigma = np.array([0.0, -0.05, -1.0]), np.ones(3)
    delta, n_runs = 0.2, 60
    chosen, sizes = round_robin_runs(mu, sigma, delta, n_runs, seed=5, tolerance=0.3)
    wrong = float(np.mean(mu[chosen] < mu.max() - 0.3))
    assert wrong <= delta + 3 * math.sqrt(delta * (1 - delta) / n_runs)
    assert sizes.mean() < 2000    # without tolerance the gap of 0.05 SD needs tens of thousands


def test_rule_stops_with_clear_evidence_and_not_without():
    rng = np.random.default_rng(6)
    clear = [rng.normal(1.0, 1.0, 100), rng.normal(0.0, 1.0, 100)]
    assert glr_should_stop(clear, 0.05) == (True, 0)
    same = [rng.normal(0.0, 1.0, 400), rng.normal(0.0, 1.0, 400)]
    assert glr_should_stop(same, 0.05)[0] is False


def test_bad_input():
    with pytest.raises(ValueError, match="delta"):
        glr_should_stop([[1.0, 2.0], [0.0, 1.0]], 1.5)
    with pytest.raises(ValueError, match="tolerance"):
        glr_should_stop([[1.0, 2.0], [0.0, 1.0]], 0.05, tolerance=-0.1)
    with pytest.raises(ValueError, match="tolerance"):
        glr_pairwise([[1.0, 2.0], [0.0, 1.0]], tolerance=float("nan"))
    with pytest.raises(ValueError, match="counts"):
        glr_should_stop_from_stats([1.0, 0.0], [1.0, 1.0], [0, 5], 0.05)
    with pytest.raises(ValueError, match="var"):
        glr_pairwise_from_stats([1.0, 0.0], [-1.0, 1.0], [5, 5])
    with pytest.raises(ValueError, match="n_candidates"):
        glr_threshold(0.05, 1)
    with pytest.raises(ValueError, match="z_min"):
        glr_delta_reached(float("nan"), 3)
