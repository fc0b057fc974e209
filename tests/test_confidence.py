"""Tolerance (epsilon-best), anytime confidence, the epsilon characteristic time and the batch driver."""
from __future__ import annotations

import math

import numpy as np
import pytest

from certa.engine.evaluators import FunctionEvaluator
from certa.planning.batch import (
    AccuracySampler,
    GaussianSampler,
    ReplaySampler,
    StudentTSampler,
    simulate_top_two_batch,
)
from certa.planning.lower_bound import characteristic_time
from certa.planning.simulate import GaussianScores, run_direct, simulate
from certa.search.bandit import bandit_select, make_strategy
from certa.strategies import BatchThompson, TopTwoThompson, UniformUntilConfident
from certa.strategies._glr import glr_delta_reached, glr_pairwise_from_stats


def test_eps_characteristic_time_two_candidates_closed_form():
    # answer = the best, allocation proportional to the SDs: T = 2 (s1 + s2)^2 / (gap + eps)^2
    t, w = characteristic_time([1.0, 0.0], [1.0, 2.0], tolerance=0.5)
    assert t == pytest.approx(2 * 9 / 1.5 ** 2, rel=1e-6)
    np.testing.assert_allclose(w, [1 / 3, 2 / 3], atol=1e-5)


def test_eps_characteristic_time_takes_the_easiest_right_answer():
    mu, sigma, eps = np.array([0.0, -0.05, -1.0]), np.ones(3), 0.1

    def time_for(i):   # brute force over the simplex for answer i
        best = 0.0
        for a in np.linspace(0.01, 0.98, 98):
            for b in np.linspace(0.01, 0.99 - a, 60):
                w = np.array([a, b, 1 - a - b])
                val = min((mu[i] - mu[j] + eps) ** 2 / (2 * (sigma[i] ** 2 / w[i] + sigma[j] ** 2 / w[j]))
                          for j in range(3) if j != i)
                best = max(best, val)
        return 1 / best

    want = min(time_for(0), time_for(1))
    got, _ = characteristic_time(mu, sigma, tolerance=eps)
    assert got == pytest.approx(want, rel=2e-2) and got <= want * (1 + 1e-9)
    assert characteristic_time(mu, sigma)[0] > 5 * got


def test_tolerance_stops_early_on_near_ties_and_states_the_guarantee():
    ev = FunctionEvaluator(GaussianScores([0.0, -0.01, -2.0], [1.0, 1.0, 1.0]))
    res = run_direct(TopTwoThompson(0.9, "ids", stopping="glr", tolerance=1.0, max_evals=5000), ev, 3, seed=0)
    assert res["stop_reason"] == "confident" and res["best"] in (0, 1)
    assert res["confidence"] >= 0.9
    assert res["guarantee"].startswith("within 1 of the best with confidence 0.9")
    plain = run_direct(TopTwoThompson(0.9, "ids", stopping="glr", max_evals=int(res["evaluations"].sum())),
                       ev, 3, seed=0)
    assert plain["stop_reason"] == "max_evals"
    # the batch strategy's top-two rule takes the same tolerance (EB-TC_eps per free worker)
    for bayes_or_glr in ("bayes", "glr"):
        batch = run_direct(BatchThompson(0.9, 3, beta="ids", stopping=bayes_or_glr, tolerance=1.0, max_evals=5000),
                           ev, 3, seed=0)
        assert batch["stop_reason"] == "confident" and batch["best"] in (0, 1)


def test_anytime_confidence_is_the_rule_inverted():
    ev = FunctionEvaluator(GaussianScores([0.0, -0.3, -0.6], [1.0, 1.0, 1.0]))
    strat = TopTwoThompson(0.99, stopping="glr", max_evals=60)
    res = run_direct(strat, ev, 3, seed=3)
    assert res["stop_reason"] == "max_evals"
    st = strat._stats
    best, z = glr_pairwise_from_stats(st.mean, st.var(), st.n)
    assert res["best"] == best
    assert res["confidence"] == pytest.approx(1 - glr_delta_reached(float(z.min()), 3), abs=1e-9)
    assert res["confidence"] < 0.99          # it did not stop: the confidence is below the target


def test_anytime_confidence_is_calibrated_on_capped_runs():
    # runs stopped by a budget: "confidence >= 1 - delta while wrong" happens at most delta of the time
    wrong_and_confident = 0
    n_runs = 60
    for seed in range(n_runs):
        res = run_direct(TopTwoThompson(0.5, stopping="glr", max_evals=40),
                         FunctionEvaluator(GaussianScores([0.0, -0.2], [1.0, 1.0])), 2, seed=seed)
        wrong_and_confident += res["best"] != 0 and res["confidence"] >= 0.8
    assert wrong_and_confident / n_runs <= 0.2 + 3 * math.sqrt(0.2 * 0.8 / n_runs)


def test_bayes_confidence_with_tolerance_is_the_shifted_posterior():
    ev = FunctionEvaluator(GaussianScores([0.0, -0.05], [1.0, 1.0]))
    a = run_direct(TopTwoThompson(0.999, max_evals=30, stopping="bayes"), ev, 2, seed=1)
    b = run_direct(TopTwoThompson(0.999, max_evals=30, stopping="bayes", tolerance=0.5), ev, 2, seed=1)
    assert b["confidence"] > a["confidence"]   # "within 0.5 of the best" is more probable
    assert "Bayesian" in b["guarantee"]


@pytest.mark.parametrize("make", [
    lambda: TopTwoThompson(0.9, tolerance=-1.0),
    lambda: BatchThompson(0.9, tolerance="0.1"),
    lambda: UniformUntilConfident(0.9, tolerance=float("inf")),
    lambda: TopTwoThompson(0.9, tolerance=0.1, transform="logit"),
    lambda: make_strategy("sequential_halving", confidence=None, budget=20, stopping="glr", n_workers=None,
                          max_evals=None, tolerance=0.1),
])
def test_bad_tolerance(make):
    with pytest.raises(ValueError, match="tolerance"):
        make()


def test_bandit_select_reports_tolerance_guarantee():
    def evaluate(mean, train, test, seed):
        return mean + np.random.default_rng(seed).normal(0, 0.05)

    sel = bandit_select(evaluate, {"a": 0.60, "b": 0.80, "c": 0.795}, confidence=0.95, stopping="glr",
                        tolerance=0.05, random_state=0, progress=False)
    assert sel.best.name in ("b", "c")
    assert sel.result["guarantee"].startswith("within 0.05 of the best with confidence")
    assert sel.result["confidence"] >= 0.95


def test_simulate_reports_eps_lower_bound():
    rep = simulate(TopTwoThompson(0.9, stopping="glr", tolerance=0.5, max_evals=3000), means=[0.0, -0.1, -2.0],
                   sds=[1.0, 1.0, 1.0], n_runs=3, random_state=0)
    t_eps, _ = characteristic_time([0.0, -0.1, -2.0], [1.0, 1.0, 1.0], 0.5)
    assert rep.t_star == pytest.approx(t_eps)
    assert "T*_eps" in str(rep) and rep.to_dict()["tolerance"] == 0.5


def test_batch_driver_matches_the_strategy_in_distribution():
    # same mean evaluations and wrong rate within 4.5 SE of the difference (independent runs)
    means, sds, n = [0.0, -0.8, -1.2], [1.0, 1.0, 1.0], 80
    batch = simulate_top_two_batch(GaussianSampler(means, sds), confidence=0.9, beta="ids", n_runs=400,
                                   random_state=1)
    loop = simulate(TopTwoThompson(0.9, "ids", stopping="glr"), means=means, sds=sds, n_runs=n, random_state=2)
    a, b = batch.evaluations, loop.evaluations
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert abs(a.mean() - b.mean()) < 4.5 * se
    assert batch.wrong.mean() <= 0.1 + 3 * math.sqrt(0.09 / a.size)


def test_samplers_have_the_stated_means():
    rng = np.random.default_rng(0)
    arms = np.repeat(np.arange(3), 20000)
    for s in (GaussianSampler([0.0, 1.0, 2.0], 1.0), StudentTSampler([0.0, 1.0, 2.0], 0.5, 3.0),
              AccuracySampler([0.2, 0.5, 0.9], 50), ReplaySampler({"a": [0.0, 1.0], "b": [2.0], "c": [1.0, 3.0]})):
        x = s(arms, rng)
        got = np.array([x[arms == i].mean() for i in range(3)])
        np.testing.assert_allclose(got, s.true_means, atol=0.05)
    assert ((AccuracySampler([0.5], 7)(np.zeros(100, int), rng) * 7) % 1 == 0).all()


def test_tolerance_challenger_ignores_candidates_already_eps_dominated():
    # Leader 0 (mean 1.0, 1,000 scores). Candidate 1 is a near tie (0.9, 1,000 scores); candidate
    # 2 is 0.5 below with 40 scores; SD 1 everywhere. Transportation costs (m_0 - m_j + eps) /
    # sqrt(1/N_0 + 1/N_j) (Jourdan et al. 2023): without tolerance 2.24 for 1 against 3.10 for 2,
    # so the plain challenger is 1; with eps = 0.5, 13.4 for 1 against 6.21 for 2: candidate 1 is
    # already eps-dominated and the challenger is 2. The GLR pair statistic gives the same order.
    from certa.strategies._glr import pair_statistic
    from certa.strategies._sampling import top_two_sample as top_two_sample_fast
    from certa.strategies._stopping import blocking_challenger
    mean, var, n = np.array([1.0, 0.9, 0.5]), np.ones(3), np.array([1000.0, 1000.0, 40.0])
    for eps, want in ((0.0, 1), (0.5, 2)):
        tc = (mean[0] - mean[1:] + eps) / np.sqrt(1 / n[0] + 1 / n[1:])
        z = pair_statistic(n[0], mean[0], var[0], n[1:], mean[1:], var[1:], eps)
        assert 1 + int(np.argmin(tc)) == 1 + int(np.argmin(z)) == want
        assert blocking_challenger(mean, var, n, 0, eps) == want
    # the sampling rule with the tolerance: leader = highest mean, challenger = candidate 2 only
    loc, scale, df = mean, np.sqrt(var / (n - 2)), n - 2
    gen = np.random.default_rng(0)
    fb = lambda lead: blocking_challenger(mean, var, n, lead, 0.5)
    picks = [top_two_sample_fast(loc, scale, df, 0.5, gen, fallback=fb, tolerance=0.5) for _ in range(400)]
    assert set(picks) == {0, 2} and 160 <= picks.count(2) <= 240    # beta 1/2: Binomial(400, 1/2)
    ids = [top_two_sample_fast(loc, scale, df, "ids", gen, fallback=fb, tolerance=0.5) for _ in range(400)]
    assert set(ids) <= {0, 2}
    with pytest.raises(ValueError, match="tolerance"):   # the exact P(best) draw is not eps-aware
        top_two_sample_fast(loc, scale, df, 0.5, gen, tolerance=0.5)


def test_tolerance_runs_stop_far_earlier_than_plain_runs_on_near_ties():
    # means 0, -0.05, ..., -0.2 and three at -1 (SD 1), tolerance 0.3, delta 0.05. With the plain
    # top-two challenger (which kept separating the near ties) about half of these runs reached
    # the cap of 4,000 (21 of 40 runs, mean 3,239); with EB-TC_eps none does (mean 1,391,
    # 4.7x T*_eps kl). Without tolerance every run reaches the cap.
    means, eps, cap, delta = [0.0, -0.05, -0.1, -0.15, -0.2, -1.0, -1.0, -1.0], 0.3, 4000, 0.05
    sampler = GaussianSampler(means, 1.0)
    tol = simulate_top_two_batch(sampler, confidence=1 - delta, beta="ids", tolerance=eps, n_runs=40,
                                 max_evals=cap, random_state=3)
    plain = simulate_top_two_batch(sampler, confidence=1 - delta, beta="ids", n_runs=10, max_evals=cap,
                                   random_state=3)
    assert not tol.capped.any()
    assert tol.evaluations.mean() < 0.5 * plain.evaluations.mean()
    t_eps, _ = characteristic_time(means, 1.0, eps)
    from certa.planning.lower_bound import bernoulli_kl
    assert tol.evaluations.mean() < 6 * t_eps * bernoulli_kl(delta, 1 - delta)
    # wrong (more than eps below the best) <= delta: the one-sided binomial test at 0.01 does not reject
    from scipy.stats import binom
    assert binom.sf(tol.wrong.sum() - 1, tol.wrong.size, delta) > 0.01


def test_batch_driver_matches_the_strategy_in_distribution_with_tolerance():
    # the batch driver runs the product's eps-aware top-two rule: same mean evaluations within
    # 4.5 SE of the difference (independent runs; about 280 each, against about 1,160 for the
    # plain top-two challenger with the same tolerance)
    means, sds, eps = [0.0, -0.05, -0.1, -1.0], [1.0, 1.0, 1.0, 1.0], 0.5
    batch = simulate_top_two_batch(GaussianSampler(means, sds), confidence=0.9, beta="ids", tolerance=eps,
                                   n_runs=200, random_state=1)
    loop = simulate(TopTwoThompson(0.9, "ids", stopping="glr", tolerance=eps), means=means, sds=sds, n_runs=40,
                    random_state=2)
    a, b = batch.evaluations, loop.evaluations
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert abs(a.mean() - b.mean()) < 4.5 * se
    assert batch.wrong.mean() <= 0.1 + 3 * math.sqrt(0.09 / a.size)
