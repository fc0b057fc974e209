"""Quantification bounds (docs/quantification.md): their calibration and the choices they make.

Subcommands (``python benchmarks/quantification.py COMMAND --help`` lists a command's arguments):

* ``calibration``: how often the true score exceeds the bound, on simulated data ->
  ``results/quantification_calibration.*``;
* ``debian``: lambda chosen by the bounds vs hold-out and 5-fold CV on Debian sections ->
  ``results/quantification_debian.*``;
* ``prior-shift``: the same under prior shift -> ``results/quantification_prior_shift*.{json,md}``.

``--results DIR`` (before the command) writes, and reads any cached input, in ``DIR`` instead of
``benchmarks/results``.
"""

from __future__ import annotations

from _common import run_subcommand

COMMANDS = {
    "calibration": ("_quantification.calibration", "how often the true score exceeds the bound"),
    "debian": ("_quantification.debian", "lambda by the bounds vs hold-out and 5-fold CV, Debian sections"),
    "prior-shift": ("_quantification.prior_shift", "lambda by the bounds vs hold-out and CV under prior shift"),
}

if __name__ == "__main__":
    raise SystemExit(run_subcommand("quantification.py", __doc__, COMMANDS))
