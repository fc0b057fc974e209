"""FIESTA's TTTS loop with an exact belief: isolates Monte Carlo noise from the algorithm.

fiesta-nlp's ``TTTS`` estimates P(best) by Monte Carlo after every evaluation; certa's
``TopTwoThompson`` computes it by quadrature and samples leader and challenger from the
posterior. This script runs FIESTA's loop as written in fiesta-nlp 0.0.1 (3 evaluations per
model; then draw m1 from P(best); with probability 1/2 evaluate it, else redraw from P(best)
until a different model comes up and evaluate that; stop when max P(best) >= confidence) on
the same replay, with P(best) from certa's quadrature instead of Monte Carlo. If its mean
matches certa's TopTwoThompson, the two implement the same algorithm and any difference from
fiesta-nlp's own runs comes from its Monte Carlo belief.

Usage::

    python3 benchmarks/fiesta_loop_exact.py --runs 2000 --confidence 0.95
    python3 benchmarks/fiesta_loop_exact.py --runs 4000 --seed 7 --tag seed7
"""
from __future__ import annotations

import argparse
import json

import numpy as np
from _common import RESULTS, machine_info

from certa.planning.simulate import simulate
from certa.strategies import TopTwoThompson
from certa.strategies._belief import p_best

DATA = "/work/shared/data/fiesta-tdsa-test-f1.json"
MODELS8 = ["tdlstm", "atae", "ian", "lstm", "tdlstm_50", "atae_50", "ian_50", "lstm_50"]


def belief(scores: list[list[float]]) -> np.ndarray:
    mean = np.array([np.mean(s) for s in scores])
    sd = np.array([np.std(s) for s in scores])           # ddof=0, as FIESTA
    n = np.array([len(s) for s in scores], dtype=float)
    p = p_best(mean, sd / np.sqrt(n - 2), n - 2)
    return p / p.sum()


def one_run(arrays: list[np.ndarray], confidence: float, rng: np.random.Generator) -> tuple[int, int, list[int]]:
    k = len(arrays)
    scores = [[float(a[rng.integers(a.size)]) for _ in range(3)] for a in arrays]
    pi, num = belief(scores), 3 * k
    while pi.max() < confidence:
        m = int(rng.choice(k, p=pi))
        if rng.random() > 0.5:
            m2 = m
            while m2 == m:
                m2 = int(rng.choice(k, p=pi))
            m = m2
        scores[m].append(float(arrays[m][rng.integers(arrays[m].size)]))
        num += 1
        pi = belief(scores)
    return num, int(np.argmax(pi)), [len(s) for s in scores]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tag", default="", help="suffix of the results file (keeps earlier runs)")
    a = ap.parse_args()
    with open(DATA) as fh:
        table = json.load(fh)
    arrays = [np.asarray(table[m], dtype=float) for m in MODELS8]
    out = [one_run(arrays, a.confidence, np.random.default_rng([a.seed, r])) for r in range(a.runs)]
    ev = np.array([o[0] for o in out], dtype=float)
    res = {"what": "fiesta-nlp 0.0.1's TTTS loop with P(best) by certa's quadrature (no Monte Carlo)",
           "confidence": a.confidence, "n_runs": a.runs, "seed": a.seed,
           "evaluations_mean": float(ev.mean()), "evaluations_se": float(ev.std(ddof=1) / np.sqrt(ev.size)),
           "evaluations_min": int(ev.min()), "evaluations_max": int(ev.max()),
           "p_correct": float(np.mean([o[1] == 0 for o in out])),
           "evaluations_per_model_mean": dict(zip(MODELS8, np.mean([o[2] for o in out], axis=0).round(2).tolist())),
           "machine": machine_info()}
    rep = simulate(TopTwoThompson(a.confidence, 0.5, stopping="bayes"), table={m: table[m] for m in MODELS8}, n_runs=a.runs,
                   random_state=a.seed)
    cev = rep.evaluations.astype(float)
    res["certa_TopTwoThompson"] = {"n_runs": a.runs, "evaluations_mean": float(cev.mean()),
                                   "evaluations_se": float(cev.std(ddof=1) / np.sqrt(cev.size)),
                                   "p_correct": float(rep.p_correct)}
    suffix = f"_{a.tag}" if a.tag else ""
    with open(RESULTS / f"fiesta_loop_exact_{a.confidence}{suffix}.json", "w") as fh:
        json.dump(res, fh, indent=1)
    print(json.dumps({k: v for k, v in res.items() if k != "machine"}, indent=1))


if __name__ == "__main__":
    main()
