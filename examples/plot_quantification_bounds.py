"""
Choosing a setting from unlabeled data: quantification bounds
=============================================================

:class:`certa.QuantificationBoundSearch` (after Balikas et al., IDA 2015) fits every candidate
**once on all labelled data** and ranks the candidates by an upper bound on their accuracy on an
*unlabeled* set, computed from how far their predicted class distribution there is from the
training distribution. Cross-validation would fit each candidate k times and keep data out of
training; this costs one fit per candidate.

What the number means: with probability at least ``1 - delta`` (over the unlabeled sample), the
candidate's accuracy on that set is at most its bound. It is an *upper* bound, so it ranks
candidates but does not promise a score; and it assumes the unlabeled set has the training
class distribution (no prior shift). See the :doc:`user guide </user_guide/quantification>`.

Data: the bundled Debian package descriptions with their train / unlabeled ("quantification")
/ test parts (:func:`certa.datasets.load_debian_sections`), reduced to the 8 largest sections to
keep the example fast.
"""

# %%
import numpy as np
from sklearn.base import clone
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

import certa.reporting.plot
from certa import QuantificationBoundSearch
from certa.datasets import load_debian_sections

d = load_debian_sections()
top = np.unique(d.y_train, return_counts=True)
keep = set(top[0][np.argsort(top[1])[-8:]])


def part(X, y):
    rows = [i for i, label in enumerate(y) if label in keep]
    return [X[i] for i in rows], np.asarray(y)[rows]


X_train, y_train = part(d.X_train, d.y_train)
X_unlabeled, _ = part(d.X_quantification, d.y_quantification)  # its labels are never used
X_test, y_test = part(d.X_test, d.y_test)
print(f"{len(X_train)} labelled, {len(X_unlabeled)} unlabeled, {len(X_test)} test texts")

# %%
# Rank the regularisation settings by their accuracy bound
# ---------------------------------------------------------
pipe = make_pipeline(TfidfVectorizer(sublinear_tf=True, min_df=2), LinearSVC())
grid = {"linearsvc__C": [0.01, 0.1, 1.0, 10.0]}
search = QuantificationBoundSearch(pipe, grid, measure="accuracy", delta=0.05, bound="certa",
                                   progress=False)
search.fit(X_train, y_train, X_unlabeled=X_unlabeled)
print("chosen:", search.best_params_, f"accuracy bound {search.best_bound_:.3f}")

# %%
# How good was the choice? Compare with the accuracy on the labelled test part, which the search
# never saw. ``value`` is the unclipped bound the candidates are ranked on, ``bound`` the
# guarantee (at most 1), ``plugin`` the point estimate without the confidence term. The bound
# rewards a predicted class distribution close to the training distribution, which tends to
# favour weakly regularised models: on this data the choice can trail the most accurate setting
# by a point or two of accuracy (``docs/quantification.md`` measures this on all 58 sections).
table = search.bounds_[["params", "value", "bound", "plugin"]].copy()
table["test accuracy"] = [
    float(np.mean(clone(pipe).set_params(**params).fit(X_train, y_train).predict(X_test) == y_test))
    for params in table["params"]]
print(table.to_string())

# %%
ax = certa.reporting.plot.bounds(search, test_scores=table["test accuracy"].to_numpy(dtype=float))
ax.figure.tight_layout()
