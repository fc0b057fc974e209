"""Recheck issue 3's TDSA acceptance rows after issue 12's changes, run by run.

Reruns, with ``adaptive_fiesta.py``'s own settings and seed (2019), the fixed-confidence rows
of ``TopTwoThompson`` (beta 0.5 and "ids", FIESTA's Bayesian rule) at 0.95 / 0.9 / 0.8 (500
runs each, compared evaluation count by evaluation count with the stored
``results/adaptive_fiesta.json``), ``SequentialHalving(120)`` on 12 models (2,000 runs) and
the 1-vs-2-worker throughput, without overwriting the stored section files. Writes
``results/adaptive_fiesta_recheck.json``.

Usage::

    python benchmarks/adaptive_fiesta_recheck.py
"""
from __future__ import annotations

import json
import os

import adaptive_fiesta as af
import numpy as np
from _common import RESULTS

from certa.planning.simulate import simulate
from certa.strategies.halving import SequentialHalving
from certa.strategies.thompson import TopTwoThompson


def main() -> None:
    with open(RESULTS / "adaptive_fiesta.json") as fh:
        stored = json.load(fh)
    out: dict = {"load_start": os.getloadavg()}
    table = af.load_table(af.MODELS8)
    old = {(r["confidence"], r["method"]): r for r in stored["fixed"]["rows"]}
    rows = []
    for conf in af.CONFIDENCES:
        for label, strat in [("certa TopTwoThompson", TopTwoThompson(conf, 0.5, stopping="bayes")),
                             (af.TTTS_IDS, TopTwoThompson(conf, beta="ids", stopping="bayes"))]:
            rep = simulate(strat, table=table, n_runs=500, random_state=2019, n_jobs=1)
            ev = rep.evaluations.astype(int)
            o = old[(conf, label)]
            rows.append({"confidence": conf, "method": label, "mean": float(ev.mean()),
                         "stored_mean": o["evaluations_mean"], "p_correct": rep.p_correct,
                         "identical_runs": bool((np.array(o["evaluations"]) == ev).all())})
            print(rows[-1], flush=True)
    out["fixed"] = rows
    full = af.load_table()
    tab = {"tdlstm": full["tdlstm"], **{k: v for k, v in full.items() if k != "tdlstm"}}
    rep = simulate(SequentialHalving(120), table=tab, n_runs=2000, random_state=2019, n_jobs=1)
    out["budget"] = {"p_correct": rep.p_correct, "evaluations_min": int(rep.evaluations.min()),
                     "evaluations_max": int(rep.evaluations.max())}
    print(out["budget"], flush=True)
    out["parallel"] = af.section_parallel(2019, 40)
    out["load_end"] = os.getloadavg()
    print(out["parallel"]["speedup"], out["load_end"], flush=True)
    with open(RESULTS / "adaptive_fiesta_recheck.json", "w") as fh:
        json.dump(out, fh, indent=1, default=float)


if __name__ == "__main__":
    main()
