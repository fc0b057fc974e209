"""Nested CV on real text: is the inner best score optimistic, and how often does the choice change?

For several seeds, run ``certa.cross_validate_selection`` (5 outer folds) around a
``JKFoldSearchCV`` (inner 1x5-fold) that tunes C of a linear SVM over 12 values on the bundled
Debian descriptions (``load_debian_small``). Reports per seed the outer estimate, the mean inner
best score, the optimism (inner best - outer) and the distinct choices; then the mean optimism
over seeds with its standard error.

Notes: the TF-IDF matrix is computed once on all texts (its vocabulary and IDF see every text)
to keep the benchmark cheap; that affects the inner and the outer scores alike. The inner folds
train on 64 % of the data, the outer folds on 80 %, so the outer score also gains from more
training data: the optimism measured here is selection bias minus that learning-curve gain.

Run: ``python3 benchmarks/stats.py nested-cv [--quick] [--n-jobs 2]``.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from _common import md_table, write_results

from certa import JKFoldSearchCV, cross_validate_selection
from certa.datasets import load_debian_small


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="stats.py nested-cv", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument("--inner-splits", type=int, default=5, help="K of the inner 1xK-fold CV (default 5)")
    ap.add_argument("--n-samples", type=int, default=None, help="use the first N texts (default all 3,000)")
    ap.add_argument("--wide-grid", action="store_true",
                    help="48 candidates: 24 values of C x class_weight in {None, balanced}")
    ap.add_argument("--name", default="nested_cv", help="results file name")
    args = ap.parse_args(argv)
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.svm import LinearSVC

    X_text, y = load_debian_small(return_X_y=True)
    if args.n_samples:
        X_text, y = X_text[:args.n_samples], y[:args.n_samples]
    X = TfidfVectorizer(min_df=2, sublinear_tf=True).fit_transform(X_text)
    n_seeds = args.seeds or (3 if args.quick else 12)
    grid = ({"C": list(np.logspace(-2, 1.5, 24).round(5)), "class_weight": [None, "balanced"]} if args.wide_grid
            else {"C": list(np.logspace(-3, 2.5, 12).round(5))})
    rows, per_seed = [], []
    t0 = time.perf_counter()
    for seed in range(n_seeds):
        inner = JKFoldSearchCV(LinearSVC(), grid, n_splits=args.inner_splits, n_repeats=1, random_state=seed)
        res = cross_validate_selection(inner, X, y, n_splits=5, random_state=1000 + seed, n_jobs=args.n_jobs)
        choices = [c["C"] if len(c) == 1 else f"{c['C']:g}/{c['class_weight'] or '-'}" for c in res.chosen]
        per_seed.append({"seed": seed, "outer_mean": res.mean, "outer_sd": res.std,
                         "inner_best_mean": float(np.mean(res.inner_best_scores)), "optimism": res.optimism,
                         "outer_at_inner_size_mean": float(np.mean(res.outer_scores_at_inner_size)),
                         "selection_bias": res.selection_bias,
                         "choices": choices, "n_distinct_choices": res.n_distinct_choices})
        rows.append([seed, f"{res.mean:.4f}", f"{np.mean(res.inner_best_scores):.4f}", f"{res.optimism:+.4f}",
                     f"{np.mean(res.outer_scores_at_inner_size):.4f}", f"{res.selection_bias:+.4f}",
                     ", ".join(f"{c:g}" if isinstance(c, float) else str(c) for c in choices), res.n_distinct_choices])
        print(rows[-1], flush=True)
    opt = np.array([p["optimism"] for p in per_seed])
    summary = {"mean_optimism": float(opt.mean()), "se_optimism": float(opt.std(ddof=1) / np.sqrt(len(opt))),
               "share_seeds_inner_above_outer": float(np.mean(opt >= 0)),
               "mean_distinct_choices": float(np.mean([p["n_distinct_choices"] for p in per_seed])),
               "seconds": round(time.perf_counter() - t0, 1)}
    bias = np.array([p["selection_bias"] for p in per_seed])
    summary.update(mean_selection_bias=float(bias.mean()), se_selection_bias=float(bias.std(ddof=1) / np.sqrt(len(bias))),
                   share_seeds_positive_bias=float(np.mean(bias >= 0)))
    n_cands = int(np.prod([len(v) for v in grid.values()]))
    md = (f"## Nested CV on debian_small ({len(y)} texts; linear SVM, {n_cands} candidates, inner 1x{args.inner_splits}-fold, "
          "outer 5-fold)\n\n"
          + md_table(["seed", "outer estimate", "mean inner best", "optimism", "outer at inner training size",
                      "selection bias", "chosen C per outer fold",
                      "distinct"], rows)
          + f"\n\nMean optimism (inner best - outer) over {len(opt)} seeds: {summary['mean_optimism']:+.4f} "
            f"(SE {summary['se_optimism']:.4f}); inner best >= outer in {summary['share_seeds_inner_above_outer']:.0%} "
            f"of seeds; {summary['mean_distinct_choices']:.1f} distinct choices per nested run on average.\n"
          + f"At equal training size (the choice refitted on as many examples as an inner fold had), the inner best "
            f"score exceeds the outer score by {summary['mean_selection_bias']:+.4f} on average "
            f"(SE {summary['se_selection_bias']:.4f}; positive in {summary['share_seeds_positive_bias']:.0%} of seeds): "
            f"the selection bias that nested CV removes.\n")
    write_results(args.name, {"settings": {"seeds": n_seeds, "grid": grid, "inner": f"1x{args.inner_splits}-fold",
                                           "outer": "5-fold", "n_samples": len(y)},
                                "per_seed": per_seed, "summary": summary}, md)
    print(md)
    return 0
