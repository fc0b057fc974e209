"""The examples in the public docstrings run and print what they say."""
import doctest
import importlib

import pytest

MODULES = ["certa.engine.candidates", "certa.stability", "certa.search.jkfold", "certa.search.bandit",
           "certa.nested", "certa.simulate", "certa.strategies.progressive", "certa.search.progressive",
           "certa.loading", "certa.engine.callbacks"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
