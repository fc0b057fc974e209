"""Issue 23: does the default use the workers it is given? Evaluations and wall time with 2 and 4
workers on scikit-learn's digits, 6 model families (the families of ``benchmarks/peers.py``).

The paired default (``BanditSearchCV()``: every surviving candidate on each row, a row's
evaluations run in parallel) against the previous default (unpaired top-two, ``paired=False``,
which asks one evaluation at a time), same seeds, ``n_jobs`` 2 and 4, confidence 0.95 and the
default cap. Reported per run: evaluations, wall time, the summed duration of the evaluations
(what one worker would need), their ratio (the parallelism achieved), the choice and the
confidence reached; the load average beside them (wall times depend on it, counts do not).

Writes ``benchmarks/results/paired_workers.json`` and ``.md``. Usage::

    flock /tmp/certa-cpu.lock python benchmarks/adaptive.py paired-workers --seeds 0 1
"""
from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
from _common import RESULTS, TDSA_MODELS8, loadavg, machine_info, tdsa_table

from certa import BanditSearchCV


def candidates() -> dict:
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    return {"svc rbf": SVC(), "knn": KNeighborsClassifier(),
            "logreg": make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
            "random forest": RandomForestClassifier(n_estimators=50, random_state=0),
            "gaussian nb": GaussianNB(), "tree": DecisionTreeClassifier(random_state=0)}


def replay_score(model, train, test, seed):
    """A TDSA model's score on the row the seed picks (paired rows), after ``SLEEP`` s of 'training'."""
    time.sleep(SLEEP)
    return float(model[np.random.default_rng(seed).integers(len(model))])


SLEEP = 0.3
TDSA = TDSA_MODELS8


def one_replay(paired: bool, n_jobs: int, seed: int) -> dict:
    """The TDSA replay as evaluations that take SLEEP seconds (no CPU): parallelism without load."""
    from certa import bandit_select

    table = tdsa_table(TDSA)
    load0 = loadavg()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = bandit_select(replay_score, {m: np.asarray(table[m]) for m in TDSA}, paired=None if paired else False,
                            confidence=0.95, n_jobs=n_jobs, random_state=seed, progress=False)
    wall = time.perf_counter() - t0
    ev = sel.evaluations
    busy = float(ev["duration"].sum())
    return {"task": f"TDSA replay, {SLEEP} s per evaluation",
            "default": "paired (strategy='auto')" if paired else "unpaired top-two (paired=False)",
            "n_jobs": n_jobs, "seed": seed, "evaluations": int(len(ev)), "wall_s": wall, "evaluation_s": busy,
            "parallelism": busy / wall, "best": sel.best.name, "confidence": float(sel.result["confidence"]),
            "stop_reason": sel.result.get("stop_reason"), "loadavg_before": load0, "loadavg_after": loadavg()}


def one(paired: bool, n_jobs: int, seed: int) -> dict:
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    load0 = loadavg()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = BanditSearchCV(candidates=candidates(), paired=None if paired else False, confidence=0.95,
                           n_jobs=n_jobs, random_state=seed, refit=False, progress=False).fit(X, y)
    wall = time.perf_counter() - t0
    ev = s.selection_.evaluations
    busy = float(ev["duration"].sum())
    return {"task": "digits, 6 families", "default": "paired (strategy='auto')" if paired else "unpaired top-two (paired=False)",
            "n_jobs": n_jobs, "seed": seed, "evaluations": int(len(ev)), "wall_s": wall, "evaluation_s": busy,
            "parallelism": busy / wall, "best": s.best_name_, "confidence": s.confidence_,
            "stop_reason": s.selection_.result.get("stop_reason"), "loadavg_before": load0, "loadavg_after": loadavg()}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="adaptive.py paired-workers", description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--jobs", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--task", choices=["digits", "replay"], default="digits",
                    help="replay: the TDSA replay with evaluations that sleep 0.05 s (no CPU load)")
    args = ap.parse_args(argv)
    name = "paired_workers" if args.task == "digits" else "paired_workers_replay"
    out = {"machine": machine_info(), "task": "digits, 6 model families, confidence 0.95, default cap"
           if args.task == "digits" else f"TDSA replay, {SLEEP} s per evaluation, confidence 0.95", "rows": []}
    for seed in args.seeds:
        for paired in (True, False):
            for n_jobs in args.jobs:
                r = (one if args.task == "digits" else one_replay)(paired, n_jobs, seed)
                print(json.dumps(r), flush=True)
                out["rows"].append(r)
                (RESULTS / f"{name}.json").write_text(json.dumps(out, indent=2, default=float))
    lines = [f"{out['task']}", "", "| default | workers | seed | evaluations | wall s | evaluation s | evaluation s / wall s | choice "
             "| confidence | load (1 min) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in out["rows"]:
        lines.append(f"| {r['default']} | {r['n_jobs']} | {r['seed']} | {r['evaluations']} | {r['wall_s']:.1f} | "
                     f"{r['evaluation_s']:.1f} | {r['parallelism']:.2f} | {r['best']} | {r['confidence']:.3f} | "
                     f"{r['loadavg_before'][0] if r['loadavg_before'] else ''} |")
    agg = {}
    for r in out["rows"]:
        agg.setdefault((r["default"], r["n_jobs"]), []).append(r)
    lines += ["", "| default | workers | mean evaluations | mean wall s | mean parallelism |", "|---|---|---|---|---|"]
    for (d, j), rs in agg.items():
        lines.append(f"| {d} | {j} | {np.mean([r['evaluations'] for r in rs]):.1f} | "
                     f"{np.mean([r['wall_s'] for r in rs]):.1f} | {np.mean([r['parallelism'] for r in rs]):.2f} |")
    lines += ["", "Generated by benchmarks/adaptive.py paired-workers (2 cores shared with other jobs: wall times carry the "
              "load shown)."]
    out["loadavg_at_end"] = loadavg()
    (RESULTS / f"{name}.json").write_text(json.dumps(out, indent=2, default=float))
    (RESULTS / f"{name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
