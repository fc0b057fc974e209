"""The examples in the public docstrings run and print what they say."""
import doctest
import importlib

import pytest

MODULES = ["certa.engine.candidates", "certa.analysis.stability", "certa.search.jkfold", "certa.search.bandit",
           "certa.analysis.nested", "certa.planning.simulate", "certa.strategies.progressive", "certa.strategies._schedule", "certa.search.progressive",
           "certa.reporting.loading", "certa.engine.callbacks"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
