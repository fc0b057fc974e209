"""
Nested CV and significance tests
================================

Two questions follow every tuning run:

1. *How well will "tune, then train" do on new data?* The best inner CV score is optimistic,
   because it is the maximum of several noisy estimates. **Nested CV**
   (:func:`certa.cross_validate_selection`) runs the whole tuning procedure inside each outer
   training fold and scores its choice on the outer test fold.
2. *Is the winner really better than the runner-up?* :func:`certa.comparison_table` tests the
   choice against every other candidate (paired when the candidates share splits,
   Holm-adjusted), and :mod:`certa.stats` has the tests themselves: McNemar on one test set,
   the corrected repeated k-fold t test on CV scores, 5x2cv, permutation, bootstrap.

Data: scikit-learn's bundled breast cancer data (569 tumours, 30 features).
"""

# %%
# Tune C by 2 x 5-fold CV
# -----------------------
import tempfile
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import certa
import certa.reporting.plot
from certa import JKFoldSearchCV, comparison_table, cross_validate_selection
from certa.stats import corrected_repeated_kfold_ttest, mcnemar, paired_ttest

X, y = load_breast_cancer(return_X_y=True)
pipe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
search = JKFoldSearchCV(pipe, {"logisticregression__C": [0.01, 0.1, 1.0, 10.0]}, n_splits=5, n_repeats=2,
                        random_state=0, progress=False).fit(X, y)
print("chosen:", search.best_params_, f"inner CV accuracy {search.best_score_:.4f}")

# %%
# Is the choice better than the others?
# -------------------------------------
# One row per other candidate: the difference in mean score, its interval, the test used and the
# Holm-adjusted p-value (the candidates share the same folds, so the test is paired and uses the
# corrected repeated k-fold t test, which allows for the overlap of training sets between folds).
table = comparison_table(search)
print(table[["name", "mean_difference", "ci_low", "ci_high", "pvalue", "pvalue_holm"]].round(4).to_string())

# %%
# The same test by hand, the choice against the most regularised setting (``C=0.01``), on their
# fold scores (``split<i>_test_score`` in ``cv_results_``, 2 x 5 folds). The naive paired t test
# over folds ignores that the folds share training data, so it is too confident (its size under a
# true null is 0.56 at level 0.05 in ``docs/statistics.md``); the corrected test (Bouckaert &
# Frank 2004) allows for it.
res = search.cv_results_
folds = [f"split{i}_test_score" for i in range(10)]
a = np.array([res[f][search.best_index_] for f in folds])
b = np.array([res[f][0] for f in folds])
n_test = len(y) // 5
print("naive paired t:   ", paired_ttest(a, b))
print("corrected k-fold t:", corrected_repeated_kfold_ttest(a, b, n_repeats=2, n_splits=5, n_train=len(y) - n_test,
                                                          n_test=n_test))

# %%
# Nested CV: the honest estimate of "tune, then train"
# ----------------------------------------------------
# The outer folds are kept in a store, so the run can be read back (and resumed) like any other.
store = Path(tempfile.mkdtemp()) / "nested.sqlite"
nested = cross_validate_selection(search, X, y, n_splits=5, random_state=1, store=store, progress=False)
print(nested)

# %%
# Outer score of each fold's choice against its inner best score:
ax = certa.reporting.plot.nested_folds(certa.load(store))
ax.figure.tight_layout()

# %%
# McNemar on one held-out test set
# --------------------------------
# With one test set, two classifiers are compared on the examples where exactly one of them is
# right (exact McNemar test).
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
pred_tuned = search.best_estimator_.fit(X_tr, y_tr).predict(X_te)
pred_weak = make_pipeline(StandardScaler(), LogisticRegression(C=0.001, max_iter=1000)).fit(X_tr, y_tr).predict(X_te)
print(mcnemar(y_te, pred_tuned, pred_weak))
