"""Issue 26 item 1: the code of the user's classes counts in a run's fingerprint."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest
from _helpers import outputs_under_hash_seeds
from sklearn.datasets import load_iris

from certa import FunctionEvaluator, JKFoldGrid, JKFoldSearchCV, run
from certa.engine.fingerprint import stable_hash

SCORER = textwrap.dedent('''
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    class Base:
        def noise(self, seed):
            return np.random.default_rng(seed).normal(0, self.sd)

    class Scorer(Base):
        unit = 1.0

        def __init__(self, sd):
            self.sd = sd

        def __call__(self, params, seed):
            return params["mu"] * self.unit + self.noise(seed)

    class Flipped(LogisticRegression):
        def predict(self, X):
            return super().predict(X)
''')


def _module(source: str, **edits: str) -> dict:
    """The classes of ``source`` (with text replacements), as if a user edited and reran their module."""
    for old, new in edits.items():
        assert old in source
        source = source.replace(old, new)
    ns = {"__name__": "user_module"}
    exec(compile(source, "user_module.py", "exec"), ns)  # noqa: S102 - the test's own source text
    return ns


def _run(scorer, path):
    return run(JKFoldGrid(3, 2), FunctionEvaluator(scorer), {"mu": [0.6, 0.7, 0.8]}, random_state=0, store=path)


def test_edited_method_of_a_callable_class_refuses_the_store(tmp_path):
    path = tmp_path / "s.sqlite"
    first = _run(_module(SCORER)["Scorer"](0.05), path)
    again = _run(_module(SCORER)["Scorer"](0.05), path)  # the same code in a fresh namespace: reused
    assert again.n_reused == again.n_evaluations == 18 and again.best_index == first.best_index
    edited = _module(SCORER, **{'params["mu"] * self.unit': '(1.4 - params["mu"]) * self.unit'})["Scorer"](0.05)
    with pytest.raises(ValueError, match="evaluation code differs"):
        _run(edited, path)
    assert _run(edited, tmp_path / "fresh.sqlite").best_params == {"mu": 0.6}


@pytest.mark.parametrize("edit", [
    {"unit = 1.0": "unit = 2.0"},                                              # a class attribute
    {"normal(0, self.sd)": "normal(1, self.sd)"},                              # a method of a user base class
    {"def __init__(self, sd):\n        self.sd = sd": "def __init__(self, sd):\n        self.sd = 2 * sd"},
])
def test_class_attributes_and_user_bases_count(edit):
    assert stable_hash(_module(SCORER)["Scorer"](0.05)) == stable_hash(_module(SCORER)["Scorer"](0.05))
    assert stable_hash(_module(SCORER)["Scorer"](0.05)) != stable_hash(_module(SCORER, **edit)["Scorer"](0.05))


def test_edited_predict_of_an_estimator_subclass_refuses_the_store(tmp_path):
    X, y = load_iris(return_X_y=True)
    path = tmp_path / "e.sqlite"
    est = _module(SCORER)["Flipped"](max_iter=300)
    JKFoldSearchCV(est, {"C": [0.1, 1.0]}, n_splits=2, n_repeats=1, random_state=0, store=path).fit(X, y)
    edited = _module(SCORER, **{"return super().predict(X)": "return 2 - super().predict(X)"})["Flipped"](max_iter=300)
    with pytest.raises(ValueError, match="estimator or its parameters differs"):
        JKFoldSearchCV(edited, {"C": [0.1, 1.0]}, n_splits=2, n_repeats=1, random_state=0, store=path).fit(X, y)


def test_library_classes_are_hashed_by_name_only():
    from sklearn.linear_model import LogisticRegression

    from certa.engine.fingerprint import token

    assert token(LogisticRegression) == ("class", "sklearn.linear_model._logistic.LogisticRegression")
    assert token(np.random.Generator) == ("class", "numpy.random._generator.Generator")
    user = token(_module(SCORER)["Flipped"])
    assert user[0] == "user-class" and user[2] == (token(LogisticRegression),)  # its installed base by name


def test_class_fingerprint_is_stable_across_processes(tmp_path):
    (tmp_path / "user_classes.py").write_text(SCORER)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import user_classes as m; "
            "from certa.engine.fingerprint import stable_hash; "
            "print(stable_hash(m.Scorer(0.05)), stable_hash(m.Flipped(C=2.0)))")
    outs = outputs_under_hash_seeds(code, str(tmp_path))
    assert outs[0] == outs[1] and len(outs[0].split()) == 2
