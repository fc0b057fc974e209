"""scikit-learn's meta-estimator delegation test, with its GridSearchCV / RandomizedSearchCV entries run on certa.

``test_metaestimator_delegation`` checks that a meta-estimator has ``predict``,
``predict_proba``, ``transform``, ... exactly when its sub-estimator has them;
``conftest.py`` makes its ``GridSearchCV`` and ``RandomizedSearchCV`` entries build
certa's searches. See ``docs/sklearn-parity.md``.
"""
import pytest

pytest.importorskip("sklearn.tests.test_metaestimators", reason="this scikit-learn was installed without its tests")

from sklearn.tests.test_metaestimators import test_metaestimator_delegation  # noqa: F401
