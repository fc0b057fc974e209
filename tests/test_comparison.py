"""Comparison tables, nested CV and certa compare."""
import json

import numpy as np
import pytest
from scipy import stats as sps
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from certa import (
    BanditSearchCV,
    FunctionEvaluator,
    JKFoldGrid,
    JKFoldSearchCV,
    comparison_table,
    cross_validate_selection,
    run,
)
from certa.cli import main
from certa.datasets import load_debian_small
from certa.demo import demo_estimator


def test_comparison_table_of_a_small_jkfold_run_checked_by_hand():
    # 3 candidates, J=2 x K=2 folds, fold scores fixed by a table
    table = {0: [0.70, 0.72, 0.69, 0.71], 1: [0.80, 0.79, 0.83, 0.78], 2: [0.78, 0.80, 0.79, 0.80]}

    def fixed(params, seed):
        return table[params["c"]][params["_fold"]] if "_fold" in params else None

    class _Ev(FunctionEvaluator):
        def evaluate(self, params, draw):
            j, k = draw.index
            return {"score": table[params["c"]][2 * j + k], "n_train": 75, "n_test": 25}

    sel = run(JKFoldGrid(n_splits=2, n_repeats=2), _Ev(fixed), {"c": [0, 1, 2]}, random_state=0)
    assert sel.best_index == 1
    t = comparison_table(sel)
    assert t["candidate"].tolist() == [2, 0]   # closest competitor first (issue 25 item 14)
    for row in t.itertuples():
        d = np.array(table[1]) - np.array(table[row.candidate])
        # Bouckaert & Frank: t = mean(d) / sqrt((1/(J*K) + n_test/n_train) * var(d, ddof=1)), df = J*K - 1
        t_hand = d.mean() / np.sqrt((1 / 4 + 25 / 75) * d.var(ddof=1))
        p_hand = 2 * sps.t.sf(abs(t_hand), 3)
        assert row.mean_difference == pytest.approx(d.mean(), abs=1e-12)
        assert row.statistic == pytest.approx(t_hand, rel=1e-10)
        assert row.pvalue == pytest.approx(p_hand, rel=1e-10)
        half = sps.t.ppf(0.975, 3) * np.sqrt((1 / 4 + 25 / 75) * d.var(ddof=1))
        assert (row.ci_low, row.ci_high) == pytest.approx((d.mean() - half, d.mean() + half), rel=1e-10)
        assert row.n_pairs == 4 and "paired by fold" in row.design
    holm = multipletests(t["pvalue"], method="holm")[1]
    np.testing.assert_allclose(t["pvalue_holm"], holm, rtol=1e-12)


def test_comparison_table_of_an_unpaired_bandit_run_is_welch():
    X, y = load_iris(return_X_y=True)
    s = BanditSearchCV(LogisticRegression(max_iter=500), {"C": [0.001, 1.0]}, strategy="top_two", confidence=0.9,
                       random_state=0).fit(X, y)
    t = comparison_table(s)
    ev = s.selection_.evaluations
    assert ev["seed"].nunique() == len(ev)   # unpaired: its own split and seed for every evaluation
    a = ev[ev.candidate == s.best_index_]["score"].to_numpy()
    b = ev[ev.candidate != s.best_index_]["score"].to_numpy()
    ref = sps.ttest_ind(a, b, equal_var=False)
    assert t.loc[0, "design"].startswith("unpaired")
    assert t.loc[0, "pvalue"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert t.loc[0, "statistic"] == pytest.approx(ref.statistic, rel=1e-12)


def _shared_rows(ev, best, other):
    """The choice's and another candidate's scores on the rows (seeds) they share, an independent pairing."""
    ok = ev[ev.status == "ok"]
    a = ok[ok.candidate == best].set_index("seed")["score"]
    b = ok[ok.candidate == other].set_index("seed")["score"]
    common = a.index.intersection(b.index)
    return a[common].to_numpy(dtype=float), b[common].to_numpy(dtype=float)


def test_comparison_table_of_the_paired_default_pairs_rows_with_the_corrected_resampled_test():
    X, y = load_iris(return_X_y=True)
    s = BanditSearchCV(LogisticRegression(max_iter=500), {"C": [0.001, 0.05, 1.0]}, confidence=0.9,
                       random_state=0).fit(X, y)
    t = comparison_table(s)
    ev = s.selection_.evaluations
    best = s.best_index_
    n_train = ev.loc[ev.candidate == best, "n_train"].mean()
    n_test = ev.loc[ev.candidate == best, "n_test"].mean()
    assert len(t) == 2
    for row in t.itertuples():
        a, b = _shared_rows(ev, best, row.candidate)
        d = a - b
        n = len(d)
        assert row.n_pairs == n >= 2 and row.design.startswith("paired by row")
        assert "Nadeau & Bengio" in row.test
        # Nadeau & Bengio (2003): t = mean(d) / sqrt((1/n + n_test/n_train) s^2), n - 1 df
        se = np.sqrt((1 / n + n_test / n_train) * d.var(ddof=1))
        assert row.mean_difference == pytest.approx(d.mean(), rel=1e-12)
        assert row.statistic == pytest.approx(d.mean() / se, rel=1e-10)
        assert row.pvalue == pytest.approx(2 * sps.t.sf(abs(d.mean() / se), n - 1), rel=1e-9)
        half = sps.t.ppf(0.975, n - 1) * se
        assert (row.ci_low, row.ci_high) == pytest.approx((d.mean() - half, d.mean() + half), rel=1e-10)


def test_comparison_table_of_user_rows_without_sizes_is_the_paired_t_test():
    from certa import bandit_select

    def evaluate(params, train, test, seed):
        rng = np.random.default_rng(seed)
        return 0.7 + params["m"] + rng.normal(0, 0.05) + np.random.default_rng([seed, params["i"]]).normal(0, 0.01)

    cands = [{"m": m, "i": i} for i, m in enumerate([0.0, 0.01, 0.02, -0.02])]
    sel = bandit_select(evaluate, cands, np.arange(100.0), random_state=0)
    t = comparison_table(sel)
    assert len(t) == 3
    for row in t.itertuples():
        a, b = _shared_rows(sel.evaluations, sel.best_index, row.candidate)
        ref = sps.ttest_rel(a, b)
        assert row.n_pairs == len(a) and row.test.startswith("paired t-test over rows")
        assert row.statistic == pytest.approx(ref.statistic, rel=1e-10)
        assert row.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


def test_comparison_table_after_a_screen_pairs_the_finalists_and_names_the_screened_out():
    from sklearn.datasets import make_classification
    from sklearn.svm import SVC

    X, y = make_classification(600, random_state=0, flip_y=0.1)
    s = BanditSearchCV(SVC(), {"C": [0.1, 1, 10, 100], "gamma": [0.001, 0.01, 0.1, 1]}, random_state=0,
                       screen=True).fit(X, y)
    t = comparison_table(s)
    ev = s.selection_.evaluations
    raced = set(ev.loc[ev.kind == "split", "candidate"])
    assert set(s.finalists_) <= raced and len(t) == 15
    for row in t.itertuples():
        if row.candidate in raced:
            a, b = _shared_rows(ev[ev.kind == "split"], s.best_index_, row.candidate)
            assert row.n_pairs == len(a) and row.mean_difference == pytest.approx((a - b).mean(), rel=1e-12)
        else:
            assert row.n_pairs == 0 and np.isnan(row.pvalue) and "screened out" in row.test
    assert t["design"].str.startswith("screened out").sum() == 16 - len(raced)


def test_comparison_table_rejects_non_selection():
    with pytest.raises(TypeError, match="selection must be"):
        comparison_table(42)


def test_nested_cv_outer_scores_are_the_refitted_choices_on_real_text():
    X, y = load_debian_small(return_X_y=True)
    X, y = X[:900], y[:900]
    inner = JKFoldSearchCV(demo_estimator(), {"linearsvc__C": [0.01, 0.1, 1.0, 10.0]}, n_splits=3, n_repeats=1,
                           random_state=0)
    res = cross_validate_selection(inner, X, y, n_splits=3, random_state=1)
    assert len(res.outer_scores) == 3 and len(res.chosen) == 3
    assert all(set(c) == {"linearsvc__C"} for c in res.chosen)
    # each outer score equals refitting that fold's choice on the outer training part
    from sklearn.base import clone
    folds = list(__import__("sklearn.model_selection", fromlist=["RepeatedStratifiedKFold"]).RepeatedStratifiedKFold(
        n_splits=3, n_repeats=1, random_state=1).split(np.zeros(len(y)), y))
    Xa, ya = np.asarray(X, dtype=object), np.asarray(y)
    for k, (tr, te) in enumerate(folds):
        est = clone(demo_estimator()).set_params(**res.chosen[k]).fit(list(Xa[tr]), ya[tr])
        assert res.outer_scores[k] == pytest.approx(est.score(list(Xa[te]), ya[te]), abs=1e-12)
    assert res.n_distinct_choices >= 1
    assert str(res).startswith("Nested CV over 3 outer folds")


def test_nested_cv_parallel_outer_folds_same_result():
    X, y = load_iris(return_X_y=True)
    inner = JKFoldSearchCV(LogisticRegression(max_iter=500), {"C": [0.01, 1.0]}, n_splits=3, n_repeats=1,
                           random_state=0)
    a = cross_validate_selection(inner, X, y, n_splits=3, random_state=0, n_jobs=1)
    b = cross_validate_selection(inner, X, y, n_splits=3, random_state=0, n_jobs=2)
    np.testing.assert_array_equal(a.outer_scores, b.outer_scores)
    assert a.chosen == b.chosen


def _highest_mean(cv_results):
    return int(np.argmax(cv_results["mean_test_score"]))


def _lowest_mean(cv_results):
    return int(np.argmin(cv_results["mean_test_score"]))


def test_nested_cv_with_a_callable_refit():
    # scikit-learn sets no best_score_ when refit is a callable; the inner score of the choice is
    # then mean_test_score at best_index_ (a callable picking the highest mean = refit=True)
    X, y = load_iris(return_X_y=True)

    def nested(refit):
        inner = JKFoldSearchCV(LogisticRegression(max_iter=500), {"C": [0.01, 1.0]}, n_splits=3, n_repeats=1,
                               random_state=0, refit=refit)
        return cross_validate_selection(inner, X, y, n_splits=3, random_state=0)

    plain, highest, lowest = nested(True), nested(_highest_mean), nested(_lowest_mean)
    np.testing.assert_array_equal(highest.outer_scores, plain.outer_scores)
    np.testing.assert_array_equal(highest.inner_best_scores, plain.inner_best_scores)
    assert highest.chosen == plain.chosen
    # the lowest-mean choice: the other C in every fold, with a lower inner score
    assert all(lo != hi for lo, hi in zip(lowest.chosen, plain.chosen))
    assert (lowest.inner_best_scores < plain.inner_best_scores).all()


def test_compare_cli_mcnemar_matches_statsmodels(tmp_path, capsys):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 200)
    pa = np.where(rng.random(200) < 0.8, y, (y + 1) % 3)
    pb = np.where(rng.random(200) < 0.7, y, (y + 2) % 3)
    for name, arr in (("y", y), ("a", pa), ("b", pb)):
        (tmp_path / f"{name}.txt").write_text("\n".join(map(str, arr)) + "\n")
    assert main(["compare", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "--truth", str(tmp_path / "y.txt"),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ca, cb = pa == y, pb == y
    table = [[np.sum(ca & cb), np.sum(ca & ~cb)], [np.sum(~ca & cb), np.sum(~ca & ~cb)]]
    assert out["pvalue"] == pytest.approx(sm_mcnemar(table, exact=True).pvalue, abs=1e-10)


def test_compare_cli_scores_and_errors(tmp_path, capsys):
    p = tmp_path / "s.csv"
    a = [0.8, 0.82, 0.79, 0.85, 0.81, 0.8]
    b = [0.7, 0.75, 0.8, 0.7, 0.78, 0.74]
    p.write_text("a,b\n" + "\n".join(f"{x},{z}" for x, z in zip(a, b)))
    assert main(["compare", "--scores", str(p), "--columns", "a,b", "--test", "paired-t", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pvalue"] == pytest.approx(sps.ttest_rel(a, b).pvalue, abs=1e-10)
    assert main(["compare", "--scores", str(p), "--columns", "a,c"]) == 2
    assert "no column" in capsys.readouterr().err
    assert main(["compare", "--scores", str(p), "--columns", "a,b"]) == 2
    assert "--repeats" in capsys.readouterr().err
    assert main(["compare", str(p)]) == 2


def test_simulate_cli_json(capsys):
    assert main(["simulate", "--means", "0,1", "--sds", "1,1", "--runs", "5", "--confidence", "0.9", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_runs"] == 5 and out["true_best"] == "c1"
    assert out["evaluations_min"] >= 6 and "lower_bound" in out
    assert main(["simulate", "--means", "0,1", "--runs", "5"]) == 2
    assert "--sds" in capsys.readouterr().err
