"""The methods compared, each run on one task and seed; every fit is counted and timed (``timing``).

* ``grid5``: ``GridSearchCV(cv=5)``, the 5 folds a ``StratifiedKFold(5, shuffle=True)`` drawn by
  the seed (the data are fixed; the seed moves the fold assignment), ``refit=False``.
* ``halving5``: ``HalvingGridSearchCV`` (scikit-learn's experimental import), the same 5-fold
  partition, ``factor=3``, ``resource="n_samples"`` (real fits on subsamples), ``refit=False``,
  ``return_train_score=False`` (GridSearchCV's default; Halving's own default, True, scores every
  fit on its training part too, which the choice does not use).
* ``optuna-wilcoxon``: Optuna's ``GridSampler`` over the settings (one trial each, the order
  shuffled by the seed) with ``WilcoxonPruner(p_threshold=0.1)``; a trial reports one fold's score
  per step (the step is the fold's id, so the pruner pairs the same fold across trials) in its own
  random order, over ``steps`` folds: those of ``steps / 5`` random 5-fold partitions, the first
  being GridSearchCV's. The choice is ``study.best_trial`` (complete trials only), as in
  ``benchmarks/peers.py``, whose p-value shortcut it reuses.
* ``certa-default``: ``BanditSearchCV(estimator, grid)`` with no other arguments than
  ``random_state=seed`` and ``refit=False`` (neither changes the choice); ``certa-screen`` and
  ``certa-noscreen`` the same with ``screen=True`` / ``screen=False``. Before the screen landed
  (no ``screen`` argument), ``certa-noscreen`` is the default of the day, the paired race on
  every setting, which ``screen=False`` keeps. ``certa-tol0``: the default with ``tolerance=0`` (the
  best of the finalists, not the best within 0.005); ``certa-tol0.002``, ``certa-tol0.001``: with that
  tolerance (candidates for a smaller screened default). ``certa-budgetB``: ``tolerance=0`` with the
  race capped at ``B`` full-size evaluations per setting of the grid (``max_evals``): the best for a budget.
"""
from __future__ import annotations

import inspect
import math
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from _common import loadavg
from sklearn.model_selection import StratifiedKFold

from certa.engine.draws import derive_seed

from .tasks import Task, clear_shared, fresh_estimator
from .timing import one_thread, recording

METHODS = ("grid5", "halving5", "optuna-wilcoxon", "certa-default", "certa-tol0", "certa-tol0.002", "certa-tol0.001",
           "certa-screen", "certa-noscreen")
CERTA = ("certa-default", "certa-tol0", "certa-tol0.002", "certa-tol0.001", "certa-screen", "certa-noscreen")
P_THRESHOLD = 0.1
NEAR = 0.002   # "right": the chosen setting's true score within this of the best


def has_screen() -> bool:
    """Whether this checkout's ``BanditSearchCV`` has issue 33's ``screen`` argument."""
    from certa import BanditSearchCV

    return "screen" in inspect.signature(BanditSearchCV).parameters


def partition(task: Task, seed: int, p: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """The ``p``-th random stratified 5-fold partition of the seed (``p=0``: GridSearchCV's)."""
    skf = StratifiedKFold(5, shuffle=True, random_state=derive_seed(seed, 11, p) % 2**32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # lemma classes with fewer than 5 members
        return list(skf.split(np.zeros((len(task.y), 1)), task.y))


def run_grid(task: Task, seed: int) -> dict[str, Any]:
    from sklearn.model_selection import GridSearchCV

    s = GridSearchCV(task.estimator, task.grid, cv=partition(task, seed), refit=False).fit(task.X, task.y)
    return {"choice": int(s.best_index_)}


def run_halving(task: Task, seed: int) -> dict[str, Any]:
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import HalvingGridSearchCV

    s = HalvingGridSearchCV(task.estimator, task.grid, cv=partition(task, seed), factor=3, resource="n_samples",
                            random_state=derive_seed(seed, 12) % 2**32, refit=False,
                            return_train_score=False).fit(task.X, task.y)
    return {"choice": task.index(s.best_params_), "n_resources": [int(n) for n in s.n_resources_],
            "n_candidates": [int(n) for n in s.n_candidates_]}


def run_optuna(task: Task, seed: int, steps: int) -> dict[str, Any]:
    from peers import _fast_pruner_pvalues, _quiet_optuna, grid_objective

    from certa.engine.candidates import candidates_from_grid

    optuna = _quiet_optuna()
    _fast_pruner_pvalues()
    folds = [f for p in range(math.ceil(steps / 5)) for f in partition(task, seed, p)][:steps]
    cands = candidates_from_grid(task.grid)
    K = len(cands)
    states: list[str] = []

    def score(c: int, j: int) -> float:
        train, test = folds[j]
        est = fresh_estimator(task, cands[c].params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(est.fit(task.X[train], task.y[train]).score(task.X[test], task.y[test]))

    objective = grid_objective(optuna, K, len(folds), score, lambda n: derive_seed(seed, 13, n))
    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.GridSampler({"candidate": list(range(K))},
                                                                    seed=derive_seed(seed, 14) % 2**32),
                                pruner=optuna.pruners.WilcoxonPruner(p_threshold=P_THRESHOLD))
    study.optimize(objective, n_trials=K)
    states = [t.state.name for t in study.trials]
    return {"choice": int(study.best_trial.params["candidate"]), "steps": steps,
            "complete_trials": states.count("COMPLETE")}


def _as_indices(task: Task, items: Any) -> list[int] | None:
    if items is None:
        return None
    out = []
    for it in items:
        if isinstance(it, (int, np.integer)):
            out.append(int(it))
        elif isinstance(it, str):
            out.append(task.names.index(it))
        elif isinstance(it, dict):
            out.append(task.index(it))
        else:
            return None
    return sorted(out)


def run_certa(task: Task, seed: int, screen: bool | None, tolerance: float | None = None,
              race_per_candidate: float | None = None) -> dict[str, Any]:
    from certa import BanditSearchCV

    kw: dict[str, Any] = {"random_state": seed, "refit": False}
    api = "BanditSearchCV(estimator, grid)"
    if tolerance is not None:
        kw["tolerance"] = tolerance
        api = f"BanditSearchCV(estimator, grid, tolerance={tolerance:g})"
    if race_per_candidate is not None:
        kw["max_evals"] = int(math.ceil(race_per_candidate * len(task.names)))
        api = f"BanditSearchCV(estimator, grid, tolerance=0, max_evals={kw['max_evals']})"
    if screen is not None:
        if has_screen():
            kw["screen"] = screen
            api = f"BanditSearchCV(estimator, grid, screen={screen})"
        elif screen:
            raise RuntimeError("this checkout's BanditSearchCV has no screen argument (issue 33 not landed)")
        else:
            api += " before issue 33 (no screen argument: the paired race on every setting)"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = BanditSearchCV(task.estimator, task.grid, **kw).fit(task.X, task.y)
    res = s.selection_.result
    finalists = _as_indices(task, getattr(s, "finalists_", None))
    decision = getattr(s, "screen_", None)
    if isinstance(decision, dict) and "screen" in decision:
        screened = bool(decision["screen"])
    else:
        screened = finalists is not None and len(finalists) < len(task.names)
    out = {"choice": int(s.best_index_), "api": api, "confidence": s.confidence_, "guarantee": s.guarantee_,
           "target_reached": s.target_reached_, "stop_reason": res.get("stop_reason"),
           "tolerance": _tolerance(s, screened),
           "certified_tolerance": _jsonable_small(res.get("certified_tolerance")),
           "race_budget": res.get("race_budget"),
           "finalists": finalists if finalists is not None else list(range(len(task.names))),
           "screened": bool(screened),
           "warnings": sorted({w.category.__name__ for w in caught})}
    for attr in ("rungs_", "screen_"):
        if hasattr(s, attr):
            out[attr.rstrip("_")] = _jsonable_small(getattr(s, attr))
    return out


def _tolerance(search: Any, screened: bool) -> float:
    """The tolerance the run raced at (from its result; ``tolerance="auto"`` before the result said)."""
    res = search.selection_.result
    if "tolerance" in res:
        return float(res["tolerance"])
    tol = getattr(search, "tolerance", 0.0)
    return 0.0 if isinstance(tol, str) else float(tol or 0.0)


def _jsonable_small(v: Any) -> Any:
    try:
        import json

        json.dumps(v, default=str)
        return json.loads(json.dumps(v, default=str))
    except (TypeError, ValueError):
        return repr(v)[:2000]


def runner(method: str, optuna_steps: int) -> Callable[[Task, int], dict[str, Any]]:
    if method == "grid5":
        return run_grid
    if method == "halving5":
        return run_halving
    if method == "optuna-wilcoxon":
        return lambda t, s: run_optuna(t, s, optuna_steps)
    if method.startswith("certa-budget"):   # the race for the best, capped at beta x settings evaluations
        beta = float(method[len("certa-budget"):])
        return lambda t, s: run_certa(t, s, None, 0.0, beta)
    if method in CERTA:
        screen = {"certa-screen": True, "certa-noscreen": False}.get(method)
        tol = float(method[len("certa-tol"):]) if method.startswith("certa-tol") else None
        return lambda t, s: run_certa(t, s, screen, tol)
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")


def measure(task: Task, method: str, seed: int, optuna_steps: int = 30) -> dict[str, Any]:
    """One run: the method's choice and what it cost (fits, summed thread CPU time of the fits)."""
    fn = runner(method, optuna_steps)
    clear_shared()
    load0 = loadavg()
    t0 = time.perf_counter()
    with one_thread(), recording() as log, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(task, seed)
    wall = time.perf_counter() - t0
    clear_shared()
    c = out["choice"]
    truth = task.truth
    rec = {"seed": seed, "method": method, "choice_name": task.names[c], **out,
           "fits": log.fits, "fit_seconds": log.seconds, "fits_by_size": log.by_size(), "wall_seconds": wall,
           "regret": float(truth.max() - truth[c]), "right": bool(truth.max() - truth[c] <= NEAR),
           "right_exact": bool(c == task.best), "loadavg_start": load0, "loadavg_end": loadavg()}
    if "finalists" in out:
        fin = out["finalists"]
        rec["miss"] = bool(task.best not in fin)
        best_fin = float(truth[fin].max())
        rec["wrong_among_finalists"] = bool(truth[c] < best_fin)
        tol = out.get("tolerance") or 0.0
        rec["wrong_among_finalists_tol"] = bool(truth[c] < best_fin - float(tol))
        cert = out.get("certified_tolerance")
        if isinstance(cert, (int, float)):   # the claim stated: within it of the best finalist (inf: none)
            rec["certified_wrong"] = bool(truth[c] < best_fin - float(cert))
    return rec
