"""Adaptive selection (docs/adaptive.md): certa's bandit strategies against FIESTA and Optuna, their calibration.

Subcommands (``python benchmarks/adaptive.py COMMAND --help`` lists a command's arguments):

* ``fiesta``: issue 3's acceptance against FIESTA on the paper's TDSA replay, by section
  (``--section fixed|batch|budget|calibration|bayes_close|overhead|parallel``, ``--report``) ->
  ``results/adaptive_<section>.json``, ``results/adaptive_fiesta.{json,md}``;
* ``fiesta-nlp``: fiesta-nlp's own TTTS replayed on the same problem -> ``results/adaptive_fiesta_nlp_ttts.json``;
* ``calibration``: the delta-correct stopping rule's calibration and price, by section ->
  ``results/calibration_<section>_<delta>.json``, ``results/calibration.md``;
* ``sampling-variants``: the top-two sampling rules tried on the replay -> ``results/adaptive_sampling_variants.*``;
* ``decision-overhead``: decision time per evaluation over whole runs -> ``results/decision_overhead.*``;
* ``default-cap``: does the default cap cut ordinary runs? -> ``results/default_cap.*``;
* ``paired-tdsa``: the paired default against Optuna's pruner on the replay -> ``results/paired_tdsa.*``;
* ``paired-workers``: evaluations and wall time with 2 and 4 workers -> ``results/paired_workers*.*``;
* ``clock``: the virtual clock against real runs, and a 64-candidate grid's wall time on 4-64 workers
  -> ``results/clock_*.json``, ``results/clock.md``;
* ``rows-ahead``: the paired rule asking rows ahead decides as the sequential one (seeds x families x
  workers, virtual clock), and how busy every front keeps its workers -> ``results/rows_ahead.{json,md}``;
* ``oracle-ratio``: the paired default's evaluations over the paired lower bounds on the four peers tasks
  -> ``results/oracle_ratio.{json,md}``;
* ``paired-ranks``: how the paired rule spreads delta over each candidate's rivals by their first-row
  rank (variants, and an oracle-partner diagnostic) -> ``results/paired_ranks.{json,md}``;
* ``early-exit``: the paired rule's early exit for clearly worse candidates, variants on the same seeds
  (``pool`` fits a real text task with one clearly worse model, then ``run``) -> ``results/early_exit.{json,md}``;
* ``certified``: the certified tolerance of the best for a budget (issue 33), calibrated by simulation
  -> ``results/certified_calibration.{json,md}``;
* ``splitters``: the paired rule's wrong-choice rate with K-fold rows against fresh random splits, on
  real fits (``pool TASK``, then ``run``) -> ``results/splitters_calibration.{json,md}``.

``--results DIR`` (before the command) writes, and reads any cached input, in ``DIR`` instead of
``benchmarks/results``.
"""

from __future__ import annotations

from _common import run_subcommand

COMMANDS = {
    "fiesta": ("_adaptive.fiesta", "issue 3's benchmarks against FIESTA on the TDSA replay"),
    "fiesta-nlp": ("_adaptive.fiesta_nlp", "fiesta-nlp's own TTTS on the TDSA replay"),
    "calibration": ("_adaptive.calibration", "calibration and price of the delta-correct stopping rule"),
    "sampling-variants": ("_adaptive.sampling_variants", "top-two sampling rules on the TDSA replay"),
    "decision-overhead": ("_adaptive.decision_overhead", "decision time per evaluation over whole runs"),
    "default-cap": ("_adaptive.default_cap", "runs that would reach the default cap"),
    "paired-tdsa": ("_adaptive.paired_tdsa", "the paired default against Optuna's pruner on the TDSA replay"),
    "paired-workers": ("_adaptive.paired_workers", "evaluations and wall time with 2 and 4 workers"),
    "clock": ("_adaptive.clock", "the virtual clock against real runs; a 64-candidate grid on 4-64 workers"),
    "rows-ahead": ("_adaptive.rows_ahead", "rows ahead decide as the sequential rule; every front's occupancy"),
    "oracle-ratio": ("_adaptive.oracle_ratio", "the paired default's evaluations over the paired lower bounds"),
    "paired-ranks": ("_adaptive.paired_ranks", "the paired rule's delta spread over the rivals by first-row rank"),
    "early-exit": ("_adaptive.early_exit", "an early exit for clearly worse candidates in the paired rule"),
    "certified": ("_adaptive.certified", "the certified tolerance of the best for a budget, calibrated by simulation"),
    "splitters": ("_adaptive.splitters", "the paired rule with K-fold rows against fresh splits (real fits)"),
}

if __name__ == "__main__":
    raise SystemExit(run_subcommand("adaptive.py", __doc__, COMMANDS))
