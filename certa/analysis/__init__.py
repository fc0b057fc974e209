"""Analysing a choice: how stable it is, how the candidates compare, and how good the selection
procedure is.

* :mod:`.stability` -- how often each setting wins across the J partitions of a J-K-fold grid;
* :mod:`.comparison` -- pairwise tests of the candidates of a finished selection, with corrections;
* :mod:`.nested` -- nested cross-validation of a whole selection procedure.

May import :mod:`certa.engine`, :mod:`certa.stats` and :mod:`certa.strategies`; imported by
:mod:`certa.reporting` and the fronts. Takes finished selections or estimators; never draws the
candidates' evaluations itself except through the engine's runner (nested CV).
"""
