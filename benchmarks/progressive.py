"""Progressive sampling (docs/progressive.md): wrapped progressive sampling on Dutch lemmatisation.

Subcommands (``python benchmarks/progressive.py COMMAND --help`` lists a command's arguments):

* ``lemma``: Paramsearch / PSearch (old and race survival) against exhaustive search ->
  ``results/progressive_lemma<_quick><_tag>.{json,md}`` (exhaustive rankings cached in
  ``results/progressive_lemma_exhaustive.json``);
* ``cv-reference``: exhaustive 5-fold CV as a reference tuner -> ``results/progressive_lemma_cv_reference*.json``, ``.md``;
* ``rule-choice``: which survival rule each schedule runs by default (reads ``lemma`` runs) ->
  ``results/progressive_rule_choice.*``;
* ``confirmation-calibration``: is "the challenger beat the default" true 95 % of the time? ->
  ``results/progressive_confirmation_calibration*.{json,md}``.

``--results DIR`` (before the command) writes, and reads any cached input, in ``DIR`` instead of
``benchmarks/results``.
"""

from __future__ import annotations

from _common import run_subcommand

COMMANDS = {
    "lemma": ("_progressive.lemma", "progressive sampling vs exhaustive search on Dutch lemmas"),
    "cv-reference": ("_progressive.cv_reference", "exhaustive 5-fold CV as a reference tuner"),
    "rule-choice": ("_progressive.rule_choice", "the survival rule each schedule runs by default"),
    "confirmation-calibration": ("_progressive.confirmation_calibration",
                                 "false 'beat the default' claims under a null known by symmetry"),
}

if __name__ == "__main__":
    raise SystemExit(run_subcommand("progressive.py", __doc__, COMMANDS))
