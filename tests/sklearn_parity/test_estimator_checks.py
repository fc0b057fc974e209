"""scikit-learn's estimator checks on JKFoldSearchCV, as scikit-learn runs them on its own GridSearchCV.

The instances are those scikit-learn checks ``GridSearchCV`` with
(``sklearn/utils/_test_common/instance_generator.py``: Ridge, LogisticRegression
and both behind PCA in a pipeline, ``cv=2``, ``error_score="raise"``), here with
J = 1 and J = 2 partitions. The checks expected to fail are GridSearchCV's own
expected failures plus any listed in ``EXPECTED_FAILED`` with the reason.
"""
import pytest
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import Pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from certa import JKFoldSearchCV, RandomizedJKFoldSearchCV

#: scikit-learn expects these to fail for its own GridSearchCV (PER_ESTIMATOR_XFAIL_CHECKS), for the same reasons
GRIDSEARCHCV_EXPECTED = {
    "check_supervised_y_2d": "DataConversionWarning not caught (as for scikit-learn's GridSearchCV)",
    "check_requires_y_none": "Doesn't fail gracefully (as for scikit-learn's GridSearchCV)",
}

EXPECTED_FAILED: dict[str, str] = {}


def _instances():
    grids = [(Ridge(), {"alpha": [0.1, 1.0]}), (LogisticRegression(), {"C": [0.1, 1.0]}),
             (Pipeline([("pca", PCA()), ("ridge", Ridge())]), {"ridge__alpha": [0.1, 1.0]}),
             (Pipeline([("pca", PCA()), ("logisticregression", LogisticRegression())]),
              {"logisticregression__C": [0.1, 1.0]})]
    out = []
    for J in (1, 2):
        for est, grid in grids:
            out.append(JKFoldSearchCV(est, grid, cv=2, n_repeats=J, error_score="raise", random_state=0))
    est, grid = grids[1]
    out.append(RandomizedJKFoldSearchCV(est, grid, n_iter=2, cv=2, n_repeats=2, error_score="raise",
                                        random_state=0))
    return out


def _expected(estimator):
    return {**GRIDSEARCHCV_EXPECTED, **EXPECTED_FAILED}


_ALL = _instances()
#: by default a representative subset (a classifier with J = 1, a regressor pipeline with J = 2, the randomized
#: search); every instance with ``-m slow``
_FAST = [_ALL[1], _ALL[6], _ALL[8]]


@parametrize_with_checks(_FAST, expected_failed_checks=_expected)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks([e for e in _ALL if not any(e is f for f in _FAST)], expected_failed_checks=_expected)
def test_sklearn_estimator_checks_all_instances(estimator, check):
    check(estimator)
