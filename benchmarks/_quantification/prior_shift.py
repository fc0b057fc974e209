"""Choosing lambda under prior shift: quantification bounds (Bound_UN) vs hold-out vs 5-fold CV.

Issue 24 (#13): the paper's case for the bounds (Balikas et al., IDA 2015) is unlabeled target
data. Here the unlabeled part ``S`` and the test part ``T`` are drawn with class priors that
differ from the training set's, and each method must choose the lambda whose model (trained on
all training data) is best on the shifted ``T``.

Data: the 20 largest sections of ``/work/shared/data/debian-descriptions.tsv.gz`` (Debian
bookworm package descriptions, text = short + long description; 62 % of the file). Per
repetition (seeded):

- training part: ``--n-train`` descriptions drawn at random from the pool, so its priors are the
  pool's (``p``, from 11 % down to 2 %);
- ``S`` and ``T`` (``--n-target`` each, disjoint, none in the training part): class counts from
  a multinomial with the shifted priors ``pi = (1 - a) p + a p_rev``, ``p_rev`` = the pool's
  priors in reverse order of class size (the largest section gets the smallest share), for shift
  strength ``a`` in ``--shifts`` (0: no shift, the control; 1: fully reversed). Total variation
  ``||p - pi||_1 / 2`` is reported per strength.

Candidates: ``LinearSVC(C=1/lambda, random_state=0)`` (one-vs-rest, as in the paper) on TF-IDF
(``sublinear_tf=True, min_df=2``, fitted on the training texts of the repetition), lambda in
``10^-4 .. 10^3`` (Algorithm 1's grid). Methods, each choosing for accuracy and for macro-F1:

- **Bound_UN (certa)**: ``QuantificationBoundSearch(bound="certa", quantifier="cc")`` with
  ``X_unlabeled = S`` (the default); **Bound_UN (Theorem 1)**: the same with ``bound="theorem1"``
  (its accuracy ranking equals certa's with CC; macro-F1 differs);
- **hold-out**: one stratified 70/30 split of the training part, the lambda best on the 30 %;
- **5-fold CV**: stratified 5-fold CV on the training part (``GridSearchCV``, accuracy and
  macro-F1 in one pass);
- **oracle**: the lambda best on ``T`` (what every method tries to find).

Reported per shift strength: mean regret (oracle's test score minus the chosen lambda's, both
from the models trained on all training data), how often the choice is the oracle's lambda, and
the fits each method needs (8 for the bounds, 8 + 8 refit-free for hold-out... see the table).

Run (under the CPU lock, one thread): ``OMP_NUM_THREADS=1 python benchmarks/quantification.py prior-shift
--shifts 0,0.5,1 --reps 4`` (``--part a`` to run one strength and merge with ``--merge``).
Writes ``benchmarks/results/quantification_prior_shift.{json,md}``.
"""
from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
import pandas as pd
from _common import RESULTS, fmt_load, loadavg, machine_info, md_table, write_results
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold, StratifiedShuffleSplit
from sklearn.svm import LinearSVC

from certa.quantification import Theorem1Warning
from certa.search.quantification import QuantificationBoundSearch

DATA = "/work/shared/data/debian-descriptions.tsv.gz"
LAMBDAS = [10.0 ** e for e in range(-4, 4)]
MEASURES = ("accuracy", "macro_f1")
METHODS = ("Bound_UN (certa)", "Bound_UN (Theorem 1)", "hold-out", "5-fold CV")
FITS = {"Bound_UN (certa)": "8", "Bound_UN (Theorem 1)": "8", "hold-out": "8 (+ refit)", "5-fold CV": "40 (+ refit)"}


def load_pool(n_sections: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    d = pd.read_csv(DATA, sep="\t", quoting=3, dtype=str, keep_default_na=False)
    top = d["section"].value_counts().index[:n_sections]
    d = d[d["section"].isin(top)].reset_index(drop=True)
    texts = (d["short"] + " " + d["long"]).tolist()
    classes = np.array(sorted(top))
    y = d["section"].to_numpy()
    return texts, y, classes


def shifted_priors(p: np.ndarray, a: float) -> np.ndarray:
    """``(1 - a) p + a p_rev``: ``p_rev`` gives the i-th largest class the i-th smallest prior."""
    order = np.argsort(-p, kind="stable")
    p_rev = np.empty_like(p)
    p_rev[order] = p[order[::-1]]
    return (1 - a) * p + a * p_rev


def draw(y: np.ndarray, classes: np.ndarray, n_train: int, n_target: int, a: float, rng: np.random.Generator):
    """Indices of the training part (pool priors) and of S and T (shifted priors), disjoint."""
    n = len(y)
    train = rng.choice(n, n_train, replace=False)
    rest = np.setdiff1d(np.arange(n), train)
    p = np.array([np.mean(y == c) for c in classes])
    pi = shifted_priors(p, a)
    parts = []
    for _ in range(2):
        counts = rng.multinomial(n_target, pi)
        take = []
        for c, k in zip(classes, counts):
            members = rest[y[rest] == c]
            if k > len(members):
                raise ValueError(f"class {c} has {len(members)} examples left, needs {k}")
            take.append(rng.choice(members, k, replace=False))
        idx = rng.permutation(np.concatenate(take))
        parts.append(idx)
        rest = np.setdiff1d(rest, idx)
    return train, parts[0], parts[1], p, pi


def _svm(lam: float) -> LinearSVC:
    return LinearSVC(C=1.0 / lam, random_state=0)


def one_rep(texts, y, classes, a: float, seed: int, n_train: int, n_target: int) -> dict:
    rng = np.random.default_rng([seed, int(round(1000 * a))])
    tr, s, te, p, pi = draw(y, classes, n_train, n_target, a, rng)
    vec = TfidfVectorizer(sublinear_tf=True, min_df=2).fit([texts[i] for i in tr])
    X_tr, X_s, X_te = (vec.transform([texts[i] for i in idx]) for idx in (tr, s, te))
    y_tr, y_te = y[tr], y[te]
    t0 = time.perf_counter()
    test = {m: [] for m in MEASURES}
    for lam in LAMBDAS:  # every method's chosen lambda is scored by this model (trained on all training data)
        pred = _svm(lam).fit(X_tr, y_tr).predict(X_te)
        test["accuracy"].append(accuracy_score(y_te, pred))
        test["macro_f1"].append(f1_score(y_te, pred, average="macro", labels=classes, zero_division=0.0))
    chosen: dict[str, dict[str, int]] = {}
    grid = {"C": [1.0 / lam for lam in LAMBDAS]}
    for name, bound in (("Bound_UN (certa)", "certa"), ("Bound_UN (Theorem 1)", "theorem1")):
        chosen[name] = {}
        for m in MEASURES:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Theorem1Warning)
                search = QuantificationBoundSearch(LinearSVC(random_state=0), grid, measure=m, bound=bound,
                                                   progress=False, keep_models=False).fit(X_tr, y_tr, X_s)
            chosen[name][m] = int(search.best_index_)
    split = StratifiedShuffleSplit(1, test_size=0.3, random_state=seed)
    fit_i, val_i = next(split.split(np.zeros(len(y_tr)), y_tr))
    ho = {m: [] for m in MEASURES}
    for lam in LAMBDAS:
        pred = _svm(lam).fit(X_tr[fit_i], y_tr[fit_i]).predict(X_tr[val_i])
        ho["accuracy"].append(accuracy_score(y_tr[val_i], pred))
        ho["macro_f1"].append(f1_score(y_tr[val_i], pred, average="macro", labels=classes, zero_division=0.0))
    chosen["hold-out"] = {m: int(np.argmax(ho[m])) for m in MEASURES}
    cv = GridSearchCV(LinearSVC(random_state=0), grid, scoring={"accuracy": "accuracy", "macro_f1": "f1_macro"},
                      cv=StratifiedKFold(5, shuffle=True, random_state=seed), refit=False).fit(X_tr, y_tr)
    chosen["5-fold CV"] = {m: int(np.argmax(cv.cv_results_[f"mean_test_{m}"])) for m in MEASURES}
    oracle = {m: int(np.argmax(test[m])) for m in MEASURES}
    return {"shift": a, "seed": seed, "tv_distance": float(np.abs(p - pi).sum() / 2), "test": test,
            "chosen": chosen, "oracle": oracle, "seconds": time.perf_counter() - t0, "loadavg_end": loadavg()}


def summarise(reps: list[dict]) -> dict:
    out = {}
    for a in sorted({r["shift"] for r in reps}):
        rs = [r for r in reps if r["shift"] == a]
        row = {"n_reps": len(rs), "tv_distance": float(np.mean([r["tv_distance"] for r in rs]))}
        for method in METHODS:
            for m in MEASURES:
                regret = [r["test"][m][r["oracle"][m]] - r["test"][m][r["chosen"][method][m]] for r in rs]
                hits = sum(r["chosen"][method][m] == r["oracle"][m] for r in rs)
                row[f"{method}|{m}"] = {"regret_mean": float(np.mean(regret)), "regret_max": float(np.max(regret)),
                                        "hits": int(hits),
                                        "lambdas": [LAMBDAS[r["chosen"][method][m]] for r in rs]}
        for m in MEASURES:
            row[f"oracle|{m}"] = {"score_mean": float(np.mean([r["test"][m][r["oracle"][m]] for r in rs])),
                                  "lambdas": [LAMBDAS[r["oracle"][m]] for r in rs]}
        out[str(a)] = row
    return out


def markdown(res: dict) -> str:
    s = res["summary"]
    lines = ["# Choosing lambda under prior shift (Debian, 20 sections, LinearSVC)", "",
             f"{res['n_train']} training descriptions (pool priors), unlabeled part S and test part T of "
             f"{res['n_target']} each drawn with priors `(1 - a) p + a p_rev`; {res['reps']} repetitions per shift "
             f"strength `a`; lambda in 1e-4..1e3 (C = 1/lambda). Regret = test score of the oracle's lambda minus "
             "that of the chosen lambda (models trained on all training data), mean (max) over repetitions, in "
             "points; hits = repetitions choosing the oracle's lambda. One thread; load "
             f"{fmt_load(res['loadavg_start'])} at the start.", ""]
    for m in MEASURES:
        rows = []
        for a, row in s.items():
            cells = [f"{float(a):g} (TV {row['tv_distance']:.2f})",
                     f"{100 * row[f'oracle|{m}']['score_mean']:.2f}"]
            for method in METHODS:
                c = row[f"{method}|{m}"]
                cells.append(f"{100 * c['regret_mean']:.2f} ({100 * c['regret_max']:.2f}), {c['hits']}/{row['n_reps']}")
            rows.append(cells)
        lines += [f"## {m}", "", md_table(["shift a (TV distance)", "oracle test score"] +
                                          [f"{k}: regret (max), hits" for k in METHODS], rows), ""]
    lines += ["Fits per choice: " + "; ".join(f"{k} {v}" for k, v in FITS.items()) + ".", ""]
    return "\n".join(lines)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(prog="quantification.py prior-shift", description=__doc__.split("\n")[0])
    ap.add_argument("--shifts", default="0,0.5,1")
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-sections", type=int, default=20)
    ap.add_argument("--n-train", type=int, default=4000)
    ap.add_argument("--n-target", type=int, default=2000)
    ap.add_argument("--part", default="", help="write the repetitions to quantification_prior_shift_<part>.json only")
    ap.add_argument("--merge", default="", help="comma-separated parts to merge into the result files")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", ConvergenceWarning)
    if args.merge:
        parts = [json.loads((RESULTS / f"quantification_prior_shift_{p}.json").read_text()) for p in args.merge.split(",")]
        res = dict(parts[0], reps_detail=[r for p in parts for r in p["reps_detail"]], parts=args.merge.split(","),
                   loadavg_start=max((p["loadavg_start"] for p in parts), key=lambda v: v[0] if v else 0))
    else:
        texts, y, classes = load_pool(args.n_sections)
        res = {"n_train": args.n_train, "n_target": args.n_target, "reps": args.reps, "seed": args.seed,
               "n_sections": args.n_sections, "lambdas": LAMBDAS, "loadavg_start": loadavg(),
               "machine": machine_info(), "reps_detail": []}
        for a in [float(v) for v in args.shifts.split(",")]:
            for r in range(args.reps):
                rep = one_rep(texts, y, classes, a, args.seed + r, args.n_train, args.n_target)
                res["reps_detail"].append(rep)
                print(json.dumps({k: rep[k] for k in ("shift", "seed", "chosen", "oracle", "seconds")}), flush=True)
        if args.part:
            (RESULTS / f"quantification_prior_shift_{args.part}.json").write_text(json.dumps(res, indent=1))
            return res
    res["summary"] = summarise(res["reps_detail"])
    write_results("quantification_prior_shift", res, markdown(res))
    print(markdown(res))
    return res
