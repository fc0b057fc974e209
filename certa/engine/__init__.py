"""certa's engine: candidates, draws, strategies (ask/tell), evaluators, executors, store, runner.

The bottom room: the one loop (:func:`run`) and the pieces it turns, shared by every method.
Imports nothing else of certa; imported by every other room (the strategies, the planning,
analysis and reporting rooms, and the fronts).
"""
from .callbacks import Callback, Evaluation, RunView
from .candidates import Candidate, DuplicateNamesWarning, as_candidates, candidates_from_grid, named_candidates
from .draws import Draw, Outcome, derive_seed, row_seed, split_draw
from .evaluators import EstimatorEvaluator, Evaluator, FunctionEvaluator
from .executors import ClusterLostError, DaskExecutor, InlineExecutor, RayExecutor, resolve_executor
from .plans import JKFoldPlan, Plan, RandomSplitPlan, SplitsPlan
from .runner import RunInterrupted, run
from .selection import Selection
from .store import MemoryStore, SQLiteStore, Store, StoreDamageWarning, StoreError, remove_store
from .strategy import Strategy

__all__ = [
           "Callback",
           "Candidate",
           "ClusterLostError",
           "DaskExecutor",
           "Draw",
           "DuplicateNamesWarning",
           "EstimatorEvaluator",
           "Evaluation",
           "Evaluator",
           "FunctionEvaluator",
           "InlineExecutor",
           "JKFoldPlan",
           "MemoryStore",
           "Outcome",
           "Plan",
           "RandomSplitPlan",
           "RayExecutor",
           "RunInterrupted",
           "RunView",
           "SQLiteStore",
           "Selection",
           "SplitsPlan",
           "Store",
           "StoreDamageWarning",
           "StoreError",
           "Strategy",
           "as_candidates",
           "candidates_from_grid",
           "derive_seed",
           "named_candidates",
           "remove_store",
           "resolve_executor",
           "row_seed",
           "run",
           "split_draw",
]
