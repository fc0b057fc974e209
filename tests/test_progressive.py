"""Wrapped progressive sampling: schedules, survival, subsets, strategy, front, learners."""
import math

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.metrics import mutual_info_score
from sklearn.tree import DecisionTreeClassifier

from certa import FunctionEvaluator, SQLiteStore, run
from certa.engine import Draw, derive_seed
from certa.engine.candidates import candidates_from_grid
from certa.learners import (
    ExponentialDecay,
    InverseLinear,
    SymbolicEncoder,
    feature_weights,
    knn_default_params,
    knn_grid,
    knn_pipeline,
    tree_default_params,
    tree_grid,
    tree_pipeline,
)
from certa.search.progressive import ProgressiveSearchCV
from certa.strategies.progressive import (
    ProgressiveSampling,
    SubsetPlan,
    paramsearch_sizes,
    psearch_sizes,
    schedule_sizes,
    stratified_order,
    survivors,
)

# ---------------------------------------------------------------- schedules

def test_paramsearch_sizes_by_hand():
    # n = 57,781: ln n = 10.964415, /20 = 0.5482208 = ln f, f = 1.730172.
    # size_i = f**(i-1): f**11 = e**6.03043 = 415.9 (<= 500, dropped), f**12 = e**6.57865 = 719.57,
    # f**13 = e**7.12687 = 1244.97, f**14 = e**7.67509 = 2154.02, f**15 = e**8.22331 = 3726.82,
    # f**16 = e**8.77153 = 6448.04, f**17 = e**9.31975 = 11156.23, f**18 = e**9.86797 = 19302.19,
    # f**19 = e**10.41619 = 33396.10, f**20 = n. Rounded, 500 first.
    assert paramsearch_sizes(57_781) == [500, 720, 1245, 2154, 3727, 6448, 11156, 19302, 33396, 57781]
    # n = 72,226: ln n = 11.187555, /20 = 0.5593778, f = 1.749584; f**11 = 470.2 (dropped),
    # f**12 = 822.65, f**13 = 1439.30, f**14 = 2518.17, f**15 = 4405.75, f**16 = 7708.23,
    # f**17 = 13486.20, f**18 = 23595.23, f**19 = 41281.82, f**20 = n.
    assert paramsearch_sizes(72_226) == [500, 823, 1439, 2518, 4406, 7708, 13486, 23595, 41282, 72226]


def test_psearch_sizes_by_hand():
    # 1 %, 2 %, 4 %, 5 %, 30 %, 65 %, 85 % of 57,781 = 577.81, 1155.62, 2311.24, 2889.05,
    # 17334.3, 37557.65, 49113.85 -> rounded; then 100 %.
    assert psearch_sizes(57_781) == [578, 1156, 2311, 2889, 17334, 37558, 49114, 57781]
    # of 72,226: 722.26, 1444.52, 2889.04, 3611.3, 21667.8, 46946.9, 61392.1
    assert psearch_sizes(72_226) == [722, 1445, 2889, 3611, 21668, 46947, 61392, 72226]
    assert schedule_sizes("psearch", 72_226) == psearch_sizes(72_226)


def test_small_data_fallbacks():
    # Paramsearch: nothing above 500 to sample -> one round on the whole training part
    assert paramsearch_sizes(400) == [400]
    assert paramsearch_sizes(500) == [500]
    # 501: f**19 = 501**0.95 = 368.8 -> dropped; [500, n]
    assert paramsearch_sizes(501) == [500, 501]
    # PSearch on 50: 0.5->1 (at least 1), 1, 2, 2.5->2 (round half to even), 15, 32.5->32, 42.5->42, 50; dupes dropped
    assert psearch_sizes(50) == [1, 2, 15, 32, 42, 50]
    assert psearch_sizes(1) == [1]
    with pytest.raises(ValueError, match="training part has 100"):
        schedule_sizes([10, 200], 100)


def test_user_schedules_and_bad_input():
    assert schedule_sizes([0.1, 0.5, 1.0], 999) == [100, 500, 999]
    assert schedule_sizes([0.001, 0.002, 1.0], 100) == [1, 100]
    assert schedule_sizes([5, 50], 100) == [5, 50]
    for bad, err in [("foo", ValueError), ([], ValueError), ([0.5, 0.2], ValueError), ([0.0, 1.0], ValueError),
                     ([1.5], ValueError), ([0, 5], ValueError), (["a"], TypeError), (3, TypeError)]:
        with pytest.raises(err):
            schedule_sizes(bad, 100)
    with pytest.raises(TypeError, match="n_train"):
        schedule_sizes("psearch", 10.0)
    with pytest.raises(ValueError, match="n_train"):
        paramsearch_sizes(0)


# ---------------------------------------------------------------- survival

def test_mean_rule_and_psearch_floor_by_hand():
    s = np.array([0.9, 0.5, 0.4, 0.3, 0.2])  # mean 0.46: only 0.9 and 0.5 survive
    keep, added = survivors(s, "mean")
    assert keep.tolist() == [True, True, False, False, False] and not added.any()
    # floor 0.5 of 5 -> at least 3: the next bin (0.4) is added back
    keep, added = survivors(s, "mean", floor=0.5)
    assert keep.tolist() == [True, True, True, False, False] and added.tolist() == [False, False, True, False, False]


def test_floor_adds_whole_bins():
    # 10 settings, one outlier on top: the mean rule keeps 1 (< 20 %); the next-best bin is
    # three exact ties, added together -> 4 survive (ties are never split)
    s = np.array([1.0, 0.1, 0.1, 0.1, 0.05, 0.05, 0.0, 0.0, 0.0, 0.0])  # mean 0.14
    keep, added = survivors(s, "mean")
    assert keep.sum() == 1
    keep, added = survivors(s, "mean", floor=0.2)  # need ceil(2.0) = 2
    assert np.flatnonzero(keep).tolist() == [0, 1, 2, 3] and np.flatnonzero(added).tolist() == [1, 2, 3]
    keep, _ = survivors(s, "mean", floor=0.5)  # need 5: the 0.1 bin (4), then the 0.05 bin (6)
    assert np.flatnonzero(keep).tolist() == [0, 1, 2, 3, 4, 5]
    # bins of width 0.92 below the top: (1 - 0.1) / 0.92 = 0.98 -> bin 0; 0.05 and 0.0 -> bin 1
    keep, _ = survivors(s, "mean", floor=0.5, bin_width=0.92)
    assert keep.all()
    # a failed setting (NaN) never survives, not even through the floor
    keep, _ = survivors(np.array([np.nan, 0.5, 0.1]), "mean", floor=1.0)
    assert keep.tolist() == [False, True, True]


def test_other_rules():
    s = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    assert survivors(s, "median")[0].tolist() == [False, False, False, True, True, True]
    assert survivors(s, 0.34)[0].tolist() == [False, False, False, True, True, True]  # ceil(0.34*6) = 3
    assert survivors(s, lambda x: x > 0.55)[0].tolist() == [False] * 5 + [True]
    assert survivors(s, lambda x: x > 9)[0].tolist() == [False] * 5 + [True]  # the best always survives
    for bad in ("max", 1.5, 0):
        with pytest.raises(ValueError):
            survivors(s, bad)
    with pytest.raises(ValueError, match="floor"):
        survivors(s, "mean", floor=2)


# ---------------------------------------------------------------- subsets

def _labels():
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1, 2, 3, 4], [523, 301, 117, 40, 1])
    return y[rng.permutation(len(y))]


def test_split_and_subsets_are_stratified_and_nested():
    y = _labels()
    n = len(y)
    plan = SubsetPlan(7)
    train, evalp = plan.parts(y, n)
    assert len(train) == plan.n_train(n) == round(0.8 * n) and len(evalp) == n - len(train)
    assert len(np.intersect1d(train, evalp)) == 0 and len(np.union1d(train, evalp)) == n
    classes, counts = np.unique(y, return_counts=True)
    for c, n_c in zip(classes, counts):  # each class split within one example of 80 %
        assert abs((y[train] == c).sum() - 0.8 * n_c) < 1 + 1e-9
    for part in (train, evalp):
        p = np.array([(y[part] == c).mean() for c in classes])
        onehot = (y[part][:, None] == classes[None, :]).cumsum(axis=0)
        m = np.arange(1, len(part) + 1)[:, None]
        # every prefix holds each class's Sainte-Lague share of the prefix: within rounding except
        # where the divisor method misses the quota, and never by 1.5 examples or more
        dev = np.abs(onehot - m * p[None, :])
        assert dev.max() < 1.5 and (dev >= 1).mean() < 0.01
    for size in (10, 100, 500):
        tr, ev = plan.split(Draw(0, "subset", (0,), size=size), y, n)
        assert np.array_equal(tr, train[:size]) and np.array_equal(ev, evalp[:round(0.2 * size)])
    tr, ev = SubsetPlan(7, eval_fraction=None).split(Draw(0, "subset", (0,), size=10), y, n)
    assert np.array_equal(ev, evalp)


def test_plan_determinism_and_bad_input():
    y = _labels()
    a = SubsetPlan(1).parts(y, len(y))
    b = [x.copy() for x in a]
    SubsetPlan(2).parts(y, len(y))  # evicts the cache
    c = SubsetPlan(1).parts(y, len(y))
    assert all(np.array_equal(u, v) for u, v in zip(b, c))
    assert not np.array_equal(SubsetPlan(2).parts(y, len(y))[0], b[0])
    # unstratified: a plain permutation, still a partition
    tr, ev = SubsetPlan(1, stratified=False).parts(None, 50)
    assert sorted(np.concatenate([tr, ev]).tolist()) == list(range(50))
    with pytest.raises(ValueError, match="train_fraction"):
        SubsetPlan(0, train_fraction=1.0)
    with pytest.raises(ValueError, match="random_state"):
        SubsetPlan(-1)
    with pytest.raises(ValueError, match="subset"):
        SubsetPlan(0).split(Draw(0, "fold", (0, 0)), y, len(y))
    with pytest.raises(ValueError, match="draw size"):
        SubsetPlan(0).split(Draw(0, "subset", (0,), size=10_000), y, len(y))
    with pytest.raises(ValueError, match="1-D"):
        stratified_order(np.zeros((3, 2)), np.random.default_rng(0))


# ---------------------------------------------------------------- strategy

def _linear(params, seed):
    return params["x"] / 10


def test_rounds_by_hand():
    # scores 0.0 .. 0.9 every round; mean rule: keep >= 0.45 -> 5..9; >= 0.7 -> 7, 8, 9;
    # >= 0.8 -> 8, 9; >= 0.85 -> 9: one left after 4 rounds (of 8)
    strat = ProgressiveSampling(10_000, "psearch", floor=None)
    sel = run(strat, FunctionEvaluator(_linear), {"x": list(range(10))}, random_state=3)
    rounds = sel.result["rounds"]
    assert [r["candidates"] for r in rounds] == [list(range(10)), [5, 6, 7, 8, 9], [7, 8, 9], [8, 9]]
    assert [r["size"] for r in rounds] == psearch_sizes(10_000)[:4]
    assert sel.best_index == 9 and sel.result["ranking"][:4].tolist() == [9, 8, 7, 6]
    ev = sel.evaluations
    assert len(ev) == 20 and (ev["kind"] == "subset").all()
    assert all(row.seed == derive_seed(3, row.index[0]) for row in ev.itertuples())
    # with PSearch's floor of 20 %: 10 -> 5 (>= 2), 5 -> 3 (>= 1), 3 -> 2, 2 -> 1; same path here
    sel2 = run(ProgressiveSampling(10_000, "psearch"), FunctionEvaluator(_linear), {"x": list(range(10))})
    assert sel2.best_index == 9


def _one_outlier(params, seed):
    return 1.0 if params["x"] == 0 else 0.5 - params["x"] / 100


def test_floor_keeps_twenty_percent_in_a_run():
    # one setting far ahead: the mean rule alone stops after round 0
    grid = {"x": list(range(10))}
    sel = run(ProgressiveSampling(10_000, "psearch", floor=None), FunctionEvaluator(_one_outlier), grid)
    assert len(sel.result["rounds"]) == 1
    sel = run(ProgressiveSampling(10_000, "psearch"), FunctionEvaluator(_one_outlier), grid)
    first = sel.result["rounds"][0]
    assert first["n_survived"] == 2 and sum(first["added_by_floor"]) == 1  # ceil(0.2 * 10) = 2
    assert sel.result["rounds"][1]["candidates"] == [0, 1]


def test_grid_of_one_is_scored_once_on_the_last_size():
    X, y = make_classification(200, 5, random_state=0)
    s = ProgressiveSearchCV(DecisionTreeClassifier(random_state=0), {"max_depth": [3]}, schedule="psearch",
                            random_state=4).fit(X, y)
    assert len(s.rounds_) == 1 and s.rounds_["size"].iloc[0] == s.n_train_ == 160 and s.best_index_ == 0
    plan = SubsetPlan(4)
    tr, ev = plan.split(Draw(0, "subset", (7,), size=160), y, 200)
    direct = DecisionTreeClassifier(random_state=0, max_depth=3).fit(X[tr], y[tr]).score(X[ev], y[ev])
    assert s.best_score_ == direct


def test_front_scores_match_direct_fits_and_workers_do_not_matter():
    X, y = make_classification(600, 8, n_informative=4, n_classes=3, random_state=1)
    grid = {"max_depth": [1, 2, 4, 8], "min_samples_leaf": [1, 10]}
    kw = dict(schedule=[0.1, 0.3, 1.0], random_state=5, refit=False)
    one = ProgressiveSearchCV(DecisionTreeClassifier(random_state=0), grid, n_jobs=1, **kw).fit(X, y)
    two = ProgressiveSearchCV(DecisionTreeClassifier(random_state=0), grid, n_jobs=2, **kw).fit(X, y)
    cols = ["round", "size", "candidate", "score", "survived"]
    assert one.rounds_[cols].equals(two.rounds_[cols]) and one.best_params_ == two.best_params_
    cands = candidates_from_grid(grid)
    plan = SubsetPlan(5)
    for row in one.rounds_.itertuples():
        tr, ev = plan.split(Draw(row.candidate, "subset", (row.round,), size=row.size), y, 600)
        # the evaluator seeds each round's fits with the round's draw seed
        est = DecisionTreeClassifier(random_state=derive_seed(5, row.round), **cands[row.candidate].params)
        assert row.score == est.fit(X[tr], y[tr]).score(X[ev], y[ev]) and row.eval_size == len(ev)
    res = one.cv_results_
    assert res["rank_test_score"][one.best_index_] == 1
    assert np.array_equal(res["round0_test_score"], one.selection_.result["scores"][0], equal_nan=True)
    assert one.sizes_ == [48, 144, 480]


def test_cached_encoder_gives_the_same_rounds_with_fewer_encoder_fits():
    rng = np.random.default_rng(3)
    X = rng.choice(list("abcdef"), size=(500, 5))
    y = np.where(X[:, 0] < "c", "p", np.where(X[:, 1] < "d", "q", "r"))
    grid = {"enc__weighting": ["none", "gr"], "knn__n_neighbors": [1, 3, 5]}
    kw = dict(schedule=[0.2, 0.5, 1.0], random_state=2, refit=False, n_jobs=1)
    plain = ProgressiveSearchCV(knn_pipeline(), grid, **kw).fit(X, y)
    _COUNTING_FITS["n"] = 0
    cached = ProgressiveSearchCV(_counting_knn(), grid, cache_transformers=True, **kw).fit(X, y)
    cols = ["round", "size", "candidate", "score", "survived"]
    assert plain.rounds_[cols].equals(cached.rounds_[cols])
    # one encoder fit per (round, weighting) that is still in play, not one per setting
    cands = candidates_from_grid(grid)
    expected = sum(len({cands[c].params["enc__weighting"] for c in cached.rounds_.loc[cached.rounds_["round"] == r,
                                                                                       "candidate"]})
                   for r in cached.rounds_["round"].unique())
    # the race's confirmation against the default: one encoder fit per fold and weighting of its two settings
    ev = cached.selection_.evaluations
    folds = ev[ev["index"].map(len) == 3]
    assert len(folds) == 2 * 5
    expected += sum(len({cands[c].params["enc__weighting"] for c, i in zip(folds["candidate"], folds["index"])
                         if tuple(i) == k}) for k in {tuple(i) for i in folds["index"]})
    assert _COUNTING_FITS["n"] == expected < len(cached.rounds_) + len(folds)
    with pytest.raises(TypeError, match="cache_transformers"):
        ProgressiveSearchCV(knn_pipeline(), grid, cache_transformers="yes", **kw).fit(X, y)


_COUNTING_FITS = {"n": 0}


class _CountingEncoder(SymbolicEncoder):
    def fit(self, X, y=None):
        _COUNTING_FITS["n"] += 1
        return super().fit(X, y)


def _counting_knn():
    from sklearn.pipeline import Pipeline
    return Pipeline([("enc", _CountingEncoder("onehot", "gr")), ("knn", knn_pipeline()[-1])])


_CALLS = {"n": 0, "stop_at": None}


def _counting(params, seed):
    _CALLS["n"] += 1
    if _CALLS["stop_at"] is not None and _CALLS["n"] == _CALLS["stop_at"]:
        raise KeyboardInterrupt
    return params["x"] / 10 + (seed % 7) / 1000


def test_resume_after_interruption_repeats_nothing(tmp_path):
    grid = {"x": list(range(12))}
    _CALLS.update(n=0, stop_at=None)
    reference = run(ProgressiveSampling(5_000, "paramsearch"), FunctionEvaluator(_counting), grid, random_state=2)
    total = _CALLS["n"]
    path = tmp_path / "run.sqlite"
    _CALLS.update(n=0, stop_at=15)  # dies in round 1 (round 0 has 12 draws)
    with pytest.raises(KeyboardInterrupt):
        run(ProgressiveSampling(5_000, "paramsearch"), FunctionEvaluator(_counting), grid, random_state=2,
            store=SQLiteStore(path))
    _CALLS.update(n=0, stop_at=None)
    resumed = run(ProgressiveSampling(5_000, "paramsearch"), FunctionEvaluator(_counting), grid, random_state=2,
                  store=SQLiteStore(path))
    assert resumed.n_reused == 14 and _CALLS["n"] == total - 14
    assert resumed.best_index == reference.best_index
    strip = lambda rounds: [{k: v for k, v in r.items() if k != "time"} for r in rounds]
    assert strip(resumed.result["rounds"]) == strip(reference.result["rounds"])
    _CALLS.update(n=0)
    again = run(ProgressiveSampling(5_000, "paramsearch"), FunctionEvaluator(_counting), grid, random_state=2,
                store=SQLiteStore(path))
    assert _CALLS["n"] == 0 and again.n_reused == total


def test_strategy_and_front_bad_input():
    with pytest.raises(ValueError, match="floor"):
        ProgressiveSampling(100, floor=1.5)
    with pytest.raises(ValueError, match="floor"):
        ProgressiveSampling(100, floor="always")
    with pytest.raises(ValueError, match="survival"):
        ProgressiveSampling(100, survival="best")
    with pytest.raises(ValueError, match="bin_width"):
        ProgressiveSampling(100, bin_width=0)
    X, y = make_classification(50, 4, random_state=0)
    with pytest.raises(ValueError, match="at least 2 samples"):
        ProgressiveSearchCV(DecisionTreeClassifier(), {"max_depth": [1]}).fit(X[:1], y[:1])
    with pytest.raises(ValueError, match="different numbers"):
        ProgressiveSearchCV(DecisionTreeClassifier(), {"max_depth": [1]}).fit(X, y[:10])
    with pytest.raises(ValueError, match="eval_fraction"):
        ProgressiveSearchCV(DecisionTreeClassifier(), {"max_depth": [1]}, eval_fraction=0).fit(X, y)
    with pytest.raises(TypeError, match="estimator"):
        ProgressiveSearchCV(object(), {"max_depth": [1]}).fit(X, y)


# ---------------------------------------------------------------- learners

def test_feature_weights_match_references():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 400)
    codes = np.column_stack([y // 2, rng.integers(0, 3, 400), (y + rng.integers(0, 2, 400)) % 5])
    ig = feature_weights(codes, y, "ig")
    ref_ig = np.array([mutual_info_score(codes[:, f], y) / math.log(2) for f in range(3)])
    np.testing.assert_allclose(ig, ref_ig, atol=1e-12)
    split_info = np.array([stats.entropy(np.bincount(codes[:, f]), base=2) for f in range(3)])
    np.testing.assert_allclose(feature_weights(codes, y, "gr"), ref_ig / split_info, atol=1e-12)
    tables = [np.array([[np.sum((codes[:, f] == v) & (y == c)) for c in range(4)] for v in np.unique(codes[:, f])])
              for f in range(3)]
    chi = np.array([stats.chi2_contingency(t, correction=False)[0] for t in tables])
    np.testing.assert_allclose(feature_weights(codes, y, "chi2"), chi, rtol=1e-10)
    sv = chi / (400 * np.array([min(t.shape) - 1 for t in tables]))
    np.testing.assert_allclose(feature_weights(codes, y, "sv"), sv, rtol=1e-10)
    with pytest.raises(ValueError, match="method"):
        feature_weights(codes, y, "mvdm")


def test_encoder_distance_is_weighted_overlap():
    rng = np.random.default_rng(1)
    X = rng.choice(list("abcde"), size=(60, 4))
    y = (X[:, 0] == "a").astype(int) + (X[:, 1] == "b")
    enc = SymbolicEncoder("onehot", "gr").fit(X, y)
    Z = enc.transform(X)
    w = enc.weights_
    np.testing.assert_allclose(w.mean(), 1.0)
    d2 = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(axis=2)
    overlap = ((X[:, None, :] != X[None, :, :]) * w).sum(axis=2)
    np.testing.assert_allclose(d2, 2 * overlap, rtol=1e-5, atol=1e-5)
    unseen = enc.transform(np.array([["z", "z", "z", "z"]]))
    assert not unseen.any()
    # fitted on single letters, given longer strings (or an object array): same coding, longer ones unseen
    mixed = np.array([list(X[0]), ["ab", "b", "c", "d"]], dtype=object)
    Zm = enc.transform(mixed)
    np.testing.assert_array_equal(Zm[0], Z[0])
    assert not Zm[1, :enc.n_values_[0]].any()
    wide = SymbolicEncoder("ordinal", "none").fit(np.array([["ab", "b"], ["c", "b"]]))
    np.testing.assert_array_equal(wide.transform(np.array([["c", "b"], ["a", "q"]])), [[1, 0], [-1, -1]])
    with pytest.raises(ValueError, match="encoding"):
        SymbolicEncoder("binary").fit(X, y)


def test_vote_weightings_and_grids():
    d = np.array([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]])
    np.testing.assert_allclose(InverseLinear()(d), [[1.0, 0.5, 0.0], [1.0, 1.0, 1.0]])
    np.testing.assert_allclose(ExponentialDecay(2.0)(d), np.exp(-2 * d))
    assert repr(ExponentialDecay(4.0)) == "ExponentialDecay(4)" and ExponentialDecay(1) == ExponentialDecay(1.0)
    assert len(candidates_from_grid(knn_grid())) == 250 and len(candidates_from_grid(tree_grid())) == 300
    assert knn_default_params() in [c.params for c in candidates_from_grid(knn_grid())]
    assert tree_default_params() in [c.params for c in candidates_from_grid(tree_grid())]
    pipe = clone(knn_pipeline()).set_params(knn__weights=InverseLinear(), knn__n_neighbors=3)
    X = np.array([["a", "b"], ["a", "c"], ["d", "c"], ["d", "b"], ["a", "b"]])
    y = np.array([0, 0, 1, 1, 0])
    assert pipe.fit(X, y).predict(np.array([["a", "c"]])).tolist() == [0]


def test_pipelines_are_built_with_the_learners_defaults_so_the_race_keeps_them():
    # issue 24, item 1: tree_pipeline() had scikit-learn's Gini / min_samples_leaf=1, so baseline="auto"
    # kept scikit-learn's setting instead of C4.5's
    for make, default in ((tree_pipeline, tree_default_params), (knn_pipeline, knn_default_params)):
        own = make().get_params()
        assert {k: own[k] for k in default()} == default()
    from certa.datasets import load_nl_lemma

    X, y = load_nl_lemma(return_X_y=True)
    keep = np.random.default_rng(0).permutation(len(y))[:1500]
    search = ProgressiveSearchCV(tree_pipeline(), tree_grid(quick=True), schedule=[0.5, 1.0], random_state=0,
                                 confirm_folds=None, refit=False, progress=False).fit(X[keep], y[keep])
    assert search.vs_baseline_["baseline"] == tree_default_params()


def test_subset_plan_recomputes_its_cache_key_for_new_labels():
    y = np.repeat(np.array(["a", "b", "c"], dtype=object), 40)
    plan = SubsetPlan(3)
    first = plan.parts(y, len(y))
    again = plan.parts(y.copy(), len(y))       # equal labels in another array: same orders
    assert all(np.array_equal(u, v) for u, v in zip(first, again))
    other = np.repeat(np.array(["a", "b"], dtype=object), 60)  # new labels: a new stratified order
    tr, ev = plan.parts(other, len(other))
    assert abs(np.mean(other[tr[:20]] == "a") - 0.5) <= 0.05
    assert not np.array_equal(first[0], tr)
