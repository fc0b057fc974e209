"""certa: pick the best model or hyperparameter setting reliably, cheaply and with a stated confidence."""
from .analysis.comparison import comparison_table
from .analysis.nested import cross_validate_selection
from .analysis.stability import StabilityReport, stability_report
from .engine import (
                     Callback,
                     Candidate,
                     Draw,
                     DuplicateNamesWarning,
                     EstimatorEvaluator,
                     Evaluator,
                     FunctionEvaluator,
                     JKFoldPlan,
                     Outcome,
                     RandomSplitPlan,
                     RunInterrupted,
                     Selection,
                     SplitsPlan,
                     SQLiteStore,
                     StoreDamageWarning,
                     StoreError,
                     Strategy,
                     remove_store,
                     run,
)
from .planning.simulate import simulate
from .reporting.loading import load
from .search import (
                     BanditSearchCV,
                     JKFoldSearchCV,
                     NearTieWarning,
                     ProgressiveSearchCV,
                     QuantificationBoundSearch,
                     RandomizedJKFoldSearchCV,
                     TargetNotReachedWarning,
                     bandit_select,
                     plot_belief,
)
from .strategies import (
                     BatchThompson,
                     EqualAllocation,
                     ProgressiveSampling,
                     SequentialHalving,
                     TopTwoThompson,
                     UniformUntilConfident,
)
from .strategies.grid import JKFoldGrid

select = run

__version__ = "0.1.0"
__all__ = [
                     "BanditSearchCV",
                     "BatchThompson",
                     "Callback",
                     "Candidate",
                     "Draw",
                     "DuplicateNamesWarning",
                     "EqualAllocation",
                     "EstimatorEvaluator",
                     "Evaluator",
                     "FunctionEvaluator",
                     "JKFoldGrid",
                     "JKFoldPlan",
                     "JKFoldSearchCV",
                     "NearTieWarning",
                     "Outcome",
                     "ProgressiveSampling",
                     "ProgressiveSearchCV",
                     "QuantificationBoundSearch",
                     "RandomSplitPlan",
                     "RandomizedJKFoldSearchCV",
                     "RunInterrupted",
                     "SQLiteStore",
                     "Selection",
                     "SequentialHalving",
                     "SplitsPlan",
                     "StabilityReport",
                     "StoreDamageWarning",
                     "StoreError",
                     "Strategy",
                     "TargetNotReachedWarning",
                     "TopTwoThompson",
                     "UniformUntilConfident",
                     "bandit_select",
                     "comparison_table",
                     "cross_validate_selection",
                     "load",
                     "plot_belief",
                     "remove_store",
                     "run",
                     "select",
                     "simulate",
                     "stability_report",
]
