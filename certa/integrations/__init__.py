"""Integrations with other tools, each an optional extra.

- :mod:`certa.integrations.mlflow` (``pip install "certa[mlflow]"``): ``MLflowLogger``, a run
  callback that records every evaluation and the selection in MLflow.
- :mod:`certa.integrations.optuna` (``pip install "certa[optuna]"``): ``confirm_best``, which
  re-evaluates an Optuna study's top trials on fresh splits and says which one is best, with a
  stated confidence.

The modules import their tool only when used, so ``import certa`` never needs them.

Fronts, like :mod:`certa.search`: they may import anything of certa below them (the engine,
:mod:`certa.search`, :mod:`certa.reporting`); nothing in certa imports them.
"""
