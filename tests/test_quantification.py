"""Tests for certa.quantification: quantifiers (CC, PCC, sigma rule) and certa's own bounds.

Theorem 1 of the paper (``bound="theorem1"``) is tested in tests/test_quantification_theorem1.py.
"""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from scipy.special import expit
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, precision_recall_fscore_support
from sklearn.svm import LinearSVC

import certa.quantification.bounds as bounds_mod
import certa.quantification.certa_bounds as certa_bounds_mod
import certa.quantification.quantifiers as quant_mod
import certa.quantification.theorem1 as theorem1_mod
from certa.quantification import (
    accuracy_bound,
    bounds_for_classifier,
    choose_sigma,
    classify_and_count,
    decision_to_proba,
    l1_confidence_radius,
    macro_f1_bound,
    macro_precision_bound,
    macro_recall_bound,
    probabilistic_classify_and_count,
    quantification_epsilon,
    resolve_quantifier,
    true_proportion_intervals,
)

HUGE_N = 10**12  # confidence terms ~1e-6: bounds reduce to their deterministic part


# ----------------------------------------------------------------------------- helpers
class StubClassifier:
    """A 'fitted' classifier whose outputs are fixed arrays (index = row of X)."""

    def __init__(self, classes, pred, proba=None, scores=None, n_features=2):
        self.classes_ = np.asarray(classes)
        self.n_features_in_ = n_features
        self._pred = np.asarray(pred)
        if proba is not None:
            self.predict_proba = lambda X: np.asarray(proba)[: len(X)]
        if scores is not None:
            self.decision_function = lambda X: np.asarray(scores)[: len(X)]

    def predict(self, X):
        return self._pred[: len(X)]


def _samples_from_confusion(true_counts, confusion):
    """Label vectors realising an integer confusion matrix (rows true, columns predicted)."""
    y_true, y_pred = [], []
    for t, row in enumerate(confusion):
        assert sum(row) == true_counts[t]
        for p, c in enumerate(row):
            y_true += [t] * c
            y_pred += [p] * c
    return np.array(y_true), np.array(y_pred)


# ------------------------------------------------------------------------ quantifiers
def test_classify_and_count_counts_unpredicted_classes_as_zero():
    q = classify_and_count(np.array(["b", "b", "a", "b"]), ["a", "b", "c"])
    np.testing.assert_array_equal(q, [0.25, 0.75, 0.0])


def test_pcc_is_the_column_mean():
    proba = np.array([[0.2, 0.8], [0.6, 0.4], [1.0, 0.0]])
    # (0.2 + 0.6 + 1.0) / 3 = 0.6 ; (0.8 + 0.4 + 0) / 3 = 0.4
    np.testing.assert_allclose(probabilistic_classify_and_count(proba), [0.6, 0.4], rtol=0, atol=1e-15)


def test_cc_and_pcc_agree_with_quapy():
    quapy_agg = pytest.importorskip("quapy.method.aggregative")
    rng = np.random.default_rng(20240601)
    X = rng.normal(size=(300, 4))
    y = rng.choice(np.array(["neg", "neu", "pos"]), size=300, p=[0.5, 0.3, 0.2])
    clf = LogisticRegression(max_iter=500).fit(X, y)
    X_u = rng.normal(size=(211, 4)) * 1.5
    pred, proba = clf.predict(X_u), clf.predict_proba(X_u)
    ref_cc = quapy_agg.CC(clf, fit_classifier=False).aggregate(pred)
    ref_pcc = quapy_agg.PCC(clf, fit_classifier=False).aggregate(proba)
    np.testing.assert_allclose(classify_and_count(pred, clf.classes_), ref_cc, rtol=0, atol=1e-12)
    np.testing.assert_allclose(probabilistic_classify_and_count(proba), ref_pcc, rtol=0, atol=1e-12)
    # the SVM path (logistic map of decision scores) against quapy's PCC aggregation too
    svm_proba = decision_to_proba(LinearSVC().fit(X, y).decision_function(X_u), 3.0)
    ref_svm = quapy_agg.PCC(clf, fit_classifier=False).aggregate(svm_proba)
    np.testing.assert_allclose(probabilistic_classify_and_count(svm_proba), ref_svm, rtol=0, atol=1e-12)


def test_decision_to_proba_binary_and_one_vs_rest():
    t = np.array([-2.0, 0.0, 0.5])
    out = decision_to_proba(t, sigma=3.0)
    np.testing.assert_allclose(out[:, 1], 1.0 / (1.0 + np.exp(-3.0 * t)), rtol=1e-14)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-14)
    T = np.array([[1.0, -1.0, 0.0], [-800.0, -900.0, -850.0]])
    out = decision_to_proba(T, sigma=2.0)
    s = 1.0 / (1.0 + np.exp(-2.0 * T[0]))
    np.testing.assert_allclose(out[0], s / s.sum(), rtol=1e-14)
    np.testing.assert_allclose(out[1], [1 / 3, 1 / 3, 1 / 3], rtol=1e-14)  # all underflow


def test_choose_sigma_binary_minimises_max_eps():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] + 0.8 * rng.normal(size=400) > 0.3).astype(int)
    svm = LinearSVC().fit(X, y)
    scores = svm.decision_function(rng.normal(size=(250, 3)))
    cc = np.mean(scores > 0)
    # independent reference: the positive-class PCC is mean expit(s t); Max_eps = |PCC - CC|
    dist = [abs(np.mean(expit(s * scores)) - cc) for s in range(1, 11)]
    assert choose_sigma(scores) == float(1 + int(np.argmin(dist)))
    with pytest.raises(ValueError, match="sigmas"):
        choose_sigma(scores, sigmas=[0.0, 1.0])


# ------------------------------------------------------------------ confidence terms
def test_l1_radius_matches_hand_formula():
    # K = 3, N = 100, delta = .05: sqrt(2 * (1/100) * ln((2^3 - 2) / .05)) = sqrt(.02 ln 120)
    assert l1_confidence_radius(3, 100, 0.05) == pytest.approx(math.sqrt(0.02 * math.log(120)), rel=1e-12)
    # with M = 400: 1/N + 1/M = .0125
    assert l1_confidence_radius(3, 100, 0.05, 400) == pytest.approx(
        math.sqrt(2 * 0.0125 * math.log(120)), rel=1e-12
    )
    # large K must not overflow: ln(2^K - 2) ~ K ln 2
    assert l1_confidence_radius(2000, 10**6, 0.05) == pytest.approx(
        math.sqrt(2e-6 * (2000 * math.log(2) - math.log(0.05))), rel=1e-9
    )


def test_true_proportion_intervals_are_clopper_pearson():
    sm = pytest.importorskip("statsmodels.stats.proportion")
    p_hat, n, delta, k = np.array([0.7, 0.25, 0.05]), 200, 0.05, 3
    lo, hi = true_proportion_intervals(p_hat, n, delta)
    # one-sided delta/(2K) each = two-sided alpha delta/K
    ref_lo, ref_hi = sm.proportion_confint(np.array([140, 50, 10]), n, alpha=delta / k, method="beta")
    np.testing.assert_allclose(lo, ref_lo, rtol=1e-10)
    np.testing.assert_allclose(hi, ref_hi, rtol=1e-10)
    lo_m, hi_m = true_proportion_intervals(p_hat, n, delta, n_unlabeled=50)
    assert np.all(lo_m <= lo) and np.all(hi_m >= hi)  # a finite S widens the interval
    assert np.all(lo_m * 50 == np.round(lo_m * 50))  # S-proportions are multiples of 1/M


# ----------------------------------------------------------------- hand computations
def test_accuracy_bound_hand_computed_and_attained():
    # p_hat = (.5, .3, .2), q = (.2, .3, .5): ||p_hat - q||_1 = .3 + 0 + .3 = .6
    # without confidence term B_A = 1 - .6 / 2 = .7
    assert accuracy_bound([0.5, 0.3, 0.2], [0.2, 0.3, 0.5], HUGE_N) == pytest.approx(0.7, abs=1e-5)
    # N = 100, delta = .05: lambda = sqrt(.02 ln 120) = .309435; B_A = 1 - (.6 - .309435)/2 = .854718
    lam = math.sqrt(0.02 * math.log(120))
    assert accuracy_bound([0.5, 0.3, 0.2], [0.2, 0.3, 0.5], 100) == pytest.approx(1 - (0.6 - lam) / 2, rel=1e-12)
    # epsilon = .1 subtracts from the gap: 1 - (.6 - .1)/2 = .75
    assert accuracy_bound([0.5, 0.3, 0.2], [0.2, 0.3, 0.5], HUGE_N, epsilon=0.1) == pytest.approx(0.75, abs=1e-5)
    # the deterministic part is attained: true counts (50, 30, 20), 30 of class 0 predicted as 2
    y_true, y_pred = _samples_from_confusion([50, 30, 20], [[20, 0, 30], [0, 30, 0], [0, 0, 20]])
    assert accuracy_score(y_true, y_pred) == pytest.approx(0.7, abs=1e-15)
    assert classify_and_count(y_pred, [0, 1, 2]) == pytest.approx([0.2, 0.3, 0.5])


def test_macro_bounds_hand_computed_and_attained():
    p, q = [0.8, 0.2], [0.6, 0.4]
    # precision caps: min(1, .8/.6) = 1, .2/.4 = .5 -> B_MaP = .75
    # recall caps:    .6/.8 = .75, min(1, .4/.2) = 1 -> B_MaR = .875
    # per-class F1:   H(1, .75) = 6/7, H(.5, 1) = 2/3 -> mean = 16/21 = .761905
    # harmonic:       H(.75, .875) = 2 * .65625 / 1.625 = .807692
    assert macro_precision_bound(p, q, 10**9) == pytest.approx(0.75, abs=1e-3)
    assert macro_recall_bound(p, q, 10**9) == pytest.approx(0.875, abs=1e-3)
    assert macro_f1_bound(p, q, 10**9) == pytest.approx(16 / 21, abs=1e-3)
    assert macro_f1_bound(p, q, 10**9, definition="harmonic") == pytest.approx(0.807692, abs=1e-3)
    # epsilon = .1 lets q_y move by .05: precision_2 <= .2/.35, recall_1 <= .65/.8
    assert macro_precision_bound(p, q, 10**9, epsilon=0.1) == pytest.approx((1 + 0.2 / 0.35) / 2, abs=1e-3)
    assert macro_recall_bound(p, q, 10**9, epsilon=0.1) == pytest.approx((0.65 / 0.8 + 1) / 2, abs=1e-3)
    # attained: true (80, 20), 20 of class 0 predicted as class 1
    y_true, y_pred = _samples_from_confusion([80, 20], [[60, 20], [0, 20]])
    P, R, F, _ = precision_recall_fscore_support(y_true, y_pred, labels=[0, 1], zero_division=1.0)
    assert P.mean() == pytest.approx(0.75) and R.mean() == pytest.approx(0.875)
    assert F.mean() == pytest.approx(16 / 21)


def test_macro_bounds_use_the_intervals_exactly():
    p_hat, q, n, delta = np.array([0.7, 0.25, 0.05]), np.array([0.6, 0.1, 0.3]), 200, 0.1
    lo, hi = true_proportion_intervals(p_hat, n, delta)
    prec = np.minimum(1, hi / q)
    rec = np.minimum(1, q / lo)
    assert macro_precision_bound(p_hat, q, n, delta) == pytest.approx(prec.mean(), rel=1e-12)
    assert macro_recall_bound(p_hat, q, n, delta) == pytest.approx(rec.mean(), rel=1e-12)
    f1 = np.mean(2 * prec * rec / (prec + rec))
    assert macro_f1_bound(p_hat, q, n, delta) == pytest.approx(f1, rel=1e-12)
    # per-class F1 never exceeds the harmonic form (concavity of H)
    assert macro_f1_bound(p_hat, q, n, delta) <= macro_f1_bound(p_hat, q, n, delta, definition="harmonic")


def test_unpredicted_present_class_has_zero_f1_cap():
    # class 2 is never predicted but certainly present (N huge): F1_2 = 0, precision cap 1
    p, q = [0.5, 0.5], [1.0, 0.0]
    # per class: H(min(1,.5/1)=.5, min(1, 1/.5)=1) = 2/3 ; H(1, 0) = 0 -> mean 1/3
    assert macro_f1_bound(p, q, 10**9) == pytest.approx(1 / 3, abs=1e-3)
    assert macro_precision_bound(p, q, 10**9) == pytest.approx(0.75, abs=1e-3)


# ------------------------------------------------------------------- epsilon, fallback
def test_cc_gives_epsilon_zero():
    p, cc = [0.5, 0.3, 0.2], [0.4, 0.4, 0.2]
    for measure in ("accuracy", "macro_precision", "macro_recall", "macro_f1"):
        assert quantification_epsilon(p, cc, cc, measure) == 0.0
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    clf = LogisticRegression().fit(X, y)
    for bound in ("certa", "theorem1"):
        r = bounds_for_classifier(clf, rng.normal(size=(90, 2)), y, quantifier="cc", bound=bound)
        assert r.epsilon == 0.0 and r.quantifier_used == "cc" and r.bound_type == bound
    np.testing.assert_array_equal(r.predicted_proportions, r.cc_proportions)


def test_negative_epsilon_falls_back_to_cc():
    p, cc, pcc = [0.5, 0.5], [0.7, 0.3], [0.6, 0.4]
    # ||p - pcc||_1 - ||p - cc||_1 = .2 - .4 = -.2 < 0
    assert quantification_epsilon(p, cc, pcc) == pytest.approx(-0.2, abs=1e-15)
    q, eps, fell_back = resolve_quantifier(p, cc, pcc)
    assert fell_back and eps == 0.0
    np.testing.assert_array_equal(q, cc)
    # end to end: a classifier predicting 7 'a' / 3 'b' with soft mean (.6, .4) on a 50/50 task
    pred = np.array(["a"] * 7 + ["b"] * 3)
    proba = np.array([[0.6, 0.4]] * 10)
    clf = StubClassifier(["a", "b"], pred, proba=proba)
    r = bounds_for_classifier(clf, np.zeros((10, 2)), ["a", "b"] * 50, quantifier="pcc", bound="certa")
    assert r.quantifier == "pcc" and r.quantifier_used == "cc" and r.epsilon == 0.0
    np.testing.assert_allclose(r.quantified_proportions, [0.6, 0.4])
    assert r.bound == accuracy_bound([0.5, 0.5], [0.7, 0.3], 100, 0.05, 0.0, 10)


def test_nonnegative_epsilon_reproduces_the_cc_accuracy_bound():
    p, cc, pcc = [0.5, 0.3, 0.2], [0.45, 0.35, 0.2], [0.3, 0.3, 0.4]
    q, eps, fell_back = resolve_quantifier(p, cc, pcc)
    # ||p - pcc||_1 = .4, ||p - cc||_1 = .1 -> epsilon = .3
    assert not fell_back and eps == pytest.approx(0.3, abs=1e-15)
    assert accuracy_bound(p, q, 150, 0.05, eps) == pytest.approx(accuracy_bound(p, cc, 150, 0.05), abs=1e-12)
    # macro measures: epsilon is the L1 radius ||pcc - cc||_1 = .15 + .05 + .2 = .4
    assert quantification_epsilon(p, cc, pcc, "macro_f1") == pytest.approx(0.4, abs=1e-15)


def test_pcc_from_decision_function_uses_sigma_rule():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(300, 3))
    y = np.where(X[:, 0] + X[:, 1] > 0.5, "x", "o")
    svm = LinearSVC().fit(X, y)
    assert not hasattr(svm, "predict_proba")
    X_u = rng.normal(size=(120, 3))
    r = bounds_for_classifier(svm, X_u, y, quantifier="pcc", measure="macro_f1")
    scores = svm.decision_function(X_u)
    assert r.sigma == choose_sigma(scores)
    np.testing.assert_allclose(
        r.quantified_proportions, probabilistic_classify_and_count(decision_to_proba(scores, r.sigma))
    )


# ------------------------------------------------------------------------ simulation
def _simulate(p, confusion, n_train, m, delta, reps, seed):
    """Violation counts of each bound; labels drawn i.i.d. from p, predictions from confusion."""
    rng = np.random.default_rng(seed)
    k = len(p)
    classes = np.arange(k)
    viol = dict(acc=0, map=0, mar=0, mf1=0, plugin=0)
    for _ in range(reps):
        p_hat = rng.multinomial(n_train, p) / n_train
        y = rng.choice(k, size=m, p=p)
        u = rng.random(m)[:, None]
        pred = (u > np.cumsum(confusion, axis=1)[y]).sum(axis=1)
        q = classify_and_count(pred, classes)
        P, R, F, _ = precision_recall_fscore_support(y, pred, labels=classes, zero_division=1.0)
        acc = float(np.mean(pred == y))
        viol["acc"] += acc > accuracy_bound(p_hat, q, n_train, delta, n_unlabeled=m) + 1e-12
        viol["map"] += P.mean() > macro_precision_bound(p_hat, q, n_train, delta, n_unlabeled=m) + 1e-12
        viol["mar"] += R.mean() > macro_recall_bound(p_hat, q, n_train, delta, n_unlabeled=m) + 1e-12
        viol["mf1"] += F.mean() > macro_f1_bound(p_hat, q, n_train, delta, n_unlabeled=m) + 1e-12
        # the plug-in value (no confidence term) to show the check has power
        viol["plugin"] += acc > 1 - np.abs(p_hat - q).sum() / 2 + 1e-12
    return {key: v / reps for key, v in viol.items()}


# a classifier whose only errors move class 0 into class 2: its accuracy sits on the
# deterministic bound sum_y min(pi_y, q_y), so only the confidence term protects the bound
P_TRUE = np.array([0.5, 0.3, 0.2])
CONFUSION = np.array([[0.8, 0.0, 0.2], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


def _check_rates(rates, delta, reps):
    limit = delta + 3 * math.sqrt(delta * (1 - delta) / reps)
    for key in ("acc", "map", "mar", "mf1"):
        assert rates[key] <= limit, (key, rates[key], limit)
    assert rates["plugin"] > 0.2  # without the confidence term the bound fails often


def test_bounds_hold_in_simulation_fast():
    rates = _simulate(P_TRUE, CONFUSION, n_train=150, m=200, delta=0.1, reps=300, seed=1)
    _check_rates(rates, 0.1, 300)


@pytest.mark.slow
def test_bounds_hold_in_simulation_slow():
    for n_train, m, seed in ((60, 40, 2), (400, 1000, 3)):
        rates = _simulate(P_TRUE, CONFUSION, n_train, m, delta=0.2, reps=3000, seed=seed)
        _check_rates(rates, 0.2, 3000)


# ------------------------------------------------------------------------- bad input
def _fitted_lr(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] > 0, "p", "n")
    return LogisticRegression().fit(X, y), X, y


def test_empty_unlabeled_set_rejected():
    clf, _, y = _fitted_lr()
    with pytest.raises(ValueError, match="X_unlabeled.*at least one"):
        bounds_for_classifier(clf, np.empty((0, 3)), y)


def test_wrong_number_of_features_rejected():
    clf, _, y = _fitted_lr()
    with pytest.raises(ValueError, match="X_unlabeled.*3 features"):
        bounds_for_classifier(clf, np.zeros((5, 4)), y)


def test_pcc_without_proba_or_decision_function_is_a_type_error():
    clf = StubClassifier(["a", "b"], ["a", "b", "a"])
    with pytest.raises(TypeError, match="predict_proba or decision_function"):
        bounds_for_classifier(clf, np.zeros((3, 2)), ["a", "b"], quantifier="pcc")
    # CC still works for such a classifier
    assert bounds_for_classifier(clf, np.zeros((3, 2)), ["a", "b"], quantifier="cc").bound <= 1.0


def test_fewer_than_two_classes_rejected():
    clf = StubClassifier(["a"], ["a", "a"])
    with pytest.raises(ValueError, match="at least two classes"):
        bounds_for_classifier(clf, np.zeros((2, 2)), ["a", "a"])
    with pytest.raises(ValueError, match="K >= 2"):
        accuracy_bound([1.0], [1.0], 10)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, 1.5])
def test_delta_outside_unit_interval_rejected(delta):
    clf, X, y = _fitted_lr()
    with pytest.raises(ValueError, match="delta"):
        bounds_for_classifier(clf, X, y, delta=delta)
    with pytest.raises(ValueError, match="delta"):
        accuracy_bound([0.5, 0.5], [0.5, 0.5], 10, delta=delta)


def test_other_bad_arguments_rejected():
    clf, X, y = _fitted_lr()
    with pytest.raises(ValueError, match="train_labels.*'z'"):
        bounds_for_classifier(clf, X, np.array(["p", "z"]))
    with pytest.raises(ValueError, match="quantifier"):
        bounds_for_classifier(clf, X, y, quantifier="acc")
    with pytest.raises(ValueError, match="measure"):
        bounds_for_classifier(clf, X, y, measure="f1")
    with pytest.raises(ValueError, match="epsilon"):
        accuracy_bound([0.5, 0.5], [0.5, 0.5], 10, epsilon=-0.1)
    with pytest.raises(ValueError, match="predicted_proportions"):
        accuracy_bound([0.5, 0.5], [0.5, 0.4], 10)
    with pytest.raises(ValueError, match="train_proportions"):
        macro_recall_bound([0.55, 0.45], [0.5, 0.5], 10)  # 5.5 is not a count
    with pytest.raises(ValueError, match="n_train"):
        accuracy_bound([0.5, 0.5], [0.5, 0.5], 0)
    with pytest.raises(ValueError, match="y_pred"):
        classify_and_count([], ["a", "b"])
    with pytest.raises(ValueError, match="sigma"):
        decision_to_proba([0.1], sigma=0)


def test_docstring_examples_run():
    for mod in (quant_mod, bounds_mod, certa_bounds_mod, theorem1_mod):
        result = doctest.testmod(mod)
        assert result.attempted > 0 and result.failed == 0
