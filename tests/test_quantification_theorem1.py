"""Theorem 1 and Algorithm 1 of Balikas et al. (IDA 2015), ``bound="theorem1"``.

The expected numbers are worked by hand in the comments (fractions, and
``t = sqrt((log|Y| + log(1/delta)) / (2N))`` written out with ``math``), never taken from
the code under test.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.special import expit
from sklearn.metrics import precision_recall_fscore_support

from certa.quantification import (
    Quantification,
    Theorem1Warning,
    algorithm1_epsilon,
    bound_from_quantification,
    bounds_for_classifier,
    choose_sigma,
    classify_and_count,
    max_epsilon,
    theorem1_accuracy_bound,
    theorem1_bounds,
    theorem1_confidence_term,
    theorem1_macro_f1_bound,
    theorem1_macro_precision_bound,
    theorem1_macro_recall_bound,
    theorem1_point_values,
    theorem1_warnings,
)

TOL = 1e-12

# Hand-worked example: three classes a, b, c; N = 200 training labels (100, 60, 40), so
# p_hat = (1/2, 3/10, 1/5); delta = 0.05; |S| = 50 unlabeled documents, of which C predicts
# (20, 20, 10), so M_y/|S| = (2/5, 2/5, 1/5).
# t = sqrt((log 3 + log 20) / (2 * 200)) = sqrt(log(60) / 400)
P_HAT = [0.5, 0.3, 0.2]
TRAIN = np.array(["a"] * 100 + ["b"] * 60 + ["c"] * 40)
N, DELTA = 200, 0.05
CC = [0.4, 0.4, 0.2]
T = math.sqrt(math.log(60.0) / 400.0)

# CC, eps = 0. min{p_hat, p_bar} = (2/5, 3/10, 1/5).
#   B_A   = 2/5 + 3/10 + 1/5                               = 9/10
#   B_MaP = 1/3 ((2/5)/(2/5) + (3/10)/(2/5) + (1/5)/(1/5)) = 1/3 (1 + 3/4 + 1)  = 11/12
#   B_MaR = 1/3 ((2/5)/(1/2) + (3/10)/(3/10) + (1/5)/(1/5)) = 1/3 (4/5 + 1 + 1) = 14/15
#   H     = 2 (11/12)(14/15) / (11/12 + 14/15) = (308/180) / (333/180)          = 308/333
CC_POINT = {"accuracy": 9 / 10, "macro_precision": 11 / 12, "macro_recall": 14 / 15, "macro_f1": 308 / 333}
CC_BOUND = {"accuracy": 9 / 10 + 3 * T,  # (1): B_A + |Y| (t + 0)
            "macro_precision": 11 / 12 + T, "macro_recall": 14 / 15 + T,  # (2)
            "macro_f1": 308 / 333 + T}  # (3)

# PCC with p_bar = (9/20, 7/20, 1/5): |p_bar - M/|S|| = (1/20, 1/20, 0), Max_eps = 1/20.
# Step 5: min{p_hat, p_bar} - |p_bar - M/|S|| = (9/20 - 1/20, 3/10 - 1/20, 1/5 - 0)
#         = (2/5, 1/4, 1/5), eps = max = 2/5 >= 0: no fallback.
#   B_A        = 9/20 + 3/10 + 1/5                                   = 19/20
#   B_MaP(2/5) = 1/3 ((9/20+2/5)/(9/20+2/5) + (3/10+2/5)/(7/20+2/5) + (1/5+2/5)/(1/5+2/5))
#              = 1/3 (1 + 14/15 + 1)                                  = 44/45
#   B_MaR(2/5) = 1/3 ((9/20+2/5)/(1/2+2/5) + (3/10+2/5)/(3/10+2/5) + 1) = 1/3 (17/18 + 2) = 53/54
#   H          = 2 (44/45)(53/54) / (44/45 + 53/54) = (4664/2430) / (4761/2430)   = 4664/4761
PCC = [0.45, 0.35, 0.2]
EPS = 0.4
PCC_POINT = {"accuracy": 19 / 20, "macro_precision": 44 / 45, "macro_recall": 53 / 54, "macro_f1": 4664 / 4761}
PCC_BOUND = {"accuracy": 19 / 20 + 3 * (T + EPS),  # (1)
             "macro_precision": 44 / 45 + T, "macro_recall": 53 / 54 + T, "macro_f1": 4664 / 4761 + T}

# Fallback: C predicts every document of S as 'a' (M/|S| = (1, 0, 0)), PCC says (1/5, 2/5, 2/5).
# Step 5: (1/5 - 4/5, 3/10 - 2/5, 1/5 - 2/5) = (-3/5, -1/10, -1/5), eps = -1/10 < 0:
# step 6 falls back to CC, eps = 0, p_bar = (1, 0, 0); min{p_hat, p_bar} = (1/2, 0, 0).
#   B_A = 1/2; B_MaP = 1/3 ((1/2)/1 + 1 + 1) = 5/6 (0/0 terms of never-predicted classes are 1);
#   B_MaR = 1/3 ((1/2)/(1/2) + 0 + 0) = 1/3; H = 2 (5/6)(1/3) / (5/6 + 1/3) = 10/21
FB_POINT = {"accuracy": 1 / 2, "macro_precision": 5 / 6, "macro_recall": 1 / 3, "macro_f1": 10 / 21}
MEASURES = ("accuracy", "macro_precision", "macro_recall", "macro_f1")
LOW_LEVEL = {"accuracy": theorem1_accuracy_bound, "macro_precision": theorem1_macro_precision_bound,
             "macro_recall": theorem1_macro_recall_bound, "macro_f1": theorem1_macro_f1_bound}


class StubClassifier:
    """A 'fitted' classifier with fixed predictions and probabilities (row i for X row i)."""

    def __init__(self, classes, pred, proba=None, scores=None):
        self.classes_ = np.asarray(classes)
        self.n_features_in_ = 2
        self._pred = np.asarray(pred)
        if proba is not None:
            self.predict_proba = lambda X: np.asarray(proba, dtype=float)[: len(X)]
        if scores is not None:
            self.decision_function = lambda X: np.asarray(scores, dtype=float)[: len(X)]

    def predict(self, X):
        return self._pred[: len(X)]


def _stub(pred_counts, proba_row=None):
    pred = np.repeat(["a", "b", "c"], pred_counts)
    proba = None if proba_row is None else np.tile(proba_row, (len(pred), 1))
    return StubClassifier(["a", "b", "c"], pred, proba=proba), np.zeros((len(pred), 2))


def test_confidence_term_by_hand():
    assert theorem1_confidence_term(3, N, DELTA) == pytest.approx(T, abs=TOL)
    # delta = 1 is allowed by the theorem (delta in ]0, 1]): t = sqrt(log 3 / 400)
    assert theorem1_confidence_term(3, N, 1.0) == pytest.approx(math.sqrt(math.log(3) / 400), abs=TOL)


def test_hand_worked_cc_every_bound_with_and_without_confidence_terms():
    point = theorem1_point_values(P_HAT, CC, 0.0)
    for m in MEASURES:
        assert point[m] == pytest.approx(CC_POINT[m], abs=TOL), m
        assert LOW_LEVEL[m](P_HAT, CC, N, DELTA, 0.0) == pytest.approx(CC_BOUND[m], abs=TOL), m
    r = theorem1_bounds(P_HAT, CC, CC, N, DELTA, "cc")
    assert r["epsilon"] == 0.0 and not r["fell_back"]
    # end to end from a classifier's predictions on S (Algorithm 1 steps 3, 4, 7, 8)
    clf, X = _stub([20, 20, 10])
    for m in MEASURES:
        b = bounds_for_classifier(clf, X, TRAIN, bound="theorem1", quantifier="cc", measure=m, delta=DELTA)
        assert b.bound_type == "theorem1" and b.epsilon == 0.0 and b.max_epsilon == 0.0
        assert b.point_value == pytest.approx(CC_POINT[m], abs=TOL), m
        assert b.value == pytest.approx(CC_BOUND[m], abs=TOL), m
        assert b.bound == pytest.approx(min(1.0, CC_BOUND[m]), abs=TOL), m
        assert b.confidence_term == pytest.approx(T, abs=TOL)
    # the accuracy bound exceeds 1 (9/10 + 3 t = 1.2035): the guarantee is 1, the value is kept
    assert CC_BOUND["accuracy"] > 1.0
    assert bounds_for_classifier(clf, X, TRAIN, bound="theorem1", measure="accuracy").bound == 1.0


def test_hand_worked_pcc_epsilon_from_step5():
    assert max_epsilon(PCC, CC) == pytest.approx(1 / 20, abs=TOL)
    assert algorithm1_epsilon(P_HAT, PCC, CC) == pytest.approx(EPS, abs=TOL)
    point = theorem1_point_values(P_HAT, PCC, EPS)
    for m in MEASURES:
        assert point[m] == pytest.approx(PCC_POINT[m], abs=TOL), m
        assert LOW_LEVEL[m](P_HAT, PCC, N, DELTA, EPS) == pytest.approx(PCC_BOUND[m], abs=TOL), m
    clf, X = _stub([20, 20, 10], proba_row=PCC)
    for m in MEASURES:
        b = bounds_for_classifier(clf, X, TRAIN, bound="theorem1", quantifier="pcc", measure=m, delta=DELTA)
        assert b.quantifier_used == "pcc" and b.epsilon == pytest.approx(EPS, abs=TOL)
        assert b.epsilon_raw == pytest.approx(EPS, abs=TOL) and b.max_epsilon == pytest.approx(0.05, abs=TOL)
        assert b.point_value == pytest.approx(PCC_POINT[m], abs=TOL), m
        assert b.value == pytest.approx(PCC_BOUND[m], abs=TOL), m


def test_hand_worked_negative_epsilon_falls_back_to_cc():
    fb_pcc, fb_cc = [0.2, 0.4, 0.4], [1.0, 0.0, 0.0]
    assert algorithm1_epsilon(P_HAT, fb_pcc, fb_cc) == pytest.approx(-0.1, abs=TOL)
    r = theorem1_bounds(P_HAT, fb_cc, fb_pcc, N, DELTA, "pcc")
    assert r["fell_back"] and r["epsilon"] == 0.0 and r["epsilon_step5"] == pytest.approx(-0.1, abs=TOL)
    np.testing.assert_array_equal(r["proportions"], fb_cc)
    clf, X = _stub([10, 0, 0], proba_row=fb_pcc)
    for m in MEASURES:
        b = bounds_for_classifier(clf, X, TRAIN, bound="theorem1", quantifier="pcc", measure=m, delta=DELTA)
        assert b.quantifier == "pcc" and b.quantifier_used == "cc" and b.epsilon == 0.0
        assert b.point_value == pytest.approx(FB_POINT[m], abs=TOL), m
        added = 3 * T if m == "accuracy" else T
        assert b.value == pytest.approx(FB_POINT[m] + added, abs=TOL), m
        np.testing.assert_allclose(b.quantified_proportions, fb_pcc, rtol=0, atol=TOL)


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="epsilon"):
        theorem1_accuracy_bound(P_HAT, CC, N, DELTA, -0.1)
    with pytest.raises(ValueError, match="delta"):
        theorem1_confidence_term(3, N, 0.0)
    with pytest.raises(ValueError, match="n_train"):
        theorem1_confidence_term(3, 0, 0.5)
    with pytest.raises(ValueError, match="quantified_proportions"):
        theorem1_point_values(P_HAT, [0.5, 0.5])
    with pytest.raises(ValueError, match="bound"):
        clf, X = _stub([20, 20, 10])
        bounds_for_classifier(clf, X, TRAIN, bound="paper")


def test_sigma_of_lowest_max_eps_for_one_vs_rest_scores():
    # section 5: logistic 1/(1+exp(-sigma t)), sigma in 1..10, the one with the lowest Max_eps
    rng = np.random.default_rng(5)
    scores = rng.normal(size=(300, 4)) - 1.0
    cc = np.bincount(np.argmax(scores, axis=1), minlength=4) / 300
    ref = []
    for s in range(1, 11):
        e = expit(s * scores)
        ref.append(np.max(np.abs((e / e.sum(axis=1, keepdims=True)).mean(axis=0) - cc)))
    best = 1 + int(np.argmin(ref))
    # these scores separate the criteria: Max_eps picks sigma = 6, the L1 distance would pick 9
    assert best == 6
    assert choose_sigma(scores) == float(best)
    clf = StubClassifier(["w", "x", "y", "z"], np.array(["w", "x", "y", "z"])[np.argmax(scores, axis=1)],
                         scores=scores)
    b = bounds_for_classifier(clf, np.zeros((300, 2)), np.repeat(["w", "x", "y", "z"], 25), quantifier="pcc")
    assert b.sigma == float(best) and b.max_epsilon == pytest.approx(min(ref), abs=TOL)


# ------------------------------------------------------------------ calibration (simulation)
def _violations(p, confusion, n_train, m, delta, reps, seed):
    """Fraction of draws in which the true score on S exceeds Theorem 1's bound (CC)."""
    rng = np.random.default_rng(seed)
    k = len(p)
    classes = np.arange(k)
    viol = dict(accuracy=0, macro_precision=0, macro_recall=0, macro_f1=0)
    for _ in range(reps):
        p_hat = rng.multinomial(n_train, p) / n_train
        y = rng.choice(k, size=m, p=p)
        pred = np.minimum((rng.random(m)[:, None] > np.cumsum(confusion, axis=1)[y]).sum(axis=1), k - 1)
        q = classify_and_count(pred, classes)
        P, R, _, _ = precision_recall_fscore_support(y, pred, labels=classes, zero_division=1.0)
        vals = theorem1_bounds(p_hat, q, q, n_train, delta, "cc")["values"]
        f1 = 2 * P.mean() * R.mean() / (P.mean() + R.mean())  # the paper's MaF (F1 of MaP, MaR)
        true = {"accuracy": float(np.mean(pred == y)), "macro_precision": P.mean(), "macro_recall": R.mean(),
                "macro_f1": f1}
        for key in viol:
            viol[key] += true[key] > vals[key] + 1e-12
    return {key: v / reps for key, v in viol.items()}


def test_theorem1_holds_with_three_balanced_classes():
    # classes (.5, .3, .2), 20 % of class 0 predicted as class 2 (on the deterministic bound)
    conf = np.array([[0.8, 0.0, 0.2], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    rates = _violations(np.array([0.5, 0.3, 0.2]), conf, 150, 200, 0.1, 300, seed=1)
    limit = 0.1 + 3 * math.sqrt(0.1 * 0.9 / 300)
    assert all(r <= limit for r in rates.values()), rates


def test_theorem1_macro_bounds_fail_with_many_small_classes():
    # Measured calibration (docs/quantification.md): 20 classes with Zipf priors, a perfect
    # classifier, N = 2000, |S| = 1000, delta = 0.1. The accuracy bound (1) holds (its |Y| t
    # term is 0.73), but the macro bounds (2)-(3) fail in most draws: dividing the count error
    # |S| t by a small class's size turns an absolute error into a relative one larger than t.
    k = 20
    p = 1.0 / np.arange(1, k + 1)
    p /= p.sum()
    rates = _violations(p, np.eye(k), 2000, 1000, 0.1, 100, seed=2)
    assert rates["accuracy"] == 0.0
    for key in ("macro_precision", "macro_recall", "macro_f1"):
        assert rates[key] > 0.5, rates  # the theorem promises <= 0.1


# ------------------------------------------------------------ warnings (issue 24, #13)
def test_theorem1_warns_where_its_guarantee_cannot_hold_or_is_void():
    # where the calibration above holds (3 classes, N = 150, delta = 0.1): nothing to say about the inputs
    for m in MEASURES:
        assert theorem1_warnings([0.5, 0.3, 0.2], 150, 0.1, m) == []
    # 20 Zipf classes, N = 2000 (macro bounds exceeded in most draws above): the classes whose prior is at
    # most t, counted here from the formula, are named; the accuracy term |Y| t = 0.73 < 1 is not void
    p = 1.0 / np.arange(1, 21)
    p /= p.sum()
    t = math.sqrt((math.log(20) + math.log(10)) / 4000)
    small = int(np.sum(p <= t))
    assert 0 < small < 20
    for m in ("macro_precision", "macro_recall", "macro_f1"):
        (msg,) = theorem1_warnings(p, 2000, 0.1, m)
        assert msg.startswith(f"{m}: {small} of 20 classes") and "cannot be trusted" in msg
    assert theorem1_warnings(p, 2000, 0.1, "accuracy") == []
    # 40 classes, N = 500: |Y| t = 40 sqrt((log 40 + log 20) / 1000) = 3.27 >= 1, void for every classifier
    assert 40 * math.sqrt((math.log(40) + math.log(20)) / 1000) >= 1
    (msg,) = theorem1_warnings(np.full(40, 1 / 40), 500, 0.05, "accuracy")
    assert "void" in msg
    # PCC's epsilon adds to t: eps = 0.45 makes every class of the three-class example "small"
    assert theorem1_warnings([0.5, 0.3, 0.2], 150, 0.1, "macro_f1", epsilon=0.45)[0].startswith("macro_f1: 3 of 3")


def test_bound_from_quantification_warns_for_theorem1_only():
    # the hand-worked example's CC quantification: accuracy value 9/10 + 3 t = 1.2035 >= 1 (clipped: void)
    quant = Quantification(np.array(["a", "b", "c"]), np.array(P_HAT), np.array(CC), np.array(CC), "cc", None, N, 50)
    with pytest.warns(Theorem1Warning, match="clipped to 1"):
        b = bound_from_quantification(quant, "accuracy", DELTA, bound="theorem1")
    assert b.value == pytest.approx(CC_BOUND["accuracy"], abs=TOL)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bound_from_quantification(quant, "macro_f1", DELTA, bound="theorem1")  # 3 t < 1, no class below t
        for m in MEASURES:
            assert bound_from_quantification(quant, m, DELTA).bound_type == "certa"  # the default, no warning
