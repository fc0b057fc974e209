"""Issue 23: does the default use the workers it is given? Evaluations and wall time with 2 and 4
workers on scikit-learn's digits, 6 model families (the families of ``benchmarks/peers.py``).

The paired default (``BanditSearchCV()``: every surviving candidate on each row, a row's
evaluations run in parallel) against the previous default (unpaired top-two, ``paired=False``,
which asks one evaluation at a time), same seeds, ``n_jobs`` 2 and 4, confidence 0.95 and the
default cap. Reported per run: evaluations, wall time, the summed duration of the evaluations
(what one worker would need), their ratio (the parallelism achieved), the choice and the
confidence reached; the load average beside them (wall times depend on it, counts do not).

Issue 32 (rows ahead): ``--task replay --executor threads processes --jobs 8 --paired-only`` runs
the TDSA replay with evaluations that sleep ``--sleep`` s (0.25) on 8 worker threads and 8 local
processes (started before the timed run) and reports the workers' occupancy and the evaluations
spent ahead.

Writes ``benchmarks/results/paired_workers.json`` and ``.md`` (``--name`` to change). Usage::

    flock /tmp/certa-cpu.lock python benchmarks/adaptive.py paired-workers --seeds 0 1
    flock /tmp/certa-cpu.lock python benchmarks/adaptive.py paired-workers --task replay --jobs 8 \
        --executor threads processes --paired-only --seeds 0 1 2 --name paired_workers_ahead
"""
from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
from _common import TDSA_MODELS8, loadavg, machine_info, save, tdsa_table

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


SLEEP = 0.25
TDSA = TDSA_MODELS8


def one_replay(paired: bool, n_jobs: int, seed: int, executor: str = "processes") -> dict:
    """The TDSA replay as evaluations that take SLEEP seconds (no CPU): parallelism without load.

    ``executor="processes"``: ``n_jobs`` local worker processes (certa's reusable pool; a first
    run with the same ``n_jobs`` has started them, see ``main``); ``"threads"``: a
    ``ThreadPoolExecutor(n_jobs)``. Occupancy: the summed evaluation time (every evaluation,
    those spent ahead included) over ``n_jobs`` x wall time."""
    from concurrent.futures import ThreadPoolExecutor

    from certa import bandit_select

    table = tdsa_table(TDSA)
    load0 = loadavg()
    pool = ThreadPoolExecutor(n_jobs) if executor == "threads" else None
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = bandit_select(replay_score, {m: np.asarray(table[m]) for m in TDSA}, paired=None if paired else False,
                            confidence=0.95, n_jobs=n_jobs, executor=pool, random_state=seed, progress=False)
    wall = time.perf_counter() - t0
    if pool is not None:
        pool.shutdown()
    ev = sel.evaluations
    ahead = int(sel.result.get("evaluations_ahead", 0))
    used = float(ev["duration"].sum())   # the evaluations the decision used
    busy = used + ahead * SLEEP   # at most: those spent ahead sleep SLEEP s each (some still running at the end)
    res = sel.result
    return {"task": f"TDSA replay, {SLEEP} s per evaluation",
            "default": "paired (strategy='auto')" if paired else "unpaired top-two (paired=False)",
            "executor": executor, "n_jobs": n_jobs, "seed": seed, "evaluations": int(len(ev)),
            "evaluations_ahead": ahead, "wall_s": wall, "evaluation_s": busy,
            "parallelism": busy / wall, "occupancy": used / (n_jobs * wall),
            "occupancy_with_ahead": busy / (n_jobs * wall), "best": sel.best.name,
            "confidence": float(res["confidence"]), "rows": res.get("rows"),
            "eliminated": {str(k): v for k, v in (res.get("eliminated") or {}).items()},
            "stop_reason": res.get("stop_reason"), "loadavg_before": load0, "loadavg_after": loadavg()}


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
    global SLEEP
    ap = argparse.ArgumentParser(prog="adaptive.py paired-workers", description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--jobs", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--task", choices=["digits", "replay"], default="digits",
                    help="replay: the TDSA replay with evaluations that sleep --sleep seconds (no CPU load)")
    ap.add_argument("--executor", choices=["processes", "threads"], nargs="+", default=["processes"],
                    help="replay: n_jobs local processes and/or a ThreadPoolExecutor(n_jobs)")
    ap.add_argument("--sleep", type=float, default=SLEEP, help="replay: seconds per evaluation")
    ap.add_argument("--paired-only", action="store_true", help="skip the unpaired top-two rows")
    ap.add_argument("--name", default=None, help="result file name (default paired_workers[_replay])")
    args = ap.parse_args(argv)
    SLEEP = args.sleep
    name = args.name or ("paired_workers" if args.task == "digits" else "paired_workers_replay")
    out = {"machine": machine_info(), "task": "digits, 6 model families, confidence 0.95, default cap"
           if args.task == "digits" else f"TDSA replay, {SLEEP} s per evaluation, confidence 0.95", "rows": []}
    for seed in args.seeds:
        for paired in (True,) if args.paired_only else (True, False):
            for n_jobs in args.jobs:
                for executor in args.executor if args.task == "replay" else ["processes"]:
                    if args.task == "digits":
                        r = one(paired, n_jobs, seed)
                    else:
                        if executor == "processes" and n_jobs > 1:   # start the pool's processes first
                            from certa.engine.executors import local_executor

                            list(local_executor(n_jobs, None).map(time.sleep, [0.5] * n_jobs))
                        r = one_replay(paired, n_jobs, seed, executor)
                    print(json.dumps(r), flush=True)
                    out["rows"].append(r)
                    save(name, out)
    lines = [f"{out['task']}", "", "| default | executor | workers | seed | evaluations | spent ahead | wall s | evaluation s "
             "| occupancy | with spent ahead | choice | confidence | stopping row | load (1 min) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in out["rows"]:
        lines.append(f"| {r['default']} | {r.get('executor', 'processes')} | {r['n_jobs']} | {r['seed']} | {r['evaluations']} | "
                     f"{r.get('evaluations_ahead', 0)} | {r['wall_s']:.1f} | {r['evaluation_s']:.1f} | "
                     f"{r.get('occupancy', r['parallelism'] / r['n_jobs']):.1%} | "
                     f"{r['parallelism'] / r['n_jobs']:.1%} | {r['best']} | {r['confidence']:.3f} | {r.get('rows', '')} | "
                     f"{r['loadavg_before'][0] if r['loadavg_before'] else ''} |")
    agg = {}
    for r in out["rows"]:
        agg.setdefault((r["default"], r.get("executor", "processes"), r["n_jobs"]), []).append(r)
    lines += ["", "| default | executor | workers | mean evaluations | mean spent ahead | mean wall s | mean occupancy |",
              "|---|---|---|---|---|---|---|"]
    for (d, x, j), rs in agg.items():
        lines.append(f"| {d} | {x} | {j} | {np.mean([r['evaluations'] for r in rs]):.1f} | "
                     f"{np.mean([r.get('evaluations_ahead', 0) for r in rs]):.1f} | "
                     f"{np.mean([r['wall_s'] for r in rs]):.1f} | "
                     f"{np.mean([r.get('occupancy', r['parallelism'] / r['n_jobs']) for r in rs]):.1%} |")
    lines += ["", "Occupancy: summed time of the evaluations the decision used / (workers x wall time); \"with spent "
              "ahead\" adds the evaluations spent ahead at SLEEP s each (an upper bound: some were still running when the "
              "run returned). Generated by "
              "benchmarks/adaptive.py paired-workers (2 cores shared with other jobs: wall times carry the load shown)."]
    out["loadavg_at_end"] = loadavg()
    save(name, out, lines)
    print("\n".join(lines))
