"""Does the default cap (``max_evals="auto"``: 200 evaluations per candidate) cut ordinary runs?
(issue 25 item 4)

Replays the FIESTA paper's TDSA scores (``/work/shared/data/fiesta-tdsa-test-f1.json``: 12 models x
500 macro-F1 scores, each on a fresh split and seed) through the default fixed-confidence strategy
(``TopTwoThompson(confidence)``: IDS top-two, delta-correct GLR rule) without a cap, 300 runs per
cell, and counts the runs that would have reached the default cap.

Run: ``flock /tmp/certa-cpu.lock python benchmarks/adaptive.py default-cap`` (about 4 minutes).
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from _common import TDSA_MODELS8, loadavg, machine_info, md_table, tdsa_table, write_results

from certa.planning.simulate import simulate
from certa.search._budget import default_max_evals
from certa.strategies import TopTwoThompson

MODELS8 = TDSA_MODELS8
RUNS = 300


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(prog="adaptive.py default-cap", description=__doc__).parse_args(argv)  # --help
    table = tdsa_table()
    info, out, rows = machine_info(), {}, []
    for name, models in (("TDSA, 8 models", MODELS8), ("TDSA, 12 models", list(table))):
        for conf in (0.95, 0.8):
            t0 = time.time()
            rep = simulate(TopTwoThompson(conf, max_evals=200_000), table={m: table[m] for m in models},
                           n_runs=RUNS, random_state=0)
            ev = np.asarray(rep.evaluations)
            cap = default_max_evals(len(models))
            cell = {"K": len(models), "confidence": conf, "cap": cap, "mean": float(ev.mean()),
                    "p95": float(np.percentile(ev, 95)), "max": int(ev.max()),
                    "share_over_cap": float((ev > cap).mean()), "runs": RUNS, "seconds": time.time() - t0}
            out[f"{name}@{conf}"] = cell
            rows.append([name, conf, cap, f"{cell['mean']:.0f}", f"{cell['p95']:.0f}", cell["max"],
                         f"{cell['share_over_cap']:.1%}"])
            print(name, conf, cell, flush=True)
    md = ("# Default cap on the TDSA replay\n\n"
          + md_table(["task", "confidence", "default cap", "mean evaluations", "95th percentile", "max",
                      "runs over the cap"], rows)
          + f"\n\n{RUNS} uncapped runs per cell of `TopTwoThompson(confidence)` (IDS, GLR); load {loadavg()}.\n")
    write_results("default_cap", {"cells": out, "machine": info}, md)
    print(md)
