"""certa: pick the best model or hyperparameter setting reliably, cheaply and with a stated confidence."""
from .engine import (Candidate, Draw, EstimatorEvaluator, Evaluator, FunctionEvaluator, JKFoldPlan, Outcome,
                     RandomSplitPlan, SplitsPlan, Selection, SQLiteStore, Strategy, run)
from .comparison import comparison_table
from .loading import load
from .nested import cross_validate_selection
from .search import (BanditSearchCV, JKFoldSearchCV, ProgressiveSearchCV, QuantificationBoundSearch,
                     RandomizedJKFoldSearchCV, bandit_select, plot_belief)
from .simulate import simulate
from .strategies import (BatchThompson, EqualAllocation, ProgressiveSampling, SequentialHalving, TopTwoThompson,
                         UniformUntilConfident)
from .stability import StabilityReport, stability_report
from .strategies.grid import JKFoldGrid

select = run

__version__ = "0.1.0"
__all__ = ["ProgressiveSearchCV", "QuantificationBoundSearch", "ProgressiveSampling", "comparison_table", "cross_validate_selection",
           "BanditSearchCV", "BatchThompson", "EqualAllocation", "SequentialHalving", "TopTwoThompson",
           "UniformUntilConfident", "bandit_select", "plot_belief", "simulate", "Candidate", "Draw", "EstimatorEvaluator", "Evaluator", "FunctionEvaluator", "JKFoldGrid",
           "JKFoldPlan", "JKFoldSearchCV", "RandomizedJKFoldSearchCV", "Outcome", "RandomSplitPlan", "SplitsPlan",
           "SQLiteStore", "Selection", "StabilityReport", "Strategy", "load", "run", "select", "stability_report"]
