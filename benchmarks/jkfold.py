"""J x K-fold search (docs/benchmarks-jkfold.md): speed against scikit-learn, stability of the choice.

Subcommands (``python benchmarks/jkfold.py COMMAND --help`` lists a command's arguments):

* ``vs-gridsearch``: wall time of JKFoldSearchCV against GridSearchCV on the same fits ->
  ``results/jkfold_vs_gridsearch.*``;
* ``coling-stability``: J repeated K-fold CV against one K-fold CV with more folds ->
  ``results/coling_stability.*``.

``--results DIR`` (before the command) writes in ``DIR`` instead of ``benchmarks/results``.
"""

from __future__ import annotations

from _common import run_subcommand

COMMANDS = {
    "vs-gridsearch": ("_jkfold.vs_gridsearch", "wall time against GridSearchCV on the same fits"),
    "coling-stability": ("_jkfold.coling_stability", "reproducibility of the choice, J x K vs more folds"),
}

if __name__ == "__main__":
    raise SystemExit(run_subcommand("jkfold.py", __doc__, COMMANDS))
