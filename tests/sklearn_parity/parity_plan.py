"""Which of scikit-learn's search tests run against certa, and the deliberate differences.

``NOT_RUN``: tests of ``test_search.py`` that do not exercise ``GridSearchCV`` or
``RandomizedSearchCV`` (so they cannot test certa), or that test a scikit-learn
feature certa does not offer, each with the reason.
``DIFFERENCES``: tests that run and fail because certa differs on purpose; each is
marked ``xfail(strict=True)`` with the reason, so a test that starts passing is
noticed. Keys are test names (all parametrizations) or node ids without the file
part (``test_name[param-ids]``).
"""
from __future__ import annotations

import inspect

SK_MODULE = "sklearn.model_selection.tests.test_search"
#: scikit-learn test modules whose tests run here, and which of their tests (None: those that ``applies``)
SK_MODULES = {SK_MODULE: None, "sklearn.tests.test_metaestimators": {"test_metaestimator_delegation"}}

NOT_RUN: dict[str, str] = {
    "test_array_api_search_cv_classifier": (
        "array-API dispatch (torch, cupy, array_api_strict inputs) is not supported: certa hashes the data for its "
        "store and ships it to worker processes as NumPy/SciPy arrays. (scikit-learn skips this test anyway when "
        "no such array library is installed.)"),
}

_RANDOM_PARTITIONS = (
    "cv=None or an int K means J random K-fold partitions (shuffled, seeded by random_state: the J-K-fold "
    "method), where GridSearchCV's default is one unshuffled (Stratified)KFold; the test compares scores with "
    "unshuffled folds. With cv=StratifiedKFold(K) (or any splitter) the scores are GridSearchCV's.")
_CALLBACKS = (
    "scikit-learn's fit callbacks (sklearn.callback, new in 1.9) are not supported: certa runs each fit "
    "through its own engine (possibly in another process or machine, possibly resumed from a store), "
    "not inside the search's callback context.")

DIFFERENCES: dict[str, str] = {
    "test_grid_search_correct_score_results": _RANDOM_PARTITIONS,
    "test_custom_run_search": _RANDOM_PARTITIONS + " It also compares every fitted attribute, and certa's "
                              "searches have three more (stability_, selection_, random_state_).",
    "test_search_callbacks_no_propagation": _CALLBACKS,
    "test_search_callbacks_propagation": _CALLBACKS,
    "test_search_callbacks_receive_sample_weight": _CALLBACKS,
    "test_search_callbacks_with_partial_fit_failures": _CALLBACKS,
}


def _search_kind(value) -> str | None:
    from sklearn.model_selection import (
        GridSearchCV,
        HalvingGridSearchCV,
        HalvingRandomSearchCV,
        RandomizedSearchCV,
    )

    for cls, kind in ((GridSearchCV, "grid"), (RandomizedSearchCV, "random"),
                      (HalvingGridSearchCV, "halving"), (HalvingRandomSearchCV, "halving")):
        if value is cls or type(value) is cls:
            return kind
    return None


def applies(item) -> bool:
    """Does this collected test exercise GridSearchCV or RandomizedSearchCV (the classes substituted)?"""
    chosen = SK_MODULES.get(item.function.__module__)
    if chosen is not None:
        return item.originalname in chosen
    callspec = getattr(item, "callspec", None)
    kinds = {_search_kind(v) for v in (callspec.params.values() if callspec else ())} - {None}
    if kinds:
        return bool(kinds & {"grid", "random"})
    src = inspect.getsource(item.function)
    return "GridSearchCV(" in src or "RandomizedSearchCV(" in src
