"""certa: pick the best model or hyperparameter setting reliably, cheaply and with a stated confidence."""
from .comparison import comparison_table
from .engine import (
                     Callback,
                     Candidate,
                     Draw,
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
                     Strategy,
                     remove_store,
                     run,
)
from .loading import load
from .nested import cross_validate_selection
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
from .simulate import simulate
from .stability import StabilityReport, stability_report
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
