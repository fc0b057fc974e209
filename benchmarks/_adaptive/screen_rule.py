"""Issue 33, the rule that decides whether to screen: the cost exponent it can measure
(:func:`certa.search._screen.cost_exponent`, the shortest of up to 3 evaluations of 6 settings on
the first rows of the first and last rungs) on the three tasks of ``benchmarks/screen.py`` (their
data and grids, untimed estimators), 5 seeds each, beside the exponent at which the screen starts
to pay (:func:`certa.search._screen.break_even`; 0: the count decides, and the run times nothing). Run: ``python benchmarks/_adaptive/screen_rule.py`` (prints a
markdown table; a few seconds per task)."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent.parent)]


def tasks():
    from _screen.tasks import LEMMA_N, SVC_GRID, TEXT_GRID, svc_data, text_data, text_pipeline
    from sklearn.svm import SVC

    X, y, _, _ = svc_data()
    yield "svc (RBF-SVC 8x8, 1,500 simulated samples)", SVC(), SVC_GRID, X, y, True
    X, y, _, _ = text_data()
    yield "text (TF-IDF + LinearSVC, 64 settings, 1,500 Debian texts)", text_pipeline(timed=False), TEXT_GRID, X, y, True
    from peers import lemma_draw

    from certa.learners import knn_grid, knn_pipeline

    X, y = lemma_draw(LEMMA_N)
    # classes with one member: a stratified random split refuses them, so this one is unstratified
    yield f"lemma (k-NN, 250 settings, {LEMMA_N:,} forms, unstratified)", knn_pipeline(), knn_grid(), X, y, False


def main() -> None:
    from certa.engine.candidates import candidates_from_grid
    from certa.engine.evaluators import EstimatorEvaluator
    from certa.engine.plans import RandomSplitPlan
    from certa.search._screen import break_even, cost_exponent, n_train_of
    from certa.strategies.screen import screen_sizes

    print("| task | candidates | exponent a, 5 seeds | CPU s of the timing evaluations (mean) | break-even exponent | "
          "screens |")
    print("|---|---|---|---|---|---|")
    for name, est, grid, X, y, strat in tasks():
        cands = candidates_from_grid(grid)
        ev = EstimatorEvaluator(est, X, y, RandomSplitPlan(0.2, strat))
        n_train = n_train_of(len(y), 0.2)
        exps, spent = [], []
        for seed in range(5):
            t0 = time.process_time()
            a, _ = cost_exponent(ev, cands, n_train, seed)
            spent.append(time.process_time() - t0)
            exps.append(a)
        need = break_even(len(cands), screen_sizes(len(cands), n_train), n_train)
        print(f"| {name} | {len(cands)} | {', '.join(f'{a:.2f}' for a in exps)} | {np.mean(spent):.2f} | {need:.2f} | "
              f"{sum(a >= need for a in exps)}/5 |", flush=True)


if __name__ == "__main__":
    main()
