"""Selection methods as ask/tell strategies: one module each."""
from .grid import JKFoldGrid
from .halving import EqualAllocation, SequentialHalving
from .one_shot import OneShot
from .paired import PairedElimination
from .progressive import ProgressiveSampling
from .thompson import BatchThompson, TopTwoThompson, UniformUntilConfident

__all__ = ["BatchThompson", "EqualAllocation", "JKFoldGrid", "OneShot", "PairedElimination", "ProgressiveSampling", "SequentialHalving", "TopTwoThompson",
           "UniformUntilConfident"]
