"""Is "the challenger beat the default with confidence 0.95" true 95 % of the time? (issue 14's confirmation)

The race of ``ProgressiveSearchCV`` replaces the learner's default setting only if the final
round's challenger beats it in a 5-fold cross-validation over the training part. This script
measures how often that claim is made when it is false, on real data (Dutch lemmatisation,
certa's bundled ``load_nl_lemma``) with a null known by symmetry: two settings of the same
decision tree (``max_features="sqrt"``) that differ only in their random seed have equal
expected accuracy, so every "beat the default" is a false claim. Per run a fresh random subset
of the 70,000 forms is drawn.

Section ``tests``: the same 5-fold CV outcomes judged by three tests at level 0.05, one-sided:
the exact McNemar test on the pooled per-example outcomes (the rule shipped first), the plain
paired t test on the 5 fold accuracies, and Bouckaert & Frank's corrected k-fold t test on them
(the rule shipped now). Section ``procedure``: the whole ``ProgressiveSearchCV`` (race, default
as baseline, the front's confirmation) with the seed grid, counting how often its result says the
default was beaten.

Run: ``OMP_NUM_THREADS=1 nice python benchmarks/progressive.py confirmation-calibration tests --n 4000 16000
--runs 400`` and ``... procedure --n 10000 --runs 200``; ``report`` writes
``benchmarks/results/progressive_confirmation_calibration.md`` from the JSON parts.
"""
from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import numpy as np
from _common import RESULTS, binom_greater_p, loadavg, machine_info, md_section
from scipy import stats as sps
from sklearn.model_selection import StratifiedKFold

from certa.datasets import load_nl_lemma
from certa.learners import tree_pipeline
from certa.search.progressive import ProgressiveSearchCV
from certa.stats.ttests import corrected_repeated_kfold_ttest, paired_ttest

OUT = RESULTS
LEVEL = 0.05


def _null_tree():
    """Two trees that differ only in their seed are equal by symmetry; scikit-learn's tree defaults (Gini,
    ``min_samples_leaf=1``) as in the recorded runs, set here since ``tree_pipeline()`` now has C4.5's."""
    return tree_pipeline().set_params(tree__criterion="gini", tree__min_samples_leaf=1, tree__max_features="sqrt")


def _se(rate: float, n: int) -> float:
    return float(np.sqrt(rate * (1 - rate) / n))


def section_tests(ns: list[int], runs: int, seed: int) -> dict:
    X, y = load_nl_lemma(return_X_y=True)
    out = {"runs": runs, "seed": seed, "rows": []}
    for n in ns:
        rng = np.random.default_rng([seed, n])
        p = {"pooled McNemar": [], "plain fold t": [], "corrected k-fold t (Bouckaert & Frank)": []}
        t0 = time.perf_counter()
        for r in range(runs):
            idx = rng.choice(len(y), n, replace=False)
            Xr, yr = X[idx], y[idx]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)   # classes with fewer than 5 members
                folds = list(StratifiedKFold(5, shuffle=True, random_state=r).split(np.zeros(n), yr))
            acc = np.zeros((2, 5))
            right: list[list[np.ndarray]] = [[], []]
            for k, (tr, te) in enumerate(folds):
                for j, s in enumerate((1, 2)):
                    m = _null_tree().set_params(tree__random_state=s + 1000 * r)
                    c = m.fit(Xr[tr], yr[tr]).predict(Xr[te]) == yr[te]
                    acc[j, k] = c.mean()
                    right[j].append(c)
            a, b = np.concatenate(right[0]), np.concatenate(right[1])
            n_a, n_b = int((a & ~b).sum()), int((~a & b).sum())
            p["pooled McNemar"].append(float(sps.binom.sf(n_a - 1, n_a + n_b, 0.5)) if n_a + n_b else 1.0)
            p["plain fold t"].append(paired_ttest(acc[0], acc[1], alternative="greater").pvalue)
            p["corrected k-fold t (Bouckaert & Frank)"].append(corrected_repeated_kfold_ttest(
                acc[0], acc[1], n_repeats=1, n_splits=5, n_train=0.8 * n, n_test=0.2 * n,
                alternative="greater").pvalue)
        for test, ps in p.items():
            k = int(np.sum(np.asarray(ps) < LEVEL))
            row = {"n": n, "test": test, "runs": runs, "rejections": k, "rate": k / runs, "se": _se(k / runs, runs),
                   "binom_p": binom_greater_p(k, runs, LEVEL), "cpu_s": time.perf_counter() - t0}
            out["rows"].append(row)
            print(json.dumps(row), flush=True)
    return out


def section_procedure(ns: list[int], runs: int, seed: int) -> dict:
    X, y = load_nl_lemma(return_X_y=True)
    out = {"runs": runs, "seed": seed, "rows": []}
    for n in ns:
        rng = np.random.default_rng([seed, n, 1])
        beaten, ran = 0, 0
        t0 = time.perf_counter()
        for r in range(runs):
            idx = rng.choice(len(y), n, replace=False)
            est = _null_tree()
            s = ProgressiveSearchCV(est, {"tree__random_state": [1, 2]}, schedule=[0.25, 0.5, 1.0],
                                    baseline={"tree__random_state": 1}, random_state=r, progress=False, refit=False,
                                    cache_transformers=True).fit(X[idx], y[idx])
            v = s.vs_baseline_
            beaten += bool(v["beat_baseline"])
            ran += v.get("evidence", "").startswith("5-fold")
        row = {"n": n, "runs": runs, "confirmations_run": ran, "beat_default": beaten, "rate": beaten / runs,
               "se": _se(beaten / runs, runs), "binom_p": binom_greater_p(beaten, runs, LEVEL), "cpu_s": time.perf_counter() - t0}
        out["rows"].append(row)
        print(json.dumps(row), flush=True)
    return out


def report() -> str:
    lines = ["# Calibration of the race's confirmation against the default (issue 14)", "",
             "Real data (Dutch lemmatisation, `load_nl_lemma`), a null known by symmetry: two decision trees "
             "(`max_features='sqrt'`) that differ only in their seed, so every rejection is a false "
             "'the challenger beat the default'. Level 0.05, one-sided. binom p: one-sided binomial test of "
             "'rate <= 0.05' (rejects at < 0.01). `benchmarks/progressive.py confirmation-calibration`.", ""]
    tests = OUT / "progressive_confirmation_calibration_tests.json"
    if tests.exists():
        d = json.loads(tests.read_text())
        lines += md_section("The three tests on the same 5-fold CV outcomes", None,
                            ["examples cross-validated", "test", "runs", "false 'beat' (rate, SE)", "binom p"],
                            [[r["n"], r["test"], r["runs"], f"{r['rejections']} ({r['rate']:.3f}, {r['se']:.3f})",
                              f"{r['binom_p']:.3g}"] for r in d["rows"]])
    proc = OUT / "progressive_confirmation_calibration_procedure.json"
    if proc.exists():
        d = json.loads(proc.read_text())
        lines += md_section("The whole ProgressiveSearchCV (race, default as baseline, 5-fold confirmation)",
                            "Schedule [0.25, 0.5, 1.0] of the subset; the train/evaluation split is 80/20, the "
                            "confirmation cross-validates the training part.",
                            ["subset size", "runs", "confirmations run", "said 'beat the default' (rate, SE)", "binom p"],
                            [[r["n"], r["runs"], r["confirmations_run"],
                              f"{r['beat_default']} ({r['rate']:.3f}, {r['se']:.3f})", f"{r['binom_p']:.3g}"]
                             for r in d["rows"]])[:-1]  # (the last section: no blank line after it)
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="progressive.py confirmation-calibration", description=__doc__.splitlines()[0])
    ap.add_argument("section", choices=["tests", "procedure", "report"])
    ap.add_argument("--n", type=int, nargs="+", default=[4000, 16000])
    ap.add_argument("--runs", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.section == "report":
        text = report()
        (OUT / "progressive_confirmation_calibration.md").write_text(text)
        print(text)
        return
    fn = section_tests if args.section == "tests" else section_procedure
    res = fn(args.n, args.runs, args.seed)
    res.update(load_end=loadavg(), machine=machine_info(), omp_num_threads=os.environ.get("OMP_NUM_THREADS", "unset"),
               recorded_at=time.strftime("%Y-%m-%d %H:%M:%S %z"))
    (OUT / f"progressive_confirmation_calibration_{args.section}.json").write_text(json.dumps(res, indent=1))
