"""Size of the tests under a true null, by simulation (benchmarks/stats.py size).

Two nearest-centroid classifiers on exchangeable feature groups have the same expected
accuracy, so every rejection is a false one. The naive paired t test over the J*K folds
of repeated CV must over-reject; the corrected repeated k-fold t test must not.
"""

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "_stats" / "size.py"
_spec = importlib.util.spec_from_file_location("certa_bench_stats_size", _PATH)
size = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = size  # dataclasses need the module registered
_spec.loader.exec_module(size)

ALPHA = 0.05


def _bound(reps: int) -> float:
    """alpha + 3 binomial standard errors at alpha: a correct test stays below it."""
    return ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps)


def test_vectorised_nearest_centroid_matches_sklearn():
    from sklearn.neighbors import NearestCentroid

    rng = np.random.default_rng(0)
    cfg = size.Config()
    X, y = size.simulate_dataset(rng, cfg)
    masks = size._kfold_masks(rng, cfg.n_samples, 2, 5)
    correct = size.nearest_centroid_correct(X[:, :5], y, masks)
    for f, train in enumerate(masks):
        pred = NearestCentroid().fit(X[train, :5], y[train]).predict(X[:, :5])
        np.testing.assert_array_equal(correct[f], pred == y)


def test_null_holds_in_the_simulation():
    # the two candidates' mean accuracies agree within 4 standard errors of their difference
    rng = np.random.default_rng(1)
    cfg = size.Config()
    diffs = []
    for _ in range(300):
        X, y = size.simulate_dataset(rng, cfg)
        masks = size._kfold_masks(rng, cfg.n_samples, 1, 10)
        (a, _), (b, _) = size._accuracies(X, y, masks, cfg.n_features_per_group)
        diffs.append(a.mean() - b.mean())
    diffs = np.array(diffs)
    assert abs(diffs.mean()) < 4 * diffs.std(ddof=1) / np.sqrt(diffs.size)


def test_naive_jxk_ttest_over_rejects_and_corrected_does_not_fast():
    reps = 300
    rates = size.run(reps, seed=123, tests=size.FAST_TESTS)
    naive, corrected = rates["naive_t_JxK"]["rate"], rates["corrected_t_JxK"]["rate"]
    assert naive > corrected
    assert corrected <= _bound(reps)
    assert naive > _bound(reps)  # clear over-rejection, not just more than the corrected


@pytest.mark.slow
def test_size_of_all_tests_full():
    reps = 2000
    rates = size.run(reps, seed=20240601)
    bound = _bound(reps)
    for name in ("naive_t_JxK", "naive_resampled_t"):
        assert rates[name]["rate"] > bound, (name, rates[name])
    for name in ("corrected_t_JxK", "corrected_resampled_t", "ttest_5x2cv", "ftest_5x2cv"):
        assert rates[name]["rate"] <= bound, (name, rates[name])
    assert rates["naive_t_JxK"]["rate"] > rates["corrected_t_JxK"]["rate"]
