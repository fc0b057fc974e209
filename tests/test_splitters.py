"""scikit-learn splitters as the rows of the paired searches (issue 34 item 2): BanditSearchCV(cv=, groups=),
bandit_select(split=splitter), certa select --cv."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import (
    GroupKFold,
    PredefinedSplit,
    RepeatedStratifiedKFold,
    StratifiedGroupKFold,
    TimeSeriesSplit,
)

from certa import BanditSearchCV, TargetNotReachedWarning, bandit_select
from certa.search._splitters import parse_cv, splitter_rows

#: (level, train indices, test indices) of every scoring, in the order they happened
SEEN: list[tuple[float, tuple[int, ...], tuple[int, ...]]] = []


class Recorder(ClassifierMixin, BaseEstimator):
    """Remembers the rows it was trained on (X[:, 0] is the example's index) and those it is scored on.

    Its score is ``level`` plus a term of the test rows alone, shared by every level: the paired
    differences are constant, so two levels 1e-4 apart cannot be told apart on a few rows."""

    def __init__(self, level: float = 0.0) -> None:
        self.level = level

    def fit(self, X, y):
        self.train_ = tuple(int(i) for i in np.asarray(X)[:, 0])
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])

    def score(self, X, y):
        test = tuple(int(i) for i in np.asarray(X)[:, 0])
        SEEN.append((self.level, self.train_, test))
        return self.level + float(np.mean(np.sin(np.asarray(test, dtype=float))))


def _data(n: int = 60):
    rng = np.random.default_rng(0)
    X = np.column_stack([np.arange(n), rng.normal(size=n)])
    y = np.arange(n) % 2
    groups = np.arange(n) // 6   # 10 groups of 6
    return X, y, groups


def _splitters(n: int, y, groups):
    test_fold = np.arange(n) % 3
    return {
        "repeated-stratified": (RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=1), None),
        "group": (GroupKFold(n_splits=5), groups),
        "stratified-group": (StratifiedGroupKFold(n_splits=4, shuffle=True, random_state=2), groups),
        "time-series": (TimeSeriesSplit(n_splits=4), None),
        "predefined": (PredefinedSplit(test_fold), None),
        "iterable": (iter([(np.arange(0, 40), np.arange(40, 60)), (np.arange(20, 60), np.arange(0, 20)),
                           (np.arange(10, 50), np.r_[0:10, 50:60])]), None),
    }


@pytest.mark.parametrize("family", ["repeated-stratified", "group", "stratified-group", "time-series",
                                    "predefined", "iterable"])
def test_rows_are_the_splitters_splits_the_same_for_every_candidate(family):
    X, y, groups = _data()
    cv, g = _splitters(len(y), y, groups)[family]
    fresh = _splitters(len(y), y, groups)[family][0]
    expected = [(tuple(tr.tolist()), tuple(te.tolist())) for tr, te in
                (fresh if family == "iterable" else fresh.split(X, y, g))]
    SEEN.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TargetNotReachedWarning)   # levels 1e-4 apart: the splits run out
        s = BanditSearchCV(Recorder(), {"level": [0.0, 1e-4]}, cv=cv, random_state=0, progress=False,
                           refit=False).fit(X, y, groups=g)
    res = s.selection_.result
    assert res["stop_reason"] == "out of splits" and res["rows"] == len(expected)
    assert s.target_reached_ is False and "out of splits" in s.guarantee_
    for level in (0.0, 1e-4):
        seen = [(tr, te) for lv, tr, te in SEEN if lv == level]
        assert seen == expected, family   # row r = split r of cv.split(X, y, groups), for each candidate
    ev = s.selection_.evaluations
    assert sorted(ev["index"].map(lambda i: i[0]).tolist()) == sorted(list(range(len(expected))) * 2)
    if g is not None:   # grouped data: no group on both sides of any split
        for _, tr, te in SEEN:
            assert not set(groups[list(tr)]) & set(groups[list(te)])
    if family == "time-series":
        assert all(max(tr) < min(te) for _, tr, te in SEEN)


def test_the_model_seed_of_a_row_still_comes_from_the_root_seed():
    from certa.engine.draws import row_seed

    X, y, groups = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TargetNotReachedWarning)
        s = BanditSearchCV(Recorder(), {"level": [0.0, 1e-4]}, cv=GroupKFold(5), random_state=7, progress=False,
                           refit=False).fit(X, y, groups=groups)
    ev = s.selection_.evaluations
    assert all(seed == row_seed(7, idx[0]) for seed, idx in zip(ev["seed"], ev["index"], strict=True))


def test_a_clear_winner_is_chosen_fold_by_fold_before_the_splits_run_out():
    X, y, _ = _data()
    s = BanditSearchCV(Recorder(), {"level": [0.0, 0.5, 1.0]}, random_state=0, progress=False,
                       cv=RepeatedStratifiedKFold(n_splits=3, n_repeats=10, random_state=0)).fit(X, y)
    res = s.selection_.result
    assert s.best_params_ == {"level": 1.0} and res["stop_reason"] == "confident"
    assert res["rows"] < 30 and s.confidence_ >= 0.95


def test_shuffling_splitter_without_random_state_takes_the_root_seed():
    X, y, _ = _data()
    cv = RepeatedStratifiedKFold(n_splits=3, n_repeats=2)   # random_state=None
    a = splitter_rows(cv, X, y, None, classifier=True, root_seed=3)
    b = splitter_rows(cv, X, y, None, classifier=True, root_seed=3)
    c = splitter_rows(cv, X, y, None, classifier=True, root_seed=4)
    assert a.spec() == b.spec() != c.spec()
    assert cv.random_state is None   # the user's splitter is left as it was


def test_store_resumes_exactly_and_refuses_other_splits(tmp_path):
    X, y, groups = _data()
    store = tmp_path / "run.sqlite"
    kw = dict(cv=GroupKFold(5), random_state=0, progress=False, refit=False, store=store)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TargetNotReachedWarning)
        first = BanditSearchCV(Recorder(), {"level": [0.0, 1e-4]}, **kw).fit(X, y, groups=groups)
        SEEN.clear()
        again = BanditSearchCV(Recorder(), {"level": [0.0, 1e-4]}, **kw).fit(X, y, groups=groups)
    assert SEEN == [] and again.selection_.n_reused == first.selection_.n_evaluations == 10
    with pytest.raises(ValueError, match="different run"):
        BanditSearchCV(Recorder(), {"level": [0.0, 1e-4]}, **{**kw, "cv": GroupKFold(4)}).fit(X, y, groups=groups)
    with pytest.raises(ValueError, match="different run"):   # other groups: other splits
        BanditSearchCV(Recorder(), {"level": [0.0, 1e-4]}, **kw).fit(X, y, groups=groups[::-1])


def test_refusals_name_the_argument():
    X, y, groups = _data()
    with pytest.raises(ValueError, match="groups needs cv"):
        BanditSearchCV(Recorder(), {"level": [0.0, 1.0]}).fit(X, y, groups=groups)
    with pytest.raises(ValueError, match="needs the paired strategy"):
        BanditSearchCV(Recorder(), {"level": [0.0, 1.0]}, cv=3, strategy="top_two").fit(X, y)
    with pytest.raises(TypeError, match="cv must be"):
        BanditSearchCV(Recorder(), {"level": [0.0, 1.0]}, cv="group:5").fit(X, y)
    with pytest.raises(ValueError, match="cannot split"):   # GroupKFold without groups
        BanditSearchCV(Recorder(), {"level": [0.0, 1.0]}, cv=GroupKFold(3)).fit(X, y)
    with pytest.raises(ValueError, match="both its train and its test"):
        BanditSearchCV(Recorder(), {"level": [0.0, 1.0]}, cv=[(np.arange(40), np.arange(30, 60))]).fit(X, y)
    with pytest.raises(ValueError, match=r"test_size=0.3 sizes the fresh random splits.*give one of test_size and cv"):
        BanditSearchCV(Recorder(), {"level": [0.0, 1.0]}, cv=3, test_size=0.3).fit(X, y)
    # bandit_select calls the same argument split: its errors say split, not cv
    with pytest.raises(TypeError, match=r"^split must be a splitter"):
        bandit_select(lambda m, tr, te, s: 0.5, {"a": 1, "b": 2}, (X, y), split="five")
    with pytest.raises(ValueError, match=r"^split \(GroupKFold.*cannot split"):
        bandit_select(lambda m, tr, te, s: 0.5, {"a": 1, "b": 2}, (X, y), split=GroupKFold(3))


def test_bandit_select_takes_a_splitter_and_groups():
    X, y, groups = _data()
    seen: dict[str, list] = {"a": [], "b": []}

    def evaluate(level, train, test, seed):
        (X_tr, _), (X_te, _) = train, test
        seen["a" if level == 0 else "b"].append((tuple(X_tr[:, 0].astype(int)), tuple(X_te[:, 0].astype(int))))
        return level + float(np.mean(np.sin(X_te[:, 0])))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TargetNotReachedWarning)
        sel = bandit_select(evaluate, {"a": 0.0, "b": 1e-4}, (X, y), split=GroupKFold(5), groups=groups,
                            random_state=0, progress=False)
    expected = [(tuple(tr.tolist()), tuple(te.tolist())) for tr, te in GroupKFold(5).split(X, y, groups)]
    assert seen["a"] == seen["b"] == expected and sel.result["stop_reason"] == "out of splits"
    with pytest.raises(ValueError, match="groups needs split"):
        bandit_select(evaluate, {"a": 0.0, "b": 1.0}, (X, y), groups=groups)


@pytest.mark.parametrize("text, cls, params", [
    ("repeated-stratified:5x10", "RepeatedStratifiedKFold", {"get_n_splits": 50, "n_repeats": 10}),
    ("repeated-kfold:3x2", "RepeatedKFold", {"get_n_splits": 6, "n_repeats": 2}),
    ("group:4", "GroupKFold", {"n_splits": 4}),
    ("stratified-group:5", "StratifiedGroupKFold", {"n_splits": 5, "shuffle": True}),
    ("time-series:6", "TimeSeriesSplit", {"n_splits": 6}),
    ("stratified:5", "StratifiedKFold", {"n_splits": 5, "shuffle": True}),
])
def test_parse_cv(text, cls, params):
    cv = parse_cv(text)
    assert type(cv).__name__ == cls
    for key, value in params.items():
        value_here = getattr(cv, key)
        assert (value_here() if callable(value_here) else value_here) == value


@pytest.mark.parametrize("text, match", [("group", "expected one of"), ("group:5x2", "K folds only"),
                                         ("repeated-stratified:5", "K folds x J repeats"), ("kfold:1", "at least 2")])
def test_parse_cv_refuses(text, match):
    with pytest.raises(ValueError, match=match):
        parse_cv(text)


CLI_EVALUATE = '''
import json
import numpy as np


def evaluate(params, seed, train, test):
    """Records what it was given; the score depends on the row (test indices) and barely on params."""
    with open("seen.jsonl", "a") as fh:
        fh.write(json.dumps([params["level"], seed, train.tolist(), test.tolist()]) + "\\n")
    return params["level"] + float(np.mean(np.sin(test)))
'''


def test_certa_select_cv_rows_are_the_splits(tmp_path, monkeypatch, capsys):
    import json

    from sklearn.model_selection import GroupKFold

    from certa.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "cvev.py").write_text(CLI_EVALUATE)
    (tmp_path / "c.toml").write_text("[grid]\nlevel = [0.0, 0.0001]\n")
    groups = np.arange(30) // 5
    (tmp_path / "groups.txt").write_text("\n".join(f"g{g}" for g in groups) + "\n")
    argv = ["select", "--evaluate", "cvev:evaluate", "--candidates", "c.toml", "--cv", "group:3", "--groups",
            "groups.txt", "--no-progress", "--json", "--store", "run.sqlite"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TargetNotReachedWarning)
        assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n_evaluations"] == 6
    seen = [json.loads(line) for line in (tmp_path / "seen.jsonl").read_text().splitlines()]
    expected = [(tr.tolist(), te.tolist()) for tr, te in
                GroupKFold(3).split(np.zeros((30, 1)), None, np.array([f"g{g}" for g in groups]))]
    for level in (0.0, 0.0001):
        assert [(tr, te) for lv, _, tr, te in seen if lv == level] == expected
    for _, _, tr, te in seen:
        assert not set(groups[tr]) & set(groups[te])
    (tmp_path / "seen.jsonl").unlink()
    with warnings.catch_warnings():   # the same command resumes: nothing is evaluated again
        warnings.simplefilter("ignore", TargetNotReachedWarning)
        assert main(argv) == 0
    assert not (tmp_path / "seen.jsonl").exists()
    capsys.readouterr()
    assert main(argv[:5] + ["--cv", "group:3", "--no-progress"]) == 2
    assert "give --groups FILE" in capsys.readouterr().err
    assert main(argv[:5] + ["--labels", "groups.txt", "--no-progress"]) == 2
    assert "go with --cv" in capsys.readouterr().err


def test_rows_asked_ahead_stay_within_the_splits():
    """Several workers ask rows ahead: never past the splitter's last split, and the same decision."""
    X, y, groups = _data()
    from concurrent.futures import ThreadPoolExecutor

    runs = {}
    for jobs in (1, 4):
        with warnings.catch_warnings(), ThreadPoolExecutor(jobs) as pool:
            warnings.simplefilter("ignore", TargetNotReachedWarning)
            s = BanditSearchCV(Recorder(), {"level": [0.0, 1e-4, 2e-4]}, cv=GroupKFold(5), random_state=0,
                               progress=False, refit=False, n_jobs=jobs, executor=pool).fit(X, y, groups=groups)
        ev = s.selection_.evaluations
        assert ev["index"].map(lambda i: i[0]).max() == 4 and s.selection_.result["stop_reason"] == "out of splits"
        runs[jobs] = (s.best_index_, sorted(zip(ev["candidate"], ev["index"], ev["score"], strict=True)))
    assert runs[1] == runs[4]
