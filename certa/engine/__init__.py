"""certa's engine: candidates, draws, strategies (ask/tell), evaluators, executors, store, runner.

The bottom room: the one loop (:func:`run`) and the pieces it turns, shared by every method.
Imports nothing else of certa; imported by every other room (the strategies, the planning,
analysis and reporting rooms, and the fronts).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Where each public name is defined. Each is imported on first use:
#: reading a store (``certa show``) then imports neither scikit-learn nor the runner.
_WHERE = {
    "Callback": ".callbacks",
    "Evaluation": ".callbacks",
    "RunView": ".callbacks",
    "Candidate": ".candidates",
    "DuplicateNamesWarning": ".candidates",
    "as_candidates": ".candidates",
    "candidates_from_grid": ".candidates",
    "named_candidates": ".candidates",
    "Draw": ".draws",
    "Outcome": ".draws",
    "derive_seed": ".draws",
    "row_seed": ".draws",
    "split_draw": ".draws",
    "EstimatorEvaluator": ".evaluators",
    "Evaluator": ".evaluators",
    "FunctionEvaluator": ".evaluators",
    "ClusterLostError": ".executors",
    "DaskExecutor": ".executors",
    "InlineExecutor": ".executors",
    "RayExecutor": ".executors",
    "resolve_executor": ".executors",
    "JKFoldPlan": ".plans",
    "Plan": ".plans",
    "RandomSplitPlan": ".plans",
    "SplitsPlan": ".plans",
    "RunInterrupted": ".runner",
    "run": ".runner",
    "Selection": ".selection",
    "MemoryStore": ".store",
    "SQLiteStore": ".store",
    "Store": ".store",
    "StoreDamageWarning": ".store",
    "StoreError": ".store",
    "remove_store": ".store",
    "Strategy": ".strategy",
}

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


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use (PEP 562); a submodule, imported."""
    module = _WHERE.get(name)
    if module is None:
        if not name.startswith("__"):
            try:   # ``certa.engine.x`` for a submodule x, as if ``import certa.engine.x`` had run
                return importlib.import_module(f"{__name__}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{__name__}.{name}":
                    raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value   # once: the next use finds it here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:   # the same names, spelled out for type checkers and editors
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
