"""Adaptive strategies (FIESTA): budgets, choices, calibration, resume, fronts, bad input."""
import math

import numpy as np
import pytest
from _reference_belief import posterior
from sklearn.datasets import load_iris
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression

import certa
import certa.strategies
from certa import (
    BanditSearchCV,
    BatchThompson,
    EqualAllocation,
    FunctionEvaluator,
    SequentialHalving,
    TopTwoThompson,
    UniformUntilConfident,
    bandit_select,
    run,
    simulate,
)
from certa.planning.simulate import GaussianScores
from certa.search.bandit import belief_frame, plot_belief
from certa.strategies._posterior import p_best


def gaussian_run(strategy, means, sds, seed=0, **kw):
    cands = [{"candidate": i} for i in range(len(means))]
    return run(strategy, FunctionEvaluator(GaussianScores(means, sds)), cands, random_state=seed, **kw)


@pytest.mark.parametrize("n, budget", [(2, 2), (3, 10), (8, 30), (12, 120), (12, 23), (5, 101)])
def test_sequential_halving_spends_exactly_its_budget(n, budget):
    sel = gaussian_run(SequentialHalving(budget), np.linspace(0, 1, n), np.ones(n))
    assert sel.n_evaluations == budget == int(sel.result["evaluations"].sum())
    # every evaluation has its own fresh seed
    assert sel.evaluations["seed"].nunique() == budget


def test_sequential_halving_rounds_halve():
    sel = gaussian_run(SequentialHalving(120), np.linspace(0, 1, 12), np.full(12, 0.1))
    rounds = sel.result["rounds"]
    assert [len(r["survivors"]) for r in rounds] == [12, 6, 3, 2]
    assert [len(r["kept"]) for r in rounds] == [6, 3, 2, 1]
    assert sel.best_index == 11  # clearly best (gap 0.09 = 0.9 SD per evaluation, many evaluations)
    # FIESTA would spend only 2*12 + 5*6 + 10*3 + 15*2 = 114 of the 120
    assert sel.n_evaluations == 120


def test_sequential_halving_minimum_budget():
    with pytest.raises(ValueError, match="budget=22 is too small .* at least 23"):
        gaussian_run(SequentialHalving(22), np.linspace(0, 1, 12), np.ones(12))


def test_equal_allocation_splits_budget():
    sel = gaussian_run(EqualAllocation(10), [0.0, 1.0, 0.5], [0.1] * 3)
    assert sel.result["evaluations"].tolist() == [4, 3, 3]
    assert sel.best_index == 1


@pytest.mark.parametrize("strategy", [TopTwoThompson(0.95), TopTwoThompson(0.95, stopping="glr"),
                                      TopTwoThompson(0.95, "ids"), BatchThompson(0.95, 4, beta="ids"),
                                      BatchThompson(0.95, 4), BatchThompson(0.95, 3, rule="thompson"),
                                      UniformUntilConfident(0.95)])
def test_clearly_best_candidate_is_chosen(strategy):
    sel = gaussian_run(strategy, [0.5, 0.8, 0.55, 0.6], [0.05] * 4, seed=3)
    assert sel.best_index == 1
    assert sel.result["stop_reason"] == "confident"
    p = sel.result["p_best"]
    assert p.sum() == pytest.approx(1.0, abs=1e-9)
    if strategy.stopping == "bayes":
        assert p[1] >= 0.95


def test_top_two_spends_more_on_contenders():
    sel = gaussian_run(TopTwoThompson(0.99), [0.0, 0.0, 0.0, 0.9, 1.0], [0.3] * 5, seed=1)
    ev = sel.result["evaluations"]
    assert ev[3] + ev[4] > ev[:3].sum()


def test_ids_allocates_in_proportion_to_the_sds_of_two_candidates():
    # two candidates: the optimal allocation has N_i proportional to sigma_i (here 1:3), which
    # IDS reaches by playing each in proportion to s_i^2 / N_i; with beta=1/2 the challenger is
    # always the other candidate, so the split stays about 50/50 whatever the SDs
    half = gaussian_run(TopTwoThompson(0.9999, 0.5, max_evals=400), [0.0, 0.2], [1.0, 3.0], seed=2)
    ids = gaussian_run(TopTwoThompson(0.9999, "ids", max_evals=400), [0.0, 0.2], [1.0, 3.0], seed=2)
    assert ids.n_evaluations == half.n_evaluations == 400
    e_half, e_ids = half.result["evaluations"], ids.result["evaluations"]
    assert 0.7 <= e_half[1] / e_half[0] <= 1.4
    assert 2.4 <= e_ids[1] / e_ids[0] <= 3.6


def test_ids_wrong_choice_rate_on_spread_candidates():
    # Bayes stopping with IDS on 5 spread Gaussian candidates (1.5 SD gaps): the posterior
    # rule stays below delta here (docs/adaptive.md); 300 runs, delta + 3 binomial SE
    delta, n = 0.1, 300
    wrong, rep = _wrong_rate(TopTwoThompson(1 - delta, "ids", stopping="bayes"), [0.0, 1.5, 3.0, 4.5, 6.0], [1.0] * 5, n, seed=4)
    assert wrong <= delta + 3 * math.sqrt(delta * (1 - delta) / n)


def test_batch_thompson_same_result_with_one_or_two_workers():
    s1 = gaussian_run(BatchThompson(0.95, 4), [0.5, 0.6, 0.55], [0.1] * 3, seed=4, n_jobs=1)
    s2 = gaussian_run(BatchThompson(0.95, 4), [0.5, 0.6, 0.55], [0.1] * 3, seed=4, n_jobs=2)
    assert s1.evaluations[["candidate", "seed", "score"]].equals(s2.evaluations[["candidate", "seed", "score"]])


def test_zero_variance_candidates_do_not_fake_certainty():
    # two identical candidates whose scores never vary: FIESTA reports certainty 1.0
    def const(params, seed):
        return 0.7

    sel = run(TopTwoThompson(0.95, max_evals=60), FunctionEvaluator(const), [{"a": 1}, {"a": 2}], random_state=0)
    assert sel.result["stop_reason"] == "max_evals"
    np.testing.assert_allclose(sel.result["p_best"], [0.5, 0.5], atol=1e-6)


def test_logit_transform_copes_with_scores_of_zero_and_one():
    def bounded(params, seed):
        rng = np.random.default_rng(seed)
        return float(rng.random() < params["p"])  # scores exactly 0 or 1

    sel = run(TopTwoThompson(0.9, transform="logit", max_evals=400), FunctionEvaluator(bounded),
              [{"p": 0.2}, {"p": 0.9}], random_state=0)
    assert np.all(np.isfinite(sel.result["p_best"]))
    assert sel.best_index == 1


def _wrong_rate(strategy, means, sds, n_runs, seed=0):
    rep = simulate(strategy, means=means, sds=sds, n_runs=n_runs, random_state=seed)
    return 1 - rep.p_correct, rep


def test_glr_calibration_two_close_candidates_fast():
    # delta-correct rule: wrong-choice rate <= delta + 3 binomial SE (fast version: 60 runs, gap of 1 SD;
    # the slow version below runs 1,000 per family, and tests/test_glr.py checks the rule on its own)
    delta, n = 0.1, 60
    wrong, rep = _wrong_rate(TopTwoThompson(1 - delta, stopping="glr", max_evals=5000), [0.0, 1.0], [1.0, 1.0], n)
    assert wrong <= delta + 3 * math.sqrt(delta * (1 - delta) / n)
    assert rep.evaluations.mean() >= rep.lower_bound  # no method beats the lower bound on average


@pytest.mark.slow
@pytest.mark.parametrize("means", [[0.0, 0.3], [0.0, 0.25, 0.5, 0.75, 1.0], [0.0] * 9 + [0.4]])
@pytest.mark.parametrize("delta", [0.05, 0.01])
def test_glr_calibration_slow(means, delta):
    n = 1000
    wrong, _ = _wrong_rate(TopTwoThompson(1 - delta, stopping="glr", max_evals=20000), means, [1.0] * len(means), n)
    assert wrong <= delta + 3 * math.sqrt(delta * (1 - delta) / n)


def test_fixed_budget_probability_matches_simulation_of_same_seed():
    a = simulate(SequentialHalving(40), means=[0, 0.2, 0.4, 0.6], sds=[0.5] * 4, n_runs=30, random_state=2)
    b = simulate(SequentialHalving(40), means=[0, 0.2, 0.4, 0.6], sds=[0.5] * 4, n_runs=30, random_state=2)
    assert a.p_correct == b.p_correct and (a.evaluations == 40).all()


def test_resume_interrupted_thompson_run_gives_same_result(tmp_path):
    store = tmp_path / "ttts.sqlite"
    ev = FunctionEvaluator(_Interruptible([0.5, 0.6, 0.55], [0.1] * 3))
    cands = [{"candidate": i} for i in range(3)]
    _INTERRUPT["stop_after"] = 15
    with pytest.raises(KeyboardInterrupt):
        run(TopTwoThompson(0.95), ev, cands, random_state=9, store=store)
    _INTERRUPT["stop_after"] = None
    resumed = run(TopTwoThompson(0.95), ev, cands, random_state=9, store=store)
    clean = run(TopTwoThompson(0.95), ev, cands, random_state=9)
    assert resumed.n_reused == 15
    assert resumed.evaluations[["candidate", "seed", "score"]].equals(clean.evaluations[["candidate", "seed", "score"]])
    np.testing.assert_array_equal(resumed.result["p_best"], clean.result["p_best"])


# a switch the test flips between runs: in a module-level dict (hashed by type, as mutable state), not in
# class attributes, which count in the run's fingerprint as the class's code does
_INTERRUPT = {"stop_after": None, "calls": 0}


class _Interruptible(GaussianScores):
    def __call__(self, params, seed):
        _INTERRUPT["calls"] += 1
        if _INTERRUPT["stop_after"] is not None and _INTERRUPT["calls"] > _INTERRUPT["stop_after"]:
            _INTERRUPT["calls"] = 0
            raise KeyboardInterrupt
        return super().__call__(params, seed)


@pytest.mark.parametrize("make, match", [
    (lambda: TopTwoThompson(1.0), "confidence must be a number in"),
    (lambda: TopTwoThompson(0.0), "confidence must be a number in"),
    (lambda: TopTwoThompson(0.9, beta=1.5), "beta"),
    (lambda: TopTwoThompson(0.9, beta="IDS"), "beta"),
    (lambda: BatchThompson(0.9, 4, beta=0.0), "beta"),
    (lambda: TopTwoThompson(0.9, min_evals=2), "min_evals"),
    (lambda: TopTwoThompson(0.9, stopping="pvalue"), "stopping"),
    (lambda: BatchThompson(0.9, 0), "n_workers"),
    (lambda: SequentialHalving(1), "budget"),
])
def test_bad_strategy_arguments(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_fewer_than_two_candidates():
    with pytest.raises(ValueError, match="at least two candidates"):
        gaussian_run(TopTwoThompson(0.9), [0.5], [0.1])
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="at least two candidates"):
        BanditSearchCV(LogisticRegression(), {"C": [1.0]}).fit(X, y)


def test_bandit_search_cv_on_real_data():
    X, y = load_iris(return_X_y=True)
    s = BanditSearchCV(candidates={"majority": DummyClassifier(), "logreg": LogisticRegression(max_iter=500)},
                       confidence=0.95, test_size=0.3, random_state=0, n_jobs=1, paired=False).fit(X, y)
    assert s.best_params_["model"].__class__ is LogisticRegression
    assert s.confidence_ >= 0.95
    assert s.best_estimator_.score(X, y) > 0.9
    ev = s.selection_.evaluations
    assert ev["seed"].nunique() == len(ev)  # unpaired: a fresh split and seed for every evaluation
    assert (ev["n_test"] == 45).all()
    assert set(s.cv_results_) >= {"params", "mean_test_score", "p_best", "n_evaluations", "rank_test_score"}


def test_bandit_search_cv_fixed_budget_grid():
    X, y = load_iris(return_X_y=True)
    s = BanditSearchCV(LogisticRegression(max_iter=500), {"C": [1e-4, 1e-2, 1.0, 10.0]},
                       strategy="sequential_halving", budget=20, random_state=0).fit(X, y)
    assert s.selection_.n_evaluations == 20
    assert s.best_params_["C"] in (1.0, 10.0)


def test_bandit_select_user_function_and_split():
    data = np.arange(100)

    def split(d, seed):
        rng = np.random.default_rng(seed)
        idx = rng.permutation(len(d))
        return d[idx[:80]], d[idx[80:]]

    def evaluate(model, train, test, seed):
        assert len(train) == 80 and len(test) == 20
        return model + np.random.default_rng(seed).normal(0, 0.02)

    sel = bandit_select(evaluate, {"a": 0.5, "b": 0.6}, data, split=split, confidence=0.95, random_state=1,
                        paired=False)
    assert sel.best.name == "b"
    frame = belief_frame(sel)
    assert list(frame.columns) == ["a", "b"] and frame.iloc[-1]["b"] >= 0.95
    ax = plot_belief(sel)
    # one line per candidate, the GLR rule's confidence (the default stopping) and the target
    assert len(ax.lines) == 4
    reached = ax.lines[2].get_ydata()
    assert reached[-1] == pytest.approx(sel.result["confidence"]) and reached[-1] >= 0.95 > reached[-2]


def test_belief_history_is_the_posterior_p_best_after_each_evaluation():
    # rebuilt after the run (the run itself only follows the leader): row t must be p_best of
    # FIESTA's posterior of the scores told so far, computed here from the evaluations table
    def evaluate(mean, train, test, seed):
        return mean + np.random.default_rng(seed).normal(0, 0.05)

    sel = bandit_select(evaluate, {"a": 0.60, "b": 0.66, "c": 0.63}, confidence=0.95, random_state=3,
                        stopping="bayes")
    hist = belief_frame(sel).to_numpy()
    scores = [[], [], []]
    expected = []
    for c, x in zip(sel.evaluations["candidate"], sel.evaluations["score"]):
        scores[c].append(x)
        if min(len(s) for s in scores) >= 3:
            expected.append(p_best(*posterior(scores)))
    np.testing.assert_allclose(hist, np.array(expected), atol=1e-12)
    assert hist[-1].max() >= 0.95 > hist[-2].max()
    assert sel.result["confidence"] == pytest.approx(hist[-1].max(), abs=1e-12)


def test_split_function_that_ignores_the_seed_is_refused():
    with pytest.raises(ValueError, match="same split for different seeds"):
        bandit_select(lambda m, tr, te, s: 0.5, {"a": 1, "b": 2}, np.arange(10),
                      split=lambda d, seed: (d[:8], d[8:]))


def test_front_argument_errors():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="fixed-budget method: give budget"):
        BanditSearchCV(LogisticRegression(), {"C": [1.0, 2.0]}, strategy="sequential_halving").fit(X, y)
    with pytest.raises(ValueError, match="strategy must be one of"):
        BanditSearchCV(LogisticRegression(), {"C": [1.0, 2.0]}, strategy="ucb").fit(X, y)
    # budget is only a fixed-budget strategy's: elsewhere it was silently ignored (the run went on to
    # its confidence); now it is refused, naming the argument and what to use instead
    for kw in ({}, {"strategy": "paired"}, {"paired": False}, {"strategy": "top_two"}, {"strategy": "batch"}):
        with pytest.raises(ValueError, match=r"budget=30 applies to strategy='sequential_halving' or 'equal'.*max_evals"):
            BanditSearchCV(LogisticRegression(), {"C": [1.0, 2.0]}, budget=30, **kw).fit(X, y)
    with pytest.raises(ValueError, match="budget=30 applies to"):
        bandit_select(lambda m, tr, te, s: 0.5, {"a": 1, "b": 2}, budget=30)
    with pytest.raises(ValueError, match="budget=30 applies to.*a Strategy object"):
        bandit_select(lambda m, tr, te, s: 0.5, {"a": 1, "b": 2}, budget=30,
                      strategy=certa.strategies.PairedElimination(0.95))
    s = BanditSearchCV(LogisticRegression(), {"C": [1.0, 2.0]}, strategy="equal", budget=8, refit=False,
                       random_state=0).fit(X, y)
    assert len(s.selection_.evaluations) == 8
    with pytest.raises(ValueError, match="test_size"):
        BanditSearchCV(LogisticRegression(), {"C": [1.0, 2.0]}, test_size=1.5).fit(X, y)
    with pytest.raises(TypeError, match="evaluate must be callable"):
        bandit_select("model", {"a": 1, "b": 2})


def test_uniform_baseline_checked_per_round_stops_only_at_round_ends():
    rep_round = simulate(UniformUntilConfident(0.9, check="round"), means=[0.0, 0.3, 0.6], sds=[1, 1, 1],
                         n_runs=20, random_state=5)
    assert (rep_round.evaluations % 3 == 0).all()
    rep_eval = simulate(UniformUntilConfident(0.9), means=[0.0, 0.3, 0.6], sds=[1, 1, 1], n_runs=20, random_state=5)
    assert (rep_eval.evaluations % 3 != 0).any()  # checked after every evaluation: can stop mid-round
    with pytest.raises(ValueError, match="check"):
        UniformUntilConfident(0.9, check="sometimes")
