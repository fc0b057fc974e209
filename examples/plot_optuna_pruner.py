"""
Pruning an Optuna study fold by fold, with a stated confidence
==============================================================

An Optuna objective that cross-validates can report each fold to a pruner: ``trial.report(score,
step=fold)``, the fold id the same for every trial. certa's
:class:`~certa.integrations.optuna.PairedPruner` compares a trial with the complete trials on the
folds both were scored on (the paired differences, as certa's paired selection does) and stops it
once it is shown worse than them at the stated level: with ``confidence=0.95``, a trial as good
as the best is pruned with probability at most 0.05 (``docs/integrations.md``: what the level
means across the whole study).

Here: a support vector classifier's ``C`` and ``gamma`` on scikit-learn's bundled digits, each
trial scored by 10-fold stratified cross-validation (the same folds for every trial), 30 trials
of a random sampler. The same study runs without a pruner and with Optuna's ``WilcoxonPruner``
for comparison.
"""

# %%
import warnings

import numpy as np
import optuna
from sklearn.datasets import load_digits
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC

from certa.integrations.optuna import PairedPruner

optuna.logging.set_verbosity(optuna.logging.WARNING)
warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)   # WilcoxonPruner's
X, y = load_digits(return_X_y=True)
X = X[:900] / 16.0
y = y[:900]
FOLDS = list(StratifiedKFold(n_splits=10, shuffle=True, random_state=0).split(X, y))   # shared by every trial


def objective(trial):
    model = SVC(C=trial.suggest_float("C", 1e-2, 1e2, log=True),
                gamma=trial.suggest_float("gamma", 1e-3, 1e1, log=True))
    scores = []
    for fold, (train, test) in enumerate(FOLDS):
        scores.append(model.fit(X[train], y[train]).score(X[test], y[test]))
        trial.report(scores[-1], step=fold)          # one score per fold, the fold id as the step
        if trial.should_prune():
            raise optuna.TrialPruned()
    return float(np.mean(scores))


def study_with(pruner):
    study = optuna.create_study(direction="maximize", pruner=pruner,
                                sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(objective, n_trials=30)
    fits = sum(len(t.intermediate_values) for t in study.trials)
    return study, fits


# %%
# The three studies: the same 30 trials (the sampler does not look at the scores), so they differ
# only in which trials stop early.
rows = []
for name, pruner in [("no pruner", optuna.pruners.NopPruner()),
                     ("certa PairedPruner(0.95)", PairedPruner(confidence=0.95)),
                     ("Optuna WilcoxonPruner(0.1)", optuna.pruners.WilcoxonPruner(p_threshold=0.1))]:
    study, fits = study_with(pruner)
    pruned = sum(t.state == optuna.trial.TrialState.PRUNED for t in study.trials)
    rows.append((name, fits, pruned, study.best_trial.number, study.best_value))
    print(f"{name:28s} fits {fits:4d}  pruned {pruned:2d}  best trial {study.best_trial.number:2d} "
          f"(10-fold accuracy {study.best_value:.4f})")

# %%
# Every study keeps the same best trial: the pruners stopped only trials that were worse. certa's
# pruner says how sure that is: each trial it stopped was shown worse than the complete trials
# with the stated confidence; Wilcoxon's p-value threshold is checked again at every fold, so its
# chance of stopping a good trial is larger than 0.1 (its own documentation says so).
assert len({r[3] for r in rows}) == 1
