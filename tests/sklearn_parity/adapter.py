"""Run scikit-learn's own search tests against certa: the classes substituted, nothing copied.

scikit-learn ships its tests with the wheel. ``test_search_parity.py`` imports
the test functions of ``sklearn/model_selection/tests/test_search.py``; the
hooks in this folder's ``conftest.py`` replace, while each of those tests runs,
the module's ``GridSearchCV`` (and ``RandomizedSearchCV``) by the thin
subclasses below: ``JKFoldSearchCV`` / ``RandomizedJKFoldSearchCV`` with
``n_repeats=1`` and ``GridSearchCV``'s signature and defaults. A test
parametrized with the scikit-learn class (or an instance of it) gets the
certa class (or the same instance rebuilt as certa's).

What is run, what is not and why, and which tests fail on purpose (a
deliberate difference, with its reason) is decided here, in ``NOT_RUN`` and
``DIFFERENCES``; ``docs/sklearn-parity.md`` reports the counts.
"""
from __future__ import annotations

import numpy as np

from certa import JKFoldSearchCV, RandomizedJKFoldSearchCV

#: instances of the adapters created in the running test (a test that never made one did not test certa)
CREATED: list = []


class GridSearchCVOnJKFold(JKFoldSearchCV):
    """``GridSearchCV``'s signature and defaults, on ``JKFoldSearchCV(n_repeats=1)``."""

    def __init__(self, estimator, param_grid, *, scoring=None, n_jobs=None, refit=True, cv=None, verbose=0,
                 pre_dispatch="2*n_jobs", error_score=np.nan, return_train_score=False):
        super().__init__(estimator, param_grid, n_splits=5, n_repeats=1, scoring=scoring, n_jobs=n_jobs,
                         random_state=0, refit=refit, cv=cv, verbose=verbose, pre_dispatch=pre_dispatch,
                         error_score=error_score, return_train_score=return_train_score)
        CREATED.append(self)


class RandomizedSearchCVOnJKFold(RandomizedJKFoldSearchCV):
    """``RandomizedSearchCV``'s signature and defaults, on ``RandomizedJKFoldSearchCV(n_repeats=1)``.

    scikit-learn's ``random_state`` seeds the sample of settings; here it is the
    run's root seed (``None`` becomes 0, so that a test's two fits agree).
    """

    def __init__(self, estimator, param_distributions, *, n_iter=10, scoring=None, n_jobs=None, refit=True,
                 cv=None, verbose=0, pre_dispatch="2*n_jobs", random_state=None, error_score=np.nan,
                 return_train_score=False):
        super().__init__(estimator, param_distributions, n_iter=n_iter, n_splits=5, n_repeats=1, scoring=scoring,
                         n_jobs=n_jobs, random_state=random_state, refit=refit, cv=cv, verbose=verbose,
                         pre_dispatch=pre_dispatch, error_score=error_score,
                         return_train_score=return_train_score)
        CREATED.append(self)

    def fit(self, X, y=None, **params):
        if self.random_state is None:
            self.random_state = 0
            try:
                return super().fit(X, y, **params)
            finally:
                self.random_state = None
        if isinstance(self.random_state, np.random.RandomState):
            seed = self.random_state
            self.random_state = int(seed.randint(2**31 - 1))
            try:
                return super().fit(X, y, **params)
            finally:
                self.random_state = seed
        return super().fit(X, y, **params)
