"""Screen, then race (issue 33): certa against GridSearchCV, Halving and Optuna on 64-250 settings.

Subcommands (``python benchmarks/screen.py COMMAND --help`` lists a command's arguments):

* ``run``: every method on one task (``svc``, simulated; ``lemma``; ``text``, real), seed by seed,
  fits counted and timed by thread CPU time -> ``results/screen_<task>.{json,md}`` (resumable;
  truths cached in ``results/screen_truth_<task>.json``);
* ``cores``: wall time on ``--workers`` W (the issues' 4,000-sample SVC grid; certa's default,
  GridSearchCV and Halving with ``n_jobs=W``) -> ``results/screen_cores_<W>.{json,md}``;
* ``report``: the tables of every task and issue 33's acceptance checks -> ``results/screen.md``;
* ``occupancy``: workers busy and decisions alike with the best for a budget, on the virtual clock at
  16-64 workers and with sleeping evaluations at 2-8 -> ``results/screen_occupancy.{json,md}``;
* ``one-row``: every setting on the screen's rows at given training sizes: the true best's rank on one
  row and on two -> ``results/screen_one_row_<task>.{json,md}``.

``--results DIR`` (before the command) writes, and reads any cached input, in ``DIR`` instead of
``benchmarks/results``. Run under ``flock /tmp/certa-cpu.lock nice -n 5``.
"""

from __future__ import annotations

from _common import run_subcommand

COMMANDS = {
    "run": ("_screen.run", "every method on one task, per seed (resumable)"),
    "report": ("_screen.report", "tables and acceptance checks of every task"),
    "cores": ("_screen.cores", "wall time on W workers: the issues' SVC grid at 4,000 samples, certa vs GridSearchCV/Halving"),
    "occupancy": ("_screen.occupancy", "workers busy and decisions alike with the best for a budget (clock, real)"),
    "one-row": ("_screen.one_row", "the true best's rank on one row or two of the screen's small rungs"),
}

if __name__ == "__main__":
    raise SystemExit(run_subcommand("screen.py", __doc__, COMMANDS))
