"""The COLING 2018 J-K-fold experiment (Moss, Leslie & Rayson) on real text.

Question: at equal cost (the same number of fits), does tuning by J repeated K-fold CV give
a more reproducible choice than one K-fold CV with more folds? For each configuration
(J, K) in (1, 10) vs (2, 5) [10 fits per candidate] and (2, 10) vs (4, 5) vs (1, 20) [20 fits
per candidate] we run ``--reps`` independent tunings. Every tuning is a
``certa.JKFoldSearchCV`` with its own ``random_state`` (so its own J random partitions),
derived from one root seed by ``numpy.random.SeedSequence([seed, rep, config])``.

Task: ``certa.datasets.load_debian_small()`` (3,000 real Debian package descriptions of 6
sections), split once, stratified and seeded, into 2,000 texts for tuning and 1,000 held out.
To keep 100s of tunings cheap the TF-IDF matrix (``sublinear_tf=True``) is computed ONCE,
fitted on the 2,000 tuning texts, outside the search: the vectorizer has seen the validation
folds' texts (not their labels), which does not matter for a variance study. Labels are
passed as integer codes.

Model (``--model``): ``nb`` (default) = ``MultinomialNB``, tuning ``alpha`` over 8 values
10^-1.75 ... 10^0 (quarter-decade steps, around the optimum); ``svc`` =
``LinearSVC(random_state=0)``, tuning ``C`` over 8 values 10^-1.25 ... 10^0.5.

Reported per configuration, over the independent tunings (the paper's Table 1):

- SD of the chosen parameter in log10 units (decades), with its approximate standard
  error SD / sqrt(2 (n - 1));
- SD of the tuned model's accuracy estimate (``best_score_``, the mean over the J*K folds)
  and its mean;
- the held-out accuracy of the chosen setting (each candidate refit once on the 2,000 tuning
  texts and scored on the 1,000 held-out ones): mean, SD, and the mean shortfall from the
  best candidate's held-out accuracy (the "regret" of an unstable choice);
- the share of tunings whose top mean score was an exact tie (``stability_.best_tied``),
  the mean share of partitions with an exact tie at the top, and for J > 1 the mean
  ``stability_.agreement`` (share of the J partitions whose plain K-fold choice equals the
  J-K-fold choice).

Run: ``python3 benchmarks/jkfold.py coling-stability --n-jobs 2`` (60 tunings per configuration,
about 15 min on 2 busy shared cores) or ``--quick`` (12 tunings). Tunings run in parallel, one JKFoldSearchCV (n_jobs=1) each.
Writes ``benchmarks/results/coling_stability.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from typing import Any

import numpy as np
from _common import fmt_load, machine_info, md_table, write_results
from joblib import Parallel, delayed
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import MultinomialNB
from sklearn.preprocessing import LabelEncoder
from sklearn.svm import LinearSVC

import certa
from certa.datasets import load_debian_small

NAME = "coling_stability"
CONFIGS: list[tuple[int, int]] = [(1, 10), (2, 5), (2, 10), (4, 5), (1, 20)]
MODELS = {
    "nb": ("alpha", lambda: MultinomialNB(), np.logspace(-1.75, 0.0, 8)),
    "svc": ("C", lambda: LinearSVC(random_state=0), np.logspace(-1.25, 0.5, 8)),
}


def prepare(seed: int, n_tune: int = 2000):
    """TF-IDF of the tuning texts (fitted on them) and of the held-out texts; integer labels."""
    X, y = load_debian_small(return_X_y=True)
    codes = LabelEncoder().fit_transform(y)
    X_tune, X_test, y_tune, y_test = train_test_split(X, codes, train_size=n_tune, stratify=codes,
                                                      random_state=seed)
    vec = TfidfVectorizer(sublinear_tf=True)
    return vec.fit_transform(X_tune), np.asarray(y_tune), vec.transform(X_test), np.asarray(y_test)


def config_seed(seed: int, rep: int, config: int) -> int:
    return int(np.random.SeedSequence([seed, rep, config]).generate_state(1)[0])


def one_rep(rep: int, seed: int, model: str, Z, y, configs) -> list[dict[str, Any]]:
    """All configurations' tunings for repetition ``rep`` (each with its own partitions)."""
    pname, make, values = MODELS[model]
    grid = {pname: [float(v) for v in values]}
    out = []
    for ci, (J, K) in enumerate(configs):
        rs = config_seed(seed, rep, ci)
        t0 = time.perf_counter()
        s = certa.JKFoldSearchCV(make(), grid, n_splits=K, n_repeats=J, scoring="accuracy",
                                 random_state=rs, refit=False, n_jobs=1).fit(Z, y)
        st = s.stability_
        out.append({"rep": rep, "J": J, "K": K, "random_state": rs, "best_index": int(s.best_index_),
                    "best_value": float(s.best_params_[pname]), "best_score": float(s.best_score_),
                    "tie_at_top": len(st.best_tied) > 1, "partition_ties": st.n_partitions_with_ties / J,
                    "agreement": st.agreement if J > 1 else None,
                    "partition_choice_sd_log10": (float(np.std(np.log10([values[i] for i in st.partition_choices]),
                                                               ddof=1)) if J > 1 else None),
                    "seconds": time.perf_counter() - t0})
    return out


def holdout_accuracy(model: str, Z, y, Zt, yt) -> np.ndarray:
    """Held-out accuracy of every candidate refit on all tuning data."""
    pname, make, values = MODELS[model]
    return np.array([make().set_params(**{pname: float(v)}).fit(Z, y).score(Zt, yt) for v in values])


def summarise(rows: list[dict[str, Any]], values: np.ndarray, test_acc: np.ndarray) -> dict[str, Any]:
    n = len(rows)
    logv = np.log10([r["best_value"] for r in rows])
    scores = np.array([r["best_score"] for r in rows])
    held = test_acc[[r["best_index"] for r in rows]]
    sd_log = float(np.std(logv, ddof=1)) if n > 1 else float("nan")
    sd_score = float(np.std(scores, ddof=1)) if n > 1 else float("nan")
    counts = Counter(r["best_index"] for r in rows)
    agreements = [r["agreement"] for r in rows if r["agreement"] is not None]
    return {
        "n_tunings": n,
        "sd_log10_param": sd_log, "se_sd_log10_param": sd_log / np.sqrt(2 * (n - 1)) if n > 1 else None,
        "mean_log10_param": float(logv.mean()),
        "sd_best_score": sd_score, "se_sd_best_score": sd_score / np.sqrt(2 * (n - 1)) if n > 1 else None,
        "mean_best_score": float(scores.mean()),
        "mean_heldout_acc": float(held.mean()), "sd_heldout_acc": float(np.std(held, ddof=1)) if n > 1 else None,
        "mean_regret": float(test_acc.max() - held.mean()),
        "share_modal_choice": max(counts.values()) / n,
        "choices": {f"{values[i]:.4g}": c for i, c in sorted(counts.items())},
        "share_tie_at_top": float(np.mean([r["tie_at_top"] for r in rows])),
        "mean_share_partitions_tied": float(np.mean([r["partition_ties"] for r in rows])),
        "mean_agreement": float(np.mean(agreements)) if agreements else None,
        "mean_seconds_per_tuning": float(np.mean([r["seconds"] for r in rows])),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="jkfold.py coling-stability", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="12 tunings per configuration")
    ap.add_argument("--reps", type=int, default=None, help="tunings per configuration (default 60, quick 12)")
    ap.add_argument("--model", choices=sorted(MODELS), default="nb")
    ap.add_argument("--n-jobs", type=int, default=1, help="tunings run in parallel (default 1)")
    ap.add_argument("--seed", type=int, default=2018)
    ap.add_argument("--out", default=None, help="results directory (default benchmarks/results)")
    args = ap.parse_args(argv)
    reps = args.reps if args.reps is not None else (12 if args.quick else 60)
    if reps < 2:
        raise ValueError(f"--reps must be at least 2 (an SD needs two tunings), got {reps}")
    if args.n_jobs < 1:
        raise ValueError(f"--n-jobs must be at least 1, got {args.n_jobs}")

    machine = machine_info()
    t0 = time.perf_counter()
    Z, y, Zt, yt = prepare(args.seed)
    pname, _, values = MODELS[args.model]
    test_acc = holdout_accuracy(args.model, Z, y, Zt, yt)
    print(f"{Z.shape[0]} tuning texts x {Z.shape[1]} tf-idf features, {Zt.shape[0]} held out; "
          f"{args.model}: {pname} in {np.round(values, 4).tolist()}; held-out acc {np.round(test_acc, 3).tolist()}; "
          f"{reps} tunings x {len(CONFIGS)} configs; load {fmt_load(machine['loadavg_at_start'])}", flush=True)

    results = Parallel(n_jobs=args.n_jobs, verbose=0, return_as="generator")(
        delayed(one_rep)(r, args.seed, args.model, Z, y, CONFIGS) for r in range(reps))
    rows: list[dict[str, Any]] = []
    for i, rep_rows in enumerate(results, 1):
        rows.extend(rep_rows)
        if i % max(1, reps // 10) == 0 or i == reps:
            el = time.perf_counter() - t0
            print(f"  {i}/{reps} repetitions, {el:.0f} s elapsed, ~{el / i * (reps - i):.0f} s to go", flush=True)
    total = time.perf_counter() - t0

    summary = []
    for J, K in CONFIGS:
        s = summarise([r for r in rows if (r["J"], r["K"]) == (J, K)], values, test_acc)
        summary.append({"J": J, "K": K, "fits_per_candidate": J * K, **s})
        print(f"J={J} K={K:>2}: SD log10 {pname} {s['sd_log10_param']:.3f}  SD best_score {s['sd_best_score']:.4f}  "
              f"held-out {s['mean_heldout_acc']:.4f}  ties {s['share_tie_at_top']:.2f}  "
              f"agreement {s['mean_agreement'] if s['mean_agreement'] is not None else '-'}")

    payload = {
        "benchmark": NAME,
        "task": {"dataset": "certa.datasets.load_debian_small", "n_tune": int(Z.shape[0]),
                 "n_heldout": int(Zt.shape[0]), "n_features": int(Z.shape[1]),
                 "features": "TfidfVectorizer(sublinear_tf=True) fitted once on the tuning texts, outside the search",
                 "model": args.model, "param": pname, "grid": [float(v) for v in values],
                 "heldout_accuracy_per_candidate": test_acc, "scoring": "accuracy",
                 "param_scale": "log10"},
        "configs": CONFIGS, "reps": reps, "seed": args.seed, "n_jobs": args.n_jobs,
        "summary": summary, "tunings": rows, "total_seconds": total, "machine": machine,
    }
    write_results(NAME, payload, render_md(payload), args.out)
    print(f"total {total:.0f} s")
    return payload


def render_md(p: dict[str, Any]) -> str:
    t = p["task"]
    pname = t["param"]
    rows = []
    for s in p["summary"]:
        agree = "-" if s["mean_agreement"] is None else f"{s['mean_agreement']:.2f}"
        rows.append([f"{s['J']}-{s['K']}", s["fits_per_candidate"],
                     f"{s['sd_log10_param']:.3f} ± {s['se_sd_log10_param']:.3f}",
                     f"{s['sd_best_score']:.4f} ± {s['se_sd_best_score']:.4f}", f"{s['mean_best_score']:.4f}",
                     f"{s['mean_heldout_acc']:.4f}", f"{s['mean_regret']:.4f}", f"{s['share_modal_choice']:.2f}",
                     f"{s['share_tie_at_top']:.2f}", f"{s['mean_share_partitions_tied']:.2f}", agree])
    table = md_table(["J-K", "fits / cand.", f"SD log10 {pname}", "SD accuracy estimate", "mean estimate",
                      "held-out acc. of choice", "regret", "modal share", "ties at top", "partitions tied",
                      "agreement"], rows, align="lrrrrrrrrrr")
    choices = md_table(["J-K"] + [f"{v:.3g}" for v in t["grid"]],
                       [[f"{s['J']}-{s['K']}"] + [s["choices"].get(f"{v:.4g}", 0) for v in t["grid"]]
                        for s in p["summary"]], align="l" + "r" * len(t["grid"]))
    held = ", ".join(f"{v:.3g}: {a:.3f}" for v, a in zip(t["grid"], t["heldout_accuracy_per_candidate"]))
    m = p["machine"]
    model = "MultinomialNB" if t["model"] == "nb" else "LinearSVC"
    return f"""J-K-fold tuning stability on real text (after Moss, Leslie & Rayson, COLING 2018, Table 1):
{p['reps']} independent tunings per configuration, each `JKFoldSearchCV` with its own random
partitions; {model}, {pname} over {len(t['grid'])} log-spaced values; {t['n_tune']} Debian descriptions
(6 sections) for tuning, {t['n_heldout']} held out.

{table}

- SD log10 {pname}: SD (ddof=1) over the tunings of log10 of the chosen {pname}, in decades (grid step
  {np.log10(t['grid'][1] / t['grid'][0]):.2g} decades); ± is its approximate standard error SD / sqrt(2(n-1)).
- SD accuracy estimate: SD over the tunings of `best_score_` (mean accuracy over the J*K folds of the
  chosen setting); mean estimate: its mean.
- held-out acc. of choice: mean accuracy on the {t['n_heldout']} held-out texts of the chosen {pname}, each
  candidate refit on all {t['n_tune']} tuning texts; regret: best candidate's held-out accuracy minus that mean.
- modal share: share of tunings that chose the most frequent value; ties at top: share of tunings whose
  best mean score was an exact tie (broken by grid order); partitions tied: mean share of a tuning's J
  partitions with an exact tie at the top; agreement: mean share of the J partitions whose plain K-fold
  choice equals the J-K-fold choice (`stability_.agreement`, J > 1 only).
- The TF-IDF matrix is computed once, fitted on the {t['n_tune']} tuning texts, outside the search (the
  vectorizer sees the validation folds' texts, not their labels): fine for a variance study, and it
  keeps {p['reps'] * len(p['configs'])} tunings tractable.

Held-out accuracy per candidate: {held}.

How often each value was chosen:

{choices}

Seed {p['seed']}; {p['n_jobs']} parallel tunings; {p['total_seconds']:.0f} s on {m['cpu_count']} shared CPUs
(load average at start {fmt_load(m['loadavg_at_start'])}).
"""
