"""How reachable is "the choice ranks in the exhaustive top 5"? Exhaustive 5-fold CV as a reference tuner.

Issue 14 asks every progressive choice to rank in the exhaustive top 5, where the exhaustive
ranking scores every setting once on the draw's held-out evaluation part (4,000 examples). This
script runs the most thorough tuner that sees only the training part: every setting scored by
stratified 5-fold cross-validation over the whole training part (16,000 examples, 5 fits per
setting, five times the exhaustive search's cost), and reports where its choice (and its top 5)
lands in the held-out ranking. It also measures how stable the held-out top 5 is itself: the
share of bootstrap resamples of the 4,000 evaluation examples in which each method's choice
ranks in the top 5.

Same draws, split, learners and grids as ``benchmarks/progressive.py lemma``; the held-out
ranking and per-example correctness come from its cache
(``benchmarks/results/progressive_lemma_exhaustive.json``). Real data (Dutch lemmatisation).

Run: ``OMP_NUM_THREADS=1 nice python benchmarks/progressive.py cv-reference --draw lookup2
--learner tree`` (one draw and learner per process; ``--combine`` merges the parts into
``benchmarks/results/progressive_lemma_cv_reference.{json,md}``).
"""
from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np
from _common import RESULTS, loadavg
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

from _progressive.lemma import (
    DEFAULT_LOOKUP,
    LEARNERS,
    _unpack,
    cache_key,
    load_draw,
    read_cache,
)
from certa.engine.candidates import candidates_from_grid
from certa.search._common import rank_scores
from certa.strategies.progressive import SubsetPlan

OUT = RESULTS


def cv_scores(make, cands, X, y, train, seed: int, folds: int) -> np.ndarray:
    """Mean accuracy of every setting over ``folds``-fold stratified CV of the training part."""
    Xt, yt = X[train], y[train]
    # classes with fewer members than folds cannot be stratified; StratifiedKFold warns and deals them as it can
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        splits = list(StratifiedKFold(folds, shuffle=True, random_state=seed).split(np.zeros(len(yt)), yt))
    out = np.empty((len(cands), folds))
    for c in cands:
        for k, (tr, te) in enumerate(splits):
            est = clone(make()).set_params(**c.params).fit(Xt[tr], yt[tr])
            out[c.index, k] = float(np.mean(est.predict(Xt[te]) == yt[te]))
    return out.mean(axis=1)


def bootstrap_top5(correct: np.ndarray, choice: int, n_boot: int, seed: int) -> float:
    """Share of bootstrap resamples of the evaluation examples in which ``choice`` ranks in the top 5."""
    rng = np.random.default_rng(seed)
    n = correct.shape[1]
    hits = 0
    for _ in range(n_boot):
        idx = rng.integers(0, n, n)
        acc = correct[:, idx].mean(axis=1)
        hits += int(rank_scores(acc)[choice] <= 5)
    return hits / n_boot


def one(draw: str, learner: str, args) -> dict:
    make, grid_fn, default_fn = LEARNERS[learner]
    X, y = load_draw(draw, args.n_instances, args.seed, args.lookup)
    cands = candidates_from_grid(grid_fn(False))
    ex = read_cache()[cache_key(draw, learner, len(y), args.seed, False, True)]
    held = np.asarray(ex["scores"], dtype=float)
    held_rank = rank_scores(held)
    correct = np.array([_unpack(t, ex["n_eval"]) for t in ex["correct"]], dtype=float)
    train, _ = SubsetPlan(args.seed, 0.8, eval_fraction=None).parts(y, len(y))
    t0 = time.perf_counter()
    cv = cv_scores(make, cands, X, y, train, args.seed, args.folds)
    wall = time.perf_counter() - t0
    cv_rank = rank_scores(cv)
    choice = int(np.argmin(cv_rank))  # ties: first in grid order
    top5_cv = [int(i) for i in np.argsort(cv_rank, kind="stable")[:5]]
    default = next(c.index for c in cands if c.params == default_fn())
    held_best = int(np.argmin(held_rank))
    return {"draw": draw, "learner": learner, "folds": args.folds, "n_train": len(train),
            "n_eval": int(ex["n_eval"]), "cv_wall_s": wall, "load_end": loadavg(),
            "cv_choice": cands[choice].name, "cv_choice_held_rank": int(held_rank[choice]),
            "cv_choice_held_accuracy": float(held[choice]), "cv_top5_held_ranks": [int(held_rank[i]) for i in top5_cv],
            "held_best": cands[held_best].name, "held_best_accuracy": float(held[held_best]),
            "held_best_cv_rank": int(cv_rank[held_best]),
            "held_top5_span_points": float(100 * (held[held_best] - np.sort(held)[::-1][4])),
            "default_held_rank": int(held_rank[default]), "default_cv_rank": int(cv_rank[default]),
            "bootstrap_top5_share": {"cv_choice": bootstrap_top5(correct, choice, args.n_boot, args.seed),
                                     "held_best": bootstrap_top5(correct, held_best, args.n_boot, args.seed)},
            "n_boot": args.n_boot, "cv_scores": cv.tolist(),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "unset"),
            "recorded_at": time.strftime("%Y-%m-%d %H:%M:%S %z")}


def method_shares(rows: list[dict], results: Path, n_boot: int, seed: int) -> list[dict]:
    """Held-out rank and bootstrap top-5 share of every method's choice in a progressive_lemma run."""
    run = json.loads(results.read_text())
    cache = read_cache()
    out = []
    for r in rows:
        _, grid_fn, _ = LEARNERS[r["learner"]]
        names = [c.name for c in candidates_from_grid(grid_fn(False))]
        ex = cache[cache_key(r["draw"], r["learner"], run["n_instances"], run["seed"], False, True)]
        correct = np.array([_unpack(t, ex["n_eval"]) for t in ex["correct"]], dtype=float)
        held_rank = rank_scores(np.asarray(ex["scores"], dtype=float))
        methods = run["draws"][r["draw"]][r["learner"]]
        share: dict[int, float] = {}   # several methods often choose the same setting
        for label in ("paramsearch", "psearch", "paramsearch+race", "psearch+race", "halving"):
            if label not in methods:
                continue
            i = names.index(methods[label]["chosen"])
            if i not in share:
                share[i] = bootstrap_top5(correct, i, n_boot, seed)
            out.append({"draw": r["draw"], "learner": r["learner"], "method": label, "held_rank": int(held_rank[i]),
                        "bootstrap_top5_share": share[i]})
        i = names.index(r["cv_choice"])
        out.append({"draw": r["draw"], "learner": r["learner"], "method": "exhaustive 5-fold CV",
                    "held_rank": int(held_rank[i]), "bootstrap_top5_share": r["bootstrap_top5_share"]["cv_choice"]})
    return out


def markdown(rows: list[dict]) -> str:
    lines = ["# Exhaustive 5-fold CV on the training part as a reference tuner (issue 14)", "",
             "Every setting scored by stratified 5-fold CV over the 16,000-example training part (five fits per "
             "setting); its choice is then ranked in the held-out exhaustive ranking (4,000 evaluation examples) "
             "that issue 14's 'top 5' refers to. 'bootstrap top-5 share': share of bootstrap resamples of the "
             "evaluation examples in which the setting ranks in the top 5. `benchmarks/progressive.py cv-reference`.",
             "",
             "| draw | learner | CV choice: held-out rank | CV top 5: held-out ranks | held-out best: CV rank | "
             "held-out top-5 span (points) | bootstrap top-5 share: CV choice / held-out best | default: held-out / CV rank | "
             "CV wall (s) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        b = r["bootstrap_top5_share"]
        lines.append(f"| {r['draw']} | {r['learner']} | {r['cv_choice_held_rank']} | "
                     f"{', '.join(map(str, r['cv_top5_held_ranks']))} | {r['held_best_cv_rank']} | "
                     f"{r['held_top5_span_points']:.2f} | {b['cv_choice']:.2f} / {b['held_best']:.2f} | "
                     f"{r['default_held_rank']} / {r['default_cv_rank']} | {r['cv_wall_s']:.0f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="progressive.py cv-reference", description=__doc__.splitlines()[0])
    ap.add_argument("--draw", choices=["bundled", "lookup2"])
    ap.add_argument("--learner", choices=["knn", "tree"])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--n-instances", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--lookup", type=Path, default=DEFAULT_LOOKUP)
    ap.add_argument("--combine", action="store_true", help="merge the per-part JSON files into one table")
    ap.add_argument("--methods-tag", default="issue14_budget",
                    help="with --combine: the progressive_lemma run whose choices are compared")
    args = ap.parse_args(argv)
    if args.combine:
        rows = [json.loads(p.read_text()) for p in sorted(OUT.glob("progressive_lemma_cv_reference_*_*.json"))]
        shares = method_shares(rows, OUT / f"progressive_lemma_{args.methods_tag}.json", args.n_boot, args.seed)
        text = markdown(rows) + (
            f"\nEvery method's choice in `progressive_lemma_{args.methods_tag}.json`: held-out rank (bootstrap "
            "top-5 share over resamples of the 4,000 evaluation examples)\n\n"
            "| draw | learner | " + " | ".join(dict.fromkeys(m["method"] for m in shares)) + " |\n"
            "|---|---|" + "---|" * len(dict.fromkeys(m["method"] for m in shares)) + "\n")
        for r in rows:
            cells = {m["method"]: f"{m['held_rank']} ({m['bootstrap_top5_share']:.2f})" for m in shares
                     if (m["draw"], m["learner"]) == (r["draw"], r["learner"])}
            text += f"| {r['draw']} | {r['learner']} | " + " | ".join(
                cells.get(k, "") for k in dict.fromkeys(m["method"] for m in shares)) + " |\n"
        (OUT / "progressive_lemma_cv_reference.json").write_text(json.dumps({"references": rows, "methods": shares},
                                                                            indent=1))
        (OUT / "progressive_lemma_cv_reference.md").write_text(text)
        print(text)
        return
    if not (args.draw and args.learner):
        ap.error("--draw and --learner are needed (or --combine)")
    row = one(args.draw, args.learner, args)
    (OUT / f"progressive_lemma_cv_reference_{args.draw}_{args.learner}.json").write_text(json.dumps(row, indent=1))
    print(markdown([row]))
