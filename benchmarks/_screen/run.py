"""Run every method on one task, seed by seed, into ``results/screen_<task>.json`` (resumable).

Each (method, seed) is run once and kept: a rerun skips what is there (``--force`` redoes it),
so adding a method later (certa's screen when it lands) does not rerun the baselines. The data
and the truth of a task are fixed (``tasks``); a seed moves the folds of the scikit-learn and
Optuna searches and certa's rows. The markdown table is written after every run
(``report.task_markdown``).

Usage (under ``flock /tmp/certa-cpu.lock nice -n 5``)::

    python benchmarks/screen.py run svc --seeds 20
    python benchmarks/screen.py run lemma --seeds 20 --methods grid5,halving5
"""
from __future__ import annotations

import argparse
import json
import time
from typing import Any

from _common import RESULTS, fmt_load, loadavg, machine_info, write_results

from .methods import METHODS, has_screen, measure
from .report import task_markdown
from .tasks import TASKS, load_task

OPTUNA_STEPS = 30


def results_path(task: str):
    return RESULTS / f"screen_{task}.json"


def load_results(task: str) -> dict[str, Any] | None:
    p = results_path(task)
    return json.loads(p.read_text()) if p.exists() else None


def run(task_name: str, seeds: list[int], methods: list[str], force: bool = False,
        optuna_steps: int = OPTUNA_STEPS, time_limit: float | None = None) -> dict[str, Any]:
    """Run ``methods`` x ``seeds`` on the task, keeping earlier runs; returns the whole result."""
    task = load_task(task_name)
    res = load_results(task_name) or {"task": task_name, "records": {}}
    res.update({"settings": task.names, "truth": task.truth.tolist(), "true_best": task.names[task.best],
                "data": task.data, "truth_note": task.truth_note, "optuna_steps": optuna_steps,
                "machine": machine_info()})
    res.setdefault("records", {})
    t_start = time.perf_counter()
    for seed in seeds:
        for m in methods:
            if m in ("certa-default", "certa-screen") and not has_screen():
                continue
            runs = res["records"].setdefault(m, {})
            if str(seed) in runs and not force:
                continue
            if time_limit is not None and time.perf_counter() - t_start > time_limit:
                print(f"[{task_name}] time limit reached; stopping before {m} seed {seed}", flush=True)
                return res
            rec = measure(task, m, seed, optuna_steps)
            runs[str(seed)] = rec
            print(f"[{task_name}] {m} seed {seed}: fits {rec['fits']}, fit s {rec['fit_seconds']:.1f}, "
                  f"regret {rec['regret']:.4f}, wall {rec['wall_seconds']:.0f} s (load {fmt_load(loadavg())})",
                  flush=True)
            write_results(f"screen_{task_name}", res, task_markdown(res))
    return res


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="screen.py run", description=__doc__.split("\n")[0])
    ap.add_argument("task", choices=TASKS)
    ap.add_argument("--seeds", type=int, default=20, help="seeds 0 .. N-1 (default 20)")
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--methods", default=",".join(METHODS),
                    help=f"comma-separated, of {', '.join(METHODS)} (certa's screen ones are skipped while "
                         "BanditSearchCV has no screen argument)")
    ap.add_argument("--optuna-steps", type=int, default=OPTUNA_STEPS)
    ap.add_argument("--force", action="store_true", help="rerun (method, seed) pairs already recorded")
    ap.add_argument("--time-limit", type=float, default=None, help="stop starting new runs after this many seconds")
    args = ap.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    bad = [m for m in methods if m not in METHODS]
    if bad:
        ap.error(f"unknown methods {bad}; choose from {METHODS}")
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    res = run(args.task, seeds, methods, args.force, args.optuna_steps, args.time_limit)
    print(task_markdown(res))
