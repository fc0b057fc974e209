"""McNemar's test against statsmodels, scipy.stats.binomtest and exact rational sums."""

from fractions import Fraction
from math import comb

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from certa.stats import mcnemar, mcnemar_table

TABLES = [
    [[50, 9], [2, 39]],
    [[10, 1], [0, 10]],
    [[0, 7], [7, 0]],  # b == c (tie)
    [[3, 4], [5, 6]],  # |b - c| == 1
    [[100, 30], [12, 40]],
    [[500, 311], [262, 120]],  # large counts
    [[0, 0], [13, 0]],
    [[4, 1], [1, 9]],
]


def _exact_pmf(k: int, m: int) -> Fraction:
    return Fraction(comb(m, k), 2**m)


def _mid_p_by_hand(b: int, c: int) -> float:
    """Two-sided mid-p from exact rational sums: outcomes more extreme + half the as-extreme."""
    m, k = b + c, min(b, c)
    if 2 * k == m:
        return 1.0
    tail = sum(_exact_pmf(i, m) for i in range(k))  # P(X < k)
    p = 2 * (tail + Fraction(1, 2) * _exact_pmf(k, m))
    return float(min(p, Fraction(1)))


@pytest.mark.parametrize("table", TABLES)
def test_exact_matches_statsmodels_and_binomtest(table):
    r = mcnemar_table(table)  # exact is the default
    b, c = table[0][1], table[1][0]
    sm = sm_mcnemar(np.array(table), exact=True)
    assert r.pvalue == pytest.approx(float(sm.pvalue), abs=1e-10)
    assert r.statistic == pytest.approx(float(sm.statistic), abs=1e-10)
    assert r.pvalue == pytest.approx(sps.binomtest(b, b + c, 0.5).pvalue, abs=1e-10)
    assert r.details["b"] == b and r.details["c"] == c
    assert r.estimate == pytest.approx((b - c) / np.sum(table), abs=1e-15)


@pytest.mark.parametrize("table", TABLES)
def test_chi2_without_correction_matches_statsmodels(table):
    r = mcnemar_table(table, method="chi2")
    sm = sm_mcnemar(np.array(table), exact=False, correction=False)
    assert r.statistic == pytest.approx(float(sm.statistic), abs=1e-10)
    assert r.pvalue == pytest.approx(float(sm.pvalue), abs=1e-10)
    assert r.df == 1.0


@pytest.mark.parametrize("table", [t for t in TABLES if t[0][1] != t[1][0]])
def test_chi2_cc_matches_statsmodels_when_b_differs_from_c(table):
    r = mcnemar_table(table, method="chi2-cc")
    sm = sm_mcnemar(np.array(table), exact=False, correction=True)
    assert r.statistic == pytest.approx(float(sm.statistic), abs=1e-10)
    assert r.pvalue == pytest.approx(float(sm.pvalue), abs=1e-10)


def test_chi2_cc_is_clamped_at_zero_when_b_equals_c():
    # statsmodels computes (|0| - 1)^2 / 14 = 1/14 here; Edwards' correction never
    # increases |b - c|, so certa clamps it: statistic 0, p = 1.
    r = mcnemar_table([[0, 7], [7, 0]], method="chi2-cc")
    assert r.statistic == 0.0 and r.pvalue == 1.0


@pytest.mark.parametrize("table", TABLES)
def test_mid_p_matches_exact_rational_sum(table):
    b, c = table[0][1], table[1][0]
    r = mcnemar_table(table, method="mid-p")
    assert r.pvalue == pytest.approx(_mid_p_by_hand(b, c), abs=1e-10)
    assert r.pvalue <= mcnemar_table(table).pvalue  # mid-p is never more conservative


@pytest.mark.parametrize("alternative", ["greater", "less"])
@pytest.mark.parametrize("table", TABLES)
def test_one_sided_exact_matches_binomtest(table, alternative):
    b, c = table[0][1], table[1][0]
    r = mcnemar_table(table, alternative=alternative)
    if b + c == 0:
        assert r.pvalue == 1.0
        return
    ref = sps.binomtest(b, b + c, 0.5, alternative=alternative).pvalue
    assert r.pvalue == pytest.approx(ref, abs=1e-10)
    mid = mcnemar_table(table, method="mid-p", alternative=alternative)
    assert mid.pvalue == pytest.approx(ref - 0.5 * float(_exact_pmf(b, b + c)), abs=1e-10)


@pytest.mark.parametrize("method", ["exact", "mid-p", "chi2", "chi2-cc"])
def test_no_discordant_pairs_gives_p_one(method):
    r = mcnemar_table([[40, 0], [0, 10]], method=method)
    assert r.pvalue == 1.0
    assert r.statistic == 0.0
    # statsmodels' chi2 returns statistic inf and p = 0 here (0/0); exact agrees with us.
    assert float(sm_mcnemar(np.array([[40, 0], [0, 10]]), exact=True).pvalue) == 1.0


def test_from_predictions_builds_the_table():
    rng = np.random.default_rng(3)
    y = rng.choice(["cat", "dog", "eel"], size=200)
    pa = np.where(rng.random(200) < 0.8, y, "dog")
    pb = np.where(rng.random(200) < 0.7, y, "eel")
    ok_a, ok_b = pa == y, pb == y
    table = [
        [sum(a and b for a, b in zip(ok_a, ok_b)), sum(a and not b for a, b in zip(ok_a, ok_b))],
        [sum(b and not a for a, b in zip(ok_a, ok_b)), sum(not a and not b for a, b in zip(ok_a, ok_b))],
    ]
    for method in ("exact", "mid-p", "chi2", "chi2-cc"):
        r = mcnemar(y, pa, pb, method=method)
        ref = mcnemar_table(table, method=method)
        assert r.details["table"] == table
        assert r.pvalue == ref.pvalue and r.statistic == ref.statistic
    assert mcnemar(y, pa, pb).estimate == pytest.approx(ok_a.mean() - ok_b.mean(), abs=1e-12)


def test_identical_predictions_give_p_one():
    y = [0, 1, 1, 0, 1]
    assert mcnemar(y, [0, 0, 1, 1, 1], [0, 0, 1, 1, 1]).pvalue == 1.0


@pytest.mark.parametrize(
    "table, exc, match",
    [
        ([[1, 2, 3], [4, 5, 6]], ValueError, "shape"),
        ([[1, -2], [3, 4]], ValueError, "non-negative"),
        ([[1, 2.5], [3, 4]], ValueError, "integers"),
        ([[1, np.nan], [3, 4]], ValueError, "NaN"),
        ("abcd", TypeError, "table"),
        ([["a", "b"], ["c", "d"]], TypeError, "table"),
    ],
)
def test_bad_tables_are_refused(table, exc, match):
    with pytest.raises(exc, match=match):
        mcnemar_table(table)


def test_integer_valued_float_counts_are_accepted():
    assert mcnemar_table([[1.0, 9.0], [2.0, 3.0]]).pvalue == mcnemar_table([[1, 9], [2, 3]]).pvalue


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="method"):
        mcnemar_table([[1, 2], [3, 4]], method="fisher")
    with pytest.raises(ValueError, match="alternative"):
        mcnemar_table([[1, 2], [3, 4]], method="chi2", alternative="greater")
    with pytest.raises(ValueError, match="alternative"):
        mcnemar_table([[1, 2], [3, 4]], alternative="bigger")
    with pytest.raises(ValueError, match="same length"):
        mcnemar([0, 1, 1], [0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match="y_true is empty"):
        mcnemar([], [], [])
    with pytest.raises(ValueError, match="pred_a contains NaN"):
        mcnemar([0.0, 1.0], [np.nan, 1.0], [0.0, 1.0])
    with pytest.raises(ValueError, match="pred_b must be 1-D"):
        mcnemar([0, 1], [0, 1], [[0, 1]])
    with pytest.raises(TypeError, match="y_true"):
        mcnemar(3, [0], [0])
