"""Decision overhead per evaluation over whole runs, to the stop (issue 12, item 4).

``adaptive.py calibration overhead`` times the first 300 adaptive evaluations of a hard
problem (evenly spaced means), where the Bayesian rule's cheap upper bound always shows that
it cannot stop yet. This script times every adaptive evaluation (ask + tell, no evaluation
cost) of runs that go on until the rule stops (or a cap), so the leader's P(best) quadrature,
its cache rebuilds when the leader changes, and the challenger fallback are all in the mean.

Simulated scores (Gaussian, SD 1): one best candidate ``gap`` above the others, whose means are
evenly spaced in [-1, 0]. Usage::

    python benchmarks/adaptive.py decision-overhead
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
from _common import loadavg, machine_info, save, time_decisions

from certa.strategies import TopTwoThompson

CASES = [(8, 1.0, 20_000), (100, 1.5, 20_000), (1000, 2.5, 30_000)]
RULES = [("ids", "glr"), ("ids", "bayes"), (0.5, "bayes")]


def one_run(k: int, gap: float, cap: int, beta, stopping: str, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    means = np.linspace(0.0, -1.0, k)
    means[0] = gap
    strat = TopTwoThompson(0.95, beta, stopping=stopping)
    strat.start(k, seed)
    n_init = strat._initial_evals() * k
    times, done = time_decisions(strat, means, rng, n_init, n_init + cap)
    t = 1e3 * np.array(times)
    t0 = time.perf_counter()
    res = strat.result()   # the full P(best) vector, computed once at the end
    result_ms = 1e3 * (time.perf_counter() - t0)
    return {"candidates": k, "gap": gap, "beta": beta, "stopping": stopping, "stopped": bool(strat.finished),
            "stop_reason": res["stop_reason"], "chosen_best": int(res["best"]) == 0,
            "evaluations": done, "adaptive_evaluations_timed": int(t.size),
            "median_ms": float(np.median(t)), "mean_ms": float(t.mean()), "p99_ms": float(np.percentile(t, 99)),
            "max_ms": float(t.max()), "share_of_time_in_evals_over_10ms": float(t[t > 10].sum() / t.sum()),
            "result_ms": result_ms, "load": loadavg()}


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(prog="adaptive.py decision-overhead", description=__doc__).parse_args(argv)  # --help
    t_start = time.time()
    rows = []
    for k, gap, cap in CASES:
        for beta, stopping in RULES:
            row = one_run(k, gap, cap, beta, stopping, seed=12)
            rows.append(row)
            print(json.dumps(row), flush=True)
    out = {"rows": rows, "machine": machine_info(), "wall_s": time.time() - t_start, "load_end": loadavg()}
    lines = ["# Decision overhead per evaluation over whole runs (benchmarks/adaptive.py decision-overhead)", "",
             "TopTwoThompson(0.95), simulated Gaussian scores (SD 1), best `gap` above the others (spaced in "
             "[-1, 0]); every adaptive evaluation timed (ask + tell), until the stop or the cap.", "",
             "| candidates | gap | beta | stopping | stopped | evaluations | median ms | mean ms | p99 ms | max ms "
             "| result() ms | load |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['candidates']} | {r['gap']} | {r['beta']} | {r['stopping']} | {r['stop_reason']} | "
                     f"{r['evaluations']} | {r['median_ms']:.3f} | {r['mean_ms']:.3f} | {r['p99_ms']:.2f} | "
                     f"{r['max_ms']:.1f} | {r['result_ms']:.0f} | {r['load'][0]:.1f} |")
    save("decision_overhead", out, lines, indent=1)
    print("\n".join(lines))
