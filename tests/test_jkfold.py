"""JKFoldSearchCV against scikit-learn's GridSearchCV with repeated K-fold partitions."""
import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_diabetes, load_iris, load_wine
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV, RepeatedKFold, RepeatedStratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from certa import JKFoldSearchCV

GRID = {"logisticregression__C": [0.001, 0.01, 0.1, 1.0, 10.0], "logisticregression__fit_intercept": [True, False]}


def _pipe():
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))


@pytest.fixture(scope="module")
def wine_searches():
    X, y = load_wine(return_X_y=True)
    certa = JKFoldSearchCV(_pipe(), GRID, n_splits=4, n_repeats=3, random_state=7).fit(X, y)
    sk = GridSearchCV(_pipe(), GRID, cv=RepeatedStratifiedKFold(n_splits=4, n_repeats=3, random_state=7)).fit(X, y)
    return X, y, certa, sk


def test_mean_scores_equal_gridsearchcv(wine_searches):
    _, _, certa, sk = wine_searches
    np.testing.assert_allclose(certa.cv_results_["mean_test_score"], sk.cv_results_["mean_test_score"], rtol=0, atol=1e-12)
    for i in range(12):
        np.testing.assert_allclose(certa.cv_results_[f"split{i}_test_score"], sk.cv_results_[f"split{i}_test_score"],
                                   rtol=0, atol=1e-12)
    np.testing.assert_allclose(certa.cv_results_["std_test_score"], sk.cv_results_["std_test_score"], atol=1e-12)
    np.testing.assert_array_equal(certa.cv_results_["rank_test_score"], sk.cv_results_["rank_test_score"])
    assert certa.best_params_ == sk.best_params_
    assert certa.best_index_ == sk.best_index_
    assert certa.best_score_ == pytest.approx(sk.best_score_, abs=1e-12)
    assert certa.n_splits_ == sk.n_splits_ == 12
    assert set(certa.cv_results_) == set(sk.cv_results_)
    assert certa.cv_results_["params"] == sk.cv_results_["params"]
    assert list(certa.cv_results_["param_logisticregression__C"]) == list(sk.cv_results_["param_logisticregression__C"])


def test_refit_and_delegation(wine_searches):
    X, y, certa, sk = wine_searches
    np.testing.assert_array_equal(certa.predict(X), sk.predict(X))
    assert certa.score(X, y) == pytest.approx(sk.score(X, y))


def test_each_partition_choice_equals_gridsearchcv_on_that_partition(wine_searches):
    X, y, certa, _ = wine_searches
    splits = list(RepeatedStratifiedKFold(n_splits=4, n_repeats=3, random_state=7).split(X, y))
    for j in range(3):
        sk_j = GridSearchCV(_pipe(), GRID, cv=splits[j * 4:(j + 1) * 4], refit=False).fit(X, y)
        assert certa.stability_.partition_choices[j] == sk_j.best_index_
        assert certa.stability_.partition_scores[j] == pytest.approx(sk_j.best_score_, abs=1e-12)


def test_regressor_uses_repeated_kfold():
    X, y = load_diabetes(return_X_y=True)
    grid = {"alpha": [0.01, 0.1, 1.0, 10.0]}
    certa = JKFoldSearchCV(Ridge(), grid, n_splits=3, n_repeats=2, random_state=3, scoring="r2").fit(X, y)
    sk = GridSearchCV(Ridge(), grid, cv=RepeatedKFold(n_splits=3, n_repeats=2, random_state=3), scoring="r2").fit(X, y)
    np.testing.assert_allclose(certa.cv_results_["mean_test_score"], sk.cv_results_["mean_test_score"], atol=1e-12)
    assert certa.best_params_ == sk.best_params_


def test_same_result_with_one_and_two_workers():
    X, y = load_iris(return_X_y=True)
    grid = {"C": [0.01, 0.1, 1.0]}
    a = JKFoldSearchCV(LogisticRegression(max_iter=500), grid, n_splits=3, n_repeats=2, random_state=0, n_jobs=1).fit(X, y)
    b = JKFoldSearchCV(LogisticRegression(max_iter=500), grid, n_splits=3, n_repeats=2, random_state=0, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])
    cols = ["candidate", "index", "seed", "score"]
    assert a.selection_.evaluations[cols].equals(b.selection_.evaluations[cols])


def test_random_state_none_is_recorded_and_reproducible():
    X, y = load_iris(return_X_y=True)
    a = JKFoldSearchCV(LogisticRegression(max_iter=500), {"C": [0.1, 1.0]}, n_splits=3, n_repeats=2).fit(X, y)
    b = JKFoldSearchCV(LogisticRegression(max_iter=500), {"C": [0.1, 1.0]}, n_splits=3, n_repeats=2,
                       random_state=a.random_state_).fit(X, y)
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])


class _FailsForSomeC(ClassifierMixin, BaseEstimator):
    """Raises in fit when C == -1; returns a constant prediction otherwise."""

    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, y):
        if self.C == -1:
            raise RuntimeError("bad C")
        self.classes_ = np.unique(y)
        self.majority_ = np.bincount(y).argmax()
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


def test_failed_evaluations_are_recorded_and_rank_last():
    X, y = load_iris(return_X_y=True)
    s = JKFoldSearchCV(_FailsForSomeC(), {"C": [-1, 1.0]}, n_splits=3, n_repeats=2, random_state=0,
                       retries=1, refit=False).fit(X, y)
    fails = s.selection_.failures
    assert len(fails) == 6 and set(fails["candidate"]) == {0}
    assert (fails["attempts"] == 2).all()  # one retry each
    assert fails["error"].str.contains("bad C").all()
    assert np.isnan(s.cv_results_["mean_test_score"][0])
    assert s.best_index_ == 1 and s.cv_results_["rank_test_score"].tolist() == [2, 1]


@pytest.mark.parametrize("kwargs, match, exc", [
    ({"n_splits": 1}, "n_splits must be at least 2", ValueError),
    ({"n_repeats": 0}, "n_repeats must be at least 1", ValueError),
    ({"n_splits": 60}, "cannot be greater than the number of members in each class", ValueError),
    ({"n_splits": 2.5}, "n_splits must be an int", TypeError),
])
def test_bad_cv_arguments(kwargs, match, exc):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(exc, match=match):
        JKFoldSearchCV(LogisticRegression(), {"C": [1.0]}, **kwargs).fit(X, y)


@pytest.mark.parametrize("grid, match, exc", [
    ([], "param_grid is empty", ValueError),
    # scikit-learn's own messages (ParameterGrid's), as GridSearchCV gives them
    ({"C": 1.0}, r"Parameter grid for parameter 'C' needs to be a list", TypeError),
    ({"C": []}, r"Parameter grid for parameter 'C' need to be a non-empty sequence", ValueError),
    ("C", r"Parameter grid is not a dict", TypeError),
])
def test_bad_grids(grid, match, exc):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(exc, match=match):
        JKFoldSearchCV(LogisticRegression(), grid).fit(X, y)


def test_estimator_without_fit():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(TypeError, match="estimator must be"):
        JKFoldSearchCV(object(), {"C": [1.0]}).fit(X, y)


def test_unknown_parameter_is_one_clear_error_before_any_fit():
    # issue #11: a grid key the estimator lacks is refused up front, naming it
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="param_grid.*not_a_param"):
        JKFoldSearchCV(LogisticRegression(), {"not_a_param": [1]}, n_splits=2, n_repeats=1,
                       random_state=0, refit=False).fit(X, y)


def test_store_of_a_different_run_is_refused(tmp_path):
    X, y = load_iris(return_X_y=True)
    path = tmp_path / "run.sqlite"
    JKFoldSearchCV(LogisticRegression(max_iter=500), {"C": [0.1, 1.0]}, n_splits=2, n_repeats=1,
                   random_state=0, store=path).fit(X, y)
    size = path.stat().st_size
    with pytest.raises(ValueError, match="belongs to a different run"):
        JKFoldSearchCV(LogisticRegression(max_iter=500), {"C": [0.1, 5.0]}, n_splits=2, n_repeats=1,
                       random_state=0, store=path).fit(X, y)
    with pytest.raises(ValueError, match="belongs to a different run"):
        JKFoldSearchCV(LogisticRegression(max_iter=500), {"C": [0.1, 1.0]}, n_splits=2, n_repeats=1,
                       random_state=1, store=path).fit(X, y)
    assert path.stat().st_size >= size


def test_store_resume_reuses_every_evaluation(tmp_path):
    X, y = load_iris(return_X_y=True)
    path = tmp_path / "run.sqlite"
    kw = dict(n_splits=3, n_repeats=2, random_state=0, store=path)
    a = JKFoldSearchCV(LogisticRegression(max_iter=500), {"C": [0.1, 1.0]}, **kw).fit(X, y)
    b = JKFoldSearchCV(LogisticRegression(max_iter=500), {"C": [0.1, 1.0]}, **kw).fit(X, y)
    assert a.selection_.n_reused == 0 and b.selection_.n_reused == 12
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])


def test_dask_local_cluster():
    distributed = pytest.importorskip("distributed")
    X, y = load_iris(return_X_y=True)
    grid = {"C": [0.01, 1.0]}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        s = JKFoldSearchCV(LogisticRegression(max_iter=500), grid, n_splits=3, n_repeats=2, random_state=0,
                           executor=client).fit(X, y)
        worker_pids = set(client.run(__import__("os").getpid).values())
    sk = GridSearchCV(LogisticRegression(max_iter=500), grid,
                      cv=RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=0)).fit(X, y)
    np.testing.assert_allclose(s.cv_results_["mean_test_score"], sk.cv_results_["mean_test_score"], atol=1e-12)
    assert len(worker_pids) == 2


def test_cached_vectorizer_gives_identical_scores():
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.svm import LinearSVC

    from certa.datasets import load_debian_small
    from certa.engine import evaluators

    X, y = load_debian_small(return_X_y=True)
    X, y = X[:600], y[:600]
    pipe = make_pipeline(TfidfVectorizer(min_df=2), LinearSVC(random_state=0))  # liblinear shuffles: seed it
    grid = {"tfidfvectorizer__sublinear_tf": [True, False], "linearsvc__C": [0.1, 1.0]}
    evaluators._PREFIX_CACHE.clear()
    cached = JKFoldSearchCV(pipe, grid, n_splits=3, n_repeats=2, random_state=0, cache_transformers=True,
                            refit=False).fit(X, y)
    sk = GridSearchCV(pipe, grid, cv=RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=0)).fit(X, y)
    for i in range(6):
        np.testing.assert_array_equal(cached.cv_results_[f"split{i}_test_score"], sk.cv_results_[f"split{i}_test_score"])
    assert cached.best_params_ == sk.best_params_
    assert len(evaluators._PREFIX_CACHE) == evaluators._PREFIX_CACHE_SIZE  # the cache was used (inline run)
