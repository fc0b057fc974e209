"""Reliability (docs/reliability.md, docs/design.md): faults, bad input, executors.

Subcommands (``python benchmarks/reliability.py COMMAND --help`` lists a command's arguments):

* ``faults``: a table per kind of fault, shared stores, kill-and-resume -> ``results/faults*.{json,md}``;
* ``bad-input``: >= 100 kinds of bad (and valid edge-case) input across the fronts and the CLI ->
  ``results/bad_input_sweep.*``;
* ``executor-startup``: start-up cost of each executor -> ``results/executor_startup.*``;
* ``viewers``: ``certa show`` / ``certa report`` on stores of 1,000 to 100,000 candidates -> ``results/viewers.*``;
* ``store-overhead``: what per-row checksums and a checkpoint per write cost -> ``results/store_overhead.*``;
* ``runner-identity OUT_DIR``: every front, faults, kills and shared stores run and their store rows and
  results dumped to ``OUT_DIR``, to ``diff -r`` two commits of the runner (issue 35).

``--results DIR`` (before the command) writes in ``DIR`` instead of ``benchmarks/results``.
"""

from __future__ import annotations

from _common import run_subcommand

COMMANDS = {
    "faults": ("_reliability.faults", "faults, shared stores, kill-and-resume"),
    "bad-input": ("_reliability.bad_input", "the bad-input sweep across fronts and the CLI"),
    "executor-startup": ("_reliability.executor_startup", "start-up cost of each executor"),
    "viewers": ("_reliability.viewers", "certa show / certa report on stores of many candidates"),
    "store-overhead": ("_reliability.store_overhead", "cost of the store's checksums and checkpoints"),
    "runner-identity": ("_reliability.runner_identity", "store rows and results of every front, to diff two commits"),
}

if __name__ == "__main__":
    raise SystemExit(run_subcommand("reliability.py", __doc__, COMMANDS))
