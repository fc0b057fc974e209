"""Does certa's confirmation pick the truly best of an Optuna study's top trials more often than
``study.best_trial``, and at what cost in extra fits? (issue 25 item 2)

Task: scikit-learn's digits (1,797 images), an RBF SVC over a 6 x 5 grid of ``C`` and ``gamma``.
For each seed an Optuna study (TPE, 30 trials) scores each trial on **one small, fixed validation
split** of the seed (train on a random 80 %, score on 180 of the other images): a noisy objective,
as a user with one validation split has. Then, on the study's top 5 distinct settings:

- **Optuna** ``study.best_trial`` (0 extra fits);
- **5-fold CV**: re-score the top 5 by stratified 5-fold CV and take the best (25 extra fits, the
  common manual check);
- **certa** ``confirm_best(study, ..., top_k=5, confidence=0.95, tolerance=TOL)``: fresh random
  80/20 splits until the choice is within TOL of the best of the 5 with confidence 0.95; paired
  (the default: every candidate left on the same split per row) and unpaired (``paired=False``:
  top-two Thompson sampling, each evaluation its own split).

Ground truth (cached in ``benchmarks/results/optuna_confirm_truth.json``): each setting's mean
accuracy over ``TRUTH_SPLITS`` random 80/20 splits of the whole data set (the same splits for
every setting), i.e. the expected score of a model trained on 80 %. "True best" is the best of
the top 5 by that mean; regret is its true accuracy minus the chosen one's.

Run: ``flock /tmp/certa-cpu.lock python benchmarks/integrations.py optuna-confirm [--seeds 20] [--part i/n]``
(parts write partial JSON; ``--merge`` writes the tables from every part).
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
import optuna
from _common import RESULTS, loadavg, machine_info, md_table, write_results
from sklearn.datasets import load_digits
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC

from certa.integrations.optuna import confirm_best, top_trials

C_GRID = [0.3, 1.0, 3.0, 10.0, 30.0, 100.0]
GAMMA_GRID = [0.005, 0.01, 0.02, 0.03, 0.05]
N_TRIALS, TOP_K, VAL_SIZE, TEST_FRACTION = 30, 5, 180, 0.2
CONFIDENCE, TOL = 0.95, 0.005
TRUTH_SPLITS = 60
TRUTH = RESULTS / "optuna_confirm_truth.json"
NAME = "optuna_confirm"

optuna.logging.set_verbosity(optuna.logging.WARNING)


def data():
    X, y = load_digits(return_X_y=True)
    return X / 16.0, y


def fit_score(params, X_tr, y_tr, X_te, y_te) -> float:
    return float(SVC(C=params["C"], gamma=params["gamma"]).fit(X_tr, y_tr).score(X_te, y_te))


def split80(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    idx = np.random.default_rng(seed).permutation(n)
    cut = int(round(n * (1 - TEST_FRACTION)))
    return idx[:cut], idx[cut:]


def key(params) -> str:
    return f"C={params['C']:g},gamma={params['gamma']:g}"


def ground_truth(X, y) -> dict[str, float]:
    """Mean accuracy of every setting over TRUTH_SPLITS random 80/20 splits (cached)."""
    settings = {"C_GRID": C_GRID, "GAMMA_GRID": GAMMA_GRID, "TRUTH_SPLITS": TRUTH_SPLITS,
                "TEST_FRACTION": TEST_FRACTION}
    if TRUTH.exists():
        cached = json.loads(TRUTH.read_text())
        if cached.get("settings") == settings:
            return cached["mean"]
    t0, scores = time.time(), {}
    for c in C_GRID:
        for g in GAMMA_GRID:
            p = {"C": c, "gamma": g}
            s = []
            for r in range(TRUTH_SPLITS):
                tr, te = split80(len(y), 10_000 + r)
                s.append(fit_score(p, X[tr], y[tr], X[te], y[te]))
            scores[key(p)] = s
        print(f"truth: C={c} done ({time.time() - t0:.0f} s)", flush=True)
    mean = {k: float(np.mean(v)) for k, v in scores.items()}
    TRUTH.write_text(json.dumps({"settings": settings, "mean": mean, "scores": scores,
                                 "seconds": time.time() - t0, "loadavg": loadavg()}, indent=1))
    return mean


def one_seed(seed: int, X, y, truth: dict[str, float]) -> dict:
    n = len(y)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    cut = int(round(n * (1 - TEST_FRACTION)))
    tr, val = perm[:cut], perm[cut:cut + VAL_SIZE]          # one fixed, small validation split per study
    cache: dict[str, float] = {}

    def objective(trial):
        p = {"C": trial.suggest_categorical("C", C_GRID), "gamma": trial.suggest_categorical("gamma", GAMMA_GRID)}
        k = key(p)
        if k not in cache:   # the same setting on the same split: the same (deterministic) score
            cache[k] = fit_score(p, X[tr], y[tr], X[val], y[val])
        return cache[k]

    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=seed))
    study.optimize(objective, n_trials=N_TRIALS)

    def evaluate(params, train, test, s):
        (X_tr, y_tr), (X_te, y_te) = train, test
        return fit_score(params, X_tr, y_tr, X_te, y_te)

    t0 = time.time()
    conf = confirm_best(study, evaluate, (X, y), top_k=TOP_K, confidence=CONFIDENCE, tolerance=TOL,
                        random_state=seed, progress=False)
    certa_seconds = time.time() - t0
    unpaired = confirm_best(study, evaluate, (X, y), top_k=TOP_K, confidence=CONFIDENCE, tolerance=TOL,
                            paired=False, random_state=seed, progress=False)
    top = [dict(t.params) for t in top_trials(study, TOP_K)]
    true_top = [truth[key(p)] for p in top]
    best_true = max(true_top)

    # anchor: re-score the top 5 by stratified 5-fold CV, take the best
    skf = StratifiedKFold(5, shuffle=True, random_state=seed)
    cv = [np.mean([fit_score(p, X[a], y[a], X[b], y[b]) for a, b in skf.split(X, y)]) for p in top]
    choices = {"optuna": dict(study.best_trial.params), "cv5": top[int(np.argmax(cv))], "certa": conf.best_params,
               "certa_unpaired": unpaired.best_params}
    fits = {"optuna": 0, "cv5": 5 * len(top), "certa": conf.n_evaluations, "certa_unpaired": unpaired.n_evaluations}
    out = {"seed": seed, "top": [key(p) for p in top], "true_top": true_top, "best_true": best_true,
           "global_best_true": max(truth.values()), "certa_confidence": conf.confidence,
           "certa_target_reached": conf.target_reached, "certa_seconds": certa_seconds,
           "certa_unpaired_confidence": unpaired.confidence,
           "certa_unpaired_target_reached": unpaired.target_reached,
           "certa_paired": bool(conf.selection.strategy.get("paired", False)), "loadavg": loadavg()}
    for m, p in choices.items():
        t = truth[key(p)]
        out[m] = {"choice": key(p), "true": t, "regret": best_true - t, "is_true_best": t == best_true,
                  "within_tol": best_true - t <= TOL, "extra_fits": fits[m]}
    return out


def summarize(runs: list[dict], truth: dict[str, float], info: dict) -> tuple[dict, str]:
    n = len(runs)
    rows, stats = [], {}
    for m, label in (("optuna", "Optuna `best_trial`"), ("cv5", "top 5 re-scored by 5-fold CV"),
                     ("certa", f"certa `confirm_best` (0.95, tolerance {TOL:g}), paired (default)"),
                     ("certa_unpaired", "certa `confirm_best(..., paired=False)`")):
        best = np.mean([r[m]["is_true_best"] for r in runs])
        within = np.mean([r[m]["within_tol"] for r in runs])
        regret = np.mean([r[m]["regret"] for r in runs])
        fits = np.mean([r[m]["extra_fits"] for r in runs])
        stats[m] = {"true_best": float(best), "within_tol": float(within), "mean_regret": float(regret),
                    "max_regret": float(np.max([r[m]["regret"] for r in runs])), "mean_extra_fits": float(fits)}
        rows.append([label, f"{best:.0%} ({int(round(best * n))}/{n})", f"{within:.0%}", f"{regret * 100:.2f}",
                     f"{stats[m]['max_regret'] * 100:.2f}", f"{fits:.0f}"])
    reached = np.mean([r["certa_target_reached"] for r in runs])
    stats["certa"]["target_reached"] = float(reached)
    stats["certa"]["mean_confidence"] = float(np.mean([r["certa_confidence"] for r in runs]))
    stats["certa_unpaired"]["target_reached"] = float(np.mean([r["certa_unpaired_target_reached"] for r in runs]))
    stats["certa_unpaired"]["mean_confidence"] = float(np.mean([r["certa_unpaired_confidence"] for r in runs]))
    stats["certa_fits_over_cv5"] = stats["certa"]["mean_extra_fits"] / stats["cv5"]["mean_extra_fits"]
    table = md_table(["choice", "true best of the top 5", f"within {TOL:g} of it", "mean regret (acc. points)",
                      "max regret", "extra fits (mean)"], rows)
    spread = np.mean([max(r["true_top"]) - min(r["true_top"]) for r in runs])
    md = (f"# Confirming an Optuna study's best trial (digits, RBF SVC, {n} seeds)\n\n"
          f"Each study: TPE, {N_TRIALS} trials, every trial scored on one fixed validation split of "
          f"{VAL_SIZE} images; the top {TOP_K} distinct settings re-checked. Truth: mean accuracy over "
          f"{TRUTH_SPLITS} random 80/20 splits per setting. True accuracies of the top 5 span "
          f"{spread * 100:.2f} points on average.\n\n" + table + "\n\n"
          f"certa (paired) reached its target in {reached:.0%} of the seeds (mean stated confidence "
          f"{stats['certa']['mean_confidence']:.3f}; unpaired: {stats['certa_unpaired']['target_reached']:.0%}, "
          f"{stats['certa_unpaired']['mean_confidence']:.3f}); its extra fits are "
          f"{stats['certa_fits_over_cv5']:.2f}x those of the 5-fold re-check (unpaired: "
          f"{stats['certa_unpaired']['mean_extra_fits'] / stats['cv5']['mean_extra_fits']:.2f}x). "
          f"Load average at the start: "
          f"{info.get('loadavg_at_start')} (fit counts do not depend on load).\n")
    return stats, md


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="integrations.py optuna-confirm", description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--part", default="0/1", help="i/n: run every n-th seed starting at i")
    ap.add_argument("--merge", action="store_true", help="write the tables from the saved parts")
    args = ap.parse_args(argv)
    X, y = data()
    truth = ground_truth(X, y)
    i, n = (int(v) for v in args.part.split("/"))
    info = machine_info()
    if not args.merge:
        runs = []
        path = RESULTS / f"{NAME}_part{i}of{n}.json"
        for seed in range(i, args.seeds, n):
            r = one_seed(seed, X, y, truth)
            runs.append(r)
            print(f"seed {seed}: optuna {r['optuna']['choice']} ({r['optuna']['regret']*100:.2f}), "
                  f"certa {r['certa']['choice']} ({r['certa']['regret']*100:.2f}, {r['certa']['extra_fits']} fits, "
                  f"conf {r['certa_confidence']:.3f}), unpaired {r['certa_unpaired']['extra_fits']} fits, "
                  f"cv5 {r['cv5']['choice']}", flush=True)
            path.write_text(json.dumps({"runs": runs, "info": info}, indent=1, default=float))
        if n > 1:
            return
    runs = []
    for p in sorted(RESULTS.glob(f"{NAME}_part*of*.json")):
        runs += json.loads(p.read_text())["runs"]
    runs.sort(key=lambda r: r["seed"])
    stats, md = summarize(runs, truth, info)
    write_results(NAME, {"settings": {"C": C_GRID, "gamma": GAMMA_GRID, "n_trials": N_TRIALS, "top_k": TOP_K,
                                      "val_size": VAL_SIZE, "confidence": CONFIDENCE, "tolerance": TOL,
                                      "truth_splits": TRUTH_SPLITS}, "summary": stats, "runs": runs,
                         "machine": info}, md)
    print(md)
