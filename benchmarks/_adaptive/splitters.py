"""What the paired rule's confidence means when its rows are K-fold splits (issue 34 item 2).

``BanditSearchCV(cv=RepeatedStratifiedKFold(...))`` scores every survivor on row ``r`` = split
``r`` of the splitter. The folds of one partition share most of their training data (and their
test sets are disjoint), so those rows are not independent, and the paired delta-correct rule
(:class:`certa.strategies.PairedElimination`) assumes they are. This benchmark measures the
wrong-choice rate of the paired default against ``delta`` on real fits, with two kinds of rows:

* ``fresh``: every row a fresh stratified 80/20 random split (``StratifiedShuffleSplit``, the
  default of ``BanditSearchCV`` without ``cv``);
* ``kfold``: rows are the folds of repeated stratified 5-fold partitions, in order (fold 1..5 of
  partition 1, then of partition 2, ...), as ``RepeatedStratifiedKFold`` gives them.

Each candidate is fitted once per split and the scores are cached (``pool``): the fresh pool is
``--splits`` (default 100) stratified 80/20 splits; the K-fold pool is the 20x5 repeated stratified
5-fold CV of ``peers.py`` (its cache, ``results/peers_fits_<task>.json``, is reused, so its folds
are not refitted). A run replays the paired default on rows drawn from a pool with replacement:
``fresh`` draws one split per row, ``kfold`` one whole partition per five rows (the unit that is
independent in a real ``RepeatedStratifiedKFold``). Truth, for each kind of row: the candidate
with the highest mean over its whole pool (the mean of the world the runs sample from); the
table also says whether the two pools agree on the best. Runs are capped only by the default
``max_evals`` (200 evaluations per candidate).

The diagnostic columns say how dependent the K-fold rows are, for the pair (true best, runner-up):
``rho`` is the correlation of the paired differences of two folds of one partition, and
``inflation`` = Var(partition mean of the differences) / (Var(one fold's difference) / 5),
Nadeau & Bengio's factor ``1 + (K - 1) rho`` (1 for independent rows).

Run (CPU-heavy parts under the lock)::

    flock /tmp/certa-cpu.lock nice -n 5 python benchmarks/adaptive.py splitters pool digits
    flock /tmp/certa-cpu.lock nice -n 5 python benchmarks/adaptive.py splitters pool debian
    python benchmarks/adaptive.py splitters run --runs 1000      # -> results/splitters_calibration.{json,md}
"""
from __future__ import annotations

import argparse
import math
import time
from typing import Any

import numpy as np
from _common import RESULTS, binom_greater_p, fmt_load, loadavg, machine_info, md_table, write_results

from certa.engine.draws import Outcome
from certa.search._budget import default_max_evals
from certa.strategies import PairedElimination

TASKS = ("digits", "debian", "lemma")
DELTAS = (0.01, 0.05, 0.1, 0.2, 0.3)
FRESH_SEED = 34   # the StratifiedShuffleSplit of the fresh pool
K_FOLDS = 5


def fresh_splits(y: np.ndarray, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    from sklearn.model_selection import StratifiedShuffleSplit

    return list(StratifiedShuffleSplit(n_splits=n, test_size=0.2, random_state=FRESH_SEED).split(np.zeros(len(y)), y))


def _cache(task: str):
    import peers

    return peers.FitCache(task, path=RESULTS / f"splitters_fits_{task}.json")


def build_pool(task: str, n_splits: int) -> dict[str, Any]:
    """Every candidate on every fresh split (cached; a rerun fits only what is missing)."""
    cache = _cache(task)
    t = cache.task
    cache.meta.update({"task": task, "n": t.n, "candidates": t.names, "fresh_splits": n_splits,
                       "fresh_seed": FRESH_SEED})
    cache.meta.setdefault("loadavg", []).append(loadavg())
    t0 = last = time.perf_counter()
    for i, (train, test) in enumerate(fresh_splits(t.y, n_splits)):
        keys = [cache.key(c, train, test) for c in range(len(t.names))]
        if all(k in cache.fits for k in keys):
            continue
        if task == "lemma":   # the whole grid from one neighbour search per weighting
            s0 = time.perf_counter()
            scores = t.fold_scores(train, test)
            per = (time.perf_counter() - s0) / len(keys)
            for k, s in zip(keys, scores, strict=True):
                cache.fits[k] = [s, per]
        else:
            for c in range(len(t.names)):
                cache.score(c, train, test)
        if time.perf_counter() - last > 60:
            cache.save()
            last = time.perf_counter()
            print(f"[{task}] {i + 1}/{n_splits} splits, {last - t0:.0f} s (load {fmt_load(loadavg())})", flush=True)
    cache.save()
    return {"seconds": time.perf_counter() - t0}


def pools(task: str) -> dict[str, Any]:
    """``fresh``: scores[c, split]; ``kfold``: scores[c, partition, fold] (the peers' 20x5 CV)."""
    import peers

    kpool = peers.Pool(task)
    cache = _cache(task)
    n_fresh = int(cache.meta.get("fresh_splits", 0))
    if not n_fresh:
        raise FileNotFoundError(f"no fresh pool for {task}: run `adaptive.py splitters pool {task}` first")
    y = kpool._labels(task, 6000)
    K = len(kpool.names)
    fresh = np.full((K, n_fresh), np.nan)
    for j, (train, test) in enumerate(fresh_splits(y, n_fresh)):
        for c in range(K):
            hit = cache.fits.get(cache.key(c, train, test))
            if hit is not None:
                fresh[c, j] = hit[0]
    if np.isnan(fresh).any():
        raise RuntimeError(f"the fresh {task} pool misses {int(np.isnan(fresh).sum())} fits: run the pool command")
    parts = kpool.partitions["5"]
    kfold = np.stack([kpool.scores[:, p] for p in parts], axis=1)   # (K, partitions, folds)
    return {"names": kpool.names, "fresh": fresh, "kfold": kfold}


def replay(confidence: float, scores_of_row, n_candidates: int, seed: int) -> tuple[int, int, str, int]:
    """One run of the paired default; ``scores_of_row(r)`` is the score vector of row ``r``."""
    strat = PairedElimination(confidence, max_evals=default_max_evals(n_candidates))
    strat.start(n_candidates, seed)
    n = 0
    cached: dict[int, np.ndarray] = {}
    while not strat.finished:
        d = strat.ask()
        if d is None:
            break
        r = d.index[0]
        if r not in cached:
            cached = {r: scores_of_row(r)}
        strat.tell(d, Outcome(float(cached[r][d.candidate])))
        n += 1
    res = strat.result()
    return int(res["best"]), n, str(res["stop_reason"]), int(res["rows"])


def world(kind: str, pool: np.ndarray, rng: np.random.Generator):
    """Rows drawn with replacement: a split per row (fresh), or a partition per K_FOLDS rows (kfold)."""
    picks: dict[int, int] = {}

    def scores_of_row(r: int) -> np.ndarray:
        unit = r if kind == "fresh" else r // K_FOLDS
        if unit not in picks:
            picks[unit] = int(rng.integers(pool.shape[1]))
        return pool[:, picks[unit]] if kind == "fresh" else pool[:, picks[unit], r % K_FOLDS]

    return scores_of_row


def dependence(kfold: np.ndarray, best: int, second: int) -> dict[str, float]:
    """rho between two folds' paired differences in one partition, and the variance inflation."""
    d = kfold[best] - kfold[second]               # (partitions, folds)
    centred = d - d.mean()
    var_fold = float(centred.var())
    pairs = [(a, b) for a in range(d.shape[1]) for b in range(d.shape[1]) if a != b]
    cov = float(np.mean([np.mean(centred[:, a] * centred[:, b]) for a, b in pairs]))
    var_part = float(d.mean(axis=1).var())
    return {"rho": cov / var_fold if var_fold else math.nan,
            "inflation": var_part / (var_fold / d.shape[1]) if var_fold else math.nan}


def calibrate(task: str, runs: int, deltas: tuple[float, ...]) -> dict[str, Any]:
    p = pools(task)
    names = p["names"]
    K = len(names)
    truths = {"fresh": p["fresh"].mean(axis=1), "kfold": p["kfold"].reshape(K, -1).mean(axis=1)}
    out: dict[str, Any] = {"task": task, "candidates": names, "runs": runs,
                           "pool_sizes": {"fresh": p["fresh"].shape[1], "kfold": list(p["kfold"].shape[1:])},
                           "truth": {k: v.tolist() for k, v in truths.items()}, "cells": []}
    for kind in ("fresh", "kfold"):
        order = np.argsort(-truths[kind])
        best, second = int(order[0]), int(order[1])
        out[f"best_{kind}"], out[f"gap_{kind}"] = names[best], float(truths[kind][best] - truths[kind][second])
    dep = dependence(p["kfold"], int(np.argmax(truths["kfold"])), int(np.argsort(-truths["kfold"])[1]))
    every = [dependence(p["kfold"], a, b)["inflation"] for a in range(K) for b in range(a + 1, K)]
    dep.update(inflation_median=float(np.nanmedian(every)), inflation_max=float(np.nanmax(every)),
               pairs=len(every))
    out["dependence"] = dep
    for delta in deltas:
        for kind in ("fresh", "kfold"):
            pool = p[kind]
            best = int(np.argmax(truths[kind]))
            t0 = time.perf_counter()
            wrong, evals, capped, rows = 0, [], 0, []
            for s in range(runs):
                rng = np.random.default_rng([34, s, int(delta * 1000), kind == "kfold"])
                chosen, n, reason, used = replay(1 - delta, world(kind, pool, rng), K, s)
                wrong += chosen != best
                evals.append(n)
                rows.append(used)
                capped += reason != "confident"
            cell = {"kind": kind, "delta": delta, "wrong": wrong, "rate": wrong / runs,
                    "p_rate_gt_delta": binom_greater_p(wrong, runs, delta),
                    "se": math.sqrt(max(wrong, 1) * (runs - wrong) / runs) / runs,
                    "mean_evals": float(np.mean(evals)), "capped": capped,
                    "rows": {"mean": float(np.mean(rows)), "median": float(np.median(rows)),
                             "p90": float(np.percentile(rows, 90)), "max": int(np.max(rows)),
                             "over_100": float(np.mean(np.asarray(rows) > 100))},
                    "seconds": time.perf_counter() - t0}
            out["cells"].append(cell)
            print(task, cell, flush=True)
    return out


def markdown(results: dict[str, Any], load: Any) -> str:
    lines = ["# The paired rule with K-fold rows against fresh random splits (real fits)", ""]
    rows = []
    for res in results.values():
        cells = {(c["kind"], c["delta"]): c for c in res["cells"]}
        for delta in sorted({c["delta"] for c in res["cells"]}):
            f, k = cells[("fresh", delta)], cells[("kfold", delta)]
            rows.append([res["task"], delta,
                         f"{f['rate']:.3f} ({f['wrong']}/{res['runs']})", f"{f['mean_evals']:.0f}", f["capped"],
                         f"{k['rate']:.3f} ({k['wrong']}/{res['runs']})", f"{k['mean_evals']:.0f}", k["capped"],
                         f"{k['rows']['mean']:.0f} / {k['rows']['p90']:.0f} / {k['rows']['max']}",
                         f"{k['rows']['over_100']:.0%}"])
    lines.append(md_table(["task", "delta", "fresh: wrong", "fresh: evals", "fresh: capped",
                           "K-fold: wrong", "K-fold: evals", "K-fold: capped", "K-fold: rows mean / p90 / max",
                           "K-fold: runs over 100 rows"], rows))
    lines += ["", "| task | candidates | best (fresh pool) / gap | best (K-fold pool) / gap | rho | inflation "
              "| inflation, all pairs: median / max |", "|---|---:|---|---|---:|---:|---|"]
    for res in results.values():
        dep = res["dependence"]
        lines.append(f"| {res['task']} | {len(res['candidates'])} | `{res['best_fresh']}` / {res['gap_fresh']:.4f} | "
                     f"`{res['best_kfold']}` / {res['gap_kfold']:.4f} | {dep['rho']:.3f} | {dep['inflation']:.2f} | "
                     f"{dep['inflation_median']:.2f} / {dep['inflation_max']:.2f} |")
    lines += ["", "Paired default (`PairedElimination(1 - delta)`, default cap 200 evaluations per candidate); "
              "rows drawn with replacement from each task's pool: a fresh stratified 80/20 split per row "
              f"(pool of {next(iter(results.values()))['pool_sizes']['fresh']} splits), or a 5-fold partition "
              "per 5 rows (pool: the 20x5 repeated stratified 5-fold CV of `peers.py`). Truth: the best mean "
              "over the pool the rows come from. 'capped': runs that ended at the cap (their choice counts). "
              "rho, inflation: dependence of the K-fold rows (best vs runner-up; then over every pair of "
              f"candidates). Load {fmt_load(load[0])} at the "
              f"start, {fmt_load(load[1])} at the end.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="adaptive.py splitters", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="action", required=True)
    pool = sub.add_parser("pool", help="fit every candidate on the fresh splits (cached)")
    pool.add_argument("task", choices=TASKS)
    pool.add_argument("--splits", type=int, default=100)
    run = sub.add_parser("run", help="the calibration tables -> results/splitters_calibration.{json,md}")
    run.add_argument("--tasks", nargs="+", default=["digits", "debian"], choices=TASKS)
    run.add_argument("--runs", type=int, default=1000)
    run.add_argument("--deltas", type=float, nargs="+", default=list(DELTAS))
    args = ap.parse_args(argv)
    if args.action == "pool":
        print(build_pool(args.task, args.splits))
        return
    load0 = loadavg()
    results = {t: calibrate(t, args.runs, tuple(args.deltas)) for t in args.tasks}
    md = markdown(results, [load0, loadavg()])
    write_results("splitters_calibration", {"tasks": results, "machine": machine_info()}, md)
    print(md)
