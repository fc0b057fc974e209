"""certa: pick the best model or hyperparameter setting reliably, cheaply and with a stated confidence."""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Where each public name is defined. Each is imported on first use, so that
#: ``certa show`` and ``certa report`` import only what they use (neither scikit-learn nor scipy.stats).
_WHERE = {
    "comparison_table": ".analysis.comparison",
    "cross_validate_selection": ".analysis.nested",
    "StabilityReport": ".analysis.stability",
    "stability_report": ".analysis.stability",
    "Callback": ".engine.callbacks",
    "Candidate": ".engine.candidates",
    "Draw": ".engine.draws",
    "DuplicateNamesWarning": ".engine.candidates",
    "EstimatorEvaluator": ".engine.evaluators",
    "Evaluator": ".engine.evaluators",
    "FunctionEvaluator": ".engine.evaluators",
    "JKFoldPlan": ".engine.plans",
    "Outcome": ".engine.draws",
    "RandomSplitPlan": ".engine.plans",
    "RunInterrupted": ".engine.runner",
    "Selection": ".engine.selection",
    "SplitsPlan": ".engine.plans",
    "SQLiteStore": ".engine.store",
    "StoreDamageWarning": ".engine.store",
    "StoreError": ".engine.store",
    "Strategy": ".engine.strategy",
    "remove_store": ".engine.store",
    "run": ".engine.runner",
    "simulate": ".planning.simulate",
    "load": ".reporting.loading",
    "BanditSearchCV": ".search",
    "JKFoldSearchCV": ".search",
    "NearTieWarning": ".search",
    "ProgressiveSearchCV": ".search",
    "QuantificationBoundSearch": ".search",
    "RandomizedJKFoldSearchCV": ".search",
    "TargetNotReachedWarning": ".search",
    "bandit_select": ".search",
    "plot_belief": ".search",
    "BatchThompson": ".strategies",
    "EqualAllocation": ".strategies",
    "ProgressiveSampling": ".strategies",
    "SequentialHalving": ".strategies",
    "TopTwoThompson": ".strategies",
    "UniformUntilConfident": ".strategies",
    "JKFoldGrid": ".strategies.grid",
    "select": ".engine.runner",
}

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


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use (PEP 562); a submodule, imported."""
    module = _WHERE.get(name)
    if module is None:
        if not name.startswith("__"):
            try:   # ``certa.x`` for a submodule x, as if ``import certa.x`` had run
                return importlib.import_module(f"{__name__}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{__name__}.{name}":
                    raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), "run" if name == "select" else name)
    globals()[name] = value   # once: the next use finds it here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:   # the same names, spelled out for type checkers and editors
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
    from .engine.runner import run as select
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
