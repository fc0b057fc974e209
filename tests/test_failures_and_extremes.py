"""Issue 26 items 2 and 3: candidates left with different folds by failures; scores too large to compare."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.exceptions import FitFailedWarning
from sklearn.linear_model import LogisticRegression

from certa import FunctionEvaluator, JKFoldGrid, JKFoldSearchCV, TopTwoThompson, run
from certa.engine.draws import Draw, Outcome
from certa.engine.runner import FailedEvaluationsWarning

MUS = {"mu": [0.6, 0.7, 0.8, 0.9]}


def _evaluate_failing(fail_folds, sd=0.01):
    """mu + noise; candidate mu fails on the seeds listed for it (one fold each)."""
    def evaluate(p, seed):
        if seed in fail_folds.get(p["mu"], ()):
            raise RuntimeError(f"fold of mu={p['mu']} failed")
        return p["mu"] + np.random.default_rng([seed, int(100 * p["mu"])]).normal(0, sd)
    return evaluate


def _fold_seeds():
    sel = run(JKFoldGrid(3, 2), FunctionEvaluator(lambda p, s: p["mu"]), {"mu": [0.0]}, random_state=0)
    return list(sel.evaluations["seed"])


def test_candidates_that_lost_a_fold_are_compared_on_common_folds():
    seeds = _fold_seeds()
    fails = {0.7: [seeds[0]], 0.8: [seeds[1]], 0.9: [seeds[2]]}   # each of three candidates loses one fold
    sel = run(JKFoldGrid(3, 2), FunctionEvaluator(_evaluate_failing(fails)), MUS, random_state=0, retries=0)
    assert sel.best_params == {"mu": 0.9}  # the old rule chose mu=0.6, the only candidate without a NaN
    assert len(sel.failures) == 3
    assert sel.result["compared_on"].startswith("the 3 of 6 folds")
    scores = sel.result["scores"].reshape(4, -1)
    common = np.isfinite(scores).all(axis=0)
    np.testing.assert_allclose(sel.result["compared_means"], scores[:, common].mean(axis=1))
    # estimates: the mean over each candidate's successful folds (what GridSearchCV users read as the score)
    ev = sel.evaluations[sel.evaluations["status"] == "ok"]
    np.testing.assert_allclose(sel.result["estimates"], ev.groupby("candidate")["score"].mean().to_numpy())


def test_a_warning_when_the_failures_could_have_changed_the_choice():
    seeds = _fold_seeds()
    close = {"mu": [0.70, 0.72]}  # fold scores spread by sd 0.1: one missing fold could reverse a 0.02 gap
    with pytest.warns(FailedEvaluationsWarning, match=r"could have changed the choice: candidate 'mu=0.72' "
                                                     r"\(1 of 6 folds failed\)"):
        sel = run(JKFoldGrid(3, 2), FunctionEvaluator(_evaluate_failing({0.72: [seeds[0]]}, sd=0.1)), close,
                  random_state=0)
    assert len(sel.failures) == 1 and sel.result["warnings"]


def test_no_warning_when_the_failures_cannot_change_the_choice():
    seeds = _fold_seeds()
    with warnings.catch_warnings():
        warnings.simplefilter("error", FailedEvaluationsWarning)
        sel = run(JKFoldGrid(3, 2), FunctionEvaluator(_evaluate_failing({0.6: [seeds[0]]})), MUS, random_state=0)
    assert sel.best_params == {"mu": 0.9} and len(sel.failures) == 1


def test_jkfold_search_keeps_scikit_learn_rule_without_the_engine_warning():
    class FailsOnce(LogisticRegression):
        def fit(self, X, y):
            if self.C == 10.0 and X[0, 0] < 5.0:
                raise RuntimeError("flaky fit")
            return super().fit(X, y)

    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = JKFoldSearchCV(FailsOnce(max_iter=300), {"C": [0.01, 10.0]}, n_splits=3, n_repeats=1,
                           random_state=0).fit(X, y)
    assert not any(issubclass(w.category, FailedEvaluationsWarning) for w in caught)
    assert np.isnan(s.cv_results_["mean_test_score"][1]) and s.best_index_ == 0   # GridSearchCV's rule


# ------------------------------------------------------------------ item 3: extreme scores
@pytest.mark.parametrize("strategy", [lambda: JKFoldGrid(3, 2), lambda: TopTwoThompson(0.9, max_evals=30)])
def test_a_score_too_large_to_compare_is_refused_naming_the_candidate(strategy):
    def evaluate(p, seed):
        return 1e308 if p["mu"] == 0.8 else p["mu"] + np.random.default_rng(seed).normal(0, 0.05)

    with pytest.raises(ValueError, match=r"candidate 'mu=0.8' returned the score 1e\+308 .*rescale"):
        run(strategy(), FunctionEvaluator(evaluate), MUS, random_state=0)


def test_jkfold_search_refuses_a_huge_score_instead_of_an_infinite_best_score():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="returned the score 1e\\+308"):
        JKFoldSearchCV(LogisticRegression(max_iter=300), {"C": [0.1, 1.0]}, scoring=lambda e, A, b: 1e308,
                       n_splits=2, n_repeats=1, random_state=0).fit(X, y)


def test_large_scores_below_the_limit_work_in_the_adaptive_rules():
    # the rules stay finite at 1e99 (the limit is 1e100): same choice as on the unscaled scores
    def evaluate(scale):
        return lambda p, seed: scale * (p["mu"] + np.random.default_rng(seed).normal(0, 0.05))

    plain = run(TopTwoThompson(0.95, max_evals=200), FunctionEvaluator(evaluate(1.0)), MUS, random_state=0)
    big = run(TopTwoThompson(0.95, max_evals=200), FunctionEvaluator(evaluate(1e99)), MUS, random_state=0)
    assert plain.best_params == big.best_params == {"mu": 0.9}
    assert np.isfinite(big.result["estimates"]).all()
    grid = JKFoldGrid(2, 1)
    grid.start(2, 0)
    for c in range(2):
        for k in range(2):
            grid.tell(Draw(c, "fold", (0, k)), Outcome(score=1e100 * (1 - 0.5 * c)))
    assert np.isfinite(grid.result()["estimates"]).all() and grid.result()["best"] == 0


# ------------------------------------------------------------------ issue 24 #11: error_score="raise"
_FITS = []


class _FailsAtC1(LogisticRegression):
    def fit(self, X, y):
        _FITS.append(self.C)
        if self.C == 1.0:
            raise RuntimeError("the fit of C=1 failed")
        return super().fit(X, y)


def test_error_score_raise_raises_at_the_first_failed_fit_without_running_the_rest():
    X, y = load_iris(return_X_y=True)
    _FITS.clear()
    with pytest.raises(RuntimeError, match="the fit of C=1 failed"):
        JKFoldSearchCV(_FailsAtC1(max_iter=300), {"C": [0.1, 1.0, 10.0]}, n_splits=3, n_repeats=2, random_state=0,
                       error_score="raise", n_jobs=1).fit(X, y)
    # draws go fold by fold, candidate by candidate: C=0.1 on fold 0, then C=1 fails (its rerun in this
    # process to raise its own exception is the third fit); the other 16 of the 18 fits never run
    assert _FITS == [0.1, 1.0, 1.0]


def test_error_score_nan_still_runs_the_whole_grid_as_scikit_learn():
    X, y = load_iris(return_X_y=True)
    _FITS.clear()
    with pytest.warns(FitFailedWarning, match="6 fits failed out of a total of 18"):
        s = JKFoldSearchCV(_FailsAtC1(max_iter=300), {"C": [0.1, 1.0, 10.0]}, n_splits=3, n_repeats=2,
                           random_state=0, n_jobs=1).fit(X, y)
    assert len(_FITS) == 18 + 1  # the grid and the refit
    assert np.isnan(s.cv_results_["mean_test_score"][1]) and s.best_params_ != {"C": 1.0}


def test_the_statement_says_what_the_candidates_were_compared_on_after_failures():
    from certa.reporting.summary import summarize

    seeds = _fold_seeds()
    fails = {0.7: [seeds[0]], 0.8: [seeds[1]], 0.9: [seeds[2]]}
    sel = run(JKFoldGrid(3, 2), FunctionEvaluator(_evaluate_failing(fails)), MUS, random_state=0, retries=0)
    statement = summarize(sel)["statement"]
    assert "the 3 of 6 folds every candidate finished" in statement   # said "the mean over all folds" before
    assert "all folds" not in statement.replace("of 6 folds", "")
