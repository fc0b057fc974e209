"""Statistics (docs/statistics.md): the size of certa's tests, nested CV.

Subcommands (``python benchmarks/stats.py COMMAND --help`` lists a command's arguments):

* ``size``: false-rejection rate of certa's significance tests under a true null -> ``results/stats_size.*``;
* ``nested-cv``: optimism of the inner best score and stability of the choice -> ``results/nested_cv*.{json,md}``.

``--results DIR`` (before the command) writes in ``DIR`` instead of ``benchmarks/results``.
"""

from __future__ import annotations

from _common import run_subcommand

COMMANDS = {
    "size": ("_stats.size", "size of the tests under a true null, by simulation"),
    "nested-cv": ("_stats.nested_cv", "nested CV on real text: optimism and choice stability"),
}

if __name__ == "__main__":
    raise SystemExit(run_subcommand("stats.py", __doc__, COMMANDS))
