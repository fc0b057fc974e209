"""``certa demo``: tune a real text classifier by J-K-fold CV on bundled Debian package descriptions."""
from __future__ import annotations

import json
import math
import time
from typing import Any

import numpy as np

from .stats import corrected_repeated_kfold_ttest

DEMO_GRID = {
    "tfidfvectorizer__sublinear_tf": [True, False],
    "linearsvc__C": [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0],
}


def demo_estimator():
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    return make_pipeline(TfidfVectorizer(min_df=2), LinearSVC(random_state=0))


def corrected_interval(fold_scores: np.ndarray, n_train: int, n_test: int, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean of J*K fold scores with a Nadeau-Bengio corrected standard error and t interval.

    The J*K fold scores are not independent (the training sets overlap), so
    the naive SE ``sd / sqrt(JK)`` is too small; the corrected variance factor
    is ``1/(JK) + n_test/n_train`` (Nadeau & Bengio 2003; Bouckaert & Frank 2004).
    """
    x = np.asarray(fold_scores, dtype=float).ravel()
    # the one-sample case of certa.stats' corrected test: the mean difference from 0 is the mean
    res = corrected_repeated_kfold_ttest(x, np.zeros_like(x), 1, x.size, n_train, n_test, confidence=confidence)
    se = math.sqrt(np.var(x, ddof=1) * res.details["variance_factor"])
    return float(res.estimate), se, float(res.ci[1] - res.estimate)


def run_demo(n_repeats: int = 3, n_splits: int = 5, n_jobs: int = 2, seed: int = 0, store: str | None = None,
             as_json: bool = False, progress: bool = True) -> dict[str, Any]:
    from rich.console import Console
    from rich.table import Table

    from .datasets import load_debian_small
    from .search import JKFoldSearchCV

    console = Console(stderr=as_json)
    data = load_debian_small()
    X, y = data.data, data.target
    n_settings = int(np.prod([len(v) for v in DEMO_GRID.values()]))
    console.print(f"[bold]certa demo[/bold]: choosing a TF-IDF + linear SVM setting for {len(X)} Debian package "
                  f"descriptions ({len(data.target_names)} sections) by {n_repeats}-{n_splits}-fold CV: "
                  f"{n_settings} settings x {n_repeats * n_splits} folds = {n_settings * n_repeats * n_splits} fits "
                  f"on {n_jobs} worker(s), seed {seed}" + (f", store {store}" if store else ""))
    t0 = time.perf_counter()
    search = JKFoldSearchCV(demo_estimator(), DEMO_GRID, n_splits=n_splits, n_repeats=n_repeats, n_jobs=n_jobs,
                            random_state=seed, store=store, refit=False, progress=progress and not as_json)
    search.fit(X, y)
    elapsed = time.perf_counter() - t0
    sel = search.selection_
    scores = sel.result["scores"][search.best_index_]
    n_test = len(X) // n_splits
    mean, se, half = corrected_interval(scores, len(X) - n_test, n_test)
    stab = search.stability_
    order = np.argsort(search.cv_results_["rank_test_score"], kind="stable")[:5]
    top = [{"rank": int(search.cv_results_["rank_test_score"][i]), "setting": sel.candidates[i].name,
            "params": dict(sel.candidates[i].params), "mean": float(search.cv_results_["mean_test_score"][i]),
            "sd_over_folds": float(search.cv_results_["std_test_score"][i])} for i in order]
    report = {
        "dataset": "debian_small", "n_samples": len(X), "n_repeats": n_repeats, "n_splits": n_splits,
        "seed": seed, "n_jobs": n_jobs, "seconds": round(elapsed, 2), "n_evaluations": sel.n_evaluations,
        "n_reused_from_store": sel.n_reused, "n_failed": len(sel.failures),
        "best_params": search.best_params_, "best_score": search.best_score_,
        "corrected_se": se, "ci95": [mean - half, mean + half],
        "stability": stab.to_dict(), "top_settings": top,
    }
    if as_json:
        print(json.dumps(report, indent=2, default=float))
        return report

    table = Table(title="Top settings (mean accuracy over all folds)")
    for col in ("rank", "setting", "mean", "SD over folds"):
        table.add_column(col)
    for row in top:  # the same rows as "top_settings" in --json
        table.add_row(str(row["rank"]), row["setting"], f"{row['mean']:.4f}", f"{row['sd_over_folds']:.4f}")
    console.print(table)
    console.print(f"[bold green]Chosen[/bold green]: {sel.candidates[search.best_index_].name}")
    console.print(f"Estimated accuracy: {mean:.4f} ± {half:.4f} (95% interval, t with the Nadeau-Bengio corrected "
                  f"SE {se:.4f} over {n_repeats * n_splits} folds)")
    console.print("[bold]How stable is this choice?[/bold]")
    console.print(str(stab), markup=False, highlight=False)
    if len(sel.failures):
        console.print(f"[red]{len(sel.failures)} evaluations failed[/red]; see the store or selection_.failures")
    console.print(f"{sel.n_evaluations} evaluations ({sel.n_reused} reused from the store) in {elapsed:.1f} s")
    return report
