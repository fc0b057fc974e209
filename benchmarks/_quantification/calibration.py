"""Measured calibration of the quantification bounds: how often does the true score exceed the bound?

Simulated data (no real documents): training labels and the labels of the unlabeled set
``S`` are drawn i.i.d. from known class priors; a classifier is simulated by a confusion
matrix (each example of class y is predicted as class j with probability ``C[y, j]``). For
each draw the true accuracy, macro-precision, macro-recall and macro-F1 on ``S`` (scikit-learn,
``zero_division=1``; macro-F1 both as the mean of per-class F1 and as the F1 of macro-P and
macro-R, the paper's MaF) are compared with

* Theorem 1 of Balikas et al. (2015), CC (``bound="theorem1"``), and
* certa's own bounds (``bound="certa"``, ``n_unlabeled = |S|``),

both at level ``delta``: a valid bound is exceeded in at most a fraction ``delta`` of the draws.

Settings: (a) 3 classes (.5, .3, .2), 20 % of class 0 predicted as class 2 (the classifier
sits on the deterministic bound), N = 150, |S| = 200; (b) 20 classes with Zipf priors, a
perfect classifier, N = 2000, |S| = 1000; (c) the Debian task's 58 training priors, a perfect
classifier, N = 12138, |S| = 6024. delta = 0.1.

Run: ``python3 benchmarks/quantification.py calibration [--reps 1000]``; writes
``benchmarks/results/quantification_calibration.{json,md}``.
"""
from __future__ import annotations

import argparse
import math

import numpy as np
from _common import machine_info, md_table, write_results
from sklearn.metrics import precision_recall_fscore_support

from certa.quantification import (
    accuracy_bound,
    classify_and_count,
    macro_f1_bound,
    macro_precision_bound,
    macro_recall_bound,
    theorem1_bounds,
)

KEYS = ("accuracy", "macro_precision", "macro_recall", "macro_f1", "macro_f1_harmonic")


def simulate(p, confusion, n_train, m, delta, reps, seed) -> dict:
    rng = np.random.default_rng(seed)
    k = len(p)
    classes = np.arange(k)
    viol = {b: dict.fromkeys(KEYS, 0) for b in ("theorem1", "certa")}
    cum = np.cumsum(confusion, axis=1)
    for _ in range(reps):
        p_hat = rng.multinomial(n_train, p) / n_train
        y = rng.choice(k, size=m, p=p)
        pred = np.minimum((rng.random(m)[:, None] > cum[y]).sum(axis=1), k - 1)
        q = classify_and_count(pred, classes)
        P, R, F, _ = precision_recall_fscore_support(y, pred, labels=classes, zero_division=1.0)
        true = {"accuracy": float(np.mean(pred == y)), "macro_precision": P.mean(), "macro_recall": R.mean(),
                "macro_f1": F.mean(), "macro_f1_harmonic": 2 * P.mean() * R.mean() / (P.mean() + R.mean())}
        t1 = theorem1_bounds(p_hat, q, q, n_train, delta, "cc")["values"]
        thm = {**t1, "macro_f1_harmonic": t1["macro_f1"]}
        certa = {"accuracy": accuracy_bound(p_hat, q, n_train, delta, 0.0, m),
                 "macro_precision": macro_precision_bound(p_hat, q, n_train, delta, 0.0, m),
                 "macro_recall": macro_recall_bound(p_hat, q, n_train, delta, 0.0, m),
                 "macro_f1": macro_f1_bound(p_hat, q, n_train, delta, 0.0, m),
                 "macro_f1_harmonic": macro_f1_bound(p_hat, q, n_train, delta, 0.0, m, definition="harmonic")}
        for key in KEYS:
            viol["theorem1"][key] += true[key] > thm[key] + 1e-12
            viol["certa"][key] += true[key] > certa[key] + 1e-12
    return {b: {key: v / reps for key, v in d.items()} for b, d in viol.items()}


def debian_priors() -> np.ndarray:
    from certa.datasets import load_debian_sections

    y = np.asarray(load_debian_sections().y_train)
    _, counts = np.unique(y, return_counts=True)
    return counts / counts.sum()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="quantification.py calibration", description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--delta", type=float, default=0.1)
    args = ap.parse_args(argv)
    zipf = 1.0 / np.arange(1, 21)
    zipf /= zipf.sum()
    deb = debian_priors()
    settings = [
        ("3 classes, errors on the deterministic bound", np.array([0.5, 0.3, 0.2]),
         np.array([[0.8, 0.0, 0.2], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]), 150, 200),
        ("20 Zipf classes, perfect classifier", zipf, np.eye(20), 2000, 1000),
        ("Debian's 58 training priors, perfect classifier", deb, np.eye(deb.size), 12138, 6024),
    ]
    reps = {0: args.reps, 1: args.reps, 2: max(1, args.reps // 5)}  # the 58-class draws are the slow ones
    out = {"delta": args.delta, "machine": machine_info(), "settings": []}
    rows = []
    for i, (name, p, conf, n, m) in enumerate(settings):
        r = simulate(p, conf, n, m, args.delta, reps[i], seed=i + 1)
        se = math.sqrt(args.delta * (1 - args.delta) / reps[i])
        out["settings"].append({"name": name, "n_train": n, "m": m, "k": int(p.size), "reps": reps[i],
                                "violation_rate": r, "delta_plus_3se": args.delta + 3 * se})
        for b in ("theorem1", "certa"):
            rows.append([name, f"{p.size}", f"{n} / {m}", reps[i], b]
                        + [f"{r[b][k]:.3f}" for k in KEYS])
        print(name, r, flush=True)
    md = ("# Calibration of the quantification bounds (simulated data)\n\n"
          f"Fraction of draws in which the true score on S exceeds the bound; delta = {args.delta} "
          "(a valid bound: at most delta, up to 3 SE). Generated by `benchmarks/quantification.py calibration`.\n\n"
          + md_table(["setting", "K", "N / abs(S)", "draws", "bound", "accuracy", "macro-P", "macro-R",
                      "macro-F1 (mean per class)", "macro-F1 (F1 of macro-P, macro-R)"], rows) + "\n")
    write_results("quantification_calibration", out, md)
    print(md)
