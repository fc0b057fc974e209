"""
Choosing between model families with BanditSearchCV
===================================================

:class:`certa.BanditSearchCV` chooses between candidate models adaptively and stops when the
chosen model is the best **with the stated confidence**: with ``confidence=0.9`` the
delta-correct stopping rule picks a model that is not the best (here: more than ``tolerance``
below the best) in at most 10 % of runs, for Gaussian-like scores (see the
:doc:`user guide </user_guide/adaptive>`).

By default (``strategy="auto"``) the evaluation is **paired**: each *row* is one fresh random
train/test split and model seed, shared by every candidate still in the race (common random
numbers), and a candidate is eliminated once its score differences to another candidate, row by
row, rule it out. The split-to-split noise that all candidates share cancels in the
differences. ``strategy="top_two"`` is FIESTA's way (Moss, Leslie & Rayson, ACL 2019): every
evaluation on its own split, the next one given to the candidate that can still change the
decision.

The data are scikit-learn's bundled handwritten digits (1,797 images of 8 x 8 pixels).
"""

# %%
# Five model families
# -------------------
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

import certa.reporting.plot
from certa import BanditSearchCV

X, y = load_digits(return_X_y=True)
candidates = {
    "svc": make_pipeline(StandardScaler(), SVC()),
    "knn": KNeighborsClassifier(),
    "logreg": make_pipeline(StandardScaler(), LogisticRegression(max_iter=300)),
    "tree": DecisionTreeClassifier(random_state=0),
    "naive_bayes": GaussianNB(),
}

# %%
# Stop at 90 % confidence, within 0.01 of the best
# ------------------------------------------------
# ``tolerance=0.01`` asks for a model within 0.01 accuracy of the best (an epsilon-best choice):
# near ties then cost little. A fixed-confidence run is capped at 200 evaluations per candidate
# by default (``max_evals="auto"``); a run that reaches the cap warns and says which confidence it
# reached instead.
search = BanditSearchCV(candidates=candidates, confidence=0.9, tolerance=0.01, random_state=0,
                        progress=False).fit(X, y)
print("chosen:", search.best_name_)
print("guarantee:", search.guarantee_)
for name, n, mean in zip(search.cv_results_["name"], search.cv_results_["n_evaluations"],
                         search.cv_results_["mean_test_score"]):
    print(f"  {name:12s} {n:3d} evaluations, mean accuracy {mean:.4f}")

# %%
# The clearly worse models (the tree, naive Bayes) are eliminated after the first rows; the close
# contenders are evaluated until one is shown within the tolerance of the best. Evaluations per
# candidate over the run:
ax = certa.reporting.plot.evaluations_over_time(search.selection_)
ax.figure.tight_layout()

# %%
# The same selection, unpaired (FIESTA's top-two Thompson sampling)
# -----------------------------------------------------------------
# Every evaluation on its own split: the split-to-split noise no longer cancels, so the same
# confidence takes more evaluations.
unpaired = BanditSearchCV(candidates=candidates, strategy="top_two", confidence=0.9, tolerance=0.01,
                          random_state=0, progress=False).fit(X, y)
print("chosen:", unpaired.best_name_)
print("guarantee:", unpaired.guarantee_)
print("evaluations: paired", int(sum(search.cv_results_["n_evaluations"])),
      "| unpaired", int(sum(unpaired.cv_results_["n_evaluations"])))
