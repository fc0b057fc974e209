"""Tests of FIESTA's belief: the reference posterior and sampling (tests/_reference_belief.py), and
certa.strategies._posterior's P(best) by quadrature."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _reference_belief import posterior, thompson_sample, top_two_sample
from scipy import integrate, stats
from scipy.special import gammaln, stdtr

from certa.strategies._leader_belief import LeaderBelief
from certa.strategies._posterior import DEFAULT_LOGIT_EPS, _p_best_raw, p_best
from certa.strategies._sampling import ids_leader_probability


# ------------------------------------------------------------------------------------
# independent references
# ------------------------------------------------------------------------------------
def quad_p_best(loc, scale, df):
    """P(best) by adaptive scipy quadrature (``quad_vec``), split at every candidate's bulk."""
    loc, scale, df = (np.asarray(a, dtype=float) for a in (loc, scale, df))
    lognorm = (gammaln((df + 1) / 2) - gammaln(df / 2) - 0.5 * np.log(df * np.pi)
               - np.log(scale))

    def g(x):
        z = (x - loc) / scale
        dens = np.exp(lognorm - 0.5 * (df + 1) * np.log1p(z * z / df))
        cdf = stdtr(df, z)
        others = np.tile(cdf, (loc.size, 1))
        np.fill_diagonal(others, 1.0)
        return dens * others.prod(axis=1)

    splits = np.unique(np.concatenate([loc + scale * c for c in (-3.0, 0.0, 3.0)]))
    edges = np.concatenate([[-np.inf], splits, [np.inf]])
    return sum(integrate.quad_vec(g, lo, hi, epsabs=1e-11, epsrel=1e-10, limit=2000)[0]
               for lo, hi in itertools.pairwise(edges))


def random_config(rng, k):
    kind = rng.integers(4)
    loc = rng.normal(0.0, 1.0, k)
    if kind == 1:  # near-ties
        loc = 0.8 + rng.normal(0.0, 1e-3, k)
    elif kind == 2:  # exact ties in pairs
        loc = np.repeat(rng.normal(0.0, 0.1, (k + 1) // 2), 2)[:k]
    scale = np.exp(rng.uniform(-6.0, 1.0, k))  # five orders of magnitude
    df = rng.choice([1.0, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0, 1000.0], k)
    return loc, scale, df


# ------------------------------------------------------------------------------------
# posterior
# ------------------------------------------------------------------------------------
def test_posterior_is_fiestas_formula_when_the_floor_does_not_bind():
    rng = np.random.default_rng(1)
    scores = [rng.normal(0.8, 0.02, n) for n in (3, 4, 10, 57)]
    loc, scale, df = posterior(scores)
    for k, s in enumerate(scores):
        n = s.size
        assert loc[k] == pytest.approx(np.mean(s), rel=1e-15)
        # fiesta.util.belief_calc: est_sd * sqrt(1 / (eval_counts - 2))
        assert scale[k] == pytest.approx(np.sqrt(np.var(s, ddof=0)) * np.sqrt(1 / (n - 2)),
                                         rel=1e-14)
        assert df[k] == n - 2


def test_logit_transform_keeps_zero_and_one_finite_with_documented_eps():
    scores = [[1.0, 1.0, 0.99, 1.0], [0.0, 0.02, 0.01]]
    loc, scale, df = posterior(scores, transform="logit")
    assert np.isfinite(loc).all() and np.isfinite(scale).all()
    eps = DEFAULT_LOGIT_EPS
    expected0 = np.mean(stats.logistic.ppf(np.clip(scores[0], eps, 1 - eps)))
    expected1 = np.mean(stats.logistic.ppf(np.clip(scores[1], eps, 1 - eps)))
    assert loc[0] == pytest.approx(expected0, rel=1e-12)
    assert loc[1] == pytest.approx(expected1, rel=1e-12)
    # a score of exactly 1 maps to logit(1 - eps)
    loc_one, _, _ = posterior([[1.0, 1.0, 1.0], [0.5, 0.6, 0.7]], transform="logit",
                              logit_eps=1e-4)
    assert loc_one[0] == pytest.approx(np.log((1 - 1e-4) / 1e-4), rel=1e-12)


def test_logit_transform_rejects_scores_outside_unit_interval():
    with pytest.raises(ValueError, match="logit"):
        posterior([[0.5, 1.2, 0.3], [0.1, 0.2, 0.3]], transform="logit")


def test_two_identical_constant_candidates_get_one_half_each():
    loc, scale, df = posterior([[0.9, 0.9, 0.9], [0.9, 0.9, 0.9]])
    assert (scale > 0).all()
    p = p_best(loc, scale, df)
    np.testing.assert_allclose(p, [0.5, 0.5], atol=1e-12)


def test_constant_candidate_above_noisy_one_is_not_certain():
    noisy = [0.85, 0.80, 0.90]
    loc, scale, df = posterior([[0.9, 0.9, 0.9], noisy])
    p = p_best(loc, scale, df)
    # floor = 0.1 * pooled SD of the noisy candidate (the only varying one)
    floor = 0.1 * np.std(noisy)
    assert scale[0] == pytest.approx(floor / np.sqrt(1.0), rel=1e-12)
    assert 0.5 < p[0] < 0.9
    # the same with a larger sample: still a proper probability, not exactly 1
    rng = np.random.default_rng(3)
    loc, scale, df = posterior([np.full(10, 0.9), rng.normal(0.88, 0.05, 10)])
    p = p_best(loc, scale, df)
    assert 0.5 < p[0] < 1.0


def test_floor_falls_back_to_spread_then_magnitude_when_nothing_varies():
    loc, scale, df = posterior([[0.7] * 3, [0.8] * 3, [0.9] * 4])
    np.testing.assert_allclose(scale, 0.1 * 0.2 / np.sqrt(df), rtol=1e-9)
    p = p_best(loc, scale, df)
    assert np.argmax(p) == 2 and p[2] < 1.0
    loc, scale, df = posterior([[0.5] * 3, [0.5] * 3, [0.5] * 3])
    np.testing.assert_allclose(scale, 0.05, rtol=1e-12)
    np.testing.assert_allclose(p_best(loc, scale, df), [1 / 3] * 3, atol=1e-12)


@pytest.mark.parametrize(
    "bad, match",
    [
        ([[1.0, 2.0], [1.0, 2.0, 3.0]], "at least 3"),
        ([[1.0, np.nan, 2.0], [1.0, 2.0, 3.0]], "NaN"),
        ("abc", "sequence"),
        ([], "at least one"),
    ],
)
def test_posterior_rejects_bad_scores(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        posterior(bad)


def test_posterior_rejects_bad_options():
    good = [[1.0, 2.0, 3.0], [1.0, 2.0, 4.0]]
    with pytest.raises(ValueError, match="transform"):
        posterior(good, transform="probit")
    with pytest.raises(ValueError, match="sd_floor_fraction"):
        posterior(good, sd_floor_fraction=0.0)
    with pytest.raises(ValueError, match="logit_eps"):
        posterior(good, transform="logit", logit_eps=0.7)


# ------------------------------------------------------------------------------------
# p_best: closed forms, quadrature reference, Monte Carlo
# ------------------------------------------------------------------------------------
@pytest.mark.parametrize("s1, s2, gap", [(1.0, 1.0, 0.3), (0.01, 2.0, 0.5), (3.0, 1e-3, -1.0)])
def test_two_cauchy_candidates_match_closed_form(s1, s2, gap):
    # X1 - X2 is Cauchy(gap, s1 + s2): P(X1 > X2) = 1/2 + arctan(gap / (s1 + s2)) / pi
    p = p_best([gap, 0.0], [s1, s2], [1.0, 1.0])
    assert p[0] == pytest.approx(0.5 + np.arctan(gap / (s1 + s2)) / np.pi, abs=1e-9)


def test_two_near_normal_candidates_match_closed_form():
    p = p_best([0.2, 0.0], [0.3, 0.4], [1e7, 1e7])
    assert p[0] == pytest.approx(stats.norm.cdf(0.2 / 0.5), abs=1e-6)


def _check_against_quad(n_configs, seed):
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(n_configs):
        k = int(rng.integers(2, 21))
        loc, scale, df = random_config(rng, k)
        raw = _p_best_raw(loc, scale, df)
        assert abs(raw.sum() - 1.0) < 1e-4, (loc, scale, df, raw.sum())
        ref = quad_p_best(loc, scale, df)
        assert abs(ref.sum() - 1.0) < 1e-8  # the reference itself is accurate
        err = np.abs(p_best(loc, scale, df) - ref).max()
        worst = max(worst, err)
        assert err <= 1e-4, (loc, scale, df, err)
    return worst


def test_p_best_matches_adaptive_quadrature_on_random_configurations():
    _check_against_quad(15, seed=11)


@pytest.mark.slow
def test_p_best_matches_adaptive_quadrature_on_many_random_configurations():
    worst = _check_against_quad(400, seed=12)
    assert worst <= 1e-6  # measured ~1e-8; the requirement is 1e-4


def test_leader_p_best_matches_adaptive_quadrature_on_random_configurations():
    # the leader-only quadrature (dyadic panels) against scipy's adaptive quadrature
    rng = np.random.default_rng(21)
    checked = 0
    while checked < 25:
        loc, scale, df = random_config(rng, int(rng.integers(2, 21)))
        top = np.flatnonzero(loc == loc.max())
        if top.size > 1:
            continue
        ref = quad_p_best(loc, scale, df)[top[0]]
        assert LeaderBelief()(loc, scale, df, int(top[0])) == pytest.approx(ref, abs=1e-6)
        checked += 1


def test_leader_p_best_updated_incrementally_equals_a_fresh_computation():
    # one cache across a run-like sequence: each step changes one candidate (sometimes the
    # leader, whose scale shrinks), the leader changes, a candidate moves far; every value must
    # equal a fresh computation (the cached rows are exactly those of the current posteriors)
    rng = np.random.default_rng(4)
    k = 40
    loc = rng.normal(0.0, 0.3, k)
    scale = np.exp(rng.uniform(-3.0, 0.0, k))
    df = rng.choice([1.0, 2.0, 5.0, 30.0], k)
    cached = LeaderBelief()
    leaders = set()
    for step in range(120):
        c = int(np.argmax(loc)) if step % 3 == 0 else int(rng.integers(k))
        loc[c] += rng.normal(0.0, 0.3 * scale[c])
        scale[c] *= rng.uniform(0.9, 1.0)
        df[c] += 1.0
        if step == 60:
            loc[int(rng.integers(k))] = loc.max() + 0.5   # a new leader
        if step == 90:
            scale[int(np.argmax(loc))] *= 0.01            # the leader narrows a lot
        leader = int(np.argmax(loc))
        leaders.add(leader)
        assert cached(loc, scale, df, leader) == pytest.approx(LeaderBelief()(loc, scale, df, leader),
                                                               rel=1e-9, abs=1e-13)
    assert len(leaders) > 1


def test_leader_p_best_of_many_candidates_matches_the_full_vector():
    rng = np.random.default_rng(9)
    loc = np.concatenate([[0.5], rng.normal(0.0, 0.2, 299)])
    scale = np.exp(rng.uniform(-3.0, -1.0, 300))
    df = rng.choice([1.0, 3.0, 10.0, 100.0], 300)
    assert LeaderBelief()(loc, scale, df, 0) == pytest.approx(p_best(loc, scale, df)[0], abs=1e-6)


def test_p_best_matches_monte_carlo_within_sampling_error():
    rng = np.random.default_rng(5)
    n_draws = 400_000
    for loc, scale, df in [
        (np.array([0.80, 0.81, 0.79, 0.805, 0.6]),
         np.array([0.01, 0.02, 0.005, 0.03, 0.2]), np.array([1.0, 3.0, 10.0, 2.0, 1.0])),
        (np.array([0.0, 0.1, 0.2]), np.array([1.0, 1.0, 1.0]), np.array([5.0, 5.0, 5.0])),
    ]:
        draws = loc + scale * rng.standard_t(df, size=(n_draws, loc.size))
        freq = np.bincount(np.argmax(draws, axis=1), minlength=loc.size) / n_draws
        p = p_best(loc, scale, df)
        # 5 binomial standard errors of the Monte Carlo estimate (+ quadrature error)
        tol = 5 * np.sqrt(p * (1 - p) / n_draws) + 1e-4
        assert np.all(np.abs(freq - p) <= tol), (freq, p, tol)


def test_p_best_is_permutation_equivariant_and_sums_to_one():
    rng = np.random.default_rng(8)
    loc, scale, df = random_config(rng, 9)
    p = p_best(loc, scale, df)
    perm = rng.permutation(9)
    np.testing.assert_allclose(p_best(loc[perm], scale[perm], df[perm]), p[perm], atol=1e-9)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert (p >= 0).all()


def test_p_best_single_candidate_is_certain():
    assert p_best([0.3], [0.1], [2.0]).tolist() == [1.0]


@pytest.mark.parametrize(
    "args, match",
    [
        (([0.0, 1.0], [1.0, 0.0], [1.0, 1.0]), "scale"),
        (([0.0, 1.0], [1.0, 1.0], [1.0, -1.0]), "df"),
        (([0.0, 1.0], [1.0, 1.0], [1.0, 0.5]), "df"),
        (([0.0, 1.0], [1.0], [1.0, 1.0]), "same length"),
        (([0.0, np.inf], [1.0, 1.0], [1.0, 1.0]), "loc"),
        (("ab", [1.0, 1.0], [1.0, 1.0]), "loc"),
    ],
)
def test_p_best_rejects_bad_parameters(args, match):
    with pytest.raises((ValueError, TypeError), match=match):
        p_best(*args)


# ------------------------------------------------------------------------------------
# sampling rules
# ------------------------------------------------------------------------------------
LOC = np.array([0.80, 0.82, 0.78, 0.81])
SCALE = np.array([0.02, 0.02, 0.03, 0.01])
DF = np.array([3.0, 2.0, 5.0, 1.0])


def _frequencies(fn, n, seed):
    rng = np.random.default_rng(seed)
    picks = [fn(rng) for _ in range(n)]
    return np.bincount(picks, minlength=LOC.size) / n


def test_thompson_sample_picks_each_candidate_with_its_p_best():
    n = 6000
    freq = _frequencies(lambda g: thompson_sample(LOC, SCALE, DF, g), n, seed=21)
    p = p_best(LOC, SCALE, DF)
    assert np.all(np.abs(freq - p) <= 4.5 * np.sqrt(p * (1 - p) / n))


@pytest.mark.parametrize("beta", [0.5, 0.2])
def test_top_two_sample_has_russos_distribution(beta):
    # P(pick i) = beta p_i + (1 - beta) sum_{l != i} p_l p_i / (1 - p_l)
    p = p_best(LOC, SCALE, DF)
    expected = beta * p + (1 - beta) * np.array(
        [sum(p[l] * p[i] / (1 - p[l]) for l in range(p.size) if l != i)
         for i in range(p.size)])
    assert expected.sum() == pytest.approx(1.0)
    n = 6000
    freq = _frequencies(lambda g: top_two_sample(LOC, SCALE, DF, beta, g), n, seed=22)
    assert np.all(np.abs(freq - expected) <= 4.5 * np.sqrt(expected * (1 - expected) / n))


def test_ids_leader_probability_is_the_gaussian_information_ratio_of_the_raw_scores():
    # h_i = s_i^2 / N_i with s the ddof=0 SD of candidate i's scores and N its count
    rng = np.random.default_rng(5)
    scores = [rng.normal(0.6, 0.03, n) for n in (3, 7, 20, 4)]
    loc, scale, df = posterior(scores)
    h = np.array([np.var(x) / len(x) for x in scores])
    for i in range(4):
        for j in range(4):
            if i != j:
                assert ids_leader_probability(scale, df, i, j) == pytest.approx(h[i] / (h[i] + h[j]), rel=1e-12)


def test_top_two_ids_has_its_distribution():
    # leader L ~ p, challenger J ~ p restricted to the others, then L with probability r(L, J):
    # P(pick i) = sum_J p_i p_J / (1 - p_i) r(i, J) + sum_L p_L p_i / (1 - p_L) (1 - r(L, i))
    p = p_best(LOC, SCALE, DF)
    k = p.size
    r = np.array([[ids_leader_probability(SCALE, DF, a, b) if a != b else 0.0 for b in range(k)]
                  for a in range(k)])
    expected = np.array([sum(p[i] * p[j] / (1 - p[i]) * r[i, j] + p[j] * p[i] / (1 - p[j]) * (1 - r[j, i])
                             for j in range(k) if j != i) for i in range(k)])
    assert expected.sum() == pytest.approx(1.0)
    n = 6000
    freq = _frequencies(lambda g: top_two_sample(LOC, SCALE, DF, "ids", g), n, seed=23)
    assert np.all(np.abs(freq - expected) <= 4.5 * np.sqrt(expected * (1 - expected) / n))
    # and it differs from beta = 1/2 here, so the test can tell the two rules apart
    half = 0.5 * p + 0.5 * np.array([sum(p[l] * p[i] / (1 - p[l]) for l in range(k) if l != i) for i in range(k)])
    assert np.abs(expected - half).max() > 6 * np.sqrt(half * (1 - half) / n).max()


def test_top_two_falls_back_to_second_highest_p_best_when_no_challenger_appears():
    # the leader (0) is certain; candidate 1 is far likelier than 2 to be second
    loc, scale, df = [0.0, -30.0, -60.0], [1.0, 1.0, 1.0], [1000.0, 1000.0, 1000.0]
    picks = {top_two_sample(loc, scale, df, beta=0.0, rng=s, max_resamples=200)
             for s in range(5)}
    assert picks == {1}
    assert top_two_sample(loc, scale, df, beta=1.0, rng=0) == 0


def test_sampling_is_reproducible_from_the_seed():
    a = [top_two_sample(LOC, SCALE, DF, 0.5, np.random.default_rng(7)) for _ in range(20)]
    b = [top_two_sample(LOC, SCALE, DF, 0.5, np.random.default_rng(7)) for _ in range(20)]
    assert a == b
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    assert ([thompson_sample(LOC, SCALE, DF, g1) for _ in range(30)]
            == [thompson_sample(LOC, SCALE, DF, g2) for _ in range(30)])


def test_sampling_rejects_bad_arguments():
    with pytest.raises(TypeError, match="rng"):
        thompson_sample(LOC, SCALE, DF, None)
    with pytest.raises(ValueError, match="beta"):
        top_two_sample(LOC, SCALE, DF, 1.5, 0)
    with pytest.raises(ValueError, match="beta"):
        top_two_sample(LOC, SCALE, DF, "idss", 0)
    with pytest.raises(ValueError, match="max_resamples"):
        top_two_sample(LOC, SCALE, DF, 0.5, 0, max_resamples=0)
