"""Issue 26 item 7: the three unclear errors, and strings for a numeric estimator caught before the grid runs."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression

from certa import BanditSearchCV, JKFoldSearchCV, ProgressiveSearchCV
from certa.cli import main

X, Y = load_iris(return_X_y=True)
LR = LogisticRegression(max_iter=300)


FRONTS = {
    "jkfold": lambda: JKFoldSearchCV(LR, {"C": [0.1, 1.0]}, n_splits=3, n_repeats=1, random_state=0),
    "bandit": lambda: BanditSearchCV(LR, {"C": [0.1, 1.0]}, max_evals=30, random_state=0, confidence=0.9),
    "progressive": lambda: ProgressiveSearchCV(LR, {"C": [0.1, 1.0]}, random_state=0, schedule=[0.5, 1.0]),
}


@pytest.mark.parametrize("front", FRONTS)
def test_nan_in_y_of_a_classifier_names_y(front, n_evals):
    y = Y.astype(float)
    y[3] = np.nan
    with pytest.raises(ValueError, match=r"^y contains NaN \(at index 3\)"):
        FRONTS[front]().fit(X, y)
    assert n_evals["n"] == 0


def test_empty_x_names_x(n_evals):
    with pytest.raises(ValueError, match="^X: expected at least one sample, got an empty array"):
        FRONTS["jkfold"]().fit(np.empty((0, 4)), np.empty(0))
    assert n_evals["n"] == 0


@pytest.mark.parametrize("front", FRONTS)
def test_strings_for_a_numeric_estimator_are_refused_before_the_grid(front, n_evals):
    with pytest.raises(ValueError, match=r"^X: expected a 2-D array of numbers .* 1-D sequence of str \(e.g. 'a b'\)"
                                         r".*TfidfVectorizer"):
        FRONTS[front]().fit(["a b"] * 60, np.array([0, 1] * 30))
    assert n_evals["n"] == 0


def test_text_pipelines_still_take_strings():
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline

    texts = [f"{w} {w} item{i}" for i in range(30) for w in ("apple banana", "engine wheel")]
    s = JKFoldSearchCV(make_pipeline(TfidfVectorizer(), LogisticRegression()), {"logisticregression__C": [0.1, 1.0]},
                       n_splits=3, n_repeats=1, random_state=0).fit(texts, np.array([0, 1] * 30))
    assert s.best_score_ == 1.0


def test_simulate_takes_negative_looking_lists(capsys):
    # argparse alone answers "expected one argument" for --sds -0.1,0.1
    assert main(["simulate", "--means", "0.5,0.6", "--sds", "-0.1,0.1"]) == 2
    err = capsys.readouterr().err
    assert "expected one argument" not in err and "sds must be positive" in err
    assert main(["simulate", "--means", "-0.5,-0.6", "--sds", "0.1", "--runs", "5", "--json"]) == 0
