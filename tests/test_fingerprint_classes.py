"""Issue 26 item 1: the code of the user's classes counts in a run's fingerprint."""
from __future__ import annotations

import importlib
import sys
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


# Issue 31 item 1: what Python or a library adds to a class or an object lazily (pickling adds
# ``__slotnames__`` to the class, a cached_property keeps its value in the object) is not code
# or state that decides a score: a rerun after it is accepted.

LAZY = textwrap.dedent('''
    import functools
    from abc import ABC

    import numpy as np
    from sklearn.linear_model import LogisticRegression

    class Scorer(ABC):
        def __init__(self, sd):
            self.sd = sd

        @functools.cached_property
        def offset(self):
            return 0.0 * self.sd

        @functools.lru_cache(maxsize=None)
        def unit(self, mu):
            return mu * 1.0

        def __call__(self, params, seed):
            return self.unit(params["mu"]) + self.offset + np.random.default_rng(seed).normal(0, self.sd)

    class Flipped(LogisticRegression):
        __metadata_request__fit = {"sample_weight": True}

        def predict(self, X):
            return super().predict(X)
''')


def test_a_callable_class_run_with_two_workers_is_resumed_on_its_store(tmp_path):
    scorer_class = _module(SCORER)["Scorer"]
    path, grid = tmp_path / "s.sqlite", {"mu": [0.6, 0.7, 0.8]}
    first = run(JKFoldGrid(3, 2), FunctionEvaluator(scorer_class(0.05)), grid, random_state=0, store=path, n_jobs=2)
    assert "__slotnames__" in vars(scorer_class)  # the premise: shipping it to the workers pickled it
    again = run(JKFoldGrid(3, 2), FunctionEvaluator(scorer_class(0.05)), grid, random_state=0, store=path, n_jobs=2)
    assert again.n_reused == again.n_evaluations == first.n_evaluations == 18
    assert again.best_index == first.best_index
    edited = _module(SCORER, **{"normal(0, self.sd)": "normal(1, self.sd)"})["Scorer"](0.05)  # a real change
    with pytest.raises(ValueError, match="evaluation code differs"):
        run(JKFoldGrid(3, 2), FunctionEvaluator(edited), grid, random_state=0, store=path, n_jobs=2)
    with pytest.raises(ValueError, match="evaluation code differs"):  # the state that decides a score
        run(JKFoldGrid(3, 2), FunctionEvaluator(scorer_class(0.5)), grid, random_state=0, store=path, n_jobs=2)


def test_an_estimator_subclass_run_with_two_workers_is_resumed_on_its_store(tmp_path):
    X, y = load_iris(return_X_y=True)
    flipped = _module(SCORER)["Flipped"]
    path = tmp_path / "e.sqlite"

    def fit(est):
        return JKFoldSearchCV(est, {"C": [0.1, 1.0]}, n_splits=2, n_repeats=1, random_state=0, store=path,
                              n_jobs=2).fit(X, y)

    first = fit(flipped(max_iter=300))
    assert "__slotnames__" in vars(flipped)
    again = fit(flipped(max_iter=300))
    assert again.selection_.n_reused == again.selection_.n_evaluations == first.selection_.n_evaluations == 4
    assert again.best_params_ == first.best_params_
    edited = _module(SCORER, **{"return super().predict(X)": "return 2 - super().predict(X)"})["Flipped"]
    with pytest.raises(ValueError, match="estimator or its parameters differs"):
        fit(edited(max_iter=300))
    with pytest.raises(ValueError, match="estimator or its parameters differs"):
        fit(flipped(max_iter=301))


def test_a_deep_copied_scorer_keeps_its_store(tmp_path):
    import copy

    scorer = _module(SCORER)["Scorer"](0.05)
    first = _run(scorer, tmp_path / "s.sqlite")
    copy.deepcopy(scorer)
    again = _run(scorer, tmp_path / "s.sqlite")
    assert again.n_reused == again.n_evaluations == first.n_evaluations == 18


def _lazy_operations(ns: dict) -> None:
    """What Python and scikit-learn may do to a user's classes and objects while they are used."""
    import copy
    import pickle
    from collections.abc import Callable

    import cloudpickle
    import sklearn
    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score
    from sklearn.utils import get_tags

    scorer, est = ns["_scorer"], ns["_est"]
    X, y = load_iris(return_X_y=True)
    for obj in (scorer, est):
        pickle.loads(pickle.dumps(obj))
        cloudpickle.loads(cloudpickle.dumps(obj))
        copy.deepcopy(obj)
        copy.copy(obj)
    scorer({"mu": 0.5}, 0)  # fills the cached_property (in the object) and the lru_cache (in the class body)
    isinstance(scorer, Callable)  # ABC caches
    ns["Scorer"].register(int)  # an ABC registry
    clone(est)
    est.fit(X, y).predict(X)
    est.get_metadata_routing()
    get_tags(est)
    repr(est)
    est._repr_html_()
    with sklearn.config_context(enable_metadata_routing=True):
        clone(est).get_metadata_routing()
        cross_val_score(ns["Flipped"](max_iter=300), X, y, cv=2)
    for cls in (ns["Scorer"], ns["Flipped"]):
        cls.__annotations__  # noqa: B018 - created on first access on some Pythons


def test_lazily_added_class_and_object_attributes_do_not_count(tmp_path, monkeypatch):
    (tmp_path / "user_lazy_classes.py").write_text(LAZY)  # a user's module, importable (plain pickle works)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "user_lazy_classes", raising=False)
    ns = dict(vars(importlib.import_module("user_lazy_classes")))
    ns["_scorer"], ns["_est"] = ns["Scorer"](0.05), ns["Flipped"](max_iter=300)
    before = {name: stable_hash(ns[name]) for name in ("_scorer", "_est", "Scorer", "Flipped")}
    body = {name: set(vars(ns[name])) for name in ("Scorer", "Flipped")}
    _lazy_operations(ns)
    assert "__slotnames__" in set(vars(ns["Scorer"])) - body["Scorer"]  # the premise: the classes did change
    assert "__slotnames__" in set(vars(ns["Flipped"])) - body["Flipped"]
    assert "offset" in vars(ns["_scorer"])  # and so did the object
    assert {name: stable_hash(ns[name]) for name in before} == before
    monkeypatch.delitem(sys.modules, "user_lazy_classes")


@pytest.mark.parametrize("name, args, edit", [
    ("Scorer", (0.05,), {"return mu * 1.0": "return mu * 2.0"}),                      # a method under lru_cache
    ("Scorer", (0.05,), {"return 0.0 * self.sd": "return 1.0 * self.sd"}),            # a cached_property
    ("Flipped", (), {'{"sample_weight": True}': '{"sample_weight": False}'}),        # a declared metadata request
])
def test_code_under_caches_and_declared_requests_still_count(name, args, edit):
    assert stable_hash(_module(LAZY)[name](*args)) == stable_hash(_module(LAZY)[name](*args))
    assert stable_hash(_module(LAZY)[name](*args)) != stable_hash(_module(LAZY, **edit)[name](*args))


def test_metadata_requests_asked_of_an_estimator_count():
    import sklearn
    from sklearn.linear_model import LogisticRegression

    from certa.engine.fingerprint import token

    assert len(token(LogisticRegression())) == 3  # nothing asked: the token of issue 26, unchanged
    with sklearn.config_context(enable_metadata_routing=True):
        asked = LogisticRegression().set_fit_request(sample_weight=True)
        refused = LogisticRegression().set_fit_request(sample_weight=False)
        assert stable_hash(asked) == stable_hash(LogisticRegression().set_fit_request(sample_weight=True))
        assert len({stable_hash(asked), stable_hash(refused), stable_hash(LogisticRegression())}) == 3
