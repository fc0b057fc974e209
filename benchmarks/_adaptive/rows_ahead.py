"""Issue 32, rows ahead: the paired rule asking rows ahead decides as the sequential rule, and how
busy the other fronts keep their workers.

``identity``: for each family and seed, the sequential paired rule (``run_direct``, one worker: no
row asked ahead) against the same rule on the virtual clock with W workers whose evaluations take
random times (lognormal, SD 0.8 of the mean, so they finish out of order): the choice, the
confidence, the stopping row, the eliminations (candidate -> row) and the evaluations each
candidate got must be identical. Reported: runs compared, runs that differ (expected 0), mean
evaluations used and spent ahead, mean occupancy. The families: the TDSA replay (8 models, whole
rows of FIESTA's table) and simulated Gaussian rows with a shared row effect (correlation 0.5):
TDSA-like means, two close candidates, 16 evenly spaced (gaps 0.27 SD).

``fronts``: every front's strategy on the virtual clock with W workers: occupancy, the evaluations
the decision used and those spent ahead (asked ahead and not used). Two tasks: 8 candidates with
TDSA-like simulated scores and lognormal times of SD half the mean; and the 64-candidate RBF-SVC
grid of ``results/clock_svc_fits.json`` (real digits fits: each candidate's scores replayed from its
8 measured splits, each evaluation taking one of its candidate's measured fit times).

``real``: the clock checked against real runs: halving (the 8-candidate task, evaluations sleeping
lognormal times of mean 0.1 s) and progressive sampling (the 64-candidate grid, evaluations sleeping
their measured fit times) in a ``ThreadPoolExecutor`` of 2 and 4 threads, each draw sleeping the
duration the clock gives it (same seed): real wall time over the clock's, and both occupancies.

Writes ``results/rows_ahead.{json,md}``; a section left out of ``--sections`` is kept from the
results file there. Usage::

    flock /tmp/certa-cpu.lock python benchmarks/adaptive.py rows-ahead --seeds 200
    python benchmarks/adaptive.py rows-ahead --sections fronts
    python benchmarks/adaptive.py rows-ahead --sections real
"""
from __future__ import annotations

import argparse
import json
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from _common import RESULTS, TDSA_MODELS8, loadavg, machine_info, save, tdsa_table

from certa import FunctionEvaluator, run
from certa.engine.draws import Draw
from certa.engine.store import MemoryStore
from certa.planning.clock import Durations, RecordedDurations, as_durations, clock_run
from certa.planning.simulate import ReplayScores, run_direct
from certa.strategies import (
    BatchThompson,
    JKFoldGrid,
    PairedElimination,
    ProgressiveSampling,
    SequentialHalving,
    TopTwoThompson,
)

TDSA_LIKE = [0.0, -0.55, -0.6, -1.6, -1.5, -2.1, -2.2, -3.0]
KEYS = ("best", "confidence", "rows", "eliminated", "stop_reason")


class SharedRows:
    """Simulated Gaussian rows: ``mean + sqrt(rho) * row effect + sqrt(1 - rho) * own noise``."""

    def __init__(self, means, rho: float = 0.5) -> None:
        self.means, self.rho = list(means), rho

    def __call__(self, params: dict, seed: int) -> float:
        c = params["candidate"]
        shared = np.random.default_rng(seed).normal()
        own = np.random.default_rng([seed, c]).normal()
        return self.means[c] + np.sqrt(self.rho) * shared + np.sqrt(1 - self.rho) * own


def families() -> dict:
    table = tdsa_table(TDSA_MODELS8)
    return {"TDSA replay (8 models, whole rows)": ReplayScores(table, paired=True),
            "TDSA-like Gaussian rows (8)": SharedRows(TDSA_LIKE),
            "two close (gap 0.5 SD)": SharedRows([0.0, -0.5]),
            "16 evenly spaced (0 to -4)": SharedRows(list(np.linspace(0, -4, 16)))}


def identity(seeds: int, workers: list[int], confidence: float) -> list[dict]:
    rows = []
    for name, score in families().items():
        ev = FunctionEvaluator(score)
        k = len(score.names) if isinstance(score, ReplayScores) else len(score.means)
        base = [run_direct(PairedElimination(confidence), ev, k, s) for s in range(seeds)]
        for w in workers:
            t0 = time.perf_counter()
            differ, occ, used, ahead = 0, [], [], []
            for s in range(seeds):
                r = clock_run(PairedElimination(confidence), ev, k, workers=w, durations="lognormal:1,0.8", seed=s)
                res = r.result
                same = all(res[key] == base[s][key] for key in KEYS) and \
                    res["evaluations"].tolist() == base[s]["evaluations"].tolist()
                differ += not same
                occ.append(r.occupancy)
                used.append(int(np.sum(res["evaluations"])))
                ahead.append(r.ahead)
            row = {"family": name, "workers": w, "runs": seeds, "differ": differ,
                   "mean_evaluations": float(np.mean(used)), "mean_ahead": float(np.mean(ahead)),
                   "mean_occupancy": float(np.mean(occ)), "seconds": time.perf_counter() - t0}
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


class SizedDurations(Durations):
    """A candidate's measured fit time (at the full training set) scaled by the draw's training size
    over the full size: progressive sampling's small rounds take less time than its large ones."""

    def __init__(self, times: dict, full: int) -> None:
        self.base, self.full = RecordedDurations(times), int(full)
        self.description = f"{self.base.description}, scaled by training size / {full}"

    def bind(self, names):
        bound = SizedDurations.__new__(SizedDurations)
        bound.__dict__.update(self.__dict__, base=self.base.bind(names))
        return bound

    def for_draw(self, draw: Draw, seed: int) -> float:
        return self.base.for_draw(draw, seed) * (draw.size or self.full) / self.full


def _tasks() -> dict:
    """Each task: (score model, number of candidates, durations, candidate names, {strategy: maker})."""
    fits = json.loads((RESULTS / "clock_svc_fits.json").read_text())
    names = list(fits["scores"])
    return {
        "8 candidates (TDSA-like simulated scores, lognormal times of SD half the mean)": (
            SharedRows(TDSA_LIKE), len(TDSA_LIKE), "lognormal:1,0.5", None,
            {"paired (default), 0.95": lambda: PairedElimination(0.95),
             "top-two Thompson, 0.95": lambda: TopTwoThompson(0.95),
             "batch Thompson (4 in flight), 0.95": lambda: BatchThompson(0.95, n_workers=4),
             "batch Thompson (8 in flight), 0.95": lambda: BatchThompson(0.95, n_workers=8),
             "batch Thompson (16 in flight), 0.95": lambda: BatchThompson(0.95, n_workers=16),
             "batch Thompson (32 in flight), 0.95": lambda: BatchThompson(0.95, n_workers=32),
             "sequential halving, 160": lambda: SequentialHalving(160),
             "J-K-fold 5x2": lambda: JKFoldGrid(5, 2),
             "progressive sampling (PSearch schedule, 1,000 samples)": lambda: ProgressiveSampling(1000)}),
        "64 candidates (RBF-SVC 8 x 8 on digits: measured scores and fit times)": (
            ReplayScores(fits["scores"]), len(names), RecordedDurations(fits["seconds"]), names,
            {"sequential halving, 640": lambda: SequentialHalving(640),
             "J-K-fold 5x2": lambda: JKFoldGrid(5, 2),
             "progressive sampling (PSearch schedule, 1,000 samples)": lambda: ProgressiveSampling(1000)}),
        "64 candidates (the same grid, fit times scaled by the training size: 1 % to 100 % of 1,000)": (
            ReplayScores(fits["scores"]), len(names), SizedDurations(fits["seconds"], 1000), names,
            {"progressive sampling (PSearch schedule, 1,000 samples)": lambda: ProgressiveSampling(1000)}),
    }


def fronts(seeds: int, workers: list[int]) -> list[dict]:
    rows = []
    for task, (score, k, durations, names, makers) in _tasks().items():
        for name, make in makers.items():
            for w in workers:
                occ, used, ahead, wall = [], [], [], []
                for s in range(seeds):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        r = clock_run(make(), score, k, workers=w, durations=durations, seed=s, names=names)
                    occ.append(r.occupancy)
                    used.append(r.evaluations - r.ahead)
                    ahead.append(r.ahead)
                    wall.append(r.wall)
                row = {"task": task, "strategy": name, "workers": w, "runs": seeds, "mean_occupancy": float(np.mean(occ)),
                       "mean_evaluations": float(np.mean(used)), "mean_ahead": float(np.mean(ahead)),
                       "mean_wall": float(np.mean(wall))}
                print(json.dumps(row), flush=True)
                rows.append(row)
    return rows


class Sleeping(FunctionEvaluator):
    """A simulated score (``score(params, seed)``) after sleeping the draw's duration on the virtual clock."""

    def __init__(self, score, durations, names: list[str], run_seed: int) -> None:
        super().__init__(score)
        self.durations, self.run_seed = as_durations(durations).bind(names), int(run_seed)

    def evaluate(self, params: dict, draw: Draw) -> float:
        time.sleep(self.durations.for_draw(draw, self.run_seed))
        return self.fn(params, draw.seed)


def real(seeds: list[int], workers: list[int]) -> list[dict]:
    tasks = _tasks()
    (k8, (score8, n8, _, _, _)), (k64, (score64, n64, dur64, names64, _)), _ = tasks.items()
    checks = [("sequential halving, 160", k8, lambda: SequentialHalving(160), score8, n8, "lognormal:0.1,0.05",
               [f"c{i}" for i in range(n8)]),
              ("progressive sampling (PSearch schedule, 1,000 samples)", k64, lambda: ProgressiveSampling(1000),
               score64, n64, dur64, names64)]
    rows = []
    for name, task, make, score, k, durations, names in checks:
        for seed in seeds:
            for w in workers:
                virtual = clock_run(make(), score, k, workers=w, durations=durations, seed=seed, names=names)
                store = MemoryStore()   # every evaluation recorded, those spent ahead included
                load0 = loadavg()
                t0 = time.perf_counter()
                with ThreadPoolExecutor(w) as pool:
                    sel = run(make(), Sleeping(score, durations, names, seed), [{"candidate": i} for i in range(k)],
                              random_state=seed, executor=pool, progress=False, store=store)
                wall = time.perf_counter() - t0
                recorded = store.load()
                busy = float(sum(row.outcome.duration for row in recorded))
                r = {"strategy": name, "task": task, "seed": seed, "workers": w, "virtual_wall_s": virtual.wall,
                     "real_wall_s": wall, "ratio_real_to_virtual": wall / virtual.wall,
                     "virtual_occupancy": virtual.occupancy, "real_occupancy": busy / (w * wall),
                     "used_virtual": virtual.evaluations - virtual.ahead, "used_real": int(len(sel.evaluations)),
                     "spent_ahead_virtual": virtual.ahead, "spent_ahead_real": int(sel.result["evaluations_ahead"]),
                     "same_choice": int(virtual.result["best"]) == sel.best_index, "loadavg": load0}
                print(json.dumps(r), flush=True)
                rows.append(r)
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="adaptive.py rows-ahead", description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200, help="runs per family and worker count (identity)")
    ap.add_argument("--workers", type=int, nargs="+", default=[2, 8, 64])
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--front-seeds", type=int, default=20)
    ap.add_argument("--front-workers", type=int, nargs="+", default=[8, 16])
    ap.add_argument("--real-seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--real-workers", type=int, nargs="+", default=[2, 4])
    sections = ["identity", "fronts", "real"]
    ap.add_argument("--sections", nargs="+", choices=sections, default=sections,
                    help="what to run; a section left out is kept from the results file")
    args = ap.parse_args(argv)
    load0 = loadavg()
    kept = {}
    if len(set(args.sections)) < len(sections):
        path = RESULTS / "rows_ahead.json"
        kept = json.loads(path.read_text()) if path.is_file() else {}
        missing = [s for s in sections if s not in args.sections and s not in kept]
        if missing:
            raise SystemExit(f"{path} has no {', '.join(missing)}: run those sections too")
    out = {"machine": machine_info(), "loadavg_before": load0, "confidence": args.confidence,
           "identity": identity(args.seeds, args.workers, args.confidence) if "identity" in args.sections
           else kept["identity"],
           "fronts": fronts(args.front_seeds, args.front_workers) if "fronts" in args.sections else kept["fronts"],
           "real": real(args.real_seeds, args.real_workers) if "real" in args.sections else kept["real"],
           "loadavg_after": loadavg()}
    lines = [f"Rows ahead: the paired rule at confidence {args.confidence} with W workers on the virtual clock "
             "(lognormal times, SD 0.8 of the mean) against the sequential rule, same seeds", "",
             "| family | workers | runs | runs whose decisions differ | mean evaluations used | mean spent ahead "
             "| mean occupancy |", "|---|---|---|---|---|---|---|"]
    for r in out["identity"]:
        lines.append(f"| {r['family']} | {r['workers']} | {r['runs']} | {r['differ']} | {r['mean_evaluations']:.1f} | "
                     f"{r['mean_ahead']:.1f} | {r['mean_occupancy']:.1%} |")
    for task in dict.fromkeys(r.get("task", "") for r in out["fronts"]):
        lines += ["", f"Every front on the virtual clock: {task}", "",
                  "| strategy | workers | runs | mean occupancy | mean evaluations used | mean spent ahead | mean wall |",
                  "|---|---|---|---|---|---|---|"]
        for r in (r for r in out["fronts"] if r.get("task", "") == task):
            lines.append(f"| {r['strategy']} | {r['workers']} | {r['runs']} | {r['mean_occupancy']:.1%} | "
                         f"{r['mean_evaluations']:.1f} | {r.get('mean_ahead', 0.0):.1f} | "
                         f"{r.get('mean_wall', float('nan')):.3g} |")
    lines += ["", "The clock against real runs (ThreadPoolExecutor, every evaluation sleeping the duration the clock "
              "gives its draw, same seed)", "",
              "| strategy | seed | threads | real wall s | clock wall s | real / clock | real occupancy | clock occupancy "
              "| used (real / clock) | spent ahead (real / clock) | same choice | load (1 min) |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in out["real"]:
        lines.append(f"| {r['strategy']} | {r['seed']} | {r['workers']} | {r['real_wall_s']:.2f} | "
                     f"{r['virtual_wall_s']:.2f} | {r['ratio_real_to_virtual']:.3f} | {r['real_occupancy']:.1%} | "
                     f"{r['virtual_occupancy']:.1%} | {r['used_real']} / {r['used_virtual']} | "
                     f"{r['spent_ahead_real']} / {r['spent_ahead_virtual']} | {r['same_choice']} | "
                     f"{(r['loadavg'] or ['?'])[0]} |")
    lines += ["", "Generated by benchmarks/adaptive.py rows-ahead (the identity and the fronts in simulated time: the "
              "load does not change them; the real runs sleep, so 4 threads fit on 2 cores)."]
    save("rows_ahead", out, lines)
    print("\n".join(lines))
