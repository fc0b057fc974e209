"""
Adaptive selection with your own evaluate function
==================================================

Models that are not scikit-learn estimators (a PyTorch network, a spaCy pipeline, a script)
are chosen with :func:`certa.bandit_select`: you write
``evaluate(candidate, train, test, seed) -> score``, certa decides which candidate to evaluate
on which fresh split, and when to stop. ``train`` and ``test`` arrive as the same kind of
object as ``data``: here ``data = (X, y)``, so each is an ``(X, y)`` tuple. By default the runs
are paired: on each row, every candidate still in the race gets the same split and the same
``seed``, so their scores compare row by row.

The "models" here are ridge regressions written in NumPy, with an L2 penalty ``alpha`` and a
random subset of features drawn from the seed (a stand-in for a model whose training is random),
scored by R² on scikit-learn's bundled diabetes data.
"""

# %%
import numpy as np
from sklearn.datasets import load_diabetes

from certa import bandit_select

X, y = load_diabetes(return_X_y=True)


def evaluate(alpha, train, test, seed):
    """Fit a ridge regression on a random 80 % of the features; return R² on ``test``."""
    (X_tr, y_tr), (X_te, y_te) = train, test
    rng = np.random.default_rng(seed)
    cols = rng.choice(X_tr.shape[1], size=int(0.8 * X_tr.shape[1]), replace=False)
    A = np.c_[np.ones(len(X_tr)), X_tr[:, cols]]
    penalty = alpha * np.eye(A.shape[1])
    penalty[0, 0] = 0.0  # no penalty on the intercept
    w = np.linalg.solve(A.T @ A + penalty, A.T @ y_tr)
    pred = np.c_[np.ones(len(X_te)), X_te[:, cols]] @ w
    return 1.0 - np.sum((y_te - pred) ** 2) / np.sum((y_te - y_te.mean()) ** 2)


candidates = {f"alpha={a:g}": a for a in (0.01, 0.3, 1.0, 3.0)}

# %%
# Fixed confidence: stop when the choice is right with probability >= 0.9
# -----------------------------------------------------------------------
sel = bandit_select(evaluate, candidates, (X, y), confidence=0.9, tolerance=0.02, max_evals=300,
                    random_state=0, progress=False)
print("chosen:", sel.best.name)
print(sel.result["guarantee"])
print(sel.evaluations.groupby("name")["score"].agg(["count", "mean", "std"]).round(4))

# %%
# Fixed budget: sequential halving
# --------------------------------
# When the budget is what you know (say 40 training runs), ``strategy="sequential_halving"``
# spends exactly that, halving the candidates between rounds. It promises no confidence level:
# its guarantee states the confidence its scores reach, which is low when candidates dropped
# after a few scores cannot be ruled out.
sel = bandit_select(evaluate, candidates, (X, y), strategy="sequential_halving", budget=40,
                    random_state=0, progress=False)
print("chosen:", sel.best.name, "after", len(sel.evaluations), "evaluations")
print(sel.result["guarantee"])
print(sel.evaluations.groupby("name")["score"].agg(["count", "mean"]).round(4))
