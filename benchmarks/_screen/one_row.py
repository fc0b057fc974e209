"""How well does one row of a rung rank the true best, at the screen's smallest training sizes?

Every setting of a task is evaluated on the rows certa's screen would draw (seeds ``0 .. S-1``; row
``r`` of rung ``k``: split and model seed ``row_seed(rung_seed(seed, k), r)``, a ``"subset"`` draw of
the rung's size, scored on the whole test part), at each size asked; per size, the rank of the true
best among all settings on one row and on the mean of the first two rows. A rung of ``n`` candidates
keeps ``ceil(n / 3)``: the true best is dropped there when its rank is above that.

Usage (under ``flock /tmp/certa-cpu.lock nice -n 5``)::

    python benchmarks/screen.py one-row lemma --seeds 20 --sizes 59,178   # -> results/screen_one_row_lemma.{json,md}
"""
from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

import numpy as np
from _common import md_table, write_results

from certa.engine.candidates import candidates_from_grid
from certa.engine.draws import Draw, row_seed
from certa.engine.evaluators import EstimatorEvaluator
from certa.engine.plans import RandomSplitPlan
from certa.strategies.screen import rung_counts, rung_seed

from .tasks import TASKS, clear_shared, load_task
from .timing import one_thread

ROWS = 2


def scores_at(task: Any, size: int, stage: int, seeds: list[int], rows: int = ROWS) -> dict[str, list[float]]:
    """``{"seed/row": [score of every setting]}`` on the screen's rows of rung ``stage`` at ``size``."""
    cands = candidates_from_grid(task.grid)
    ev = EstimatorEvaluator(task.estimator, task.X, task.y, RandomSplitPlan(0.2, stratified=False), None)
    out: dict[str, list[float]] = {}
    with one_thread(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in seeds:
            for r in range(rows):
                s = row_seed(rung_seed(seed, stage), r)
                got = [ev.evaluate(c.params, Draw(i, "subset", (stage, r), seed=s, size=size))
                       for i, c in enumerate(cands)]
                out[f"{seed}/{r}"] = [float(g["score"] if isinstance(g, dict) else g) for g in got]
            clear_shared()
    return out


def kept(n: int) -> int:
    """How many candidates a first rung of ``n`` passes on at most (the screen's own count)."""
    return rung_counts(n, 1)[1]


def rank_of(scores: np.ndarray, c: int) -> int:
    """1-based rank of ``c`` by score (ties by index, as a rung orders its candidates)."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return order.index(c) + 1


def summarize(task: Any, size: int, table: dict[str, list[float]], seeds: list[int]) -> dict[str, Any]:
    k = len(task.names)
    keep = kept(k)
    one = [rank_of(np.asarray(table[f"{s}/{r}"]), task.best) for s in seeds for r in range(ROWS)]
    two = [rank_of((np.asarray(table[f"{s}/0"]) + np.asarray(table[f"{s}/1"])) / 2, task.best) for s in seeds]
    return {"size": size, "candidates": k, "kept": keep, "one_row_ranks": one, "two_row_ranks": two,
            "one_row_dropped": int(sum(r > keep for r in one)), "two_row_dropped": int(sum(r > keep for r in two))}


def markdown(res: dict[str, Any]) -> str:
    rows = []
    for s in res["sizes"]:
        rows.append([s["size"], f"{len(s['one_row_ranks'])} rows", f"{np.median(s['one_row_ranks']):g}",
                     f"{max(s['one_row_ranks'])}", f"{s['one_row_dropped']} of {len(s['one_row_ranks'])}",
                     f"{np.median(s['two_row_ranks']):g}", f"{max(s['two_row_ranks'])}",
                     f"{s['two_row_dropped']} of {len(s['two_row_ranks'])}"])
    head = ["training size", "rows", "true best's rank, 1 row: median", "worst", f"above {res['kept']} (dropped)",
            "mean of 2 rows: median", "worst", f"above {res['kept']} (dropped)"]
    return "\n".join([f"# One row or two at the screen's small sizes: {res['task']} ({res['candidates']} settings)", "",
                      f"Seeds {res['seeds'][0]}-{res['seeds'][-1]}, the screen's own rows; CPU s {res['seconds']:.0f}.",
                      "", md_table(head, rows, align="rrrrrrrr"), ""])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="screen.py one-row", description=__doc__.split("\n")[0])
    ap.add_argument("task", choices=TASKS)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--sizes", required=True, help="training sizes, comma-separated (rung k's rows for the k-th)")
    args = ap.parse_args(argv)
    task = load_task(args.task)
    seeds = list(range(args.seeds))
    t0 = time.process_time()
    out = []
    for stage, size in enumerate(int(v) for v in args.sizes.split(",")):
        out.append(summarize(task, size, scores_at(task, size, stage, seeds), seeds))
    res = {"task": args.task, "candidates": len(task.names), "kept": kept(len(task.names)),
           "seeds": seeds, "sizes": out, "seconds": time.process_time() - t0}
    md = markdown(res)
    write_results(f"screen_one_row_{args.task}", res, md)
    print(md)
