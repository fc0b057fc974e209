"""JKFoldSearchCV / RandomizedJKFoldSearchCV features a GridSearchCV user relies on, checked against scikit-learn.

Each test runs the same search with scikit-learn (the reference) on the same
splits and asserts equal results; scikit-learn's own test suite runs against
these classes in ``tests/sklearn_parity``.
"""
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest
from scipy.stats import loguniform
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_iris, make_classification
from sklearn.exceptions import FitFailedWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import (
    GridSearchCV,
    GroupKFold,
    RandomizedSearchCV,
    RepeatedStratifiedKFold,
)
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from certa import (
    FunctionEvaluator,
    JKFoldGrid,
    JKFoldSearchCV,
    RandomizedJKFoldSearchCV,
    run,
)

GRID = {"C": [0.01, 0.1, 1.0]}


def _lr():
    return LogisticRegression(max_iter=1000)


def _assert_same_results(ours, ref, *, skip=("_time",)):
    assert set(ours.cv_results_) == set(ref.cv_results_)
    for key, value in ref.cv_results_.items():
        if key.endswith(skip) or key == "params" or key.startswith("param_"):
            continue
        np.testing.assert_allclose(ours.cv_results_[key], value, rtol=0, atol=1e-12, err_msg=key)
    assert ours.cv_results_["params"] == ref.cv_results_["params"]


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=120, n_features=6, n_informative=3, n_classes=3, random_state=0)
    return X, y


@pytest.mark.parametrize("scoring, refit", [
    (["accuracy", "f1_macro"], "f1_macro"),
    ({"acc": "accuracy", "f1": "f1_macro"}, "acc"),
    (lambda est, X, y: {"acc": accuracy_score(y, est.predict(X)),
                        "f1": f1_score(y, est.predict(X), average="macro")}, "f1"),
    (["accuracy", "f1_macro"], False),
])
def test_multimetric_equals_gridsearchcv(data, scoring, refit):
    X, y = data
    ours = JKFoldSearchCV(_lr(), GRID, n_splits=3, n_repeats=2, random_state=4, scoring=scoring, refit=refit,
                          return_train_score=True).fit(X, y)
    ref = GridSearchCV(_lr(), GRID, cv=RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=4),
                       scoring=scoring, refit=refit, return_train_score=True).fit(X, y)
    _assert_same_results(ours, ref)
    assert ours.multimetric_ and ref.multimetric_
    assert ours.n_splits_ == 6
    if refit:
        assert ours.best_index_ == ref.best_index_ and ours.best_score_ == pytest.approx(ref.best_score_)
        np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
        assert ours.score(X, y) == pytest.approx(ref.score(X, y))
    else:
        assert not hasattr(ours, "best_index_") and not hasattr(ours, "best_estimator_")
    frame = pd.DataFrame(ours.cv_results_)  # the usual way to look at results
    name = "f1_macro" if isinstance(scoring, list) else "f1"
    assert list(frame[f"rank_test_{name}"]) == list(ref.cv_results_[f"rank_test_{name}"])


def test_refit_callable_picks_its_index_and_hides_best_score(data):
    X, y = data
    s = JKFoldSearchCV(_lr(), GRID, n_splits=3, n_repeats=1, random_state=0, scoring=["accuracy", "f1_macro"],
                       refit=lambda res: int(np.argmin(res["mean_test_accuracy"]))).fit(X, y)
    assert s.best_index_ == int(np.argmin(s.cv_results_["mean_test_accuracy"]))
    assert not hasattr(s, "best_score_")


def test_bad_refit_for_several_metrics_is_refused_before_any_fit(data):
    X, y = data
    with pytest.raises(ValueError, match="For multi-metric scoring, the parameter refit must be set"):
        JKFoldSearchCV(_lr(), GRID, scoring=["accuracy", "f1_macro"], refit=True).fit(X, y)


def test_groups_with_a_group_splitter_equal_gridsearchcv(data):
    X, y = data
    groups = np.arange(len(y)) % 8
    ours = JKFoldSearchCV(_lr(), GRID, cv=GroupKFold(n_splits=4), random_state=0).fit(X, y, groups=groups)
    ref = GridSearchCV(_lr(), GRID, cv=GroupKFold(n_splits=4)).fit(X, y, groups=groups)
    _assert_same_results(ours, ref)
    assert ours.n_splits_ == 4 and len(ours.stability_.partition_choices) == 1
    for train, test in GroupKFold(n_splits=4).split(X, y, groups):
        assert not set(groups[train]) & set(groups[test])
    with pytest.raises(ValueError, match="groups"):
        JKFoldSearchCV(_lr(), GRID, cv=GroupKFold(n_splits=4)).fit(X, y)


def test_partitions_given_as_a_list_grouped_by_repeat(data):
    X, y = data
    groups = np.arange(len(y)) % 10
    parts = [list(GroupKFold(n_splits=5, shuffle=True, random_state=j).split(X, y, groups)) for j in range(3)]
    ours = JKFoldSearchCV(_lr(), GRID, cv=parts, random_state=0).fit(X, y)
    flat = [split for part in parts for split in part]
    ref = GridSearchCV(_lr(), GRID, cv=flat).fit(X, y)
    _assert_same_results(ours, ref)
    assert ours.n_splits_ == 15 and len(ours.stability_.partition_choices) == 3
    for j in range(3):  # partition j is splits 5j .. 5j+4
        sub = GridSearchCV(_lr(), GRID, cv=parts[j], refit=False).fit(X, y)
        assert ours.stability_.partition_choices[j] == sub.best_index_


def test_repeated_splitter_gives_its_repeats_as_partitions(data):
    X, y = data
    cv = RepeatedStratifiedKFold(n_splits=3, n_repeats=4, random_state=1)
    ours = JKFoldSearchCV(_lr(), GRID, cv=cv).fit(X, y)
    ref = GridSearchCV(_lr(), GRID, cv=cv).fit(X, y)
    _assert_same_results(ours, ref)
    assert len(ours.stability_.partition_choices) == 4


def test_sample_weight_is_split_with_the_folds_and_used_in_refit(data):
    X, y = data
    w = np.random.default_rng(0).uniform(0.1, 3.0, len(y))
    ours = JKFoldSearchCV(_lr(), GRID, n_splits=3, n_repeats=2, random_state=2).fit(X, y, sample_weight=w)
    ref = GridSearchCV(_lr(), GRID, cv=RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=2)
                       ).fit(X, y, sample_weight=w)
    _assert_same_results(ours, ref)
    unweighted = JKFoldSearchCV(_lr(), GRID, n_splits=3, n_repeats=2, random_state=2).fit(X, y)
    assert not np.allclose(unweighted.cv_results_["mean_test_score"], ours.cv_results_["mean_test_score"])
    np.testing.assert_allclose(ours.best_estimator_.coef_, ref.best_estimator_.coef_)


class _FailsForNegativeC(ClassifierMixin, BaseEstimator):
    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, y):
        if self.C < 0:
            raise ArithmeticError("negative C")
        self.classes_ = np.unique(y)
        self.majority_ = self.classes_[0]
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


def test_error_score_number_warns_and_ranks_like_gridsearchcv():
    X, y = load_iris(return_X_y=True)
    grid = {"C": [-1.0, 1.0]}
    with pytest.warns(FitFailedWarning, match="3 fits failed out of a total of 6") as rec:
        ours = JKFoldSearchCV(_FailsForNegativeC(), grid, n_splits=3, n_repeats=1, random_state=0,
                              error_score=0.5, refit=False).fit(X, y)
    assert "ArithmeticError: negative C" in str(rec[0].message)
    ref = GridSearchCV(_FailsForNegativeC(), grid, cv=RepeatedStratifiedKFold(n_splits=3, n_repeats=1,
                                                                              random_state=0),
                       error_score=0.5, refit=False).fit(X, y)
    _assert_same_results(ours, ref)
    assert ours.cv_results_["mean_test_score"][0] == 0.5 and ours.best_index_ == ref.best_index_ == 0
    assert len(ours.selection_.failures) == 3  # the engine still records the failures


def test_error_score_raise_raises_the_fits_own_exception():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ArithmeticError, match="negative C"):
        JKFoldSearchCV(_FailsForNegativeC(), {"C": [1.0, -1.0]}, n_splits=3, n_repeats=1, random_state=0,
                       error_score="raise").fit(X, y)


def test_all_fits_failed_is_one_clear_error():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="(?s)All the 6 fits failed.*negative C"):
        JKFoldSearchCV(_FailsForNegativeC(), {"C": [-1.0, -2.0]}, n_splits=3, n_repeats=1, random_state=0).fit(X, y)


def test_verbose_prints_the_plan_and_each_fit(data, capsys):
    X, y = data
    JKFoldSearchCV(_lr(), {"C": [0.1, 1.0]}, n_splits=3, n_repeats=2, random_state=0, verbose=3).fit(X, y)
    out = capsys.readouterr().out
    assert "Fitting 6 folds for each of 2 candidates, totalling 12 fits" in out
    assert out.count("[CV ") == 12 and "[CV 6/6] END" in out


_LOCK, _STATE = threading.Lock(), {"now": 0, "max": 0}


def _count_in_flight(params, seed):
    with _LOCK:
        _STATE["now"] += 1
        _STATE["max"] = max(_STATE["max"], _STATE["now"])
    time.sleep(0.02)
    with _LOCK:
        _STATE["now"] -= 1
    return params["x"]


def test_pre_dispatch_bounds_the_evaluations_in_flight():
    state, score = _STATE, _count_in_flight
    state["max"] = 0
    with ThreadPoolExecutor(4) as pool:
        run(JKFoldGrid(2, 2), FunctionEvaluator(score), {"x": [0.0, 1.0, 2.0]}, executor=pool, max_in_flight=1)
    assert state["max"] == 1
    state["max"] = 0
    with ThreadPoolExecutor(4) as pool:
        run(JKFoldGrid(2, 2), FunctionEvaluator(score), {"x": [0.0, 1.0, 2.0]}, executor=pool, max_in_flight=4)
    assert state["max"] > 1


@pytest.mark.parametrize("value, exc", [(0, ValueError), ("n_jobs/4", ValueError), ("bogus", ValueError),
                                        (1.5, TypeError)])
def test_bad_pre_dispatch(data, value, exc):
    X, y = data
    with pytest.raises(exc, match="pre_dispatch"):
        JKFoldSearchCV(_lr(), GRID, pre_dispatch=value).fit(X, y)


def test_prediction_attributes_follow_the_best_estimator():
    X, y = load_iris(return_X_y=True, as_frame=True)
    s = JKFoldSearchCV(_lr(), GRID, n_splits=3, n_repeats=1, random_state=0).fit(X, y)
    np.testing.assert_array_equal(s.classes_, [0, 1, 2])
    assert s.n_features_in_ == 4
    assert list(s.feature_names_in_) == list(X.columns)
    np.testing.assert_allclose(s.predict_proba(X), s.best_estimator_.predict_proba(X))
    np.testing.assert_allclose(s.decision_function(X), s.best_estimator_.decision_function(X))
    assert s.refit_time_ > 0
    svc = JKFoldSearchCV(LinearSVC(), GRID, n_splits=3, n_repeats=1, random_state=0).fit(X, y)
    assert not hasattr(svc, "predict_proba")  # as GridSearchCV: only what the estimator has
    no_refit = JKFoldSearchCV(_lr(), GRID, n_splits=3, n_repeats=1, random_state=0, refit=False).fit(X, y)
    with pytest.raises(AttributeError, match="has no attribute 'predict'") as err:
        no_refit.predict(X)
    assert "refit=False" in str(err.value.__cause__)


def test_randomized_search_samples_as_randomizedsearchcv_and_scores_the_same(data):
    X, y = data
    dist = {"C": loguniform(1e-3, 1e2), "fit_intercept": [True, False]}
    ours = RandomizedJKFoldSearchCV(_lr(), dist, n_iter=5, n_splits=3, n_repeats=2, random_state=11).fit(X, y)
    ref = RandomizedSearchCV(_lr(), dist, n_iter=5, random_state=11,
                             cv=RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=11)).fit(X, y)
    _assert_same_results(ours, ref)
    again = RandomizedJKFoldSearchCV(_lr(), dist, n_iter=5, n_splits=3, n_repeats=2, random_state=11).fit(X, y)
    assert again.cv_results_["params"] == ours.cv_results_["params"]
    other = RandomizedJKFoldSearchCV(_lr(), dist, n_iter=5, n_splits=3, n_repeats=2, random_state=12).fit(X, y)
    assert other.cv_results_["params"] != ours.cv_results_["params"]


def test_multimetric_run_resumes_from_its_store(data, tmp_path):
    X, y = data
    path = tmp_path / "mm.sqlite"
    kw = dict(n_splits=3, n_repeats=2, random_state=0, scoring=["accuracy", "f1_macro"], refit="accuracy",
              return_train_score=True, store=path)
    first = JKFoldSearchCV(_lr(), GRID, **kw).fit(X, y)
    second = JKFoldSearchCV(_lr(), GRID, **kw).fit(X, y)
    assert second.selection_.n_reused == 18
    _assert_same_results(second, first)


def _debian_sample(seed, sizes):
    """Texts and sections of a few Debian sections' training packages, ``sizes[section]`` of each."""
    from certa.datasets import load_debian_sections

    b = load_debian_sections()
    y_all = np.asarray(b.y_train)
    rng = np.random.default_rng(seed)
    keep = []
    for label, n in sizes.items():
        keep.extend(rng.choice(np.flatnonzero(y_all == label), n, replace=False))
    return [b.X_train[i] for i in keep], y_all[keep]


def test_rare_class_warns_and_goes_on_with_defined_scores():
    """A real corpus (Debian package sections) whose smallest class has 2 members, 5 folds: as scikit-learn."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    X, y = _debian_sample(0, {"zope": 2, "news": 10, "education": 10, "shells": 10})
    pipe = make_pipeline(TfidfVectorizer(), LinearSVC())
    grid = {"linearsvc__C": [0.1, 1.0]}
    with pytest.warns(UserWarning, match="least populated class in y has only 2 members"):
        ours = JKFoldSearchCV(pipe, grid, n_splits=5, n_repeats=2, random_state=0,
                              scoring=["accuracy", "f1_macro"], refit="f1_macro").fit(X, y)
    for key in ("mean_test_accuracy", "mean_test_f1_macro"):
        assert np.isfinite(ours.cv_results_[key]).all()
    ref = GridSearchCV(pipe, grid, cv=RepeatedStratifiedKFold(n_splits=5, n_repeats=2, random_state=0),
                       scoring=["accuracy", "f1_macro"], refit="f1_macro").fit(X, y)
    _assert_same_results(ours, ref)


def test_nested_cv_with_a_two_member_class_runs():
    from sklearn.feature_extraction.text import TfidfVectorizer

    from certa import cross_validate_selection

    X, y = _debian_sample(1, {"zope": 2, "news": 10, "education": 10})
    inner = JKFoldSearchCV(make_pipeline(TfidfVectorizer(), LinearSVC()), {"linearsvc__C": [0.1, 1.0]},
                           n_splits=5, n_repeats=1, random_state=0, scoring="accuracy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        res = cross_validate_selection(inner, X, y, n_splits=5, random_state=0, scoring="accuracy")
    assert len(res.outer_scores) == 5 and np.isfinite(res.outer_scores).all()


def test_bandit_samples_settings_from_distributions_with_the_root_seed(data):
    from sklearn.model_selection import ParameterSampler

    from certa import BanditSearchCV

    X, y = data
    dist = {"C": loguniform(1e-3, 1e2)}
    s = BanditSearchCV(_lr(), param_distributions=dist, n_iter=4, strategy="equal", budget=8,
                       random_state=5).fit(X, y)
    expected = list(ParameterSampler(dist, 4, random_state=5))
    assert s.cv_results_["params"] == expected
    assert s.best_params_ in expected
    with pytest.raises(ValueError, match="not both"):
        BanditSearchCV(_lr(), GRID, param_distributions=dist).fit(X, y)


def test_bandit_splits_fit_params_with_each_evaluation():
    from sklearn.utils._mocking import CheckingClassifier

    from certa import BanditSearchCV

    X, y = load_iris(return_X_y=True)
    w = np.ones(len(y))
    # CheckingClassifier asserts that the fit parameter is given and as long as the X it is fitted on
    s = BanditSearchCV(CheckingClassifier(expected_fit_params=["spam"]), {"foo_param": [0, 1, 2]},
                       strategy="equal", budget=6, random_state=0).fit(X, y, spam=w)
    assert len(s.selection_.failures) == 0 and s.selection_.n_evaluations == 6
    with pytest.raises(AssertionError, match="spam"):
        s.best_estimator_.fit(X, y)  # the refit got the weights: without them the check fails
    with pytest.raises(ValueError, match="groups"):
        BanditSearchCV(_lr(), GRID, random_state=0).fit(X, y, groups=np.arange(len(y)))


@pytest.mark.parametrize("front", ["bandit", "progressive"])
def test_single_score_fronts_refuse_several_metrics_before_any_fit(data, front):
    from certa import BanditSearchCV, ProgressiveSearchCV

    X, y = data
    search = (BanditSearchCV(_lr(), GRID, scoring=["accuracy", "f1_macro"]) if front == "bandit"
              else ProgressiveSearchCV(_lr(), GRID, scoring={"a": "accuracy"}))
    with pytest.raises(ValueError, match="decides by one score"):
        search.fit(X, y)
    assert not hasattr(search, "selection_")
