"""QuantificationBoundSearch / OneShot: selection by quantification bounds on certa's engine.

The bounds themselves (hand-computed values, coverage in simulation, CC/PCC against QuaPy)
are tested in tests/test_quantification.py; here: that the search computes exactly those
bounds per candidate, chooses by the documented rule, resumes, validates and is
deterministic across workers.
"""
import json
import sqlite3
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.svm import LinearSVC

from certa.engine import Draw, FunctionEvaluator, run
from certa.quantification import Theorem1Warning, accuracy_bound, bounds_for_classifier, macro_f1_bound
from certa.search.quantification import (
    BoundsNotSeparatedWarning,
    QuantificationBoundEvaluator,
    QuantificationBoundSearch,
    plugin_value,
)
from certa.strategies.one_shot import OneShot, choose_one_shot

GRID = {"C": [1e-4, 1e-2, 1.0, 100.0]}


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=420, n_features=6, n_informative=4, n_redundant=0, n_classes=3,
                               weights=[0.6, 0.3, 0.1], class_sep=0.8, random_state=3)
    return X[:260], y[:260], X[260:]


N_FITS = {"n": 0}


class CountingLR(LogisticRegression):
    """LogisticRegression that counts its fits (in the calling process: n_jobs=1)."""

    def fit(self, X, y, sample_weight=None):
        N_FITS["n"] += 1
        return super().fit(X, y, sample_weight)


class OnlyPredict(ClassifierMixin, BaseEstimator):
    """A classifier with neither predict_proba nor decision_function."""

    def __init__(self, k=1):
        self.k = k

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def predict(self, X):
        return np.full(np.asarray(X).shape[0], self.classes_[0])


def _direct(estimator, params, X, y, X_u, measure, quantifier="cc", bound="certa"):
    clf = clone(estimator).set_params(**params).fit(X, y)
    return clf, bounds_for_classifier(clf, X_u, y, quantifier=quantifier, measure=measure, bound=bound)


# --------------------------------------------------------------------------- selection
@pytest.mark.parametrize("bound", ["theorem1", "certa"])
@pytest.mark.parametrize("measure", ["accuracy", "macro_f1"])
def test_selection_matches_direct_bounds(data, measure, bound):
    X, y, X_u = data
    est = LogisticRegression(max_iter=1000)
    search = QuantificationBoundSearch(est, GRID, measure=measure, bound=bound).fit(X, y, X_unlabeled=X_u)
    direct = [_direct(est, {"C": c}, X, y, X_u, measure, bound=bound) for c in GRID["C"]]
    values = np.array([b.value for _, b in direct])
    np.testing.assert_allclose(search.bounds_["value"], values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(search.bounds_["bound"], [b.bound for _, b in direct], rtol=0, atol=1e-12)
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], values, rtol=0, atol=1e-12)
    assert values.min() < values.max()  # the grid really separates the candidates (C=1e-4: majority class only)
    # the rule: highest unclipped value; exact ties broken by the point value (no confidence term)
    plug = np.array([b.point_value for _, b in direct])
    if bound == "certa":  # certa's point value is plugin_value of the fed distribution
        np.testing.assert_allclose(plug, [plugin_value(b.train_proportions, b.predicted_proportions, b.epsilon,
                                                       measure) for _, b in direct], rtol=0, atol=1e-12)
    top = np.flatnonzero(values == values.max())
    expected = int(top[np.argmax(plug[top])])
    assert search.best_index_ == expected
    assert search.best_params_ == {"C": GRID["C"][expected]}
    assert search.best_score_ == pytest.approx(values[expected], abs=1e-12)
    assert search.best_bound_ == pytest.approx(min(1.0, values[expected]), abs=1e-12)
    # distributions in the result are those of the direct computation
    b0 = direct[0][1]
    np.testing.assert_allclose(search.train_distribution_.to_numpy(), b0.train_proportions, atol=1e-15)
    np.testing.assert_allclose(search.bounds_["cc_distribution"][0].to_numpy(), b0.cc_proportions, atol=1e-15)
    assert list(search.train_distribution_.index) == [str(c) for c in b0.classes]
    np.testing.assert_allclose(search.bounds_["confidence_term"], [b.confidence_term for _, b in direct])
    # no refit: best_estimator_ is the worker's fit and equals a direct fit
    assert search.refit_time_ == 0.0
    np.testing.assert_array_equal(search.best_estimator_.coef_, direct[expected][0].coef_)
    np.testing.assert_array_equal(search.predict(X_u), direct[expected][0].predict(X_u))


def test_default_bound_is_certas_and_silent(data):
    # issue 24, #13: certa's bounds are the default (they held in every simulated draw); no Theorem 1
    # warning. Issue 31: here 3 of the 4 guarantees are 1, so the one warning is that the bounds do not
    # separate them (tests/test_fronts_31.py)
    X, y, X_u = data
    est = LogisticRegression(max_iter=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", BoundsNotSeparatedWarning)
        search = QuantificationBoundSearch(est, GRID).fit(X, y, X_u)
    assert not search.separated_ and int((search.bounds_["bound"] == 1).sum()) >= 2
    direct = [_direct(est, {"C": c}, X, y, X_u, "accuracy", bound="certa")[1] for c in GRID["C"]]
    np.testing.assert_allclose(search.bounds_["value"], [b.value for b in direct], rtol=0, atol=1e-12)
    assert {b.bound_type for b in direct} == {"certa"}
    clf = clone(est).fit(X, y)
    assert bounds_for_classifier(clf, X_u, y).bound_type == "certa"


def test_both_measures_in_details_match_direct(data):
    X, y, X_u = data
    est = LogisticRegression(max_iter=1000)
    search = QuantificationBoundSearch(est, GRID, measure="accuracy").fit(X, y, X_u)
    f1 = [_direct(est, {"C": c}, X, y, X_u, "macro_f1")[1] for c in GRID["C"]]
    np.testing.assert_allclose(search.bounds_["value_macro_f1"], [b.value for b in f1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(search.bounds_["bound_macro_f1"], [b.bound for b in f1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(search.bounds_["plugin_macro_f1"], [b.point_value for b in f1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(search.bounds_["bound_accuracy"], search.bounds_["bound"], rtol=0, atol=0)
    np.testing.assert_allclose(search.bounds_["value_accuracy"], search.bounds_["value"], rtol=0, atol=0)


def test_pcc_from_decision_scores_matches_direct(data):
    X, y, X_u = data
    est = LinearSVC(random_state=0)
    search = QuantificationBoundSearch(est, GRID, measure="macro_f1", quantifier="pcc").fit(X, y, X_u)
    for i, c in enumerate(GRID["C"]):
        _, b = _direct(est, {"C": c}, X, y, X_u, "macro_f1", "pcc")
        assert search.bounds_["value"][i] == pytest.approx(b.value, abs=1e-12)
        assert search.bounds_["epsilon_raw"][i] == pytest.approx(b.epsilon_raw, abs=1e-15)
        assert search.bounds_["max_epsilon"][i] == pytest.approx(b.max_epsilon, abs=1e-15)
        assert search.bounds_["sigma"][i] == b.sigma
        assert search.bounds_["quantifier_used"][i] == b.quantifier_used
        assert search.bounds_["epsilon"][i] == pytest.approx(b.epsilon, abs=1e-15)
        np.testing.assert_allclose(search.bounds_["quantified_distribution"][i], b.quantified_proportions)


def test_keep_models_false_refits_the_same_model(data):
    X, y, X_u = data
    kept = QuantificationBoundSearch(LogisticRegression(max_iter=1000), GRID).fit(X, y, X_u)
    refit = QuantificationBoundSearch(LogisticRegression(max_iter=1000), GRID, keep_models=False).fit(X, y, X_u)
    assert refit.best_index_ == kept.best_index_
    assert refit.refit_time_ > 0 and refit.selection_.transient == {}
    np.testing.assert_array_equal(refit.best_estimator_.coef_, kept.best_estimator_.coef_)


def test_evaluator_details_are_json_and_consistent(data):
    X, y, X_u = data
    ev = QuantificationBoundEvaluator(LogisticRegression(max_iter=1000), X, y, X_u, measure="accuracy")
    out = ev.evaluate({"C": 1.0}, Draw(0, "full", (0,)))
    payload = out.pop("transient")
    json.dumps(out)  # everything but the transient model must be JSON-able (the store writes it as JSON)
    _, counts = np.unique(y, return_counts=True)
    np.testing.assert_allclose(out["train_distribution"], counts / len(y))
    assert out["n_train"] == len(y) and out["n_unlabeled"] == len(X_u)
    assert out["score"] == out["value"] == out["value_accuracy"] and out["bound"] == min(1.0, out["value"])
    assert payload["estimator"].predict(X_u).shape == (len(X_u),)
    with pytest.raises(ValueError, match="'full' draws"):
        ev.evaluate({"C": 1.0}, Draw(0, "fold", (0, 0)))


# ------------------------------------------------------------------------ tie-breaking
def test_choose_one_shot_rule():
    assert choose_one_shot([0.5, 0.9, np.nan]) == (1, [1])
    assert choose_one_shot([1.0, 1.0, 0.2]) == (0, [0, 1])  # order
    assert choose_one_shot([1.0, 1.0, 0.2], [0.1, 0.4, 0.9]) == (1, [0, 1])  # tie value, not the loser's
    assert choose_one_shot([1.0, 1.0, 1.0], [0.3, np.nan, 0.3]) == (0, [0, 1, 2])  # equal tie values: order
    assert choose_one_shot([np.nan, np.nan]) == (0, [0, 1])
    with pytest.raises(ValueError, match="tie_values"):
        choose_one_shot([1.0, 1.0], [1.0])


def test_one_shot_strategy_on_the_runner():
    scores = {0: 1.0, 1: 0.5, 2: 1.0, 3: 1.0}
    plug = {0: 0.7, 1: 0.99, 2: 0.8, 3: 0.8}
    ev = FunctionEvaluator(lambda p, seed: {"score": scores[p["i"]], "plugin": plug[p["i"]], "seed": seed})
    sel = run(OneShot(tie_break="plugin"), ev, {"i": [0, 1, 2, 3]}, random_state=5)
    assert sel.best_index == 2 and sel.result["tied"] == [0, 2, 3]
    assert sel.n_evaluations == 4 and set(sel.evaluations["kind"]) == {"full"}
    sel2 = run(OneShot(), ev, {"i": [0, 1, 2, 3]}, random_state=5)
    assert sel2.best_index == 0
    # seeds derive from (root, candidate) only
    from certa.engine import derive_seed
    assert list(sel.evaluations["seed"]) == [derive_seed(5, c) for c in range(4)]


def test_clipping_at_one_creates_no_tie(data):
    # tiny training set: Theorem 1's accuracy term |Y| t exceeds 1, every guarantee is clipped
    # to exactly 1; the choice is the highest unclipped value (= the highest B_A for CC)
    X, y, X_u = data
    with pytest.warns(Theorem1Warning, match="void"):
        search = QuantificationBoundSearch(LogisticRegression(max_iter=1000), GRID, bound="theorem1").fit(
            X[:40], y[:40], X_u)
    assert np.all(search.bounds_["bound"] == 1.0)
    values = search.bounds_["value"].to_numpy()
    assert np.all(values > 1.0)
    # independent reference: B_A = sum_y min(p_hat_y, q_y) from the candidates' predictions
    classes = np.unique(y[:40])
    p_hat = np.array([np.mean(y[:40] == c) for c in classes])
    b_a = []
    for c in GRID["C"]:
        pred = LogisticRegression(max_iter=1000, C=c).fit(X[:40], y[:40]).predict(X_u)
        b_a.append(np.minimum(p_hat, [np.mean(pred == k) for k in classes]).sum())
    assert np.argsort(values).tolist() == np.argsort(b_a).tolist()
    assert search.best_index_ == int(np.argmax(b_a))
    assert int(search.bounds_["tied"].sum()) == 1


# two candidates with identical fits (warm_start does not change a single fit): an exact tie
TIE_GRID = {"C": [1e-4, 1.0], "warm_start": [False, True]}  # order: (1e-4,F), (1e-4,T), (1,F), (1,T)


def test_exact_ties_broken_by_plugin_then_order(data):
    X, y, X_u = data
    est = LogisticRegression(max_iter=1000)
    search = QuantificationBoundSearch(est, TIE_GRID).fit(X, y, X_u)
    v = search.bounds_["value"].to_numpy()
    assert v[2] == v[3] == v.max() and v[0] < v.max()
    assert list(search.bounds_["tied"]) == [False, False, True, True]
    assert search.best_index_ == 2  # equal point values too: grid order
    assert QuantificationBoundSearch(est, TIE_GRID, tie_break="order").fit(X, y, X_u).best_index_ == 2


def test_callable_tie_break_prefers_within_the_tie_only(data):
    X, y, X_u = data
    est = LogisticRegression(max_iter=1000)
    late = QuantificationBoundSearch(est, TIE_GRID, tie_break=lambda p: float(p["warm_start"])).fit(X, y, X_u)
    assert late.best_index_ == late.selection_.best_index == 3
    np.testing.assert_array_equal(late.selection_.result["tie_values"], [0.0, 1.0, 0.0, 1.0])
    # the most regularised candidates are preferred but not in the tie: the bound decides first
    simplest = QuantificationBoundSearch(est, TIE_GRID, tie_break=lambda p: -p["C"]).fit(X, y, X_u)
    assert simplest.best_index_ == 2


def test_callable_tie_break_bad_values(data):
    X, y, X_u = data
    est = LogisticRegression(max_iter=1000)
    with pytest.raises(ValueError, match="tie_break.*finite number"):
        QuantificationBoundSearch(est, GRID, tie_break=lambda p: float("nan")).fit(X, y, X_u)
    with pytest.raises(ValueError, match="tie_break.*finite number"):
        QuantificationBoundSearch(est, GRID, tie_break=lambda p: "small").fit(X, y, X_u)
    with pytest.raises(ValueError, match="tie_break.*KeyError"):
        QuantificationBoundSearch(est, GRID, tie_break=lambda p: p["alpha"]).fit(X, y, X_u)


def test_plugin_value_hand_computed_and_limit_of_the_bound():
    p, q = [0.5, 0.3, 0.2], [0.4, 0.4, 0.2]
    assert plugin_value(p, q) == pytest.approx(0.9)  # 1 - 0.2 / 2
    # per class (P, R): (1, .8), (.75, 1), (1, 1) -> F1 16/18, 6/7, 1
    assert plugin_value(p, q, measure="macro_f1") == pytest.approx((16 / 18 + 6 / 7 + 1) / 3)
    # the bound tends to the plug-in as N -> infinity (confidence term -> 0)
    for eps in (0.0, 0.1):
        big = macro_f1_bound(p, q, n_train=10**12, epsilon=eps)
        assert big == pytest.approx(plugin_value(p, q, eps, "macro_f1"), abs=1e-4)
        assert accuracy_bound(p, q, n_train=10**12, epsilon=eps) == pytest.approx(
            plugin_value(p, q, eps, "accuracy"), abs=1e-4)


# ---------------------------------------------------------------------------- resume
def test_resume_from_sqlite_store(data, tmp_path):
    X, y, X_u = data
    path = tmp_path / "q.sqlite"
    est = CountingLR(max_iter=1000)
    N_FITS["n"] = 0
    first = QuantificationBoundSearch(est, GRID, store=path).fit(X, y, X_u)
    assert N_FITS["n"] == 4
    # simulate a run killed after two evaluations: drop the last two rows
    con = sqlite3.connect(path)
    con.execute("DELETE FROM evaluations WHERE candidate >= 2")
    con.commit()
    con.close()
    N_FITS["n"] = 0
    second = QuantificationBoundSearch(est, GRID, store=path).fit(X, y, X_u)
    assert N_FITS["n"] == 2 and second.selection_.n_reused == 2
    np.testing.assert_array_equal(second.bounds_["value"], first.bounds_["value"])
    assert second.best_index_ == first.best_index_
    # a complete store: no candidate is fitted again; the store holds data only (no pickled
    # models, issue #11), so the winner alone is refit once
    N_FITS["n"] = 0
    third = QuantificationBoundSearch(est, GRID, store=path).fit(X, y, X_u)
    assert N_FITS["n"] == 1 and third.selection_.n_reused == 4 and third.refit_time_ > 0.0
    np.testing.assert_array_equal(third.best_estimator_.coef_, first.best_estimator_.coef_)
    # a different unlabeled set is a different run: the store refuses it
    with pytest.raises(ValueError, match="different run"):
        QuantificationBoundSearch(est, GRID, store=path).fit(X, y, X_u[:50])


# ------------------------------------------------------------------------- bad input
def test_bad_input(data):
    X, y, X_u = data
    est = LogisticRegression(max_iter=1000)
    s = QuantificationBoundSearch(est, GRID)
    with pytest.raises(ValueError, match="X_unlabeled.*empty"):
        s.fit(X, y, X_u[:0])
    with pytest.raises(ValueError, match="X_unlabeled.*features"):
        s.fit(X, y, X_u[:, :4])
    with pytest.raises(ValueError, match="X_unlabeled"):
        s.fit(X, y, None)
    with pytest.raises(TypeError, match="pcc"):
        QuantificationBoundSearch(OnlyPredict(), {"k": [1, 2]}, quantifier="pcc").fit(X, y, X_u)
    with pytest.raises(TypeError, match="predict_proba or decision_function"):
        QuantificationBoundEvaluator(OnlyPredict(), X, y, X_u, quantifier="pcc")
    with pytest.raises(ValueError, match="two classes"):
        s.fit(X, np.zeros(len(X), dtype=int), X_u)
    with pytest.raises(ValueError, match="measure"):
        QuantificationBoundSearch(est, GRID, measure="f1").fit(X, y, X_u)
    with pytest.raises(ValueError, match="quantifier"):
        QuantificationBoundSearch(est, GRID, quantifier="acc").fit(X, y, X_u)
    with pytest.raises(ValueError, match="delta"):
        QuantificationBoundSearch(est, GRID, delta=1.0).fit(X, y, X_u)
    with pytest.raises(ValueError, match="tie_break"):
        QuantificationBoundSearch(est, GRID, tie_break="random").fit(X, y, X_u)
    with pytest.raises(ValueError, match="bound"):
        QuantificationBoundSearch(est, GRID, bound="paper").fit(X, y, X_u)
    with pytest.raises(TypeError, match="classifier"):
        QuantificationBoundSearch(Ridge(), {"alpha": [1.0]}).fit(X, y, X_u)
    with pytest.raises(ValueError, match="different numbers of samples"):
        s.fit(X, y[:-1], X_u)


class _AlwaysFails(LogisticRegression):
    def fit(self, X, y):
        raise RuntimeError("this fit always fails")


def test_every_candidate_failing_is_reported(data):
    X, y, X_u = data
    with pytest.raises(RuntimeError, match="every candidate failed.*always fails"):
        QuantificationBoundSearch(_AlwaysFails(), {"C": [1.0, 2.0]}).fit(X, y, X_u)
    # parameter values the estimator's constraints refuse are caught before any fit (issue #11)
    with pytest.raises(ValueError, match="param_grid.*'C' parameter"):
        QuantificationBoundSearch(LogisticRegression(), {"C": [-1.0, -2.0]}).fit(X, y, X_u)


# ----------------------------------------------------------------------- determinism
def test_same_result_with_one_and_two_workers(data):
    X, y, X_u = data
    est = LinearSVC(random_state=0)
    one = QuantificationBoundSearch(est, GRID, quantifier="pcc", n_jobs=1).fit(X, y, X_u)
    two = QuantificationBoundSearch(est, GRID, quantifier="pcc", n_jobs=2).fit(X, y, X_u)
    np.testing.assert_array_equal(one.bounds_["value"], two.bounds_["value"])
    np.testing.assert_array_equal(one.bounds_["plugin"], two.bounds_["plugin"])
    assert one.best_index_ == two.best_index_
    np.testing.assert_array_equal(one.best_estimator_.coef_, two.best_estimator_.coef_)
