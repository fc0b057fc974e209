"""The incremental belief / stopping code of certa/strategies (_posterior.py, _sampling.py,
_stopping.py) against the reference functions of tests/_reference_belief.py and _glr.py, and the
direct simulation driver against the runner."""
from __future__ import annotations

import copy

import numpy as np
import pytest
from _reference_belief import posterior, thompson_sample, top_two_sample

from certa.engine.draws import derive_seed
from certa.engine.evaluators import FunctionEvaluator
from certa.engine.runner import run
from certa.planning.simulate import GaussianScores, run_direct, simulate
from certa.strategies._glr import glr_should_stop_from_stats
from certa.strategies._posterior import (
    SKIP_MARGIN,
    RunningStats,
    p_best,
    p_best_upper_bound,
    posterior_from_stats,
)
from certa.strategies._sampling import thompson_sample as thompson_sample_fast
from certa.strategies._sampling import top_two_sample as top_two_sample_fast
from certa.strategies._stopping import glr_should_stop_screened as glr_should_stop_fast
from certa.strategies.halving import SequentialHalving
from certa.strategies.thompson import (
    BatchThompson,
    TopTwoThompson,
    UniformUntilConfident,
)


def _stats_of(lists, transform=None):
    st = RunningStats(len(lists), transform)
    # interleave the candidates, as a run does
    for i in range(max(len(s) for s in lists)):
        for c, s in enumerate(lists):
            if i < len(s):
                st.add(c, s[i])
    return st


@pytest.mark.parametrize("case", range(30))
def test_posterior_from_running_stats_equals_reference(case):
    rng = np.random.default_rng(case)
    k = int(rng.integers(2, 9))
    lists = [rng.normal(rng.normal(0.7, 0.05), rng.uniform(0.001, 0.05), size=int(rng.integers(3, 60)))
             for _ in range(k)]
    if case % 3 == 0:
        lists[0] = np.full(5, 0.7)          # a constant candidate: the SD floor binds
    for got, want in zip(posterior_from_stats(_stats_of(lists)), posterior(lists)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_posterior_from_stats_logit_and_all_constant():
    lists = [[0.0, 1.0, 0.5, 0.9], [0.2, 0.3, 0.25], [1.0, 1.0, 1.0]]
    for got, want in zip(posterior_from_stats(_stats_of(lists, "logit")), posterior(lists, transform="logit")):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    const = [[0.7] * 3, [0.7] * 4, [0.6] * 5]        # no candidate varies: spread fallback
    for got, want in zip(posterior_from_stats(_stats_of(const)), posterior(const)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    zeros = [[0.0] * 3, [0.0] * 3]                     # all equal: magnitude fallback (1)
    for got, want in zip(posterior_from_stats(_stats_of(zeros)), posterior(zeros)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_running_stats_rejects_bad_input():
    with pytest.raises(ValueError, match="n_candidates"):
        RunningStats(0)
    with pytest.raises(ValueError, match="transform"):
        RunningStats(2, "log")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        RunningStats(2, "logit").add(0, 1.5)
    with pytest.raises(ValueError, match="at least 3"):
        posterior_from_stats(_stats_of([[1.0, 2.0], [1.0, 2.0, 3.0]]))


def test_p_best_upper_bound_is_an_upper_bound_and_skips_safely():
    rng = np.random.default_rng(7)
    tight = 0
    for _ in range(300):
        k = int(rng.integers(2, 10))
        loc = rng.normal(0, 1, k)
        scale = np.exp(rng.uniform(-2, 0.5, k))
        df = rng.integers(1, 200, k).astype(float)
        exact = float(p_best(loc, scale, df).max())
        bound = p_best_upper_bound(loc, scale, df)
        assert exact <= bound + 1e-9
        tight += bound - exact < 0.05
        # the strategies skip the quadrature only when bound < confidence - margin;
        # then the quadrature could not have reached the confidence
        for conf in (0.8, 0.9, 0.95, 0.99):
            if bound < conf - SKIP_MARGIN:
                assert exact < conf
    assert tight > 100       # and it is useful: within 0.05 of the exact value in over 1/3 of cases
    # ties at the top: every P(best) <= 1/2
    assert p_best_upper_bound(np.array([1.0, 1.0, 0.0]), np.ones(3), np.full(3, 5.0)) == 0.5


@pytest.mark.parametrize("seed", range(40))
def test_top_two_and_thompson_fast_make_the_reference_choice(seed):
    rng = np.random.default_rng(1000 + seed)
    k = int(rng.integers(2, 8))
    loc = rng.normal(0, 0.3, k)               # P(leader) well below 0.9: the short
    scale = np.full(k, 1.0)                   # rejection phase always finds a challenger
    df = rng.integers(1, 50, k).astype(float)
    assert p_best(loc, scale, df).max() < 0.9
    for beta in (0.0, 0.5, "ids"):
        assert (top_two_sample_fast(loc, scale, df, beta, np.random.default_rng(seed))
                == top_two_sample(loc, scale, df, beta, np.random.default_rng(seed)))
    assert (thompson_sample_fast(loc, scale, df, np.random.default_rng(seed))
            == thompson_sample(loc, scale, df, np.random.default_rng(seed)))


def test_top_two_fallback_draws_the_exact_challenger_distribution():
    # with no rejection phase left the challenger is drawn from P(best) restricted to the
    # others: P(out = i) = sum_{L != i} p_L p_i / (1 - p_L) (leader L, then challenger i)
    loc, scale, df = np.array([3.0, 0.0, 0.4]), np.ones(3), np.full(3, 30.0)
    p = p_best(loc, scale, df)
    want = np.array([sum(p[L] * p[i] / (1 - p[L]) for L in range(3) if L != i) for i in range(3)])
    gen = np.random.default_rng(3)
    n = 1500
    draws = np.array([top_two_sample_fast(loc, scale, df, 0.0, gen, max_resamples=1) for _ in range(n)])
    freq = np.bincount(draws, minlength=3) / n
    se = np.sqrt(want * (1 - want) / n)
    assert np.all(np.abs(freq - want) < 4.5 * se + 1e-3)


def test_glr_fast_equals_reference():
    rng = np.random.default_rng(11)
    stops = 0
    for _ in range(400):
        k = int(rng.integers(2, 8))
        counts = rng.integers(2, 400, k).astype(float)
        mean = rng.normal(0, 1.0, k)
        var = rng.uniform(0.0, 1.0, k) * (rng.random(k) > 0.05)   # some zero variances
        for delta in (0.05, 0.01):
            got = glr_should_stop_fast(mean, var, counts, delta)
            assert got == glr_should_stop_from_stats(mean, var, counts, delta)
            stops += got[0]
    assert 50 < stops < 750        # both outcomes are exercised


def _runner_pairs(strategy, means, sds, n_runs, seed):
    ev = FunctionEvaluator(GaussianScores(means, sds))
    out = []
    for r in range(n_runs):
        sel = run(copy.deepcopy(strategy), ev, [{"candidate": i} for i in range(len(means))],
                  random_state=derive_seed(seed, r))
        out.append((int(np.sum(sel.result["evaluations"])), sel.best_index))
    return out


@pytest.mark.parametrize("strategy", [TopTwoThompson(0.9), BatchThompson(0.9, 3, rule="thompson"),
                                      UniformUntilConfident(0.9, stopping="glr", n_workers=2),
                                      SequentialHalving(24)], ids=lambda s: type(s).__name__)
def test_direct_driver_equals_runner(strategy):
    means, sds = [0.0, 1.5, 0.5], [1.0, 1.0, 1.0]
    rep = simulate(strategy, means=means, sds=sds, n_runs=5, random_state=5)
    rep_runner = simulate(strategy, means=means, sds=sds, n_runs=5, random_state=5, driver="runner")
    np.testing.assert_array_equal(rep.evaluations, rep_runner.evaluations)
    np.testing.assert_array_equal(rep.chosen, rep_runner.chosen)


def test_direct_driver_result_equals_runner_result_with_history():
    # with the belief history on the whole result is the same
    strat = TopTwoThompson(0.9)
    strat._track_belief = True
    ev = FunctionEvaluator(GaussianScores([0.0, 0.5], [1.0, 1.0]))
    res = run_direct(copy.deepcopy(strat), ev, 2, seed=9)
    sel = run(copy.deepcopy(strat), ev, [{"candidate": 0}, {"candidate": 1}], random_state=9)
    for key in ("evaluations", "p_best", "belief_history", "confidence_history", "estimates"):
        np.testing.assert_array_equal(res[key], sel.result[key])
    assert res["best"] == sel.result["best"]
    assert len(res["belief_history"]) > 0
    # the default rule is the GLR one: its confidence after every evaluation, ending at the stop
    assert res["stopping"] == "glr" and len(res["confidence_history"]) == len(res["belief_history"])
    assert res["confidence_history"][-1] == res["confidence"] >= 0.9 > res["confidence_history"][-2]


def test_batch_thompson_stopping_default_follows_the_rule():
    # plain Thompson sampling starves the losers, so its default stays the Bayesian rule
    assert BatchThompson(0.9, 3, rule="thompson").stopping == "bayes"
    assert BatchThompson(0.9, 3).stopping == "glr" and TopTwoThompson(0.9).stopping == "glr"
    with pytest.warns(UserWarning, match="rule='top_two'"):
        s = BatchThompson(0.9, 3, rule="thompson", stopping="glr", max_evals=300)
    res = run_direct(s, FunctionEvaluator(GaussianScores([0.0, 1.5, 0.5], [1.0] * 3)), 3, seed=5)
    assert res["stop_reason"] == "max_evals" and res["evaluations"].sum() == 300
    assert res["evaluations"].min() < 30   # the losers are starved


@pytest.mark.parametrize("means, strategy", [
    ([0.0, 0.8, 0.4, 0.6], TopTwoThompson(0.9, 0.5, stopping="bayes")),
    ([0.0, 0.8, 0.4, 0.6], TopTwoThompson(0.95, "ids", stopping="bayes")),
    ([1.2] + list(np.linspace(0.0, -1.5, 29)), TopTwoThompson(0.9, 0.5, stopping="bayes")),
    ([0.0, 0.3, 1.2, 0.6, 0.2], BatchThompson(0.9, 3, beta=0.5, stopping="bayes")),
    ([0.0, 0.3, 1.2, 0.6, 0.2], UniformUntilConfident(0.9, stopping="bayes")),
], ids=["ttts", "ids", "30_candidates", "batch", "uniform"])
def test_leader_only_belief_makes_the_decisions_of_the_full_vector(means, strategy):
    # the Bayesian rule (FIESTA's), untracked: the stopping rule looks only at the leader's P(best), incrementally, and skips it
    # when a bound shows it cannot stop; tracked: the full P(best) vector after every evaluation
    ev = FunctionEvaluator(GaussianScores(means, [1.0] * len(means)))
    for seed in range(3):
        a, b = copy.deepcopy(strategy), copy.deepcopy(strategy)
        a._track_belief = True
        ra, rb = run_direct(a, ev, len(means), seed), run_direct(b, ev, len(means), seed)
        np.testing.assert_array_equal(ra["evaluations"], rb["evaluations"])
        assert ra["best"] == rb["best"] and ra["stop_reason"] == rb["stop_reason"] == "confident"
        np.testing.assert_allclose(ra["p_best"], rb["p_best"], atol=1e-12)
        assert rb["confidence"] >= strategy.confidence
        assert len(ra["belief_history"]) > 0 and len(rb["belief_history"]) == 0


def test_simulate_parallel_equals_serial_and_checks_arguments():
    strat = TopTwoThompson(0.8)
    a = simulate(strat, means=[0.0, 1.0], sds=[1.0, 1.0], n_runs=8, random_state=3)
    b = simulate(strat, means=[0.0, 1.0], sds=[1.0, 1.0], n_runs=8, random_state=3, n_jobs=2)
    np.testing.assert_array_equal(a.evaluations, b.evaluations)
    np.testing.assert_array_equal(a.chosen, b.chosen)
    with pytest.raises(ValueError, match="n_jobs"):
        simulate(strat, means=[0.0, 1.0], sds=[1.0, 1.0], n_jobs=0)
    with pytest.raises(ValueError, match="driver"):
        simulate(strat, means=[0.0, 1.0], sds=[1.0, 1.0], driver="fast")
