"""scikit-learn's own tests of GridSearchCV and RandomizedSearchCV, run against certa's J-K-fold searches.

The tests are scikit-learn's (``sklearn/model_selection/tests/test_search.py`` of
the installed version), imported, not copied; ``conftest.py`` in this folder
substitutes the classes and ``parity_plan.py`` lists what is not run and the
deliberate differences. See ``docs/sklearn-parity.md``.
"""
import pytest

pytest.importorskip("sklearn.model_selection.tests.test_search",
                    reason="this scikit-learn was installed without its tests")

from sklearn.model_selection.tests.test_search import *
