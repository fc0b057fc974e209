"""
From a first search to a stated confidence
==========================================

This tutorial tunes a text classifier with certa from start to end: a first search, how stable
its choice is, whether the winner is really better, keeping the work in a store, choosing
between expensive models with a stated confidence, and an honest estimate of the tuned model.
Each step takes seconds.

Install
-------

.. code-block:: bash

   python3 -m pip install certa            # from a checkout: python3 -m pip install .
   python3 -m pip install "certa[docs]"    # to build this site (Sphinx, numpydoc, sphinx-gallery, ...)
"""

# %%
# The data
# --------
# certa bundles real data, so nothing is downloaded: 3,000 descriptions of Debian packages from
# 6 sections (:func:`certa.datasets.load_debian_small`). We take the first 900 to keep every step
# fast.
from certa.datasets import load_debian_small

X, y = load_debian_small(return_X_y=True)
X, y = X[:900], y[:900]
print(len(X), "texts;", sorted(set(y)))
print(X[0][:200], "...")

# %%
# A first search
# --------------
# :class:`~certa.JKFoldSearchCV` is used like scikit-learn's ``GridSearchCV``. It scores every
# setting on J = 2 random partitions of K = 3 folds (``n_repeats``, ``n_splits``) and chooses the
# highest mean over the 6 folds.
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from certa import JKFoldSearchCV

pipe = make_pipeline(TfidfVectorizer(sublinear_tf=True), LinearSVC())
grid = {"linearsvc__C": [0.03, 0.3, 3]}
search = JKFoldSearchCV(pipe, grid, n_splits=3, n_repeats=2, random_state=0, progress=False)
search.fit(X, y)
print(search.best_params_, round(search.best_score_, 4))

# %%
# ``cv_results_``, ``best_estimator_``, ``predict`` and ``score`` are those of ``GridSearchCV``;
# with the same ``random_state``, ``GridSearchCV(cv=RepeatedStratifiedKFold(n_splits=3,
# n_repeats=2, random_state=0))`` gives the same scores.
#
# How stable is the choice?
# -------------------------
# Would plain 3-fold CV on another random partition have chosen the same? ``stability_``
# answers from the partitions already run. If the choice changes between partitions, the top
# settings are close, and more partitions (``n_repeats``) give a steadier choice
# (:doc:`/user_guide/jkfold`).
print(search.stability_)

# %%
# Is the winner really better?
# ----------------------------
# :func:`~certa.comparison_table` tests the choice against every other setting on the folds
# they share, with the corrected repeated k-fold t test (CV folds share training data, so the
# plain t test would be too confident) and Holm's correction.
from certa import comparison_table

table = comparison_table(search)
print(table[["name", "mean_difference", "ci_low", "ci_high", "pvalue_holm"]].round(4).to_string())

# %%
# Keep the work in a store
# ------------------------
# With ``store=``, every finished evaluation is committed to an SQLite file: a search that is
# killed resumes where it stopped, with the same result, and the file can be read at any time
# with :func:`certa.load`. On the command line, ``certa show tuning.sqlite`` prints a summary
# and ``certa report tuning.sqlite -o report.html`` draws it (:doc:`/user_guide/cli`); the
# example :ref:`sphx_glr_auto_examples_plot_kill_and_resume.py` kills a search and resumes it.
import tempfile
from pathlib import Path

import certa

store = Path(tempfile.mkdtemp()) / "tuning.sqlite"
stored = JKFoldSearchCV(pipe, grid, n_splits=3, n_repeats=2, random_state=0, store=store,
                        progress=False).fit(X, y)
selection = certa.load(store)
print(selection.evaluations[["name", "score", "status"]].head().to_string())
print("same choice as before:", stored.best_params_ == search.best_params_)

# %%
# Expensive models: stop when the answer is known
# -----------------------------------------------
# When each evaluation is expensive (a neural network, a long training script), evaluating
# every candidate on every fold spends most of the budget on candidates that are clearly worse.
# :class:`~certa.BanditSearchCV` evaluates the candidates row by row, each row on a fresh random
# split with a fresh seed shared by the candidates still in the race, drops a candidate as soon
# as its paired differences to another rule it out, and stops when the choice is right **with
# the stated confidence**.
from sklearn.naive_bayes import MultinomialNB

from certa import BanditSearchCV

candidates = {
    "svm": make_pipeline(TfidfVectorizer(sublinear_tf=True), LinearSVC(C=0.3)),
    "naive_bayes": make_pipeline(TfidfVectorizer(), MultinomialNB()),
    "svm_strongly_regularised": make_pipeline(TfidfVectorizer(sublinear_tf=True), LinearSVC(C=0.01)),
}
bandit = BanditSearchCV(candidates=candidates, confidence=0.9, tolerance=0.02, random_state=0,
                        progress=False).fit(X, y)
print(bandit.best_name_)
print(bandit.guarantee_)
for name, n, mean in zip(bandit.cv_results_["name"], bandit.cv_results_["n_evaluations"],
                         bandit.cv_results_["mean_test_score"]):
    print(f"  {name:26s} {n:3d} evaluations, mean accuracy {mean:.4f}")

# %%
# ``guarantee_`` says what was reached. With the default delta-correct rule, "within 0.02 of
# the best with confidence 0.9" means that runs of this procedure choose a candidate more than
# 0.02 below the best in at most 10 % of cases (the confidence printed is the one reached,
# which can exceed the target). If the evaluation cap (``max_evals``, by default 200 per
# candidate) ends the run first, it warns and gives the confidence reached instead
# (:doc:`/user_guide/adaptive`). For models that are not scikit-learn
# estimators, write ``evaluate(candidate, train, test, seed)`` and call
# :func:`~certa.bandit_select` (:ref:`sphx_glr_auto_examples_plot_bandit_select_function.py`).
#
# An honest estimate of the tuned model
# -------------------------------------
# ``best_score_`` is the best of several noisy estimates, so it is optimistic. Nested CV
# (:func:`~certa.cross_validate_selection`) runs the whole search inside each outer training
# fold and scores its choice on the outer test fold.
from certa import cross_validate_selection

nested = cross_validate_selection(search, X, y, n_splits=3, random_state=0, progress=False)
print(nested)

# %%
# Where next
# ----------
# * :doc:`/user_guide/choosing`: which method fits your problem, and what each confidence means.
# * :doc:`/auto_examples/index`: progressive sampling on a large grid, selection from unlabeled
#   data, simulating a selection before spending GPU hours, significance tests.
# * :doc:`/api/index`: every public name.
