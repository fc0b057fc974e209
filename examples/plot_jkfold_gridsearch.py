"""
J-K-fold CV as a drop-in for GridSearchCV
=========================================

:class:`certa.JKFoldSearchCV` tunes a model exactly as scikit-learn's ``GridSearchCV`` with
``cv=RepeatedStratifiedKFold(n_splits=K, n_repeats=J)`` does (same partitions, same scores), and
adds a report of how *stable* the choice is: which setting plain K-fold CV would have chosen on
each of the J partitions, and how much the chosen parameter and the score estimate move between
them (Moss, Leslie & Rayson, COLING 2018).

Here we tune the regularisation ``C`` of a TF-IDF + linear SVM on the bundled Debian package
descriptions (6 sections, 3,000 texts; we use the first 1,200 to keep the example fast).
"""

# %%
# Tune with 3 x 5-fold CV
# -----------------------
import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import GridSearchCV, RepeatedStratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

import certa.reporting.plot
from certa import JKFoldSearchCV
from certa.datasets import load_debian_small

X, y = load_debian_small(return_X_y=True)
X, y = X[:1200], y[:1200]
pipe = make_pipeline(TfidfVectorizer(sublinear_tf=True), LinearSVC())
grid = {"linearsvc__C": [0.01, 0.03, 0.1, 0.3, 1, 3]}

search = JKFoldSearchCV(pipe, grid, n_splits=5, n_repeats=3, random_state=0, progress=False).fit(X, y)
print("chosen:", search.best_params_, f"mean accuracy over 15 folds {search.best_score_:.4f}")

# %%
# The same scores as GridSearchCV
# -------------------------------
# ``cv_results_`` has the keys of ``GridSearchCV``'s and, with the same ``random_state``,
# the same numbers.
gs = GridSearchCV(pipe, grid, cv=RepeatedStratifiedKFold(n_splits=5, n_repeats=3, random_state=0)).fit(X, y)
print("GridSearchCV chose:", gs.best_params_)
print("largest difference in mean_test_score:",
      np.max(np.abs(gs.cv_results_["mean_test_score"] - search.cv_results_["mean_test_score"])))

# %%
# How stable is the choice?
# -------------------------
# ``stability_`` gives the setting each single partition would choose, the SD of the chosen
# (numeric) parameter and of the tuned model's score estimate across partitions, and how often
# a run with fewer partitions would choose differently. A choice that changes from partition to
# partition is a sign that the candidates are close: more partitions (larger J) steady it.
print(search.stability_)

# %%
# The same as a figure: the setting chosen on each partition.
ax = certa.reporting.plot.partition_choices(search.selection_)
ax.figure.tight_layout()
