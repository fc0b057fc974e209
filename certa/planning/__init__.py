"""Planning a run: what a strategy will cost and how often it will be right, before any model is fit.

* :mod:`.simulate` -- :func:`certa.simulate`, a strategy's ask/tell loop replayed on a score table or a
  simulated distribution (wrong-choice rate, evaluations, ratio to the lower bound);
* :mod:`.clock` -- the virtual clock: a strategy's run on ``W`` simulated workers with the runner's
  scheduling rules and evaluation times from a duration model (``simulate(workers=W)``, ``certa
  simulate --workers W``): wall time, occupancy, evaluations spent ahead;
* :mod:`.batch` -- the same rules vectorised over many runs, for calibration tables;
* :mod:`.lower_bound` -- the characteristic time ``T*`` and the evaluation lower bound that budgets
  and reports are compared with;
* :mod:`.paired_bound` -- the same bound for paired rows (a row's scores correlated): every candidate on
  every row, the pairwise design, and the best allocation of rows to member sets (the oracle ratio).

May import :mod:`certa.engine` and :mod:`certa.strategies` (and numpy/scipy); imported by the fronts
(:mod:`certa.search`, the CLI). Nothing here fits a model; a store is read only for the evaluation times it recorded
(:func:`.clock.durations_from_store`).
"""
