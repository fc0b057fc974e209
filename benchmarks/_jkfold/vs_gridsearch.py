"""Wall time of certa.JKFoldSearchCV against GridSearchCV(cv=RepeatedStratifiedKFold) on the same fits.

Task: ``certa.datasets.load_debian_small()`` (3,000 real Debian package descriptions, 6
sections). Model: ``TfidfVectorizer -> LinearSVC(random_state=0)``; grid: ``sublinear_tf``
in {False, True} x ``C`` in {0.1, 0.3, 1, 3} (8 candidates); J = 3 repeats of K = 5
stratified folds (120 fits per search), scoring accuracy, ``refit=False`` for both tools (the
refit is the same single fit for both and is not what is compared).

Rows (each timed at n_jobs = 1 and n_jobs = 2):

- ``sklearn``: ``GridSearchCV(pipe, grid, cv=RepeatedStratifiedKFold(5, 3, random_state=s))``.
- ``certa``: ``JKFoldSearchCV(pipe, grid, n_splits=5, n_repeats=3, random_state=s)``.
- ``sklearn+memory`` / ``certa+memory``: the same pipeline built with
  ``Pipeline(memory=joblib.Memory(<fresh temp dir>))``, scikit-learn's own way to fit the
  vectorizer once per (fold, vectorizer setting) instead of once per (fold, candidate).
  The cache directory is new and empty for every timed run.
- ``certa+cache``: only if ``JKFoldSearchCV`` has a ``cache_transformers`` parameter (or
  another parameter whose name contains ``cache``): that option set to True. Skipped
  otherwise (and said so in the results).

Protocol: one untimed warm-up of every row at n_jobs = 2 (starts the process pools), then
``--repeats`` rounds; in each round every (n_jobs, row) pair is timed once, the order of the
rows rotated from round to round so no tool always runs first or after the same neighbour.
Reported: median wall time per row, the ratio of medians certa / sklearn, and the median of
the per-round ratios (a paired measure that tolerates load drift between rounds). The load
average before and after every run is kept in the JSON, since the 2 cores are shared.

Every run's mean test scores are checked against the first sklearn run: the script raises
``AssertionError`` if any candidate's mean test score differs by more than 1e-12.

Run: ``python3 benchmarks/jkfold.py vs-gridsearch`` (3 rounds, ~10 min on 2 shared cores) or
``--quick`` (4 candidates, 1 round). ``--profile`` adds a cProfile of certa's main process.
"""

from __future__ import annotations

import argparse
import cProfile
import inspect
import io
import pstats
import shutil
import tempfile
import time
from typing import Any

import numpy as np
from _common import fmt_load, machine_info, md_table, median, timed, write_results
from joblib import Memory
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import GridSearchCV, RepeatedStratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

import certa
from certa.datasets import load_debian_small

TOL = 1e-12
NAME = "jkfold_vs_gridsearch"


def cache_option() -> str | None:
    """Name of JKFoldSearchCV's transformer-cache option, if it has one."""
    params = inspect.signature(certa.JKFoldSearchCV.__init__).parameters
    if "cache_transformers" in params:
        return "cache_transformers"
    named = [p for p in params if "cache" in p.lower()]
    return named[0] if named else None


def make_grid(quick: bool) -> dict[str, list]:
    Cs = [0.1, 1.0] if quick else [0.1, 0.3, 1.0, 3.0]
    return {"tfidfvectorizer__sublinear_tf": [False, True], "linearsvc__C": Cs}


def make_pipe(memory: str | None = None):
    return make_pipeline(TfidfVectorizer(), LinearSVC(random_state=0), memory=memory)


class SleepClassifier(ClassifierMixin, BaseEstimator):
    """A classifier whose fit just sleeps ``duration`` seconds: isolates scheduling overhead.

    Sleeping uses no CPU, so the gap between a tool's wall time and the total sleep / n_jobs
    is the tool's own overhead (data shipping, hashing, scheduling), little affected by the
    other jobs on the machine.
    """

    def __init__(self, duration: float = 0.05) -> None:
        self.duration = duration

    def fit(self, X, y):
        time.sleep(self.duration)
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


#: One slow candidate and seven fast ones, as with a grid over C (large C fits slowly).
SLEEP_GRID = {"duration": [0.3] + [0.05] * 7}


class Bench:
    """Builds and runs one row of the benchmark."""

    def __init__(self, X, y, grid, J: int, K: int, seed: int) -> None:
        self.X, self.y, self.grid, self.J, self.K, self.seed = X, y, grid, J, K, seed
        self.cache_opt = cache_option()

    def rows(self) -> list[str]:
        rows = ["sklearn", "certa", "sklearn+memory", "certa+memory"]
        if self.cache_opt is not None:
            rows.append("certa+cache")
        return rows

    def run(self, row: str, n_jobs: int, grid: dict | None = None, sleep: bool = False) -> dict[str, Any]:
        grid = (SLEEP_GRID if sleep else self.grid) if grid is None else grid
        tmp = tempfile.mkdtemp(prefix="certa-bench-") if row.endswith("+memory") else None
        try:
            pipe = SleepClassifier() if sleep else make_pipe(Memory(tmp, verbose=0) if tmp else None)
            if row.startswith("sklearn"):
                cv = RepeatedStratifiedKFold(n_splits=self.K, n_repeats=self.J, random_state=self.seed)
                search = GridSearchCV(pipe, grid, cv=cv, scoring="accuracy", n_jobs=n_jobs, refit=False)
            else:
                extra = {self.cache_opt: True} if row == "certa+cache" else {}
                search = certa.JKFoldSearchCV(pipe, grid, n_splits=self.K, n_repeats=self.J,
                                              scoring="accuracy", n_jobs=n_jobs, random_state=self.seed,
                                              refit=False, **extra)
            cpu0 = time.process_time()
            _, seconds, before, after = timed(lambda: search.fit(self.X, self.y))
            cpu = time.process_time() - cpu0
        finally:
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)
        res = search.cv_results_
        n_folds = self.J * self.K
        scores = {_key(p): (float(m), [float(res[f"split{i}_test_score"][c]) for i in range(n_folds)])
                  for c, (p, m) in enumerate(zip(res["params"], res["mean_test_score"]))}
        return {"row": row, "n_jobs": n_jobs, "seconds": seconds, "main_cpu_seconds": cpu, "loadavg_before": before,
                "loadavg_after": after, "scores": scores}


def _key(params: dict) -> str:
    return repr(sorted(params.items()))


def check_scores(reference: dict, run: dict) -> float:
    """Largest |difference| of mean and per-split test scores against the reference run."""
    if set(reference) != set(run["scores"]):
        raise AssertionError(f"{run['row']} (n_jobs={run['n_jobs']}) scored other candidates than sklearn")
    worst = 0.0
    for k, (mean, splits) in reference.items():
        m2, s2 = run["scores"][k]
        worst = max(worst, abs(mean - m2), float(np.max(np.abs(np.subtract(splits, s2)))))
    if worst > TOL:
        raise AssertionError(f"{run['row']} (n_jobs={run['n_jobs']}): test scores differ from sklearn's "
                             f"by up to {worst:.3g} (> {TOL})")
    return worst


def profile_certa(bench: Bench, n_jobs: int, top: int = 25) -> str:
    """cProfile of one certa fit in the main process (worker time shows up as waiting)."""
    prof = cProfile.Profile()
    prof.enable()
    bench.run("certa", n_jobs)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(top)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="jkfold.py vs-gridsearch", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="4 candidates, 1 round")
    ap.add_argument("--repeats", type=int, default=None, help="timed rounds (default 3, quick 1)")
    ap.add_argument("--n-repeats", dest="J", type=int, default=3, help="J (default 3)")
    ap.add_argument("--n-splits", dest="K", type=int, default=5, help="K (default 5)")
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="n_jobs settings (default 1 2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rows", nargs="+", default=None, help="subset of rows to time")
    ap.add_argument("--no-sleep", action="store_true", help="skip the sleep-fit overhead scenario")
    ap.add_argument("--profile", action="store_true", help="also cProfile certa's main process")
    ap.add_argument("--out", default=None, help="results directory (default benchmarks/results)")
    args = ap.parse_args(argv)
    repeats = args.repeats if args.repeats is not None else (1 if args.quick else 3)
    if repeats < 1:
        raise ValueError(f"--repeats must be at least 1, got {repeats}")

    machine = machine_info()
    X, y = load_debian_small(return_X_y=True)
    grid = make_grid(args.quick)
    n_cand = int(np.prod([len(v) for v in grid.values()]))
    bench = Bench(X, y, grid, args.J, args.K, args.seed)
    rows = bench.rows() if args.rows is None else args.rows
    print(f"{len(X)} texts, {n_cand} candidates x J={args.J} x K={args.K} = {n_cand * args.J * args.K} fits "
          f"per search; rows {rows}; cache option: {bench.cache_opt}; load {fmt_load(machine['loadavg_at_start'])}",
          flush=True)

    # Warm-up: start both process pools (certa's loky, joblib's vendored loky) and import in workers.
    small = {k: v[:1] for k, v in grid.items()}
    for row in rows:
        bench.run(row, max(args.jobs), grid=small)

    runs: list[dict[str, Any]] = []
    sleep_runs: list[dict[str, Any]] = []
    sleep_total = sum(SLEEP_GRID["duration"]) * args.J * args.K
    if not args.no_sleep:
        for row in ("sklearn", "certa"):
            bench.run(row, max(args.jobs), grid={"duration": [0.0]}, sleep=True)
    reference: dict | None = None
    t_start = time.perf_counter()
    for r in range(repeats):
        for n_jobs in args.jobs:
            shift = r % len(rows)
            for row in rows[shift:] + rows[:shift]:
                run = bench.run(row, n_jobs)
                if reference is None:
                    ref_run = run if row == "sklearn" else bench.run("sklearn", n_jobs)
                    reference = ref_run["scores"]
                run["max_abs_score_diff"] = check_scores(reference, run)
                run["round"] = r
                print(f"round {r} n_jobs={n_jobs} {row:<15} {run['seconds']:7.2f} s  "
                      f"max |score diff| {run['max_abs_score_diff']:.1e}  load {fmt_load(run['loadavg_after'])}",
                      flush=True)
                runs.append(run)
        if not args.no_sleep:
            for n_jobs in args.jobs:
                for row in (["sklearn", "certa"] if r % 2 == 0 else ["certa", "sklearn"]):
                    run = bench.run(row, n_jobs, sleep=True)
                    run.pop("scores")
                    run["round"] = r
                    sleep_runs.append(run)
                    print(f"round {r} n_jobs={n_jobs} sleep-fit {row:<8} {run['seconds']:7.2f} s "
                          f"(pure sleep / n_jobs = {sleep_total / n_jobs:.2f} s)", flush=True)
    total = time.perf_counter() - t_start

    summary = []
    for n_jobs in args.jobs:
        sk = [x["seconds"] for x in runs if x["n_jobs"] == n_jobs and x["row"] == "sklearn"]
        for row in rows:
            t = [x["seconds"] for x in runs if x["n_jobs"] == n_jobs and x["row"] == row]
            paired = [x["seconds"] / s["seconds"] for x in runs if x["n_jobs"] == n_jobs and x["row"] == row
                      for s in runs if s["n_jobs"] == n_jobs and s["row"] == "sklearn" and s["round"] == x["round"]]
            cpu = [x["main_cpu_seconds"] for x in runs if x["n_jobs"] == n_jobs and x["row"] == row]
            summary.append({"n_jobs": n_jobs, "row": row, "times": t, "median_s": median(t),
                            "min_s": min(t), "max_s": max(t),
                            "ratio_of_medians": median(t) / median(sk) if sk else float("nan"),
                            "median_paired_ratio": median(paired),
                            "median_main_cpu_s": median(cpu)})
    sleep_summary = []
    for n_jobs in args.jobs:
        for row in ("sklearn", "certa"):
            t = [x["seconds"] for x in sleep_runs if x["n_jobs"] == n_jobs and x["row"] == row]
            if t:
                ideal = sleep_total / n_jobs
                sleep_summary.append({"n_jobs": n_jobs, "row": row, "times": t, "median_s": median(t),
                                      "ideal_s": ideal, "median_overhead_s": median(t) - ideal,
                                      "overhead_per_fit_ms": (median(t) - ideal) * n_jobs /
                                      (len(SLEEP_GRID["duration"]) * args.J * args.K) * 1000})
    for s in sleep_summary:
        print(f"sleep-fit n_jobs={s['n_jobs']} {s['row']:<8} median {s['median_s']:.2f} s, ideal {s['ideal_s']:.2f} s, "
              f"overhead {s['overhead_per_fit_ms']:.1f} ms per fit and worker")

    for s in summary:
        print(f"n_jobs={s['n_jobs']} {s['row']:<15} median {s['median_s']:.2f} s  "
              f"ratio/sklearn {s['ratio_of_medians']:.3f} (paired {s['median_paired_ratio']:.3f})")
    certa_rows = [s for s in summary if s["row"] == "certa"]
    verdict = {str(s["n_jobs"]): bool(s["ratio_of_medians"] <= 1.05) for s in certa_rows}
    print("scores: every candidate's mean and per-split test scores equal sklearn's to", TOL)
    print("acceptance (certa <= 1.05 x sklearn, ratio of medians):", verdict)

    profiles = {}
    if args.profile:
        for n_jobs in args.jobs:
            profiles[str(n_jobs)] = profile_certa(bench, n_jobs)
            print(f"--- cProfile of certa's main process, n_jobs={n_jobs} ---\n{profiles[str(n_jobs)]}")

    payload = {
        "benchmark": NAME,
        "task": {"dataset": "certa.datasets.load_debian_small", "n_samples": len(X),
                 "n_classes": len(set(y)), "pipeline": "TfidfVectorizer() -> LinearSVC(random_state=0)",
                 "grid": grid, "n_candidates": n_cand, "J": args.J, "K": args.K, "seed": args.seed,
                 "fits_per_search": n_cand * args.J * args.K, "scoring": "accuracy", "refit": False},
        "protocol": {"rounds": repeats, "jobs": args.jobs, "rows": rows, "warm_up": True,
                     "order": "rows rotated each round, all (n_jobs, row) pairs timed once per round"},
        "cache_option": bench.cache_opt,
        "score_tolerance": TOL,
        "scores_identical": True,
        "summary": summary,
        "sleep_scenario": {"grid": SLEEP_GRID, "total_sleep_s": sleep_total, "summary": sleep_summary,
                           "runs": sleep_runs},
        "acceptance_certa_le_1_05": verdict,
        "runs": [{k: v for k, v in x.items() if k != "scores"} for x in runs],
        "mean_test_scores": {k: v[0] for k, v in (reference or {}).items()},
        "total_seconds": total,
        "machine": machine,
        "profiles": profiles,
    }
    write_results(NAME, payload, render_md(payload), args.out)
    return payload


def render_md(p: dict[str, Any]) -> str:
    t = p["task"]
    rows = []
    for s in p["summary"]:
        rows.append([s["n_jobs"], f"`{s['row']}`", f"{s['median_s']:.2f}", f"{s['min_s']:.2f}-{s['max_s']:.2f}",
                     f"{s['ratio_of_medians']:.3f}", f"{s['median_paired_ratio']:.3f}",
                     f"{s['median_main_cpu_s']:.2f}"])
    table = md_table(["n_jobs", "row", "median s", "range s", "ratio to sklearn (medians)",
                      "median per-round ratio", "main-process CPU s"], rows, align="rlrrrrr")
    sl = p["sleep_scenario"]
    sleep_table = md_table(["n_jobs", "row", "median s", "pure sleep / n_jobs", "overhead ms per fit"],
                           [[s["n_jobs"], f"`{s['row']}`", f"{s['median_s']:.2f}", f"{s['ideal_s']:.2f}",
                             f"{s['overhead_per_fit_ms']:.1f}"] for s in sl["summary"]], align="rlrrr")
    loads = [x["loadavg_after"][0] for x in p["runs"] if x.get("loadavg_after")]
    cache = (f"`certa+cache` uses `JKFoldSearchCV({p['cache_option']}=True)`." if p["cache_option"] else
             "`JKFoldSearchCV` has no transformer-cache option yet, so there is no `certa+cache` row.")
    verdict = ", ".join(f"n_jobs={k}: {'pass' if v else 'FAIL'}" for k, v in p["acceptance_certa_le_1_05"].items())
    m = p["machine"]
    return f"""Wall time of `certa.JKFoldSearchCV` vs `GridSearchCV(cv=RepeatedStratifiedKFold)`, same fits:
{t['n_samples']} Debian descriptions ({t['n_classes']} sections), `TfidfVectorizer -> LinearSVC`,
{t['n_candidates']} candidates x J={t['J']} x K={t['K']} = {t['fits_per_search']} fits per search,
median of {p['protocol']['rounds']} interleaved rounds (rows rotated each round, after a warm-up).

{table}

Every run's mean and per-split test scores equal the first sklearn run's to {p['score_tolerance']:g}
(checked by the script). Acceptance, certa <= 1.05 x sklearn (ratio of medians): {verdict}.
`+memory` rows use `Pipeline(memory=joblib.Memory(<fresh temp dir>))`, which fits the vectorizer once
per (fold, `sublinear_tf`) instead of once per (fold, candidate). {cache}
Main-process CPU time is the whole work only for n_jobs=1 (all fits run in the main process there).

Scheduling overhead with a fit that only sleeps (no CPU: isolates each tool's own overhead), grid of
{len(sl['grid']['duration'])} candidates (one sleeps {sl['grid']['duration'][0]} s, the others
{sl['grid']['duration'][1]} s) x J={t['J']} x K={t['K']}, same data passed in:

{sleep_table}

Machine: {m['cpu_count']} CPUs, Python {m['python']}, scikit-learn {m['scikit-learn']}, shared with other
jobs: 1-min load average during the runs {min(loads) if loads else float('nan'):.2f}-{max(loads) if loads else float('nan'):.2f}.
Total {p['total_seconds']:.0f} s.
"""
