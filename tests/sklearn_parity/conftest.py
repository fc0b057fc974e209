"""Hooks that point scikit-learn's own search tests at certa's classes (see ``adapter.py``)."""
from __future__ import annotations

import sys

import pytest

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import adapter
from parity_plan import DIFFERENCES, NOT_RUN, SK_MODULES, applies


def _is_sk_item(item) -> bool:
    fn = getattr(item, "function", None)
    return fn is not None and getattr(fn, "__module__", None) in SK_MODULES


def pytest_collection_modifyitems(config, items):
    keep, drop = [], []
    for item in items:
        if not _is_sk_item(item):
            keep.append(item)
            continue
        name = item.originalname
        if name in NOT_RUN or not applies(item):
            drop.append(item)
            continue
        reason = DIFFERENCES.get(item.nodeid.split("::", 1)[1]) or DIFFERENCES.get(name)
        if reason:
            item.add_marker(pytest.mark.xfail(strict=True, reason=reason))
        keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _swap(value):
    from sklearn.model_selection import GridSearchCV, RandomizedSearchCV

    if value is GridSearchCV:
        return adapter.GridSearchCVOnJKFold
    if value is RandomizedSearchCV:
        return adapter.RandomizedSearchCVOnJKFold
    if type(value) is GridSearchCV:
        return adapter.GridSearchCVOnJKFold(**value.get_params(deep=False))
    if type(value) is RandomizedSearchCV:
        return adapter.RandomizedSearchCVOnJKFold(**value.get_params(deep=False))
    return value


@pytest.hookimpl(hookwrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    if not _is_sk_item(pyfuncitem):
        yield
        return
    module = sys.modules[pyfuncitem.function.__module__]
    saved = {name: getattr(module, name) for name in ("GridSearchCV", "RandomizedSearchCV")}
    module.GridSearchCV = adapter.GridSearchCVOnJKFold
    module.RandomizedSearchCV = adapter.RandomizedSearchCVOnJKFold
    adapter.CREATED.clear()  # before the swap: an instance rebuilt as certa's counts as created
    for key, value in list(pyfuncitem.funcargs.items()):
        pyfuncitem.funcargs[key] = _swap(value)
    try:
        outcome = yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)
    if outcome.excinfo is None and not adapter.CREATED:
        outcome.force_exception(AssertionError(
            f"{pyfuncitem.nodeid} passed without creating a certa search: it does not test certa "
            f"(add it to NOT_RUN in parity_plan.py with the reason)"))
