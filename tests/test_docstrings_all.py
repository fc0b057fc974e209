"""Every docstring example in the package runs and prints what it says, not only those of the
public modules listed in ``test_docstrings.py`` (a module whose optional dependency is missing is
skipped)."""
import doctest
import importlib
import pkgutil

import pytest

import certa

ALL = sorted(m.name for m in pkgutil.walk_packages(certa.__path__, "certa.") if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", ALL)
def test_every_module_docstring_example(name):
    try:
        module = importlib.import_module(name)
    except ImportError as exc:   # an optional dependency (dask, ray, mlflow, optuna)
        pytest.skip(f"{name}: {exc}")
    finder = doctest.DocTestFinder()
    if not any(t.examples for t in finder.find(module, module.__name__)):
        return
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_the_walk_finds_the_modules_and_their_examples():
    assert {"certa.reporting.summary", "certa.search.bandit", "certa.engine.store"} <= set(ALL)
    summary = importlib.import_module("certa.reporting.summary")
    tests = doctest.DocTestFinder().find(summary, summary.__name__)
    assert any("display_text" in t.name and t.examples for t in tests)
