"""Wall time on many cores (issues 32 and 33): the issues' RBF-SVC 8 x 8 grid at full size.

**Simulated data**: ``make_classification`` as the ``svc`` task (``tasks.svc_data``: 20 features, 6
informative, 4 redundant, 2 clusters per class, 10 % of the labels flipped, seed 33), with the
issues' 4,000 samples for the searches (``--n``) and 40,000 fresh samples of the same draw for the
truth (each setting trained on the searches' samples, scored on the fresh ones; cached in
``results/screen_cores_truth_<n>.json``).

On ``W`` workers (``--workers``), seed by seed, each timed by the wall clock:

* ``certa``: ``BanditSearchCV(SVC(), grid, n_jobs=W, random_state=seed)``, the default (it decides
  itself whether to screen, timing fits included);
* ``grid``: ``GridSearchCV(SVC(), grid, cv=StratifiedKFold(5, shuffle=True, random_state=seed), n_jobs=W)``;
* ``halving``: ``HalvingGridSearchCV`` with the same ``cv``, ``factor=3``, ``n_jobs=W``.

Each search's worker pool is started by a small untimed search first (loky's and certa's pools
are reused). Reported: wall, fits (certa: the evaluations used, those spent ahead and the screen
rule's timing fits; Halving: candidates x 5 per rung), the choice and its regret (true accuracy
below the best), certa's occupancy (summed duration of the evaluations it used / (W x wall)), the
wall ratios to GridSearchCV and Halving, and the load. Writes ``results/screen_cores_<W>.{json,md}``.

Usage::

    python benchmarks/screen.py cores --workers 16 --seeds 3
    python benchmarks/screen.py --results /tmp/x cores --workers 2 --n 1500 --seeds 1   # a quick check
"""
from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from typing import Any

import numpy as np
from _common import RESULTS, loadavg, machine_info, md_table, write_results

from certa.engine.candidates import candidates_from_grid
from certa.search._screen import REPEATS

from .tasks import SVC_FRESH, SVC_GRID, svc_data

METHODS = ("certa", "grid", "halving")


def truth(n: int, X, y, Xf, yf) -> list[float]:
    path = RESULTS / f"screen_cores_truth_{n}.json"
    if path.exists():
        return json.loads(path.read_text())["truth"]
    from joblib import Parallel, delayed
    from sklearn.svm import SVC

    def one(params):
        return float(SVC(**params).fit(X, y).score(Xf, yf))

    out = Parallel(n_jobs=-1)(delayed(one)(c.params) for c in candidates_from_grid(SVC_GRID))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"n": n, "fresh": SVC_FRESH, "grid": SVC_GRID, "truth": out}, indent=1))
    return out


def _cv(seed: int):
    from sklearn.model_selection import StratifiedKFold

    return StratifiedKFold(5, shuffle=True, random_state=seed)


def run_method(method: str, X, y, workers: int, seed: int, store: str | None = None) -> dict[str, Any]:
    from sklearn.svm import SVC

    names = [c.name for c in candidates_from_grid(SVC_GRID)]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "grid":
            from sklearn.model_selection import GridSearchCV

            s = GridSearchCV(SVC(), SVC_GRID, cv=_cv(seed), n_jobs=workers, refit=False).fit(X, y)
            wall = time.perf_counter() - t0
            return {"wall_s": wall, "fits": 5 * len(names), "choice": int(s.best_index_)}
        if method == "halving":
            from sklearn.experimental import enable_halving_search_cv  # noqa: F401
            from sklearn.model_selection import HalvingGridSearchCV

            s = HalvingGridSearchCV(SVC(), SVC_GRID, cv=_cv(seed), factor=3, n_jobs=workers, random_state=seed,
                                    refit=False).fit(X, y)
            wall = time.perf_counter() - t0
            choice = next(i for i, c in enumerate(candidates_from_grid(SVC_GRID)) if c.params == s.best_params_)
            return {"wall_s": wall, "fits": 5 * int(sum(s.n_candidates_)), "choice": choice,
                    "n_resources": [int(v) for v in s.n_resources_], "n_candidates": [int(v) for v in s.n_candidates_]}
        from certa import BanditSearchCV

        t_epoch = time.time()
        s = BanditSearchCV(SVC(), SVC_GRID, n_jobs=workers, random_state=seed, refit=False, progress=False,
                           store=store).fit(X, y)
    wall = time.perf_counter() - t0
    res = s.selection_.result
    ev = s.selection_.evaluations
    decision = getattr(s, "screen_", None) or {}
    times = decision.get("times") or []   # the screen rule's probes: [t_small, t_large] each, REPEATS fits per size
    n_timing = 2 * REPEATS * len(times)
    ahead = int(res.get("evaluations_ahead", 0) or 0)
    busy = float(ev["duration"].sum())
    return {"wall_s": wall, "fits": int(len(ev)) + ahead + n_timing, "evaluations_used": int(len(ev)),
            "evaluations_ahead": ahead, "timing_fits": n_timing, "choice": int(s.best_index_),
            "screened": bool(decision.get("screen")), "exponent": decision.get("exponent"),
            "finalists": len(getattr(s, "finalists_", None) or names), "confidence": s.confidence_,
            "guarantee": s.guarantee_, "busy_s": busy, "occupancy": busy / (workers * wall),
            **({"timeline": timeline(store, t_epoch, wall, workers)} if store else {})}


def timeline(store: str, t_epoch: float, wall: float, workers: int) -> list[dict[str, Any]]:
    """Where a run's wall time went, from its store: per training size (a rung, then the race at full
    size), the evaluations recorded, when the first and the last were recorded (s after ``fit`` began),
    their summed duration and the workers' occupancy over that span. Before the first record: the
    screen rule's timing and the pool's start."""
    import sqlite3

    con = sqlite3.connect(store)
    rows = con.execute("SELECT draw, duration, recorded_at FROM evaluations WHERE status = 'ok'").fetchall()
    con.close()
    stages: dict[Any, list[tuple[float, float]]] = {}
    for draw, duration, at in rows:
        stages.setdefault(json.loads(draw).get("size"), []).append((float(duration or 0.0), at - t_epoch))
    out, prev_end = [], 0.0
    for size, evs in sorted(stages.items(), key=lambda kv: min(t for _, t in kv[1])):
        first, last = min(t for _, t in evs), max(t for _, t in evs)
        busy = sum(d for d, _ in evs)
        span = max(last - prev_end, 1e-9)
        out.append({"size": size, "evaluations": len(evs), "first_s": first, "last_s": last, "busy_s": busy,
                    "occupancy_over_span": busy / (workers * span)})
        prev_end = last
    out.append({"size": "after the last record", "last_s": wall})
    return out


def warm_up(X, y, workers: int) -> None:
    """Start each search's worker pool (loky's, certa's) before anything is timed."""
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC

    from certa import BanditSearchCV

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        GridSearchCV(SVC(), {"C": [1.0, 2.0]}, cv=_cv(0), n_jobs=workers, refit=False).fit(X[:300], y[:300])
        BanditSearchCV(SVC(), {"C": [1.0, 2.0]}, n_jobs=workers, random_state=0, refit=False, screen=False,
                       max_evals=2 * workers, progress=False).fit(X[:300], y[:300])


def markdown(payload: dict[str, Any]) -> str:
    recs, truth_ = payload["records"], np.asarray(payload["truth"])
    best = truth_.max()
    rows = []
    for m in METHODS:
        for r in recs.get(m, []):
            g = next((q for q in recs.get("grid", []) if q["seed"] == r["seed"]), None)
            h = next((q for q in recs.get("halving", []) if q["seed"] == r["seed"]), None)
            rows.append([m, r["seed"], f"{r['wall_s']:.1f}", r["fits"],
                         f"{r['wall_s'] / g['wall_s']:.2f}x" if g else "-",
                         f"{r['wall_s'] / h['wall_s']:.2f}x" if h else "-",
                         f"{best - truth_[r['choice']]:.4f}",
                         f"{r['occupancy']:.1%}" if "occupancy" in r else "-",
                         r.get("finalists", "-"), f"{r['load'][0]:.1f}" if r.get("load") else "-"])
    means = []
    for m in METHODS:
        rs = recs.get(m, [])
        if rs:
            means.append([m, len(rs), f"{np.mean([r['wall_s'] for r in rs]):.1f}", f"{np.mean([r['fits'] for r in rs]):.0f}",
                          f"{np.mean([best - truth_[r['choice']] for r in rs]):.4f}"])
    w, n = payload["workers"], payload["n"]
    head = (f"# Wall time on {w} workers: RBF-SVC 8 x 8 grid, {n} simulated samples\n\n"
            f"Machine: {payload['machine'].get('cpu_count')} CPUs; truth: accuracy on {SVC_FRESH:,} fresh samples "
            "(simulated data, `make_classification`, seed 33). Generated by `benchmarks/screen.py cores`.\n\n")
    return (head + md_table(["method", "seed", "wall s", "fits", "/ GridSearchCV", "/ Halving", "regret", "occupancy",
                             "finalists", "load"], rows)
            + "\n\n" + md_table(["method", "seeds", "mean wall s", "mean fits", "mean regret"], means) + "\n")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="screen.py cores", description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--n", type=int, default=4000, help="the searches' samples (default 4000, the issues' size)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--timeline", action="store_true",
                    help="one more certa run (seed 0) with a store file, to show per stage where its wall time went")
    args = ap.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    if any(m not in METHODS for m in methods):
        ap.error(f"--methods: choose from {METHODS}")
    X, y, Xf, yf = svc_data(args.n)
    t0 = time.perf_counter()
    tr = truth(args.n, X, y, Xf, yf)
    print(f"truth ready ({time.perf_counter() - t0:.0f} s); best {max(tr):.4f}", flush=True)
    warm_up(X, y, args.workers)
    payload: dict[str, Any] = {"workers": args.workers, "n": args.n, "truth": tr, "machine": machine_info(),
                               "records": {m: [] for m in methods}}
    name = f"screen_cores_{args.workers}"
    for seed in range(args.seeds):
        for m in methods:
            load = loadavg()
            rec = run_method(m, X, y, args.workers, seed)
            rec.update(seed=seed, load=load)
            payload["records"][m].append(rec)
            print(f"{m} seed {seed}: wall {rec['wall_s']:.1f} s, fits {rec['fits']}, regret "
                  f"{max(tr) - tr[rec['choice']]:.4f}" + (f", occupancy {rec['occupancy']:.1%}" if "occupancy" in rec
                                                          else ""), flush=True)
            write_results(name, payload, markdown(payload))
    if args.timeline:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            rec = run_method("certa", X, y, args.workers, 0, store=f"{tmp}/timeline.sqlite")
        payload["timeline_run"] = rec
        for st in rec["timeline"]:
            print(st, flush=True)
        write_results(name, payload, markdown(payload))
    print(markdown(payload))
