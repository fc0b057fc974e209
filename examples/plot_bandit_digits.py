"""
Choosing between model families with BanditSearchCV
===================================================

:class:`certa.BanditSearchCV` chooses between candidate models adaptively, as FIESTA does
(Moss, Leslie & Rayson, ACL 2019): every evaluation trains one candidate on a fresh random
train/test split with a fresh seed, and the next evaluation goes to the candidate that can still
change the decision. It stops when the chosen model is the best **with the stated confidence**:
with ``confidence=0.9`` the delta-correct GLR stopping rule (the default) picks a model that is
not the best at most 10 % of the time (for Gaussian-like scores; see the
:doc:`user guide </user_guide/adaptive>`).

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

from certa import BanditSearchCV, plot_belief

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
# near ties then cost little. ``max_evals`` caps the run; if the cap ends it first, the result
# says which confidence was reached instead.
search = BanditSearchCV(candidates=candidates, confidence=0.9, tolerance=0.01, max_evals=150,
                        random_state=0, progress=False).fit(X, y)
print("chosen:", search.best_name_)
print("guarantee:", search.guarantee_)
for name, n, mean in zip(search.cv_results_["name"], search.cv_results_["n_evaluations"],
                         search.cv_results_["mean_test_score"]):
    print(f"  {name:12s} {n:3d} evaluations, mean accuracy {mean:.4f}")

# %%
# Clearly worse models (the tree, naive Bayes) get only the few evaluations the stopping rule
# needs to rule them out (with an unknown SD it needs about 10 scores of each candidate); the
# rest go to the close contenders. The posterior probability of being the best, over the run (FIESTA's figure 4):
ax = plot_belief(search)
ax.figure.tight_layout()
