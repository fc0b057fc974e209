"""Size (false-rejection rate) of certa's significance tests under a true null.

The data are SIMULATED. Each repetition draws a fresh data set D of ``n_samples``
examples: a balanced binary label y and 2 * p Gaussian features, X | y ~ N((2y-1) *
shift/2 * 1, I). Candidate A is a nearest-centroid classifier on features 1..p,
candidate B the same classifier on features p+1..2p. The two feature groups are
exchangeable, so A and B have exactly the same expected accuracy at every training-set
size: the null hypothesis "the two learning algorithms perform equally well" is true by
construction (it is the same randomised learner, "nearest centroid on a random half of
the features", run with two different seeds). On any single D one of them is luckier,
and a test that treats the folds of D as independent mistakes that luck for a
difference (the point of the CSE 446 notes about overfitting to D).

Per repetition, each test gets its own evaluation design on the same D:

- naive paired t and corrected repeated k-fold t (Bouckaert & Frank 2004) on the
  J*K fold accuracies of J x K-fold CV (default 10 x 10);
- paired t and exact sign-flip permutation test on the K fold accuracies of one K-fold
  CV (the first repetition);
- naive resampled t and corrected resampled t (Nadeau & Bengio 2003) on 15 random
  2/3-1/3 train/test splits;
- Dietterich's 5x2cv t test and Alpaydin's 5x2cv F test;
- McNemar's exact test and the paired bootstrap 95 % CI (per-example correctness,
  999 resamples) on one 2/3-1/3 holdout split.

Reports each test's rejection rate at alpha = 0.05 with its binomial standard error
``sqrt(r (1 - r) / R)`` over R repetitions, and writes
``benchmarks/results/stats_size.json`` and ``.md``.

Run: ``python3 benchmarks/stats.py size`` (5,000 repetitions, about two minutes on one
core) or ``--quick`` (300 repetitions).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from certa import stats

ALPHA = 0.05


@dataclass(frozen=True)
class Config:
    n_samples: int = 200
    n_features_per_group: int = 5
    shift: float = 0.6  # class-mean distance per feature; Bayes accuracy ~0.75 per group
    n_repeats: int = 10  # J
    n_splits: int = 10  # K
    n_resampled_splits: int = 15  # Nadeau & Bengio random splits
    test_fraction: float = 1 / 3
    bootstrap_resamples: int = 999


TESTS = {
    "naive_t_JxK": "paired t over the J*K folds of JxK CV (naive)",
    "corrected_t_JxK": "corrected repeated k-fold t over JxK CV (Bouckaert & Frank)",
    "paired_t_K": "paired t over the K folds of one K-fold CV",
    "permutation_K": "exact sign-flip permutation test over the K folds of one K-fold CV",
    "naive_resampled_t": "paired t over 15 random 2/3-1/3 splits (naive resampled t)",
    "corrected_resampled_t": "corrected resampled t over 15 random splits (Nadeau & Bengio)",
    "ttest_5x2cv": "5x2cv paired t (Dietterich)",
    "ftest_5x2cv": "combined 5x2cv F (Alpaydin)",
    "mcnemar_exact": "McNemar exact on one 2/3-1/3 holdout",
    "bootstrap_holdout": "paired bootstrap 95% CI excludes 0 (per-example, one holdout)",
}
FAST_TESTS = ("naive_t_JxK", "corrected_t_JxK")


def simulate_dataset(rng: np.random.Generator, cfg: Config) -> tuple[np.ndarray, np.ndarray]:
    """Balanced binary labels and 2p Gaussian features shifted by +-shift/2."""
    n, p = cfg.n_samples, cfg.n_features_per_group
    y = rng.permutation(np.arange(n) % 2)
    X = rng.standard_normal((n, 2 * p)) + ((2 * y - 1) * cfg.shift / 2)[:, None]
    return X, y


def nearest_centroid_correct(X: np.ndarray, y: np.ndarray, train: np.ndarray) -> np.ndarray:
    """Correctness of a nearest-centroid classifier for many train/test splits at once.

    ``train`` is a boolean (F, n) matrix, one row per split. Returns a boolean (F, n)
    matrix: whether each example is classified correctly by the model trained on row
    f's training set (meaningful only where ``train`` is False). Same rule as
    :class:`sklearn.neighbors.NearestCentroid` (Euclidean; ties to the first class),
    vectorised over splits; tests/test_stats_size.py checks the two agree.
    """
    t = train.astype(float)
    scores = []
    for c in (0, 1):
        in_c = (y == c).astype(float)
        mu = (t * in_c) @ X / (t @ in_c)[:, None]  # (F, p) class centroids
        # ||x - mu||^2 up to the ||x||^2 term shared by both classes
        scores.append(-2.0 * mu @ X.T + np.sum(mu**2, axis=1)[:, None])
    pred = (scores[1] < scores[0]).astype(int)
    return pred == y[None, :]


def _accuracies(X: np.ndarray, y: np.ndarray, train: np.ndarray, p: int):
    """Per-split test accuracies (and correctness) of candidates A and B."""
    test = ~train
    out = []
    for cols in (slice(0, p), slice(p, 2 * p)):
        correct = nearest_centroid_correct(X[:, cols], y, train)
        out.append(((correct & test).sum(axis=1) / test.sum(axis=1), correct))
    return out


def _kfold_masks(rng: np.random.Generator, n: int, n_repeats: int, n_splits: int) -> np.ndarray:
    """(J*K, n) training masks of J random K-fold partitions (repetition-major)."""
    masks = np.ones((n_repeats * n_splits, n), dtype=bool)
    for j in range(n_repeats):
        for k, idx in enumerate(np.array_split(rng.permutation(n), n_splits)):
            masks[j * n_splits + k, idx] = False
    return masks


def _split_masks(rng: np.random.Generator, n: int, count: int, n_test: int) -> np.ndarray:
    masks = np.ones((count, n), dtype=bool)
    for i in range(count):
        masks[i, rng.permutation(n)[:n_test]] = False
    return masks


def one_repetition(seed: np.random.SeedSequence, cfg: Config, tests=tuple(TESTS)) -> dict:
    """p-values (bootstrap: 0 if the CI excludes 0 else 1) of the requested tests on one D.

    Also ``"_accuracy"``: the mean JxK-CV accuracies of A and B, when computed.
    """
    rng = np.random.default_rng(seed)
    X, y = simulate_dataset(rng, cfg)
    n, p = cfg.n_samples, cfg.n_features_per_group
    J, K = cfg.n_repeats, cfg.n_splits
    res: dict[str, float] = {}
    if {"naive_t_JxK", "corrected_t_JxK", "paired_t_K", "permutation_K"} & set(tests):
        masks = _kfold_masks(rng, n, J, K)
        (acc_a, _), (acc_b, _) = _accuracies(X, y, masks, p)
        n_test = n / K
        res["_accuracy"] = (float(acc_a.mean()), float(acc_b.mean()))
        if "naive_t_JxK" in tests:
            res["naive_t_JxK"] = stats.paired_ttest(acc_a, acc_b).pvalue
        if "corrected_t_JxK" in tests:
            res["corrected_t_JxK"] = stats.corrected_repeated_kfold_ttest(
                acc_a, acc_b, J, K, n_train=n - n_test, n_test=n_test
            ).pvalue
        if "paired_t_K" in tests:
            res["paired_t_K"] = stats.paired_ttest(acc_a[:K], acc_b[:K]).pvalue
        if "permutation_K" in tests:
            res["permutation_K"] = stats.paired_permutation_test(
                acc_a[:K], acc_b[:K], method="exact"
            ).pvalue
    n_test = int(round(cfg.test_fraction * n))
    if {"naive_resampled_t", "corrected_resampled_t"} & set(tests):
        masks = _split_masks(rng, n, cfg.n_resampled_splits, n_test)
        (acc_a, _), (acc_b, _) = _accuracies(X, y, masks, p)
        if "naive_resampled_t" in tests:
            res["naive_resampled_t"] = stats.paired_ttest(acc_a, acc_b).pvalue
        if "corrected_resampled_t" in tests:
            res["corrected_resampled_t"] = stats.corrected_resampled_ttest(
                acc_a, acc_b, n_train=n - n_test, n_test=n_test
            ).pvalue
    if {"ttest_5x2cv", "ftest_5x2cv"} & set(tests):
        masks = _kfold_masks(rng, n, 5, 2)
        (acc_a, _), (acc_b, _) = _accuracies(X, y, masks, p)
        diffs = (acc_a - acc_b).reshape(5, 2)
        if "ttest_5x2cv" in tests:
            res["ttest_5x2cv"] = stats.ttest_5x2cv(diffs).pvalue
        if "ftest_5x2cv" in tests:
            res["ftest_5x2cv"] = stats.ftest_5x2cv(diffs).pvalue
    if {"mcnemar_exact", "bootstrap_holdout"} & set(tests):
        masks = _split_masks(rng, n, 1, n_test)
        (_, ok_a), (_, ok_b) = _accuracies(X, y, masks, p)
        test = ~masks[0]
        ca, cb = ok_a[0, test], ok_b[0, test]
        if "mcnemar_exact" in tests:
            table = [
                [int(np.sum(ca & cb)), int(np.sum(ca & ~cb))],
                [int(np.sum(~ca & cb)), int(np.sum(~ca & ~cb))],
            ]
            res["mcnemar_exact"] = stats.mcnemar_table(table).pvalue
        if "bootstrap_holdout" in tests:
            ci = stats.paired_bootstrap_ci(
                ca.astype(float),
                cb.astype(float),
                n_resamples=cfg.bootstrap_resamples,
                random_state=rng,
            )
            res["bootstrap_holdout"] = 1.0 if ci.contains(0.0) else 0.0
    return res


def run(reps: int, seed: int = 0, cfg: Config = Config(), tests=tuple(TESTS)) -> dict:
    """Rejection rate at ALPHA and its binomial standard error for each test."""
    children = np.random.SeedSequence(seed).spawn(reps)
    rejections = {name: 0 for name in tests}
    accuracies = []
    for child in children:
        res = one_repetition(child, cfg, tests)
        if "_accuracy" in res:
            accuracies.append(res.pop("_accuracy"))
        for name, pv in res.items():
            rejections[name] += pv <= ALPHA
    out = {}
    for name in tests:
        rate = rejections[name] / reps
        out[name] = {
            "description": TESTS[name],
            "rejections": int(rejections[name]),
            "rate": rate,
            "se": math.sqrt(rate * (1 - rate) / reps),
        }
    if accuracies:
        acc = np.array(accuracies)
        diff = acc[:, 0] - acc[:, 1]
        out["_accuracy"] = {
            "mean_a": float(acc[:, 0].mean()),
            "mean_b": float(acc[:, 1].mean()),
            "mean_difference": float(diff.mean()),
            "se_difference": float(diff.std(ddof=1) / np.sqrt(diff.size)) if diff.size > 1 else None,
        }
    return out


def to_markdown(result: dict) -> str:
    reps = result["repetitions"]
    se0 = math.sqrt(ALPHA * (1 - ALPHA) / reps)
    lines = [
        f"Rejection rate at alpha = {ALPHA} under a true null, {reps} simulated data sets "
        f"(seed {result['seed']}); SE = binomial standard error of the rate. A correct "
        f"test stays at or below {ALPHA}: above {ALPHA + 3 * se0:.3f} "
        f"(= {ALPHA} + 3 SE at {ALPHA}) is clear over-rejection.",
        "",
        "| test | design | rejection rate | SE |",
        "|---|---|---:|---:|",
    ]
    for name, r in result["rates"].items():
        if name.startswith("_"):
            continue
        flag = " **over-rejects**" if r["rate"] > ALPHA + 3 * se0 else ""
        lines.append(f"| `{name}` | {r['description']} | {r['rate']:.3f}{flag} | {r['se']:.3f} |")
    cfg = result["config"]
    acc = result["rates"]["_accuracy"]
    lines += [
        "",
        f"Simulated data: n = {cfg['n_samples']}, two exchangeable groups of "
        f"{cfg['n_features_per_group']} Gaussian features (class shift {cfg['shift']}); "
        f"candidates = nearest centroid on group 1 vs group 2; "
        f"J x K = {cfg['n_repeats']} x {cfg['n_splits']}. "
        f"Mean JxK-CV accuracy over the data sets: A {acc['mean_a']:.4f}, "
        f"B {acc['mean_b']:.4f}, difference {acc['mean_difference']:+.4f} "
        f"(SE {acc['se_difference']:.4f}): "
        + (
            "consistent with equal accuracy, as the null requires. "
            if abs(acc["mean_difference"]) <= 3 * acc["se_difference"]
            else "WARNING: the candidates' accuracies differ, the null may not hold. "
        )
        + f"Runtime {result['seconds']:.0f} s on one core.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(prog="stats.py size", description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5000, help="repetitions (default 5000)")
    ap.add_argument("--quick", action="store_true", help="300 repetitions, for a smoke run")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--out-dir", type=Path, default=Path(os.environ.get("CERTA_BENCH_RESULTS") or ROOT / "benchmarks" / "results"))
    args = ap.parse_args(argv)
    reps = 300 if args.quick else args.reps
    if reps < 1:
        ap.error("--reps must be >= 1")
    cfg = Config()
    t0 = time.perf_counter()
    rates = run(reps, args.seed, cfg)
    seconds = time.perf_counter() - t0
    result = {
        "alpha": ALPHA,
        "repetitions": reps,
        "seed": args.seed,
        "config": asdict(cfg),
        "rates": rates,
        "seconds": seconds,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "note": "simulated data; the null (equal expected accuracy) holds by symmetry",
    }
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "stats_size.json").write_text(json.dumps(result, indent=2) + "\n")
    md = to_markdown(result)
    (args.out_dir / "stats_size.md").write_text(md)
    print(md)
    return result
