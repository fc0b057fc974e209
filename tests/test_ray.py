"""executor="ray" on a local Ray instance: the same result as a local run, concurrency from the cluster."""
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from certa import FunctionEvaluator, JKFoldGrid, JKFoldSearchCV, run
from certa.datasets import load_debian_small
from certa.engine.executors import RayExecutor, resolve_executor

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'certa[ray]')")


@pytest.fixture(scope="module")
def local_ray():
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    except Exception:  # noqa: BLE001 - on a loaded machine Ray's own start-up timeout can expire: try once more
        ray.shutdown()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_jkfold_on_ray_equals_the_local_run(local_ray):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline

    X, y = load_debian_small(return_X_y=True)
    X, y = X[:400], y[:400]
    est = make_pipeline(TfidfVectorizer(min_df=2), LogisticRegression(max_iter=300))
    kw = {"n_splits": 3, "n_repeats": 2, "random_state": 0, "refit": False}
    grid = {"logisticregression__C": [0.1, 1.0, 10.0]}
    local = JKFoldSearchCV(est, grid, **kw).fit(X, y)
    on_ray = JKFoldSearchCV(est, grid, executor="ray", **kw).fit(X, y)
    np.testing.assert_array_equal(on_ray.cv_results_["mean_test_score"], local.cv_results_["mean_test_score"])
    assert on_ray.best_params_ == local.best_params_
    assert list(on_ray.selection_.evaluations["key"]) == list(local.selection_.evaluations["key"])


def test_ray_concurrency_follows_the_cluster_not_n_jobs(local_ray):
    pool, n_workers, owned = resolve_executor("ray", n_jobs=1)
    assert isinstance(pool, RayExecutor) and n_workers == 2 and owned
    assert resolve_executor("ray", n_jobs=16)[1] == 2


def test_ray_runs_evaluations_in_its_workers(local_ray):
    import os

    def _pid(params, seed):  # defined here: pickled by value, the Ray workers cannot import this test module
        import os
        import time

        time.sleep(0.5)
        return float(os.getpid())

    sel = run(JKFoldGrid(2, 2), FunctionEvaluator(_pid), {"x": [1, 2]}, executor="ray")
    pids = set(sel.evaluations["score"].astype(int))
    assert os.getpid() not in pids and len(pids) == 2  # both CPUs used although n_jobs=1
