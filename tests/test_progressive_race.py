"""The race survival rule of progressive sampling, the baseline it keeps, and the final round's comparison table."""
import math

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import load_digits, make_regression
from sklearn.linear_model import Ridge
from sklearn.metrics import accuracy_score, mean_absolute_error
from sklearn.tree import DecisionTreeClassifier

from certa import FunctionEvaluator, SQLiteStore, comparison_table, run
from certa.engine import EstimatorEvaluator
from certa.engine.draws import Draw, derive_seed
from certa.search.progressive import ProgressiveSearchCV
from certa.stats import mcnemar_table
from certa.strategies._race import compare_with_baseline, paired_pvalues, race_survivors
from certa.strategies.progressive import ProgressiveSampling, SubsetPlan

# ---------------------------------------------------------------- the paired test

def test_paired_pvalues_match_exact_mcnemar_and_scipy_t():
    rng = np.random.default_rng(0)
    X = (rng.random((6, 300)) < np.linspace(0.5, 0.8, 6)[:, None]).astype(float)
    p = paired_pvalues(X, 5)
    for j in range(5):
        b = int(((X[5] == 1) & (X[j] == 0)).sum())
        c = int(((X[5] == 0) & (X[j] == 1)).sum())
        ref = mcnemar_table([[0, b], [c, 0]], alternative="greater").pvalue
        assert p[j] == pytest.approx(ref, rel=1e-12)
        assert p[j] == pytest.approx(stats.binomtest(b, b + c, 0.5, alternative="greater").pvalue, rel=1e-9)
    assert p[5] == 1.0
    Y = rng.normal(size=(4, 50)) + np.array([0.5, 0.0, 0.2, 0.49])[:, None]
    q = paired_pvalues(Y, 0)
    for j in (1, 2, 3):
        assert q[j] == pytest.approx(stats.ttest_rel(Y[0], Y[j], alternative="greater").pvalue, rel=1e-9)
    Y[2] = Y[0] - 0.1  # every example exactly 0.1 worse: zero spread, certain
    assert paired_pvalues(Y, 0)[2] == 0.0
    X[3] = np.nan  # a failed setting has no p-value
    assert np.isnan(paired_pvalues(X, 5)[3])


# ---------------------------------------------------------------- the race rule

def _leader_and(b_c_pairs, n=200):
    """A leader right on the first 150 examples; setting j differs on b_j (leader right) and c_j examples."""
    leader = np.r_[np.ones(150), np.zeros(n - 150)]
    rows = [leader]
    for b, c in b_c_pairs:
        x = leader.copy()
        x[:b] = 0            # wrong where the leader is right
        x[150:150 + c] = 1   # right where the leader is wrong
        rows.append(x)
    return np.array(rows)


def test_race_keeps_what_is_within_noise_and_drops_what_is_clearly_worse():
    # three comparisons (Bonferroni x3): b discordant pairs against the leader, none the other way,
    # give p = 2^-b; dropped iff 3 * 2^-b < 0.05, i.e. b >= 6 (3/64 = 0.047); b = 5 gives 3/32 = 0.094
    X = _leader_and([(5, 0), (6, 0), (40, 10)])
    res = race_survivors(X, confidence=0.95)
    assert res["leader"] == 0
    assert res["survived"].tolist() == [True, True, False, False]
    assert res["pvalues"][1:3] == pytest.approx([2.0 ** -5, 2.0 ** -6])
    assert res["pvalues_adjusted"][1:3] == pytest.approx([3 * 2.0 ** -5, 3 * 2.0 ** -6])
    # a setting level with the leader (as many discordant pairs each way) always stays
    assert race_survivors(_leader_and([(30, 30), (40, 10)]))["survived"].tolist() == [True, True, False]
    # a stricter confidence keeps more: 3 * 2^-6 = 0.047 is not below 0.01
    assert race_survivors(X, confidence=0.99)["survived"].tolist() == [True, True, True, False]
    # the protected setting (the baseline) stays whatever its evidence
    assert race_survivors(X, protect=np.array([0, 0, 0, 1]))["survived"].tolist() == [True, True, False, True]


def test_race_keeps_the_best_with_the_stated_confidence_by_simulation():
    # 25 settings of equal accuracy (every one is "the best") on 100 shared examples whose difficulty
    # correlates the settings' errors; the race must drop a given one in at most 5 % of rounds
    # (Bonferroni over the comparisons with the data-chosen leader; exact McNemar is conservative).
    rng = np.random.default_rng(1)
    n_sim, m, n = 2000, 25, 100
    dropped = 0
    for _ in range(n_sim):
        difficulty = rng.random(n)
        X = (rng.random((m, n)) < 0.3 + 0.6 * difficulty).astype(float)
        dropped += not race_survivors(X, confidence=0.95)["survived"][0]
    rate = dropped / n_sim
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / n_sim)
    # and the race is not blind: one setting 15 points worse than 24 equal ones is dropped most of the time
    hits = 0
    for _ in range(300):
        u = rng.random(400)
        X = (rng.random((m, 400)) < 0.85).astype(float)
        X[-1] = (u < 0.70).astype(float)
        hits += not race_survivors(X)["survived"][-1]
    assert hits / 300 > 0.9


def test_floor_and_cap_bound_the_survivors():
    rng = np.random.default_rng(2)
    u = rng.random(400)
    # nothing within noise of a far-ahead leader: the race alone keeps only it; the floor adds bins back
    accs = np.r_[0.95, np.linspace(0.30, 0.50, 19)]
    X = (u[None, :] < accs[:, None]).astype(float)
    assert race_survivors(X)["survived"].sum() == 1
    res = race_survivors(X, floor=0.2)
    assert res["survived"].sum() == 4 and res["added_by_floor"].sum() == 3  # ceil(0.2 * 20) = 4
    assert res["survived"][[0, 19, 18, 17]].all()  # the best scores come back first
    # everything level: the race keeps all 20; the cap keeps ceil(0.5 * 20) = 10 by score, or 3 as a count
    Y = (rng.random((20, 30)) < 0.5).astype(float)
    assert race_survivors(Y)["survived"].all()
    capped = race_survivors(Y, cap=0.5, floor=0.2)
    assert capped["survived"].sum() == 10 and capped["cut_by_cap"].sum() == 10
    scores = Y.mean(axis=1)
    assert scores[capped["survived"]].min() >= scores[~capped["survived"]].max()
    protect = np.zeros(20, dtype=bool)
    protect[np.argmin(scores)] = True  # the worst is the baseline: kept on top of the cap
    res = race_survivors(Y, cap=3, protect=protect)
    assert res["survived"].sum() == 4 and res["survived"][protect].all()


# ---------------------------------------------------------------- runs with a baseline

def _nested(params, seed):
    """Per-example 0/1 scores on 400 shared examples of the round (the draw seed is the round's):
    setting x is right where u < acc[x], so better settings are right wherever worse ones are."""
    u = np.random.default_rng(seed).random(400)
    per = (u < params["acc"]).astype(float)
    return {"score": per.mean(), "payload": {"per_example": per}}


def test_default_survives_to_the_end_and_is_the_choice_unless_beaten():
    accs = [0.50, 0.60, 0.70, 0.80, 0.86, 0.88, 0.90, 0.55, 0.65, 0.75]
    grid = {"acc": accs}
    sizes = [100, 200, 400, 800, 1600]
    # the default (0.50) is the worst: the race alone drops it at once, kept as the baseline it reaches the end
    alone = run(ProgressiveSampling(1600, sizes, "race"), FunctionEvaluator(_nested), grid, random_state=0)
    assert not alone.result["rounds"][0]["survived"][0]
    # confirm_folds=None: the final round's examples decide (the rule of the earlier runs)
    sel = run(ProgressiveSampling(1600, sizes, "race", baseline=0, confirm_folds=None), FunctionEvaluator(_nested), grid,
              random_state=0)
    rounds = sel.result["rounds"]
    assert len(rounds) == len(sizes) and all(0 in r["candidates"] for r in rounds)
    v = sel.result["baseline"]
    assert sel.best_index == 6 and v["choice"] == 6 and v["beat_baseline"] and v["baseline"] == 0
    u = np.random.default_rng(derive_seed(0, len(sizes) - 1)).random(400)  # the last round's examples
    exact = np.mean((u < 0.90).astype(float) - (u < 0.50))
    assert v["difference"] == pytest.approx(exact) and v["ci_low"] < exact < v["ci_high"]
    assert sel.result["ranking"][0] == 6
    # a default within noise of the best (0.895 vs 0.90: ~2 of 400 examples apart) stays the choice
    grid2 = {"acc": [0.895] + accs[1:]}
    sel2 = run(ProgressiveSampling(1600, sizes, "race", baseline=0, confirm_folds=None), FunctionEvaluator(_nested),
               grid2, random_state=0)
    v2 = sel2.result["baseline"]
    assert sel2.best_index == 0 and not v2["beat_baseline"] and v2["challenger"] == 6
    assert v2["pvalue_adjusted"] >= 0.05 and v2["ci_low"] <= v2["difference"] <= v2["ci_high"]
    assert sel2.result["ranking"][0] == 0 and sel2.result["rank"][0] == 1


def test_verdict_interval_covers_the_true_difference_by_simulation():
    # paired 0/1 scores: P(challenger right, baseline wrong) = 0.08, the reverse 0.05: difference 0.03
    rng = np.random.default_rng(3)
    n_sim, n, cover = 2000, 500, 0
    for _ in range(n_sim):
        w = rng.random(n)
        base = (w >= 0.08) & (w < 0.80)   # right on [0.08, 0.80)
        chal = w < 0.75                   # right on [0, 0.75): +0.08 on [0, 0.08), -0.05 on [0.75, 0.80)
        X = np.array([base, chal], dtype=float)
        v = compare_with_baseline(X, 0, confidence=0.95)
        cover += v["ci_low"] <= 0.03 <= v["ci_high"]
    assert abs(cover / n_sim - 0.95) <= 3 * math.sqrt(0.05 * 0.95 / n_sim)


def test_cap_and_floor_hold_in_a_run():
    grid = {"acc": list(np.linspace(0.6, 0.62, 40))}  # all within noise of each other
    sel = run(ProgressiveSampling(1600, [100, 200, 400, 800, 1600], "race", baseline=39, cap=0.5),
              FunctionEvaluator(_nested), grid, random_state=1)
    for r in sel.result["rounds"][:-1]:
        n = r["n_evaluated"]
        assert math.ceil(0.2 * n) <= r["n_survived"] <= math.ceil(0.5 * n) + 1
        assert r["survived"][r["candidates"].index(39)]


def test_floor_holds_in_a_run_when_the_evidence_drops_almost_everything():
    # one setting far ahead (0.95) of 19 (0.30-0.50) on 400 shared examples: the race alone keeps the leader
    # only; the floor brings back the next score bins up to ceil(0.2 * 20) = 4, and the baseline (the
    # worst, 0.30) comes on top of them; in round 1 ceil(0.2 * 5) = 1: the leader and the baseline go on
    accs = [0.95] + list(np.linspace(0.30, 0.50, 19))
    sel = run(ProgressiveSampling(1600, [100, 200, 400, 800, 1600], "race", baseline=1),
              FunctionEvaluator(_nested), {"acc": accs}, random_state=1)
    first, second = sel.result["rounds"][:2]
    kept = {c for c, s in zip(first["candidates"], first["survived"]) if s}
    added = {c for c, a in zip(first["candidates"], first["added_by_floor"]) if a}
    assert first["leader"] == 0 and kept == {0, 1, 17, 18, 19} and added == {17, 18, 19}
    assert second["candidates"] == [0, 1, 17, 18, 19] and second["n_survived"] == 2
    assert not any(second["added_by_floor"])
    assert sel.best_index == 0 and sel.result["baseline"]["beat_baseline"]


def test_race_resumes_from_a_store_with_its_payloads(tmp_path):
    grid = {"acc": [0.5, 0.6, 0.7, 0.8, 0.9]}
    path = tmp_path / "race.sqlite"
    first = run(ProgressiveSampling(800, [100, 400, 800], "race", baseline=0), FunctionEvaluator(_nested), grid,
                random_state=4, store=SQLiteStore(path))
    again = run(ProgressiveSampling(800, [100, 400, 800], "race", baseline=0), FunctionEvaluator(_nested), grid,
                random_state=4, store=SQLiteStore(path))
    assert again.n_reused == len(first.evaluations) and again.best_index == first.best_index
    assert again.result["baseline"]["difference"] == first.result["baseline"]["difference"]


def test_race_spec_rebuilds_and_published_spec_is_unchanged():
    from certa.reporting.loading import rebuild_strategy

    race = ProgressiveSampling(800, [100, 400, 800], "race", baseline=2, cap=3, confidence=0.9)
    back = rebuild_strategy(race.spec())
    assert back is not None and (back.baseline, back.cap, back.confidence, back.floor) == (2, 3, 0.9, 0.2)
    published = ProgressiveSampling(800, "psearch").spec()
    assert not {"confidence", "cap", "baseline"} & set(published) and rebuild_strategy(published) is not None


def test_race_needs_per_example_scores_and_bad_input():
    with pytest.raises(ValueError, match="per-example"):
        run(ProgressiveSampling(800, [100, 800], "race"), FunctionEvaluator(lambda p, seed: 0.5), {"a": [1, 2]})
    with pytest.raises(ValueError, match="cap and baseline"):
        ProgressiveSampling(800, "psearch", baseline=0)
    with pytest.raises(ValueError, match="cap and baseline"):
        ProgressiveSampling(800, "psearch", "mean", cap=0.5)
    with pytest.raises(ValueError, match="cap"):
        ProgressiveSampling(800, "psearch", "race", cap=0.1)  # below the floor
    with pytest.raises(ValueError, match="cap"):
        ProgressiveSampling(800, "psearch", "race", cap=0)
    with pytest.raises(ValueError, match="confidence"):
        ProgressiveSampling(800, "psearch", "race", confidence=1.0)
    with pytest.raises(ValueError, match="baseline"):
        ProgressiveSampling(800, "psearch", "race", baseline=-1)
    with pytest.raises(ValueError, match="baseline"):
        run(ProgressiveSampling(800, "psearch", "race", baseline=5), FunctionEvaluator(_nested), {"acc": [0.1, 0.2]})


# ---------------------------------------------------------------- the front and the evaluator

def test_evaluator_per_example_scores_match_sklearn():
    X, y = load_digits(return_X_y=True)
    plan = SubsetPlan(0)
    draw = Draw(0, "subset", (0,), size=600)
    out = EstimatorEvaluator(DecisionTreeClassifier(random_state=0), X, y, plan, per_example=True).evaluate(
        {"max_depth": 6}, draw)
    tr, te = plan.split(draw, y, len(y))
    est = DecisionTreeClassifier(random_state=0, max_depth=6).fit(X[tr], y[tr])
    assert out["score"] == accuracy_score(y[te], est.predict(X[te]))
    assert np.array_equal(out["payload"]["per_example"], est.predict(X[te]) == y[te])
    Xr, yr = make_regression(300, 5, noise=5, random_state=0)
    ev = EstimatorEvaluator(Ridge(), Xr, yr, SubsetPlan(0, stratified=False), "neg_mean_absolute_error",
                            per_example=True)
    out = ev.evaluate({"alpha": 1.0}, Draw(0, "subset", (0,), size=200))
    tr, te = SubsetPlan(0, stratified=False).split(Draw(0, "subset", (0,), size=200), None, 300)
    pred = Ridge(alpha=1.0).fit(Xr[tr], yr[tr]).predict(Xr[te])
    assert out["score"] == pytest.approx(-mean_absolute_error(yr[te], pred))
    with pytest.raises(ValueError, match="per_example"):
        EstimatorEvaluator(DecisionTreeClassifier(), X, y, plan, scoring="f1_macro", per_example=True)
    with pytest.raises(ValueError, match="per_example"):
        EstimatorEvaluator(Ridge(), Xr, yr, plan, per_example=True)  # R^2 is not a mean over examples


def test_front_race_reports_baseline_and_final_round_table():
    X, y = load_digits(return_X_y=True)
    grid = {"min_samples_leaf": [1, 2, 5, 25, 100], "criterion": ["gini", "entropy"]}
    s = ProgressiveSearchCV(DecisionTreeClassifier(random_state=0, min_samples_leaf=100), grid,
                            schedule=[0.1, 0.25, 0.5, 1.0], survival="race", random_state=0, refit=False).fit(X, y)
    v = s.vs_baseline_
    # "auto": the estimator's own setting (min_samples_leaf=100, gini) is the baseline; it is far worse
    assert v["baseline"] == {"min_samples_leaf": 100, "criterion": "gini"} and v["beat_baseline"]
    assert v["choice"] == s.best_params_ and v["difference"] > 0 and v["ci_low"] > 0
    last = s.rounds_[s.rounds_["round"] == s.rounds_["round"].max()]
    base = s.cv_results_["params"].index({"min_samples_leaf": 100, "criterion": "gini"})
    assert base in set(last["candidate"])  # the baseline reached the final round
    t = s.comparison_
    assert set(t["candidate"]) == set(last["candidate"]) - {s.best_index_}
    assert (t["n_pairs"] == last["eval_size"].iloc[0]).all()
    # the table's tests, checked against scipy on the stored per-example scores
    sel = s.selection_
    r = int(last["round"].iloc[0])
    key = {c: k for c, i, k in zip(sel.evaluations["candidate"], sel.evaluations["index"], sel.evaluations["key"])
           if i == (r,)}
    best = sel.payloads[key[s.best_index_]]["per_example"].astype(float)
    p_raw = []
    for row in t.itertuples():
        other = sel.payloads[key[row.candidate]]["per_example"].astype(float)
        b, c = int(((best == 1) & (other == 0)).sum()), int(((best == 0) & (other == 1)).sum())
        p_ref = stats.binomtest(b, b + c, 0.5).pvalue if b + c else 1.0
        assert row.pvalue == pytest.approx(p_ref, rel=1e-9)
        ci = stats.ttest_rel(best, other).confidence_interval(0.95)
        assert (row.ci_low, row.ci_high) == pytest.approx((ci.low, ci.high))
        p_raw.append(row.pvalue)
    from statsmodels.stats.multitest import multipletests
    assert t["pvalue_holm"].to_numpy() == pytest.approx(multipletests(p_raw, method="holm")[1])
    # the same table from the public function
    assert comparison_table(s)["pvalue_holm"].tolist() == t["pvalue_holm"].tolist()
    # issue 24 item 4: these McNemar tests compare fitted models; the table says their p-values do not cover
    # the learner's seed (with seed-dependent learners they over-reject: 10-16 % at level 5 % in the calibration)
    assert t["test"].str.startswith("exact McNemar test").all()
    assert t["test"].str.contains("does not cover the learner's seed or training sample").all()


def test_front_published_rules_unchanged_and_race_input_checks():
    X, y = load_digits(return_X_y=True)
    grid = {"min_samples_leaf": [1, 5, 25], "criterion": ["gini", "entropy"]}
    s = ProgressiveSearchCV(DecisionTreeClassifier(random_state=0), grid, schedule=[0.25, 1.0], survival="mean",
                            random_state=0, refit=False).fit(X, y)
    assert s.survival_ == "mean" and s.vs_baseline_ is None and len(s.comparison_) >= 1  # no baseline, a table
    for row in s.rounds_.itertuples():  # scores are plain accuracies (the per-example path changes nothing)
        tr, te = SubsetPlan(0).split(Draw(row.candidate, "subset", (row.round,), size=row.size), y, len(y))
        est = DecisionTreeClassifier(random_state=derive_seed(0, row.round),  # the evaluator seeds each round
                                     **s.cv_results_["params"][row.candidate]).fit(X[tr], y[tr])
        assert row.score == est.score(X[te], y[te])
    with pytest.raises(ValueError, match="survival='race'"):
        ProgressiveSearchCV(DecisionTreeClassifier(), grid, survival="race", scoring="f1_macro").fit(X, y)
    with pytest.raises(ValueError, match="not a setting"):
        ProgressiveSearchCV(DecisionTreeClassifier(), grid, survival="race",
                            baseline={"min_samples_leaf": 7, "criterion": "gini"}).fit(X, y)
    with pytest.raises(ValueError, match="baseline belongs"):
        ProgressiveSearchCV(DecisionTreeClassifier(), grid, survival="mean",
                            baseline={"min_samples_leaf": 1, "criterion": "gini"}).fit(X, y)
    with pytest.raises(ValueError, match="baseline belongs.*'auto' runs the race only"):  # f1: auto is the mean rule
        ProgressiveSearchCV(DecisionTreeClassifier(), grid, scoring="f1_macro",
                            baseline={"min_samples_leaf": 1, "criterion": "gini"}).fit(X, y)
    with pytest.raises(TypeError, match="baseline"):
        ProgressiveSearchCV(DecisionTreeClassifier(), grid, survival="race", baseline=3).fit(X, y)


def test_front_default_is_the_race_where_scores_are_per_example_else_the_published_rule():
    X, y = load_digits(return_X_y=True)
    grid = {"min_samples_leaf": [1, 5, 25], "criterion": ["gini", "entropy"]}
    kw = dict(schedule=[0.1, 0.25, 1.0], random_state=0, refit=False)
    cols = ["round", "size", "candidate", "score", "survived"]

    def fit(**more):
        return ProgressiveSearchCV(DecisionTreeClassifier(random_state=0), grid, **kw, **more).fit(X, y)

    auto, race, mean, none = fit(), fit(survival="race"), fit(survival="mean"), fit(survival=None)
    # accuracy is a mean over examples: the default runs the race, with the estimator's own setting as baseline
    assert auto.survival_ == "race" and auto.rounds_[cols].equals(race.rounds_[cols])
    assert auto.vs_baseline_["baseline"] == {"min_samples_leaf": 1, "criterion": "gini"}
    assert auto.best_params_ == race.best_params_
    # "mean" and None are the published rule (the same run), with no baseline
    assert mean.survival_ == none.survival_ == "mean" and mean.rounds_[cols].equals(none.rounds_[cols])
    assert mean.vs_baseline_ is None
    # the published rule's survivors are the settings at or above the round's mean score (PSearch's floor aside)
    first = mean.rounds_[mean.rounds_["round"] == 0]
    kept = first["score"] >= first["score"].mean() - 1e-12
    assert (first["survived"] == kept | first["added_by_floor"]).all()
    # macro F1 is not a mean over examples: the default falls back to the published rule
    f1 = fit(scoring="f1_macro")
    f1_mean = fit(scoring="f1_macro", survival="mean")
    assert f1.survival_ == "mean" and f1.vs_baseline_ is None and f1.rounds_[cols].equals(f1_mean.rounds_[cols])


# ---------------------------------------------------------------- issue 14 rerun: the budget cap, the confirmation

def test_budget_cap_matches_the_halving_race_at_budget_one_and_cuts_later_at_one_and_a_half():
    # 39 free settings within noise of each other (a few of 400 examples apart: the test drops none)
    # plus the baseline (39); sizes 100..1600. Halving race counts of the free settings: 39, 20, 10, 5, 3,
    # cost 39*100 + 20*200 + 10*400 + 5*800 + 3*1600 = 20,700 training examples.
    grid = {"acc": list(np.linspace(0.6, 0.605, 40))}
    sizes = [100, 200, 400, 800, 1600]

    def counts(budget):
        sel = run(ProgressiveSampling(1600, sizes, "race", baseline=39, budget=budget, confirm_folds=None),
                  FunctionEvaluator(_nested), grid, random_state=1)
        rounds = sel.result["rounds"]
        assert all(r["survived"][r["candidates"].index(39)] for r in rounds[:-1])  # the baseline always stays
        for r in rounds[:-1]:  # the floor: at least ceil(0.2 n) survive
            assert r["n_survived"] >= math.ceil(0.2 * r["n_evaluated"])
        free_cost = sum((r["n_evaluated"] - 1) * r["size"] for r in rounds)
        return [r["n_evaluated"] for r in rounds], free_cost, rounds

    # budget 1: exactly the halving race's counts (+1: the baseline), nothing the test could not drop is kept longer
    n1, cost1, _ = counts(1.0)
    assert n1 == [40, 21, 11, 6, 4] and cost1 == 20_700
    # budget 1.5 (31,050): round 0 may pass all 39 on (200k + 10*400 + 5*800 + 3*1600 <= 31,050 - 3,900 for k <= 71);
    # after round 1 (spent 11,700): 400k + 5*800 + 3*1600 <= 19,350 -> k = 26, the cap cuts 13; after round 2
    # (spent 22,100): 800k + 3*1600 <= 8,950 -> k = 5; after round 3 (spent 26,100): 1600k <= 4,950 -> k = 3
    n15, cost15, rounds = counts(1.5)
    assert n15 == [40, 40, 27, 6, 4] and cost15 == 30_900 <= 1.5 * 20_700
    second = rounds[1]
    cut = [c for c, x in zip(second["candidates"], second["cut_by_cap"]) if x]
    assert second["cap"] == 26 and len(cut) == 13
    # the cap cuts the lowest-scoring: every cut setting scored at most every kept free one
    kept = [s for c, s, k in zip(second["candidates"], second["scores"], second["survived"]) if k and c != 39]
    assert max(s for c, s in zip(second["candidates"], second["scores"]) if c in cut) <= min(kept)


def test_budget_limit_never_below_the_halving_counts_and_spends_at_most_the_budget():
    from certa.strategies._race import budget_limit, halving_counts

    sizes = [160, 320, 640, 800, 4800, 10400, 13600, 16000]
    ref = halving_counts(250, len(sizes))
    assert ref == [250, 125, 63, 32, 16, 8, 4, 2]
    C = sum(k * s for k, s in zip(ref, sizes))
    for budget in (1.0, 1.5, 2.0, 3.0):
        n, spent = 250, 0
        for r in range(len(sizes) - 1):
            spent += n * sizes[r]
            limit = budget_limit(sizes, r, spent, budget * C, ref, 0.2, 0)
            assert limit >= ref[r + 1]
            n = min(n, limit)  # nothing dropped by the test: the cap alone decides
        spent += n * sizes[-1]
        assert spent <= budget * C
    # budget 1: the halving race itself
    n, counts = 250, [250]
    spent = 0
    for r in range(len(sizes) - 1):
        spent += n * sizes[r]
        n = min(n, budget_limit(sizes, r, spent, C, ref, 0.2, 0))
        counts.append(n)
    assert counts == ref


def test_fold_draws_partition_the_training_part():
    y = np.array([0] * 60 + [1] * 30 + [2] * 10)
    plan = SubsetPlan(3)
    train_order, _ = plan.parts(y, 100)
    n = len(train_order)
    tests = []
    for k in range(5):
        size = n - len(range(k, n, 5))
        tr, te = plan.split(Draw(0, "subset", (4, k, 5), size=size), y, 100)
        assert len(tr) == size and not set(tr) & set(te) and set(tr) | set(te) == set(train_order)
        tests.append(te)
    allte = np.concatenate(tests)
    assert sorted(allte) == sorted(train_order)  # every training example is predicted exactly once
    for te in tests:  # each fold keeps the class proportions within one example
        for c, share in ((0, 0.6), (1, 0.3), (2, 0.1)):
            assert abs((y[te] == c).sum() - share * len(te)) <= 1
    with pytest.raises(ValueError, match="fold draw size"):
        plan.split(Draw(0, "subset", (4, 0, 5), size=3), y, 100)


@pytest.mark.parametrize("baseline, beaten", [("auto", False), ({"min_samples_leaf": 120}, True)])
def test_confirmation_matches_a_direct_cross_validation_and_corrected_t_test(baseline, beaten):
    X, y = load_digits(return_X_y=True)
    est = DecisionTreeClassifier(random_state=0)  # its default: min_samples_leaf=1
    grid = {"min_samples_leaf": [1, 3, 10, 40, 120]}
    s = ProgressiveSearchCV(est, grid, schedule=[0.25, 0.5, 1.0], random_state=7, refit=False, n_jobs=1,
                            progress=False, baseline=baseline).fit(X, y)
    v = s.vs_baseline_
    assert s.survival_ == "race" and v["baseline"] == (baseline if beaten else {"min_samples_leaf": 1})
    assert v["beat_baseline"] == beaten
    assert v["evidence"] == "5-fold cross-validation over the training part"
    # direct computation: the same folds (the training part dealt class by class), fitted as the evaluator
    # does (random_state = the confirmation draws' seed), every training example predicted once per setting
    plan = SubsetPlan(7)
    train_order, _ = plan.parts(y, len(y))
    seed = derive_seed(7, len(s.sizes_))
    right = {}
    for name, params in (("challenger", v["challenger"]), ("baseline", v["baseline"])):
        per = []
        dealt = train_order[np.argsort(y[train_order], kind="stable")]  # class by class, dealt round-robin
        for k in range(5):
            te = dealt[k::5]
            tr = train_order[~np.isin(train_order, te)]
            m = DecisionTreeClassifier(random_state=seed, **params).fit(X[tr], y[tr])
            per.append(m.predict(X[te]) == y[te])
        right[name] = per
    a, b = np.concatenate(right["challenger"]), np.concatenate(right["baseline"])
    n_a, n_b = int((a & ~b).sum()), int((~a & b).sum())
    assert (v["n_challenger_only"], v["n_baseline_only"]) == (n_a, n_b)
    assert v["n_examples"] == len(train_order) == len(a)
    # Bouckaert & Frank's corrected k-fold t test on the 5 fold accuracies, by its formula
    d = np.array([ca.mean() - cb.mean() for ca, cb in zip(right["challenger"], right["baseline"])])
    n_test = np.mean([len(f) for f in right["challenger"]])
    t = d.mean() / np.sqrt((1 / 5 + n_test / (len(train_order) - n_test)) * d.var(ddof=1))
    p = stats.t.sf(t, 4)
    assert v["pvalue"] == pytest.approx(p, rel=1e-9)
    assert v["difference"] == pytest.approx(d.mean())
    assert v["beat_baseline"] == (p < 0.05) == beaten
    assert s.best_params_ == (v["challenger"] if p < 0.05 else v["baseline"])
    # the challenger is the final round's best other setting
    last = s.rounds_[s.rounds_["round"] == s.rounds_["round"].max()]
    others = last[last["params"] != f"min_samples_leaf={v['baseline']['min_samples_leaf']}"]
    assert v["challenger"] == s.cv_results_["params"][int(others.sort_values(["score", "candidate"],
                                                                              ascending=[False, True]).iloc[0]
                                                               ["candidate"])]


def test_confirmation_keeps_the_default_when_the_challenger_is_not_better():
    from certa.strategies._race import confirm_vs_baseline

    # 1,000 paired examples, 30 discordant each way: no evidence; then 40 vs 12: one-sided p = P(B >= 40), B ~ Bin(52, 1/2)
    base = np.r_[np.ones(800), np.zeros(200)]
    ch = base.copy()
    ch[:30] = 0
    ch[800:830] = 1
    d = confirm_vs_baseline(ch, base)
    assert not d["beat_baseline"] and d["difference"] == 0 and d["pvalue"] == pytest.approx(
        stats.binomtest(30, 60, 0.5, alternative="greater").pvalue)
    ch = base.copy()
    ch[:12] = 0
    ch[800:840] = 1
    d = confirm_vs_baseline(ch, base)
    assert d["beat_baseline"] and (d["n_challenger_only"], d["n_baseline_only"]) == (40, 12)
    assert d["pvalue"] == pytest.approx(stats.binomtest(40, 52, 0.5, alternative="greater").pvalue, rel=1e-9)
    assert d["ci_low"] < 0.028 < d["ci_high"]


def test_fold_confirmation_judges_settings_not_fold_models():
    # five folds of 3,200 examples; the challenger's fold models win by +3, -2, +4, -1, +3 points:
    # pooled, 1,320 vs 1,096 discordant examples is overwhelming for McNemar (p ~ 3e-6), but the fold
    # accuracies disagree in sign, and the corrected k-fold t test (1/K + n_test/n_train) does not reject
    from certa.strategies._race import confirm_vs_baseline_folds

    n, ch, base = 3200, [], []
    for gain in (96, -64, 128, -32, 96):   # examples only the challenger (or, negative, only the baseline) gets right
        b = np.r_[np.ones(2400), np.zeros(800)]
        a = b.copy()
        a[2400:2400 + 200 + max(gain, 0)] = 1      # challenger right where the baseline is wrong
        a[:200 + max(-gain, 0)] = 0                # and wrong where the baseline is right
        ch.append(a)
        base.append(b)
    d = confirm_vs_baseline_folds(ch, base, n_train=16000)
    fold_d = np.array([x.mean() - y.mean() for x, y in zip(ch, base)])
    np.testing.assert_allclose(fold_d, np.array([96, -64, 128, -32, 96]) / n)
    t = fold_d.mean() / np.sqrt((1 / 5 + 3200 / 12800) * fold_d.var(ddof=1))
    assert d["pvalue"] == pytest.approx(stats.t.sf(t, 4), rel=1e-12) and not d["beat_baseline"]
    assert (d["n_challenger_only"], d["n_baseline_only"]) == (1320, 1096)
    assert stats.binomtest(1320, 2416, 0.5, alternative="greater").pvalue < 1e-5   # what pooling would have said
    # the same gain in every fold: the corrected test rejects
    d2 = confirm_vs_baseline_folds([ch[0]] * 5, [base[0]] * 5, n_train=16000)
    assert d2["beat_baseline"] and d2["pvalue"] == 0.0 and d2["difference"] == pytest.approx(0.03)
    with pytest.raises(ValueError, match="same K >= 2 folds"):
        confirm_vs_baseline_folds(ch[:1], base[:1], n_train=100)


def test_baseline_rule_evidence_chooses_what_the_confirmation_favours_and_keeps_the_test_as_a_claim():
    # issue 24, #14: the same race, two rules. Gate: the default stays unless the corrected k-fold t test
    # shows it beaten. Evidence: the challenger whenever its 5-fold mean is higher (ties: the default).
    X, y = load_digits(return_X_y=True)
    grid = {"min_samples_leaf": [1, 2, 3, 5, 8], "criterion": ["gini", "entropy"]}
    kw = dict(schedule=[0.25, 0.5, 1.0], survival="race", random_state=0, refit=False, progress=False)
    for base in ({"min_samples_leaf": 1, "criterion": "gini"}, {"min_samples_leaf": 2, "criterion": "entropy"}):
        est = DecisionTreeClassifier(random_state=0, **base)
        gate = ProgressiveSearchCV(est, grid, baseline_rule="gate", **kw).fit(X, y)
        ev = ProgressiveSearchCV(est, grid, baseline_rule="evidence", **kw).fit(X, y)
        v, w = gate.vs_baseline_, ev.vs_baseline_
        # the same rounds and the same confirmation: only the final choice differs
        assert gate.rounds_["score"].tolist() == ev.rounds_["score"].tolist()
        assert (w["difference"], w["pvalue"], w["beat_baseline"]) == (v["difference"], v["pvalue"], v["beat_baseline"])
        assert v["rule"] == "gate" and w["rule"] == "evidence"
        assert gate.best_params_ == (v["challenger"] if v["beat_baseline"] else base)
        assert ev.best_params_ == (v["challenger"] if v["difference"] > 0 else base)
        if base["criterion"] == "gini":  # the challenger is ahead in the confirmation but not shown better
            assert 0 < v["difference"] and not v["beat_baseline"]
            assert gate.best_params_ == base and ev.best_params_ == v["challenger"] != base
    # without a confirmation the evidence is the final round: its leader (the baseline wins ties)
    est = DecisionTreeClassifier(random_state=0, min_samples_leaf=1)
    ev = ProgressiveSearchCV(est, grid, baseline_rule="evidence", confirm_folds=None, **kw).fit(X, y)
    last = ev.rounds_[ev.rounds_["round"] == ev.rounds_["round"].max()]
    top = last[last["score"] == last["score"].max()]["candidate"].tolist()
    base_i = ev.cv_results_["params"].index({"min_samples_leaf": 1, "criterion": "gini"})
    assert ev.best_index_ == (base_i if base_i in top else top[0])
    with pytest.raises(ValueError, match="baseline_rule"):
        ProgressiveSearchCV(DecisionTreeClassifier(), grid, baseline_rule="vote", **kw).fit(X, y)
    with pytest.raises(ValueError, match="baseline_rule"):
        ProgressiveSampling(1000, "psearch", survival="mean", baseline_rule="evidence")
    assert "baseline_rule" not in ProgressiveSampling(1000, "psearch", survival="race", baseline=0).spec()
    assert ProgressiveSampling(1000, "psearch", survival="race", baseline=0,
                               baseline_rule="evidence").spec()["baseline_rule"] == "evidence"


def test_default_rule_per_schedule_is_the_one_issue_24s_benchmark_chose():
    # benchmarks/progressive.py rule-choice (docs/progressive.md): PSearch's published mean rule (as accurate as
    # the race there and cheaper); Paramsearch: the race with the evidence rule (the gate paid on neither)
    X, y = load_digits(return_X_y=True)
    grid = {"min_samples_leaf": [1, 5, 25], "criterion": ["gini", "entropy"]}
    kw = dict(random_state=0, refit=False, progress=False)
    est = DecisionTreeClassifier(random_state=0)
    ps = ProgressiveSearchCV(est, grid, schedule="psearch", **kw).fit(X, y)
    assert ps.survival_ == "mean" and ps.vs_baseline_ is None
    cols = ["round", "size", "candidate", "score", "survived"]
    mean = ProgressiveSearchCV(est, grid, schedule="psearch", survival="mean", **kw).fit(X, y)
    assert ps.rounds_[cols].equals(mean.rounds_[cols])
    pa = ProgressiveSearchCV(est, grid, schedule="paramsearch", **kw).fit(X, y)
    assert pa.survival_ == "race" and pa.vs_baseline_["rule"] == "evidence"
    assert pa.selection_.strategy["baseline_rule"] == "evidence"
    own = ProgressiveSearchCV(est, grid, schedule=[0.25, 0.5, 1.0], **kw).fit(X, y)
    assert own.survival_ == "race" and own.vs_baseline_["rule"] == "evidence"
    # a named baseline exists only in the race: with it, "auto" runs the race for PSearch too
    named = ProgressiveSearchCV(est, grid, schedule="psearch", baseline={"min_samples_leaf": 5, "criterion": "gini"},
                                **kw).fit(X, y)
    assert named.survival_ == "race" and named.vs_baseline_["baseline"] == {"min_samples_leaf": 5, "criterion": "gini"}
