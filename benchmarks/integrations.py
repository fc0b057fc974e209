"""Integrations (docs/integrations.md): certa's confirmation of another tool's choice.

Subcommands (``python benchmarks/integrations.py COMMAND --help`` lists a command's arguments):

* ``optuna-confirm``: does ``confirm_best`` pick the truly best of an Optuna study's top trials
  more often than ``study.best_trial``? -> ``results/optuna_confirm*.json``, ``.md`` (ground truth
  cached in ``results/optuna_confirm_truth.json``).
* ``optuna-pruner``: certa's ``PairedPruner`` against Optuna's ``WilcoxonPruner(0.1)`` on the TDSA
  replay and the real-fit tasks of ``peers.py``: how often the true best's trial is pruned, and
  fits -> ``results/optuna_pruner.{json,md}``.

``--results DIR`` (before the command) writes, and reads any cached input, in ``DIR`` instead of
``benchmarks/results``.
"""

from __future__ import annotations

from _common import run_subcommand

COMMANDS = {
    "optuna-confirm": ("_integrations.optuna_confirm", "certa's confirmation of an Optuna study's top trials"),
    "optuna-pruner": ("_integrations.optuna_pruner", "certa's PairedPruner against Optuna's WilcoxonPruner"),
}

if __name__ == "__main__":
    raise SystemExit(run_subcommand("integrations.py", __doc__, COMMANDS))
