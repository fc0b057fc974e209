"""Workers busy, and decisions alike, with the best for a budget (issue 33's default race).

The race's budget counts the evaluations its decisions use and stops asking ahead past it, so the
end of a budgeted race could idle workers. Measured against the earlier default (the best within
0.005, the race capped at 1,000 evaluations):

* ``clock``: the virtual clock (:func:`certa.planning.clock.clock_run`; evaluation times lognormal of
  mean 1 and SD 0.5, simulated scores) of screen then race on the 64-candidate "flat top" score model of
  ``docs/screen.md`` (learning-curve spread 0.03; 1,200 training examples), at 1, 16, 32 and 64
  workers: wall time, occupancy (summed evaluation time / (workers x wall)), and whether the choice,
  the finalists, the certified tolerance and the evaluations used equal those of 1 worker;
* ``real``: ``bandit_select`` with ``screen=True`` and ``n_jobs`` 2, 4 and 8 worker processes whose
  evaluations sleep (0.1-0.3 s, times the training fraction to the power 0.5, so rungs are shorter;
  simulated scores of the same model): wall time, occupancy (summed durations the store recorded /
  (workers x wall)), the same decision checks against ``n_jobs=1``.

Usage (``--results DIR`` before the command to write elsewhere)::

    flock /tmp/certa-cpu.lock nice -n 5 python benchmarks/screen.py occupancy --seeds 10 --real-seeds 2

-> ``results/screen_occupancy.{json,md}``.
"""
from __future__ import annotations

import argparse
import functools
import time
from typing import Any

import numpy as np
from _common import fmt_load, loadavg, machine_info, md_table, save

K, N_TRAIN = 64, 1200
VARIANTS = {"best for a budget (default)": dict(race="budget"), "best within 0.005 (earlier default)": dict(race="tol")}


@functools.lru_cache(maxsize=1)
def _model():
    from _adaptive.screen_calibration import model

    from certa.strategies.screen import screen_sizes

    sizes = screen_sizes(K, N_TRAIN)
    full, b = model("flat top", 0.03, k=K)
    return sizes, full, b


def _strategy(variant: str, sizes: list[int]):
    from certa.search._screen import race_budget
    from certa.strategies import ScreenThenRace
    from certa.strategies.screen import rung_counts

    if VARIANTS[variant]["race"] == "budget":
        return ScreenThenRace(0.95, sizes, n_train=N_TRAIN, race_budget=race_budget(K, rung_counts(K, len(sizes))[-1]))
    return ScreenThenRace(0.95, sizes, n_train=N_TRAIN, tolerance=0.005, max_evals=1000)


def _mean_at(full: np.ndarray, b: np.ndarray, c: int, size: int | None) -> float:
    f = 1.0 if size is None else size / N_TRAIN
    return float(full[c] - b[c] * (f ** -0.5 - 1))


def _key(r: dict[str, Any]) -> tuple:
    return (int(r["best"]), tuple(r["finalists"] or ()), round(float(r["certified_tolerance"]), 12),
            tuple(np.asarray(r["evaluations"]).tolist()))


def clock(seeds: int, workers: list[int]) -> list[dict[str, Any]]:
    from certa.engine.evaluators import Evaluator
    from certa.planning.clock import clock_run

    sizes, full, b = _model()

    class Scores(Evaluator):
        def evaluate(self, params, draw):
            c = int(params["candidate"])
            return _mean_at(full, b, c, draw.size) + float(np.random.default_rng([draw.seed, c]).normal(0, 0.02))

        def fingerprint(self):
            return "occupancy-flat-top-v1"

    rows = []
    for variant in VARIANTS:
        refs: dict[int, tuple] = {}
        for w in [1, *workers]:
            walls, occ, same = [], [], 0
            for seed in range(seeds):
                r = clock_run(_strategy(variant, sizes), Scores(), K, workers=w, durations="lognormal:1,0.5", seed=seed)
                refs.setdefault(seed, _key(r.result))   # the first worker count is 1
                same += _key(r.result) == refs[seed]
                walls.append(r.wall)
                occ.append(r.occupancy)
            rows.append({"variant": variant, "workers": w, "seeds": seeds, "wall_mean": float(np.mean(walls)),
                         "occupancy_mean": float(np.mean(occ)), "occupancy_min": float(np.min(occ)),
                         "same_as_1_worker": same})
            print(rows[-1], flush=True)
    return rows


def _evaluate(k, train, test, seed):
    _, full, b = _model()
    size = len(train)
    f = size / (N_TRAIN * 1.0)
    time.sleep((0.1 + 0.2 * np.random.default_rng([seed, int(k), 9]).random()) * min(f, 1.0) ** 0.5)
    return _mean_at(full, b, int(k), None if size >= N_TRAIN else size) + float(
        np.random.default_rng([seed, int(k)]).normal(0, 0.02))


def real(seeds: list[int], workers: list[int]) -> list[dict[str, Any]]:
    import tempfile
    import warnings

    from certa import bandit_select
    from certa.reporting.loading import load

    data = np.arange(int(N_TRAIN / 0.8), dtype=float)   # 1,500 rows: a split trains on 1,200
    cands = {f"k{c}": c for c in range(K)}
    rows = []
    for seed in seeds:
        ref = None
        for w in [1, *workers]:
            with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                sel = bandit_select(_evaluate, cands, data, screen=True, random_state=seed, n_jobs=w,
                                    store=f"{tmp}/r.sqlite", progress=False)
                wall = time.perf_counter() - t0
                busy = float(load(f"{tmp}/r.sqlite").evaluations["duration"].sum())
            key = _key(sel.result)
            ref = key if w == 1 else ref
            rows.append({"seed": seed, "workers": w, "wall_s": wall, "busy_s": busy, "occupancy": busy / (w * wall),
                         "stop": sel.result["stop_reason"], "same_as_1_worker": key == ref,
                         "evaluations_ahead": int(sel.result.get("evaluations_ahead", 0) or 0)})
            print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="screen.py occupancy", description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10, help="virtual-clock seeds per variant and worker count")
    ap.add_argument("--workers", type=int, nargs="+", default=[16, 32, 64])
    ap.add_argument("--real-seeds", type=int, default=2)
    ap.add_argument("--real-workers", type=int, nargs="+", default=[2, 4, 8])
    args = ap.parse_args(argv)
    load0 = loadavg()
    c_rows = clock(args.seeds, args.workers)
    r_rows = real(list(range(args.real_seeds)), args.real_workers)
    load1 = loadavg()
    md = ["# Workers busy with the best for a budget (benchmarks/screen.py occupancy)", "",
          f"Virtual clock: 64 simulated candidates, lognormal evaluation times (mean 1, SD 0.5), {args.seeds} seeds; "
          "'same' counts seeds whose choice, finalists, certified tolerance and evaluations used equal 1 worker's.", "",
          md_table(["race", "workers", "wall (mean, evaluation times)", "busy (mean, min)", "same as 1 worker"],
                   [[r["variant"], r["workers"], f"{r['wall_mean']:.1f}",
                     f"{100 * r['occupancy_mean']:.1f} %, {100 * r['occupancy_min']:.1f} %",
                     f"{r['same_as_1_worker']} of {r['seeds']}"] for r in c_rows], align="lrrrr"), "",
          "Real worker processes, `bandit_select(..., screen=True, n_jobs=W)`, evaluations sleeping 0.1-0.3 s "
          f"(scaled by the training fraction^0.5), simulated scores; load {fmt_load(load0)} -> {fmt_load(load1)}.", "",
          md_table(["seed", "workers", "wall s", "busy", "stop", "spent ahead", "same as 1 worker"],
                   [[r["seed"], r["workers"], f"{r['wall_s']:.2f}", f"{100 * r['occupancy']:.1f} %", r["stop"],
                     r["evaluations_ahead"], "yes" if r["same_as_1_worker"] else "**no**"] for r in r_rows],
                   align="rrrrlrl"), ""]
    save("screen_occupancy", {"machine": machine_info(), "load_start": load0, "load_end": load1, "clock": c_rows,
                              "real": r_rows}, md)
    print("\n".join(md))


if __name__ == "__main__":
    main()
