"""Issue 31, items 5, 8 and 9: what three fronts say on small data, dropped candidates and untold bounds.

5. ProgressiveSearchCV on small data: no round trains on a subset that misses a class.
8. A candidate that always returns NaN is dropped *with* a warning, and the stated guarantee says
   it covers the candidates left only (one mechanism, every front that states a confidence).
9. QuantificationBoundSearch says when its bounds do not separate the candidates (warning,
   ``separated_``, ``decided_by_``, ``contenders_``), on the bundled Debian descriptions.
"""
import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.svm import LinearSVC

import certa
from certa.datasets import load_debian_small
from certa.engine.runner import DroppedCandidateWarning, FailedEvaluationsWarning
from certa.quantification import BoundsNotSeparatedWarning, separation
from certa.reporting.summary import summarize
from certa.search.bandit import BanditSearchCV, bandit_select
from certa.search.progressive import ProgressiveSearchCV
from certa.search.quantification import QuantificationBoundSearch
from certa.strategies._subset_plan import SubsetPlan
from certa.strategies.progressive import ProgressiveSampling, psearch_sizes, schedule_sizes


# ----------------------------------------------------------------------------- item 5
def _first_prefix_with_every_class(y_order):
    """Brute force: the smallest m whose prefix holds every class of the whole ordering."""
    every = set(y_order.tolist())
    for m in range(1, len(y_order) + 1):
        if set(y_order[:m].tolist()) == every:
            return m
    raise AssertionError("unreachable")


def _round_subsets(search, y):
    plan = SubsetPlan(search.random_state_, search.train_fraction, search.eval_fraction, True)
    return [plan.split(certa.Draw(0, "subset", (r,), size=s), y, len(y))[0] for r, s in enumerate(search.sizes_)]


@pytest.mark.parametrize("schedule, sizes", [("psearch", [2, 14, 31, 41, 48]), ([0.01, 0.5, 1.0], [2, 24, 48])])
def test_small_balanced_data_every_round_holds_both_classes(schedule, sizes):
    # the sweep's case: LogisticRegression, 60 balanced samples; at 042a603 the first round trained on
    # 1 example (PSearch's 1 % of 48 rounds to 1) and every evaluation failed
    X, y = make_classification(n_samples=60, weights=[0.5, 0.5], random_state=0)
    assert np.bincount(y).tolist() == [30, 30]
    assert psearch_sizes(48) == [1, 2, 14, 31, 41, 48]  # the published schedule, before the rule
    search = ProgressiveSearchCV(LogisticRegression(), {"C": [0.1, 1.0, 10.0]}, schedule=schedule,
                                 random_state=0, progress=False).fit(X, y)
    assert search.n_train_ == 48 and search.sizes_ == sizes
    assert len(search.selection_.failures) == 0
    assert search.round_summary_["n_evaluated"].iloc[0] == 3
    for train in _round_subsets(search, y):
        assert set(y[train].tolist()) == {0, 1}
    # the first size is the smallest that works: one example fewer misses a class
    train_order, _ = SubsetPlan(0).parts(y, 60)
    assert search.sizes_[0] == _first_prefix_with_every_class(y[train_order]) == 2


def test_imbalanced_multiclass_first_size_is_the_smallest_that_holds_every_class():
    y = np.repeat([0, 1, 2], [70, 22, 8])
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 3)) + y[:, None]
    for seed in range(6):
        plan = SubsetPlan(seed)
        train_order, _ = plan.parts(y, 100)
        assert plan.smallest_size(y, 100) == _first_prefix_with_every_class(y[train_order])
    search = ProgressiveSearchCV(LogisticRegression(max_iter=500), {"C": [0.01, 1.0, 100.0]}, random_state=3,
                                 progress=False).fit(X, y)
    m = SubsetPlan(3).smallest_size(y, 100)
    assert m > 2 and search.sizes_[0] == m  # 1 % and 2 % of 80 round to 1 and 2
    assert search.sizes_ == schedule_sizes("psearch", 80, min_size=m)
    assert len(search.selection_.failures) == 0
    for train in _round_subsets(search, y):
        assert set(y[train].tolist()) == {0, 1, 2}


def test_int_schedule_below_the_smallest_size_is_refused_naming_it():
    X, y = make_classification(n_samples=60, weights=[0.5, 0.5], random_state=0)
    search = ProgressiveSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, schedule=[1, 10, 48], random_state=0,
                                 progress=False)
    with pytest.raises(ValueError, match=r"schedule starts at 1 .*holds every class.* has 2.*start the schedule at 2"):
        search.fit(X, y)
    ok = ProgressiveSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, schedule=[2, 10, 48], random_state=0,
                             progress=False).fit(X, y)
    assert ok.sizes_ == [2, 10, 48] and len(ok.selection_.failures) == 0


def test_schedules_unchanged_where_every_class_fits_and_spec_kept():
    # large enough data: the rule changes nothing, and the strategy's spec (a store's identity) stays as before
    s = ProgressiveSampling(1000, "psearch", min_size=7)
    assert s.sizes == psearch_sizes(1000) and "min_size" not in s.spec()
    raised = ProgressiveSampling(48, "psearch", min_size=2)
    assert raised.sizes == [2, 14, 31, 41, 48] and raised.spec()["min_size"] == 2
    assert SubsetPlan(0, stratified=False).smallest_size(np.arange(60.0), 60) == 1  # a regression: no classes
    assert SubsetPlan(0).smallest_size(None, 60) == 1
    with pytest.raises(ValueError, match="min_size"):
        schedule_sizes("psearch", 48, min_size=49)


def test_small_data_run_reads_back_from_its_store(tmp_path):
    X, y = make_classification(n_samples=60, weights=[0.5, 0.5], random_state=0)
    path = tmp_path / "p.sqlite"
    search = ProgressiveSearchCV(LogisticRegression(), {"C": [0.1, 1.0, 10.0]}, random_state=0, store=path,
                                 progress=False).fit(X, y)
    back = certa.load(path)
    assert back.finished and back.best_index == search.best_index_
    assert back.strategy["min_size"] == 2 and back.result["sizes"] == search.sizes_


# ----------------------------------------------------------------------------- item 8
def _nan_for_three(params, train, test, seed):
    if params["x"] == 3:
        return math.nan
    return 0.1 * params["x"] + np.random.default_rng(seed).normal(0, 0.05)


NAN_TAIL = "among the 3 candidates left; dropped: 'x=3' (all 5 evaluations returned a non-finite score, NaN or inf)"


@pytest.mark.parametrize("strategy", ["auto", "paired", "top_two", "fiesta", "batch", "sequential_halving"])
def test_always_nan_candidate_warns_and_narrows_the_guarantee(strategy):
    kw = {"budget": 60} if strategy == "sequential_halving" else {}
    with pytest.warns(DroppedCandidateWarning, match=r"candidate 'x=3' was dropped \(all 5 evaluations returned a "
                                                     r"non-finite score.*among the 3 candidates left") as rec:
        sel = bandit_select(_nan_for_three, {"x": [0, 1, 2, 3]}, strategy=strategy, random_state=0,
                            progress=False, **kw)
    assert issubclass(DroppedCandidateWarning, FailedEvaluationsWarning)
    assert issubclass(DroppedCandidateWarning, UserWarning) and len(rec) >= 1
    assert sel.best_params == {"x": 2} and "x=3" in sel.dropped
    # the counts, checked against the evaluations themselves
    ev = sel.evaluations[sel.evaluations["name"] == "x=3"]
    assert len(ev) == 5 and (ev["status"] == "failed").all()
    assert sel.result["dropped_counts"]["x=3"] == {"evaluations": 5, "failed": 5, "non_finite": 5}
    # the confidence in words says what it covers; the number itself is the strategy's own
    assert "confidence" in sel.result and sel.result["guarantee"].endswith(NAN_TAIL)


def test_guarantee_narrowed_in_a_front_and_when_read_back(tmp_path):
    def nan_at_c3(estimator, X, y):
        return math.nan if estimator.C == 3.0 else float(np.mean(estimator.predict(X) == y))

    X, y = make_classification(n_samples=200, random_state=0)
    path = tmp_path / "b.sqlite"
    with pytest.warns(DroppedCandidateWarning, match="'C=3.0' was dropped"):
        search = BanditSearchCV(LogisticRegression(), {"C": [0.01, 1.0, 3.0]}, scoring=nan_at_c3, random_state=0,
                                store=path, progress=False).fit(X, y)
    assert "among the 2 candidates left; dropped: 'C=3.0' (all 5 evaluations returned a non-finite score" \
        in search.guarantee_
    back = certa.load(path)  # the same mechanism when a run is read back (certa show, certa report)
    assert back.result["guarantee"] == search.selection_.result["guarantee"]
    assert back.result["dropped_counts"] == {"C=3.0": {"evaluations": 5, "failed": 5, "non_finite": 5}}
    assert "dropped: 'C=3.0' (all 5 evaluations returned a non-finite score" in summarize(back)["statement"]


def test_mixed_failures_are_counted_apart():
    def flaky(params, train, test, seed):
        if params["x"] == 3:
            if np.random.default_rng(seed).random() < 0.5:
                raise RuntimeError("boom")
            return math.inf
        return 0.1 * params["x"] + np.random.default_rng(seed).normal(0, 0.05)

    with pytest.warns(DroppedCandidateWarning) as rec:
        sel = bandit_select(flaky, {"x": [0, 1, 2, 3]}, strategy="top_two", random_state=1, progress=False)
    ev = sel.evaluations[sel.evaluations["name"] == "x=3"]
    n_inf = int(ev["error"].str.startswith("evaluation returned a non-finite score").sum())
    assert 0 < n_inf < len(ev) == 5
    assert sel.result["dropped_counts"]["x=3"] == {"evaluations": 5, "failed": 5, "non_finite": n_inf}
    assert f"all 5 evaluations failed, {n_inf} with a non-finite score" in str(rec[0].message)


def test_no_drop_no_warning_and_guarantee_unchanged():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DroppedCandidateWarning)
        sel = bandit_select(lambda p, tr, te, seed: 0.1 * p["x"] + np.random.default_rng(seed).normal(0, 0.05),
                            {"x": [0, 1, 2]}, random_state=0, progress=False)
    assert "dropped" not in sel.result["guarantee"] and "dropped_counts" not in sel.result


# ----------------------------------------------------------------------------- item 9
@pytest.fixture(scope="module")
def debian():
    # bundled real data: 3,000 Debian package descriptions, 6 sections; train / unlabelled / test
    X, y = load_debian_small(return_X_y=True)
    X_tr, X_rest, y_tr, y_rest = train_test_split(X, y, test_size=0.5, stratify=y, random_state=0)
    X_u, X_te, _, y_te = train_test_split(X_rest, y_rest, test_size=0.5, stratify=y_rest, random_state=0)
    vec = TfidfVectorizer(sublinear_tf=True, min_df=2).fit(X_tr)
    return vec.transform(X_tr), y_tr, vec.transform(X_u), vec.transform(X_te), y_te


C_GRID = {"C": [0.01, 0.1, 1.0, 10.0, 100.0]}


def test_saturated_bounds_on_debian_say_so(debian, tmp_path):
    A, y, U, T, y_te = debian
    path = tmp_path / "q.sqlite"
    with pytest.warns(BoundsNotSeparatedWarning, match=r"accuracy bounds do not separate 5 candidates.*decided "
                                                       r"by the unclipped value.*hold-out set or cross-validation"):
        search = QuantificationBoundSearch(LinearSVC(random_state=0), C_GRID, store=path,
                                           progress=False).fit(A, y, U)
    # certa show says it too, from the store alone
    assert ("do not separate it from 4 other candidate(s)" in summarize(certa.load(path))["statement"]
            and "decided by: unclipped value" in summarize(certa.load(path))["statement"])
    # the known answer: every accuracy guarantee is clipped at 1 (the bound certifies nothing here)
    assert (search.bounds_["bound"] == 1.0).all() and (search.bounds_["value"] > 1.0).all()
    assert not search.separated_ and search.decided_by_ == "unclipped value"
    assert search.contenders_ == [{"C": c} for c in C_GRID["C"]] and search.bounds_["contender"].all()
    assert search.selection_.result["separated"] is False
    assert search.selection_.result["decided_by"] == "unclipped value"
    # why labelled data matter here: the choice is not the most accurate setting on the test part
    acc = [LinearSVC(random_state=0, C=c).fit(A, y).score(T, y_te) for c in C_GRID["C"]]
    assert acc[search.best_index_] < max(acc) - 0.01


def test_macro_f1_exact_tie_at_one_names_the_tie_break(debian):
    A, y, U, _, _ = debian
    with pytest.warns(BoundsNotSeparatedWarning, match="decided by the tie-break"):
        search = QuantificationBoundSearch(LinearSVC(random_state=0), C_GRID, measure="macro_f1",
                                           progress=False).fit(A, y, U)
    assert (search.bounds_["value"] == 1.0).all() and search.bounds_["tied"].all()
    plug = search.bounds_["plugin"].to_numpy()
    assert search.best_index_ == int(np.argmax(plug)) and (np.sort(plug)[-1] > np.sort(plug)[-2])
    assert search.decided_by_ == "plugin" and not search.separated_


def test_separated_bounds_are_silent(debian):
    # the two most regularised SVMs predict far from the training priors: their guarantees are below 1
    A, y, U, _, _ = debian
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoundsNotSeparatedWarning)
        search = QuantificationBoundSearch(LinearSVC(random_state=0), {"C": [1e-6, 1e-5, 1.0]},
                                           progress=False).fit(A, y, U)
    g = search.bounds_["bound"].to_numpy()
    assert g[2] == 1.0 and g[:2].max() < 1.0 - 1.0 / U.shape[0]
    assert search.separated_ and search.decided_by_ == "bound" and search.contenders_ == [{"C": 1.0}]


def test_separation_rule_at_the_tolerance():
    M = 400
    assert separation([0.9, 0.9 - 0.9 / M], 0, [0], [np.nan, np.nan], M)["decided_by"] == "value within tolerance"
    assert separation([0.9, 0.9 - 1.1 / M], 0, [0], [np.nan, np.nan], M)["separated"]
    far = separation([0.9, np.nan, 0.9], 0, [0, 2], [0.5, np.nan, 0.5], M)
    assert far["contenders"] == [0, 2] and far["decided_by"] == "grid order"  # equal tie values: grid order
    assert separation([0.9, 0.9], 1, [0, 1], [0.4, 0.6], M, "callable")["decided_by"] == "callable tie_break"
    assert separation([0.9, 0.9], 0, [0, 1], [0.6, 0.4], M, "order")["decided_by"] == "grid order"
    assert separation([1.0, 0.5], 0, [0], [np.nan] * 2, M)["separated"]  # a guarantee at 1 alone is separated
