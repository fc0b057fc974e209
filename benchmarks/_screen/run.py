"""Run every method on one task, seed by seed, into ``results/screen_<task>.json`` (resumable).

Each (method, seed) is run once and kept: a rerun skips what is there (``--force`` redoes it),
so adding a method later (certa's screen when it lands) does not rerun the baselines. The data
and the truth of a task are fixed (``tasks``); a seed moves the folds of the scikit-learn and
Optuna searches and certa's rows. The markdown table is written after every run
(``report.task_markdown``).

Usage (under ``flock /tmp/certa-cpu.lock nice -n 5``)::

    python benchmarks/screen.py run svc --seeds 20
    python benchmarks/screen.py run lemma --seeds 20 --methods grid5,halving5
    python benchmarks/screen.py run svc,text,lemma --seeds 20 --until 10:45   # seed by seed, tasks in turn

Seeds in parallel (e.g. on a bigger machine): give each process its own seed range and ``--chunk``;
each writes ``results/screen_<task>-<chunk>.json`` only, and ``report`` merges the chunks into
``results/screen_<task>.json``::

    for i in 0 1 2 3; do python benchmarks/screen.py run lemma --first-seed $((5*i)) --seeds 5 --chunk s$i & done; wait
    python benchmarks/screen.py report
"""
from __future__ import annotations

import argparse
import json
import time
from typing import Any

from _common import RESULTS, fmt_load, loadavg, machine_info, write_results

from .methods import CERTA, METHODS, has_screen, measure
from .report import task_markdown
from .tasks import TASKS, load_task

OPTUNA_STEPS = 30


def results_name(task: str, chunk: str | None = None) -> str:
    return f"screen_{task}" if chunk is None else f"screen_{task}-{chunk}"


def results_path(task: str, chunk: str | None = None):
    return RESULTS / f"{results_name(task, chunk)}.json"


def load_results(task: str, chunk: str | None = None) -> dict[str, Any] | None:
    p = results_path(task, chunk)
    return json.loads(p.read_text()) if p.exists() else None


def chunk_paths(task: str) -> list:
    """The chunk files of a task (``screen_<task>-<chunk>.json``), sorted by name."""
    return sorted(RESULTS.glob(f"screen_{task}-*.json"))


def merge_chunks(task: str) -> dict[str, Any] | None:
    """``screen_<task>.json`` with every chunk's records added (a chunk's run of a (method, seed) replaces
    the main file's); written back when a chunk added something. ``None``: no results at all."""
    res = load_results(task)
    chunks = [json.loads(p.read_text()) for p in chunk_paths(task)]
    if res is None and not chunks:
        return None
    if res is None:
        res = {k: v for k, v in chunks[0].items() if k != "records"}
        res["records"] = {}
    changed = False
    for ch in chunks:
        for m, runs in ch.get("records", {}).items():
            mine = res["records"].setdefault(m, {})
            for seed, rec in runs.items():
                if mine.get(seed) != rec:
                    mine[seed] = rec
                    changed = True
    if changed:
        write_results(results_name(task), res, task_markdown(res), results_dir=RESULTS)
    return res


def run(task_names: str | list[str], seeds: list[int], methods: list[str], force: bool = False,
        optuna_steps: int = OPTUNA_STEPS, time_limit: float | None = None,
        deadline: float | None = None, chunk: str | None = None) -> dict[str, dict[str, Any]]:
    """Run ``methods`` x ``seeds`` on the tasks (seed by seed, task by task within a seed), keeping
    earlier runs; no run starts after ``time_limit`` seconds or the ``deadline`` (``time.time()``).
    ``chunk``: read and write ``screen_<task>-<chunk>.json`` instead (``report`` merges the chunks).
    Returns every task's whole result."""
    names = [task_names] if isinstance(task_names, str) else list(task_names)
    tasks, results = {}, {}
    for name in names:
        task = tasks[name] = load_task(name)
        res = load_results(name, chunk) or {"task": name, "records": {}}
        res.update({"settings": task.names, "truth": task.truth.tolist(), "true_best": task.names[task.best],
                    "data": task.data, "truth_note": task.truth_note, "optuna_steps": optuna_steps,
                    "machine": machine_info()})
        res.setdefault("records", {})
        results[name] = res
    t_start = time.perf_counter()
    for seed in seeds:
        for name in names:
            task, res = tasks[name], results[name]
            for m in methods:
                if m in CERTA and m != "certa-noscreen" and not has_screen():
                    continue
                runs = res["records"].setdefault(m, {})
                if str(seed) in runs and not force:
                    continue
                if ((time_limit is not None and time.perf_counter() - t_start > time_limit)
                        or (deadline is not None and time.time() > deadline)):
                    print(f"[{name}] time limit reached; stopping before {m} seed {seed}", flush=True)
                    return results
                rec = measure(task, m, seed, optuna_steps)
                runs[str(seed)] = rec
                print(f"[{name}] {m} seed {seed}: fits {rec['fits']}, fit s {rec['fit_seconds']:.1f}, "
                      f"regret {rec['regret']:.4f}, wall {rec['wall_seconds']:.0f} s (load {fmt_load(loadavg())})",
                      flush=True)
                write_results(results_name(name, chunk), res, task_markdown(res))
    return results


def _deadline(hhmm: str | None) -> float | None:
    """``"HH:MM"`` (UTC, today) as ``time.time()``."""
    if hhmm is None:
        return None
    import calendar

    h, m = (int(v) for v in hhmm.split(":"))
    now = time.gmtime()
    return float(calendar.timegm((now.tm_year, now.tm_mon, now.tm_mday, h, m, 0, 0, 0, 0)))


def _budget_method(m: str) -> bool:
    """``certa-budgetB``: B a positive number (methods.runner)."""
    try:
        return m.startswith("certa-budget") and float(m[len("certa-budget"):]) > 0
    except ValueError:
        return False


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="screen.py run", description=__doc__.split("\n")[0])
    ap.add_argument("task", help=f"one of {', '.join(TASKS)}, or several separated by commas (run seed by seed, "
                                 "the tasks in turn within a seed)")
    ap.add_argument("--seeds", type=int, default=20, help="seeds 0 .. N-1 (default 20)")
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--methods", default=",".join(METHODS),
                    help=f"comma-separated, of {', '.join(METHODS)} (certa's screen ones are skipped while "
                         "BanditSearchCV has no screen argument)")
    ap.add_argument("--optuna-steps", type=int, default=OPTUNA_STEPS)
    ap.add_argument("--force", action="store_true", help="rerun (method, seed) pairs already recorded")
    ap.add_argument("--time-limit", type=float, default=None, help="stop starting new runs after this many seconds")
    ap.add_argument("--until", default=None, help="stop starting new runs after this time, HH:MM UTC")
    ap.add_argument("--chunk", default=None, help="write results/screen_<task>-CHUNK.json only (for seed ranges run in "
                                                  "parallel; report merges the chunks)")
    args = ap.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    bad = [m for m in methods if m not in METHODS and not _budget_method(m)]
    if bad:
        ap.error(f"unknown methods {bad}; choose from {METHODS}")
    tasks = [t for t in args.task.split(",") if t]
    if not tasks or any(t not in TASKS for t in tasks):
        ap.error(f"task must be one of {TASKS} (or several, comma-separated), got {args.task!r}")
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    if args.chunk is not None and (not args.chunk.replace("-", "").replace("_", "").isalnum()):
        ap.error(f"--chunk must be letters, digits, '-' or '_', got {args.chunk!r}")
    results = run(tasks, seeds, methods, args.force, args.optuna_steps, args.time_limit, _deadline(args.until),
                  args.chunk)
    for res in results.values():
        print(task_markdown(res))
