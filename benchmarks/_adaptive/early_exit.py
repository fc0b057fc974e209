"""Issue 32 item 3: an early exit for clearly worse candidates in the paired rule.

The paired rule's pair e-process (:mod:`certa.strategies._paired`) gathers at most
``((N - 1) / 2) log(1 + N / c) + log 2`` nats from ``N`` differences with the prior precision
``c = 1``: however far behind, a candidate cannot leave before about its sixth row. A mixture of
e-processes over precisions is an e-process too, and so is one whose weights are fixed by the
first row (the contrast's rows come after it). The variants measured here, on the same seeds:

* ``no exit``: the rule before this change (``c = 1`` on every pair);
* ``all pairs``: every contrast pair mixes ``c = 1`` (weight 0.9) with ``c = 0.01`` (0.1);
* ``lower half`` / ``third`` / ``quarter``: only the contrast against a candidate whose first-row
  rank among the survivors is above 1/2 (2/3, 3/4) of their number uses the mixture (weights in brackets);
  the others keep ``c = 1`` alone (``EXIT_MIXTURE``, ``EXIT_RANK_SHARE``).

Tasks: the 12 correlated Gaussian families of ``adaptive.py calibration paired`` (simulated), the
replays of TDSA (8 models, its 500 rows), Debian (11), digits (6) and lemma (250) (the 100 folds of
their cached 20x5 CV pools, ``benchmarks/peers.py``), and ``text``: a real text task with one
clearly worse model, built here (``pool``): the 40 largest sections of the Debian package
descriptions (``/work/shared/data/debian-descriptions.tsv.gz``, short and long description), a
fixed draw of 4,000 texts (seed 32), five TF-IDF pipelines (``LinearSVC`` C=1 and C=0.3, ``SGD``
hinge and log loss, ``MultinomialNB``), accuracy on random 75/25 splits: 40 rows, one split for
every model on a row (real fits, cached in ``results/early_exit_text_pool.json``); a run draws its
rows from them with replacement. :func:`certa.planning.batch.simulate_paired_batch` (the decisions
of ``PairedElimination``), delta 0.05, cap 200 evaluations per candidate. Usage::

    flock /tmp/certa-cpu.lock nice -n 5 python benchmarks/adaptive.py early-exit pool
    flock /tmp/certa-cpu.lock nice -n 5 python benchmarks/adaptive.py early-exit run --runs 1000 --lemma-runs 10
    python benchmarks/adaptive.py early-exit report

``run`` merges into ``results/early_exit.json`` (``--variants`` and ``--tasks`` pick a part, so a long
measurement can be split into chunks).
"""
from __future__ import annotations

import argparse
import json
import math
import time
from typing import Any

import numpy as np
from _common import RESULTS, loadavg, machine_info

import certa.strategies._paired as paired_rule
from certa.planning.batch import ReplayRows, simulate_paired_batch

DELTA = 0.05
DEBIAN = "/work/shared/data/debian-descriptions.tsv.gz"
TEXT_N, TEXT_SECTIONS, TEXT_ROWS, TEXT_SEED = 4000, 40, 40, 32
#: (label, EXIT_MIXTURE, EXIT_RANK_SHARE); the first is the reference
VARIANTS = {
    "no exit": (((1.0, 1.0),), 0.5),
    "all pairs, c 0.01 (0.1)": (((1.0, 0.9), (0.01, 0.1)), 0.0),
    "lower half, c 0.01 (0.2)": (((1.0, 0.8), (0.01, 0.2)), 0.5),
    "lower half, c 0.01 (0.3)": (((1.0, 0.7), (0.01, 0.3)), 0.5),
    "lower half, c 0.03 (0.3)": (((1.0, 0.7), (0.03, 0.3)), 0.5),
    "lower third, c 0.01 (0.3)": (((1.0, 0.7), (0.01, 0.3)), 2 / 3),
    "lower quarter, c 0.01 (0.3)": (((1.0, 0.7), (0.01, 0.3)), 3 / 4),
}
REPLAYS = ("tdsa", "debian", "digits", "lemma", "text")


# ----------------------------------------------------------------------------------------------
# the text task: a pool of real fits
# ----------------------------------------------------------------------------------------------

def text_models() -> dict[str, Any]:
    from sklearn.linear_model import SGDClassifier
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.svm import LinearSVC

    return {"svc C=1": LinearSVC(C=1.0), "svc C=0.3": LinearSVC(C=0.3),
            "sgd hinge": SGDClassifier(alpha=1e-4, random_state=0),
            "sgd log": SGDClassifier(loss="log_loss", alpha=1e-5, random_state=0),
            "multinomial nb": MultinomialNB(alpha=1.0)}


def text_data() -> tuple[np.ndarray, np.ndarray]:
    import pandas as pd

    d = pd.read_csv(DEBIAN, sep="\t", quoting=3, dtype=str, keep_default_na=False)
    top = d["section"].value_counts().index[:TEXT_SECTIONS]
    d = d[d["section"].isin(top)].reset_index(drop=True)
    take = np.random.default_rng(TEXT_SEED).permutation(len(d))[:TEXT_N]
    texts = (d["short"] + " " + d["long"]).to_numpy(dtype=object)[take]
    return texts, d["section"].to_numpy(dtype=object)[take]


def build_text_pool(rows: int = TEXT_ROWS) -> dict[str, Any]:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline

    X, y = text_data()
    models = text_models()
    scores = {m: [] for m in models}
    t0 = time.process_time()
    for r in range(rows):
        tr, te = train_test_split(np.arange(y.size), test_size=0.25, random_state=r)
        for name, model in models.items():
            pipe = make_pipeline(TfidfVectorizer(sublinear_tf=True), model).fit(X[tr], y[tr])
            scores[name].append(float(pipe.score(X[te], y[te])))
        print(r, {m: round(s[-1], 3) for m, s in scores.items()}, flush=True)
    return {"data": f"{DEBIAN}: the {TEXT_SECTIONS} largest sections, {TEXT_N} texts (seed {TEXT_SEED})",
            "split": "train_test_split(test_size=0.25, random_state=row)", "scoring": "accuracy",
            "models": {m: repr(v) for m, v in models.items()}, "scores": scores,
            "cpu_s": time.process_time() - t0, "machine": machine_info()}


def text_rows() -> tuple[list[str], np.ndarray]:
    pool = json.loads((RESULTS / "early_exit_text_pool.json").read_text())
    names = list(pool["scores"])
    return names, np.array([pool["scores"][m] for m in names], dtype=float).T


# ----------------------------------------------------------------------------------------------
# the measurement
# ----------------------------------------------------------------------------------------------

def task_tables() -> dict[str, tuple[list[str], np.ndarray]]:
    from _adaptive.oracle_ratio import task_rows

    out = {t: task_rows(t) for t in REPLAYS if t != "text"}
    out["text"] = text_rows()
    return out


def effects(x: np.ndarray) -> np.ndarray:
    """Each candidate's standardised gap to the best: ``(mu_b - mu_j) / SD(x_b - x_j)`` (0 for the best)."""
    mu = x.mean(axis=0)
    b = int(np.argmax(mu))
    sd = (x[:, [b]] - x).std(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sd > 0, (mu[b] - mu) / sd, 0.0)


def measure(sampler: Any, runs: int, seed: list[int]) -> dict[str, Any]:
    k = np.asarray(sampler.true_means).size
    t0 = time.process_time()
    rep = simulate_paired_batch(sampler, confidence=1 - DELTA, n_runs=runs, max_evals=200 * k, random_state=seed)
    ev = rep.evaluations
    return {"evaluations_mean": float(ev.mean()), "evaluations_se": float(ev.std(ddof=1) / math.sqrt(ev.size)),
            "wrong": int(rep.wrong.sum()), "capped": int(rep.capped.sum()), "runs": runs,
            "rows_per_candidate": rep.counts.mean(axis=0).round(3).tolist(), "cpu_s": time.process_time() - t0}


def run(args: argparse.Namespace) -> None:
    from _adaptive.calibration import paired_families

    path = RESULTS / "early_exit.json"
    out = json.loads(path.read_text()) if path.exists() else {"delta": DELTA, "seed": args.seed, "results": {}}
    gauss = {n: f["sampler"] for n, f in paired_families().items() if "TDSA" not in n}
    tables = task_tables() if set(args.tasks) - {"gaussian"} else {}
    shipped = (paired_rule.EXIT_MIXTURE, paired_rule.EXIT_RANK_SHARE)
    try:
        for label in args.variants:
            paired_rule.EXIT_MIXTURE, paired_rule.EXIT_RANK_SHARE = VARIANTS[label]
            res = out["results"].setdefault(label, {})
            if "gaussian" in args.tasks:
                for i, (name, smp) in enumerate(gauss.items()):
                    res[name] = measure(smp, args.runs, [args.seed, i])
            for j, task in enumerate(t for t in REPLAYS if t in args.tasks):
                names, x = tables[task]
                smp = ReplayRows({n: x[:, c] for c, n in enumerate(names)}, paired=True)
                r = measure(smp, args.lemma_runs if task == "lemma" else args.runs, [args.seed, 100 + REPLAYS.index(task)])
                r.update(candidates=names, effects=effects(x).round(3).tolist(), loadavg=loadavg())
                res[f"{task} replay"] = r
                print(label, task, round(r["evaluations_mean"], 1), flush=True)
    finally:
        paired_rule.EXIT_MIXTURE, paired_rule.EXIT_RANK_SHARE = shipped
    out.update(machine=machine_info(), shipped={"EXIT_MIXTURE": [list(c) for c in shipped[0]],
                                                "EXIT_RANK_SHARE": shipped[1]})
    path.write_text(json.dumps(out, indent=1))
    (RESULTS / "early_exit.md").write_text(markdown(out))
    print(markdown(out))


def markdown(out: dict[str, Any]) -> str:
    res = out["results"]
    base = res.get("no exit", {})
    labels = [v for v in VARIANTS if v in res]
    fams = [f for f in base if all(f in res[v] for v in labels)]
    gau = [f for f in fams if "replay" not in f]
    reps = [f for f in fams if "replay" in f]
    lines = ["| variant | " + " | ".join(reps) + f" | Gaussian families (geometric mean, {len(gau)}) | wrong choices |",
             "|" + "---|" * (len(reps) + 3)]
    for v in labels:
        cells = []
        for f in reps:
            r = res[v][f]
            cells.append(f"{r['evaluations_mean']:.1f} ({r['evaluations_mean'] / base[f]['evaluations_mean']:.3f}x)")
        g = [res[v][f]["evaluations_mean"] / base[f]["evaluations_mean"] for f in gau]
        gm = f"{math.exp(np.mean(np.log(g))):.3f}x" if g else "-"
        wrong = sum(res[v][f]["wrong"] for f in fams)
        total = sum(res[v][f]["runs"] for f in fams)
        lines.append(f"| {v} | " + " | ".join(cells) + f" | {gm} | {wrong} of {total} |")
    runs = {f: base[f]["runs"] for f in reps}
    lines += ["", "Evaluations (mean; in brackets, relative to `no exit`, the same seeds); runs per cell: "
              + ", ".join(f"{f.split()[0]} {n}" for f, n in runs.items())
              + (f", Gaussian families {base[gau[0]]['runs']}" if gau else "")
              + f"; delta {out['delta']}, cap 200 evaluations per candidate. Generated by benchmarks/adaptive.py early-exit.", ""]
    for f in reps:
        eff = np.asarray(base[f]["effects"])
        names = base[f]["candidates"]
        if len(names) <= 12:
            lines += [f"Rows per candidate, {f} (standardised gap to the best in brackets):", "",
                      "| variant | " + " | ".join(f"{n} ({e:.1f})" for n, e in zip(names, eff)) + " |",
                      "|" + "---|" * (len(names) + 1)]
            for v in labels:
                lines.append(f"| {v} | " + " | ".join(f"{c:.2f}" for c in res[v][f]["rows_per_candidate"]) + " |")
        else:
            bins = [(0, 1), (1, 2), (2, 4), (4, 8), (8, 12), (12, math.inf)]
            bins = [(lo, hi) for lo, hi in bins if ((eff > lo) & (eff <= hi)).any()]
            lines += [f"Rows per candidate, {f}, mean by standardised gap to the best (candidates per bin in brackets):", "",
                      "| variant | " + " | ".join(f"({lo}, {hi}] ({int(((eff > lo) & (eff <= hi)).sum())})"
                                                 for lo, hi in bins) + " |",
                      "|" + "---|" * (len(bins) + 1)]
            for v in labels:
                c = np.asarray(res[v][f]["rows_per_candidate"])
                lines.append(f"| {v} | " + " | ".join(f"{c[(eff > lo) & (eff <= hi)].mean():.2f}" for lo, hi in bins) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="adaptive.py early-exit", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="section", required=True)
    sub.add_parser("pool", help="fit the text task's rows (real fits) -> results/early_exit_text_pool.json")
    r = sub.add_parser("run", help="measure the variants -> results/early_exit.{json,md}")
    r.add_argument("--runs", type=int, default=1000)
    r.add_argument("--lemma-runs", type=int, default=10)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    r.add_argument("--tasks", nargs="*", default=["gaussian", *REPLAYS], choices=["gaussian", *REPLAYS])
    sub.add_parser("report", help="write results/early_exit.md again from the stored JSON")
    args = ap.parse_args(argv)
    if args.section == "pool":
        pool = build_text_pool()
        (RESULTS / "early_exit_text_pool.json").write_text(json.dumps(pool, indent=1))
    elif args.section == "run":
        run(args)
    else:
        out = json.loads((RESULTS / "early_exit.json").read_text())
        (RESULTS / "early_exit.md").write_text(markdown(out))
        print(markdown(out))
