"""Issue 33: the claim of screen-then-race, calibrated by simulation (``certa.planning.simulate``
with a score model per rung). Simulated scores, stated as such: 64 candidates, each evaluation
``Normal(mean, 0.02)`` (accuracy on about 400 test examples), the full-size means of an SVC-like grid
(a flat top: 9 settings within 0.005 of the best) and learning curves that differ between candidates
(``mean(f) = mean(1) - b * (f^-1/2 - 1)`` on a fraction ``f`` of the data, ``b`` uniform in
``[0, B]``), so ranks change between rungs. Per setting: the screen's miss rate (the finalists hold
no candidate within the tolerance of the true best) and the race's wrong-choice rate among the
finalists (its claim: at most ``1 - confidence``). Two more rows: 250 candidates on 4,800 training
examples (the lemma grid's size: three rungs, 1/27 to 1/3, of 1, 2 and 4 rows; 10 finalists).

Run: ``flock /tmp/certa-cpu.lock nice -n 5 python benchmarks/_adaptive/screen_calibration.py [RUNS [K]]``
(default 400 runs per row; ``K``: only the rows of ``K`` candidates, 64 or 250; prints a markdown table).
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np


def model(kind: str, b_max: float, k: int = 64, seed: int = 33):
    rng = np.random.default_rng(seed)
    i = np.arange(k)
    full = 0.85 - 0.3 * (i / (k - 1)) ** 2 if kind == "flat top" else 0.85 - 0.01 * i
    perm = rng.permutation(k)      # the grid's order says nothing of the ranking
    full = full[perm]
    b = rng.uniform(0, b_max, k)
    return full, b


def main(runs: int = 400, only: int | None = None) -> None:
    from certa.planning.simulate import simulate
    from certa.strategies import ScreenThenRace
    from certa.strategies.screen import screen_sizes

    print(f"{runs} runs per row; load {os.getloadavg()[0]:.1f}")
    print("| candidates, n_train (rungs) | full-size means | learning-curve spread B | tolerance | finalists (mean) | "
          "screen miss rate (SE) | wrong among finalists | claimed at most | evaluations (mean) |")
    print("|---|---|---|---|---|---|---|---|---|")
    cases = [(64, 1200, kind, tol, b) for kind, tol, spreads in (("flat top", 0.005, (0.0, 0.03, 0.1)),
                                                                 ("steps of 0.01", 0.0, (0.0, 0.1)))
             for b in spreads] + [(250, 4800, "flat top", 0.005, b) for b in (0.0, 0.1)]
    for k, n_train, kind, tol, b_max in cases:
        if only is not None and k != only:
            continue
        sizes = screen_sizes(k, n_train)
        full, b = model(kind, b_max, k=k)
        rung_means = [full - b * ((s / n_train) ** -0.5 - 1) for s in sizes]
        strat = ScreenThenRace(0.95, sizes, n_train=n_train, tolerance=tol, max_evals=1000)
        t0 = time.perf_counter()
        rep = simulate(strat, means=full, sds=[0.02], rung_means=rung_means, n_runs=runs, random_state=1)
        d = rep.to_dict()
        print(f"| {k}, {n_train} ({', '.join(map(str, sizes))}) | {kind} | {b_max:g} | {tol:g} | "
              f"{d['finalists_mean']:.1f} | {d['screen_miss_rate']:.1%} ({d['screen_miss_se']:.1%}) | "
              f"{d['finalist_wrong_rate']:.1%} | 5% | {d['evaluations_mean']:.0f} |", flush=True)
        print(f"<!-- {time.perf_counter() - t0:.0f} s -->", file=sys.stderr)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 400, int(sys.argv[2]) if len(sys.argv) > 2 else None)
