"""Selection methods as ask/tell strategies: which candidate to evaluate next, and when to stop.

The room of the selection rules: each public strategy (a :class:`certa.engine.Strategy`)
proposes draws and reads their outcomes; nothing here runs an evaluation. The public modules
hold one family each (``grid``, ``halving``, ``one_shot``, ``paired``, ``progressive``,
``thompson``); the private ones what they compute with: FIESTA's posterior and P(best)
(``_posterior``, ``_leader_belief``), the sampling rules (``_sampling``), the stopping rules
(``_glr``, ``_stopping``, ``_gk16``, ``_paired``, ``_anytime``) and the guarantee in words
(``_guarantee``), progressive sampling's race and floor (``_race``, ``_floor``,
``_subset_plan``), and the argument checks (``_validation``).

Imports go one way: modules here import :mod:`certa.engine` and :mod:`certa.stats`, and each
other without a cycle (the public modules import the private ones, never the reverse); never
:mod:`certa.planning`, :mod:`certa.search`, the CLI or any other front, which import this room
(``tests/test_strategies_layout.py`` checks all three).
"""
from .grid import JKFoldGrid
from .halving import EqualAllocation, SequentialHalving
from .one_shot import OneShot
from .paired import PairedElimination
from .progressive import ProgressiveSampling
from .screen import ScreenThenRace
from .thompson import BatchThompson, TopTwoThompson, UniformUntilConfident

__all__ = ["BatchThompson", "EqualAllocation", "JKFoldGrid", "OneShot", "PairedElimination", "ProgressiveSampling", "ScreenThenRace", "SequentialHalving", "TopTwoThompson",
           "UniformUntilConfident"]
