"""Small stores of all five methods, built from real bundled data (shared by the show/report tests).

Run as a script (``python tests/run_stores.py DIR``) it writes the stores into DIR.
"""
from __future__ import annotations

import os
import sys

import numpy as np


def debian(n: int = 600):
    from certa.datasets import load_debian_small

    X, y = load_debian_small(return_X_y=True)
    return list(X[:n]), np.asarray(y[:n])


def svm():
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    return make_pipeline(TfidfVectorizer(min_df=2), LinearSVC())


def build_all(directory: str) -> dict[str, tuple[str, object]]:
    """Run one small selection per method on real data; returns {method: (store path, selection)}."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.pipeline import make_pipeline

    import certa

    X, y = debian()
    out = {}
    path = os.path.join(directory, "jkfold.sqlite")
    s = certa.JKFoldSearchCV(svm(), {"linearsvc__C": [0.01, 0.1, 1.0]}, n_splits=3, n_repeats=3, random_state=0,
                             store=path, refit=False).fit(X, y)
    out["jkfold"] = (path, s.selection_)
    path = os.path.join(directory, "bandit.sqlite")
    b = certa.BanditSearchCV(candidates={"svm": svm(), "nb": make_pipeline(TfidfVectorizer(min_df=2), MultinomialNB()),
                                         "logreg": make_pipeline(TfidfVectorizer(min_df=2),
                                                                 LogisticRegression(max_iter=300))},
                             strategy="top_two", confidence=0.9, random_state=0, store=path, refit=False).fit(X, y)
    out["bandit"] = (path, b.selection_)
    path = os.path.join(directory, "progressive.sqlite")
    p = certa.ProgressiveSearchCV(svm(), {"linearsvc__C": [0.01, 0.1, 1.0, 10.0]}, schedule="psearch",
                                  random_state=0, store=path, refit=False).fit(X, y)
    out["progressive"] = (path, p.selection_)
    path = os.path.join(directory, "quantification.sqlite")
    q = certa.QuantificationBoundSearch(make_pipeline(TfidfVectorizer(min_df=2), LogisticRegression(max_iter=300)),
                                        {"logisticregression__C": [0.1, 1.0, 10.0]}, keep_models=False,
                                        store=path).fit(X[:400], y[:400], X[400:])
    out["quantification"] = (path, q.selection_)
    path = os.path.join(directory, "nested.sqlite")
    inner = certa.JKFoldSearchCV(svm(), {"linearsvc__C": [0.1, 1.0]}, n_splits=3, n_repeats=1)
    n = certa.cross_validate_selection(inner, X, y, n_splits=3, random_state=0, store=path)
    out["nested"] = (path, n)
    # a 3-parameter pipeline grid: long candidate names (the report's figures use short labels and a key)
    path = os.path.join(directory, "pipeline.sqlite")
    s = certa.JKFoldSearchCV(svm(), {"tfidfvectorizer__min_df": [1, 2], "tfidfvectorizer__ngram_range": [(1, 1), (1, 2)],
                                     "linearsvc__C": [0.1, 1.0]}, n_splits=2, n_repeats=2, random_state=0,
                             store=path, refit=False).fit(X, y)
    out["pipeline"] = (path, s.selection_)
    return out


KILLED_SCRIPT = r'''
import sys, time
import numpy as np
sys.path.insert(0, {tests!r})
from run_stores import debian, svm
from sklearn.metrics import accuracy_score
from _gate import gate
import certa

def slow_accuracy(estimator, X, y):
    gate()  # with CERTA_TEST_GATE set (tests/_gate.py): the scorings after the N-th wait to be killed
    time.sleep(0.15)
    return accuracy_score(y, estimator.predict(X))

X, y = debian(300)
certa.JKFoldSearchCV(svm(), {{"linearsvc__C": [0.1, 1.0, 10.0]}}, n_splits=3, n_repeats=2, random_state=0,
                     scoring=slow_accuracy, store={store!r}, refit=False).fit(X, y)
'''


if __name__ == "__main__":
    build_all(sys.argv[1])
