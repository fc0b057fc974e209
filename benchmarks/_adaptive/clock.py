"""Issue 32, item 2: the virtual clock against real runs, and the wall time of a 64-candidate grid.

Sections (``--section``):

* ``replay``: the TDSA replay (8 models, paired rows), evaluations that sleep (0.25 s by default)
  in a ``ThreadPoolExecutor`` of 2, 4 and 8 threads, against the clock's prediction for the same
  seed and the same per-draw durations: the ratio real / virtual wall time, and both occupancies.
* ``measure``: real fit-and-score times (and scores) of an RBF-SVC 8 x 8 grid (C x gamma) on
  scikit-learn's digits (1,797 real handwritten digits, 80/20 stratified splits), every candidate
  on the same rows (paired splits), one process -> ``results/clock_svc_fits.json`` (the cache the
  next sections read).
* ``grid``: the clock on that grid with 4, 16 and 64 workers: scores replayed from the measured
  rows (paired), each evaluation taking one of its candidate's measured times; the paired default
  at confidence 0.95 with a tolerance of 0.005 and of 0.001 (without one there is no unique best:
  several settings predict identically on every split).
* ``real``: one real ``BanditSearchCV`` run of the grid with 4 processes (tolerance 0.005), and
  the clock's prediction for the same draws (each draw's real score), (i) with the cached
  one-process fit times and (ii) with the times the run itself recorded.
* ``report``: ``results/clock.md`` from the JSON files.

Usage::

    python benchmarks/adaptive.py clock --section replay --seeds 0 1 2
    flock /tmp/certa-cpu.lock nice -n 5 python benchmarks/adaptive.py clock --section measure
    python benchmarks/adaptive.py clock --section grid --runs 50
    flock /tmp/certa-cpu.lock nice -n 5 python benchmarks/adaptive.py clock --section real
    python benchmarks/adaptive.py clock --section report
"""
from __future__ import annotations

import argparse
import json
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from _common import RESULTS, TDSA_MODELS8, fmt_load, loadavg, machine_info, md_table, tdsa_table, write_results

from certa.engine.draws import Draw, split_draw
from certa.engine.evaluators import FunctionEvaluator, execute
from certa.engine.runner import run
from certa.engine.store import MemoryStore
from certa.planning.clock import Durations, RecordedDurations, clock_run, parse_duration
from certa.planning.simulate import ReplayScores, simulate
from certa.strategies import PairedElimination

FITS = "clock_svc_fits"
C_GRID = [float(f"{v:.3g}") for v in 10 ** np.linspace(-2, 3, 8)]
GAMMA_GRID = [float(f"{v:.3g}") for v in 10 ** np.linspace(-5, -1, 8)]


class SleepingReplay(FunctionEvaluator):
    """The TDSA replay's score (paired rows) after sleeping the draw's duration under ``durations``."""

    def __init__(self, table: dict, durations: Durations, run_seed: int) -> None:
        super().__init__(ReplayScores(table, paired=True))
        self.durations, self.run_seed = durations, int(run_seed)

    def evaluate(self, params: dict, draw: Draw) -> float:
        time.sleep(self.durations.for_draw(draw, self.run_seed))
        return self.fn(params, draw.seed)


def replay(seeds: list[int], workers: list[int], duration: str) -> dict:
    table = tdsa_table(TDSA_MODELS8)
    model = parse_duration(duration)
    rows = []
    for seed in seeds:
        for w in workers:
            virtual = clock_run(PairedElimination(0.95), ReplayScores(table, paired=True), len(table), workers=w,
                                durations=model, seed=seed)
            store = MemoryStore()   # every evaluation recorded, those spent ahead included
            load0 = loadavg()
            t0 = time.perf_counter()
            with ThreadPoolExecutor(w) as pool:
                sel = run(PairedElimination(0.95), SleepingReplay(table, model, seed),
                          [{"candidate": i} for i in range(len(table))], random_state=seed, executor=pool,
                          progress=False, store=store)
            wall = time.perf_counter() - t0
            recorded = store.load()
            busy = float(sum(row.outcome.duration for row in recorded))
            ahead = int(sel.result.get("evaluations_ahead") or 0)
            r = {"seed": seed, "workers": w, "virtual_wall_s": virtual.wall, "real_wall_s": wall,
                 "ratio_real_to_virtual": wall / virtual.wall, "virtual_occupancy": virtual.occupancy,
                 "real_occupancy": busy / (w * wall), "evaluations_virtual": virtual.evaluations,
                 "used_virtual": virtual.evaluations - virtual.ahead, "evaluations_real": len(recorded),
                 "used_real": int(len(sel.evaluations)), "spent_ahead_virtual": virtual.ahead,
                 "spent_ahead_real": ahead,
                 "same_choice": int(virtual.result["best"]) == sel.best_index, "loadavg": load0}
            print(json.dumps(r), flush=True)
            rows.append(r)
    ratios = np.array([r["ratio_real_to_virtual"] for r in rows])
    return {"task": f"TDSA replay, 8 models, paired default 0.95, evaluations sleeping ({model.description} s), "
                    "ThreadPoolExecutor", "duration": duration, "rows": rows,
            "ratio_min": float(ratios.min()), "ratio_max": float(ratios.max()),
            "within_10_percent": bool(np.all(np.abs(ratios - 1) <= 0.10))}


def _digits_evaluator():
    from sklearn.datasets import load_digits
    from sklearn.svm import SVC

    from certa.engine.evaluators import EstimatorEvaluator
    from certa.engine.plans import RandomSplitPlan

    X, y = load_digits(return_X_y=True)
    return X, y, EstimatorEvaluator(SVC(), X, y, RandomSplitPlan(0.2, True), None)


def _grid_candidates():
    from certa.engine.candidates import candidates_from_grid

    return candidates_from_grid({"C": C_GRID, "gamma": GAMMA_GRID})


def measure(rows: int, root: int) -> dict:
    """Fit and score every candidate on ``rows`` paired splits, one process: scores and times."""
    _, _, evaluator = _digits_evaluator()
    cands = _grid_candidates()
    scores = {c.name: [] for c in cands}
    times = {c.name: [] for c in cands}
    load0 = loadavg()
    for r in range(rows):
        for c in cands:
            o = execute(evaluator, c.params, split_draw(root, c.index, r, paired=True), 1, None)
            if not o.ok:
                raise RuntimeError(f"{c.name}: {o.error}")
            scores[c.name].append(float(o.score))
            times[c.name].append(float(o.duration))
        print(f"row {r}: {sum(t[-1] for t in times.values()):.1f} s of fits", flush=True)
    return {"task": "RBF-SVC 8 x 8 grid (C x gamma) on scikit-learn's digits (1,797 real samples), 80/20 "
                    "stratified splits, paired rows, fit + score timed in one process",
            "C": C_GRID, "gamma": GAMMA_GRID, "rows": rows, "root_seed": root, "scores": scores, "seconds": times,
            "loadavg_before": load0, "loadavg_after": loadavg()}


def _fits() -> dict:
    path = RESULTS / f"{FITS}.json"
    if not path.is_file():
        raise SystemExit(f"{path} is missing: run --section measure first")
    return json.loads(path.read_text())


def grid(n_runs: int, workers: list[int], seed: int) -> dict:
    fits = _fits()
    durations = RecordedDurations(fits["seconds"])
    rows = []
    # no tolerance 0: on this grid several settings make the same predictions on every split (e.g.
    # gamma 5.18e-4 with C >= 7.2), so no candidate is the unique best and the rule needs a tolerance
    for tol in (0.005, 0.001):
        for w in workers:
            t0 = time.perf_counter()
            rep = simulate(PairedElimination(0.95, tolerance=tol, max_evals=200 * 64), table=fits["scores"],
                           paired_rows=True, n_runs=n_runs, random_state=seed, workers=w, durations=durations)
            d = rep.to_dict()
            r = {"tolerance": tol, "workers": w, "runs": n_runs, "evaluations_mean": d["evaluations_mean"],
                 "evaluations_min": d["evaluations_min"], "evaluations_max": d["evaluations_max"],
                 "wall_mean_s": d["wall_mean"], "wall_sd_s": d["wall_sd"], "wall_p05_s": d["wall_p05"],
                 "wall_p95_s": d["wall_p95"], "occupancy_mean": d["occupancy_mean"],
                 "busy_workers_mean": d["busy_workers_mean"], "started_mean": d["started_mean"],
                 "spent_ahead_mean": d["ahead_mean"], "spent_ahead_max": d["ahead_max"],
                 "p_correct": d["p_correct"], "simulation_s": time.perf_counter() - t0}
            print(json.dumps(r), flush=True)
            rows.append(r)
    return {"task": fits["task"] + f"; scores replayed from its {fits['rows']} measured rows (paired), each "
                    "evaluation one of its candidate's measured times", "durations": durations.description,
            "rows": rows}


class _PerDraw(Durations):
    """Each draw's duration as a real run recorded it (by draw key); a draw the real run did not
    ask (asked ahead on the clock only, so not used by the decision) takes its candidate's median."""

    def __init__(self, times: dict[str, float], by_candidate: dict[int, list[float]]) -> None:
        self.times, self.description = times, "recorded per draw"
        self.median = {c: float(np.median(v)) for c, v in by_candidate.items()}

    def for_draw(self, draw: Draw, seed: int) -> float:
        return self.times.get(draw.key, self.median.get(draw.candidate, float(np.median(list(self.times.values())))))


def real(workers: int, seed: int, tolerance: float) -> dict:
    import os
    import tempfile

    from sklearn.svm import SVC

    from certa import BanditSearchCV
    from certa.engine.store import SQLiteStore
    from certa.search.bandit import make_strategy

    X, y, _ = _digits_evaluator()
    fits = _fits()
    cands = _grid_candidates()
    grid_ = {"C": C_GRID, "gamma": GAMMA_GRID}
    warm = BanditSearchCV(SVC(), {"C": [1.0, 2.0]}, n_jobs=workers, random_state=1, refit=False, progress=False,
                          max_evals=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warm.fit(X[:200], y[:200])  # start the worker processes before timing
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "real.sqlite")
        load0 = loadavg()
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = BanditSearchCV(SVC(), grid_, tolerance=tolerance, n_jobs=workers, random_state=seed, refit=False,
                               progress=False, store=path).fit(X, y)
        wall = time.perf_counter() - t0
        load1 = loadavg()
        store = SQLiteStore.open_read_only(path)
        recorded = store.load()
        store.close()
    scores = {(r.draw.candidate, r.draw.seed): float(r.outcome.score) for r in recorded if r.outcome.ok}
    per_draw = {r.draw.key: float(r.outcome.duration) for r in recorded}
    by_candidate: dict[int, list[float]] = {}
    for r in recorded:
        by_candidate.setdefault(r.draw.candidate, []).append(float(r.outcome.duration))
    busy = sum(per_draw.values())

    def replayed(params, seed_):
        # a draw the real run never asked is one the clock asked ahead only: the decision does not
        # use it (the used draws are the same whatever the timing), so its score does not matter
        return scores.get((params["candidate"], seed_), 0.0)

    def strategy():
        return make_strategy("auto", confidence=0.95, budget=None, tolerance=tolerance, max_evals="auto",
                             n_candidates=len(cands))

    names = [c.name for c in cands]
    one_process = clock_run(strategy(), replayed, len(cands), workers=workers, names=names,
                            durations=RecordedDurations(fits["seconds"]).bind(names), seed=seed)
    own_times = clock_run(strategy(), replayed, len(cands), workers=workers, durations=_PerDraw(per_draw, by_candidate), seed=seed)
    out = {"task": f"RBF-SVC 8 x 8 grid on digits, BanditSearchCV (paired default, confidence 0.95, tolerance "
                   f"{tolerance:g}), {workers} processes, seed {seed}", "workers": workers,
           "real": {"wall_s": wall, "evaluations": len(per_draw), "evaluation_s": busy,
                    "occupancy": busy / (workers * wall), "best": s.best_name_, "loadavg_before": load0,
                    "loadavg_after": load1, "spent_ahead": s.selection_.result.get("evaluations_ahead")}}
    for key, r in (("clock_one_process_times", one_process), ("clock_recorded_times", own_times)):
        out[key] = {"wall_s": r.wall, "evaluations": r.evaluations, "occupancy": r.occupancy, "spent_ahead": r.ahead,
                    "best": names[int(r.result["best"])], "ratio_real_to_virtual": wall / r.wall}
    print(json.dumps(out, indent=1, default=float), flush=True)
    return out


#: Labels of the result files' tags (``--tag``); any other tag is shown as it is.
TAGS = {"": "", "before_ahead": " (before the rows ahead of issue 32 item 1)",
        "lognormal": " (lognormal times)", "before_ahead_lognormal": " (lognormal times, before the rows ahead)"}


def report() -> str:
    parts = ["# The virtual clock (issue 32, item 2)", ""]
    found = {p.stem.split("_", 2)[2] if p.stem.count("_") >= 2 else "" for section in ("replay", "grid", "real")
             for p in RESULTS.glob(f"clock_{section}*.json")}
    for tag in sorted(found, key=lambda t: (t not in TAGS, list(TAGS).index(t) if t in TAGS else 0, t)):
        parts += _report(tag, TAGS.get(tag, f" ({tag})"))
    parts += ["Generated by benchmarks/adaptive.py clock (2 cores shared with other jobs: real wall times carry the "
              "load shown)."]
    return "\n".join(parts)


def _name(section: str, tag: str) -> str:
    return f"clock_{section}" + (f"_{tag}" if tag else "")


def _report(tag: str, label: str) -> list[str]:
    parts: list[str] = []
    p = RESULTS / f"{_name('replay', tag)}.json"
    if p.is_file():
        d = json.loads(p.read_text())
        parts += [f"## Virtual against real{label}: {d['task']}", "",
                  md_table(["seed", "workers", "evaluations used", "spent ahead virtual / real", "virtual wall s",
                            "real wall s", "real / virtual", "occupancy virtual", "occupancy real", "same choice",
                            "load (1 min)"],
                           [[r["seed"], r["workers"], r.get("used_real", r["evaluations_real"]),
                             f"{r['spent_ahead_virtual']} / {r['spent_ahead_real'] or 0}",
                             f"{r['virtual_wall_s']:.2f}", f"{r['real_wall_s']:.2f}",
                             f"{r['ratio_real_to_virtual']:.3f}", f"{r['virtual_occupancy']:.1%}",
                             f"{r['real_occupancy']:.1%}", r["same_choice"],
                             r["loadavg"][0] if r["loadavg"] else "n/a"] for r in d["rows"]], "rrrrrrrrrll"),
                  "", f"Real / virtual wall time: {d['ratio_min']:.3f} to {d['ratio_max']:.3f} "
                  f"({'within' if d['within_10_percent'] else 'NOT within'} 10 %).", ""]
    p = RESULTS / f"{_name('grid', tag)}.json"
    if p.is_file():
        d = json.loads(p.read_text())
        parts += [f"## A 64-candidate grid on the clock{label}: {d['task']}", "", f"Evaluation times: {d['durations']}.", "",
                  md_table(["tolerance", "workers", "runs", "evaluations (mean, min-max)", "wall s (mean +- SD)",
                            "occupancy", "busy workers", "spent ahead (mean, max)", "right"],
                           [[f"{r['tolerance']:g}", r["workers"], r["runs"],
                             f"{r['evaluations_mean']:.0f} ({r['evaluations_min']}-{r['evaluations_max']})",
                             f"{r['wall_mean_s']:.1f} +- {r['wall_sd_s']:.1f}", f"{r['occupancy_mean']:.1%}",
                             f"{r['busy_workers_mean']:.1f} of {r['workers']}",
                             f"{r['spent_ahead_mean']:.1f}, {r['spent_ahead_max']}", f"{r['p_correct']:.0%}"]
                            for r in d["rows"]], "rrrrrrrrr"), ""]
    p = RESULTS / f"{_name('real', tag)}.json"
    if p.is_file():
        d = json.loads(p.read_text())
        rr = d["real"]
        rows = [["real run", rr["evaluations"], rr["spent_ahead"], f"{rr['wall_s']:.1f}", f"{rr['occupancy']:.1%}",
                 rr["best"], ""]]
        for key, what in (("clock_one_process_times", "clock, one-process fit times"),
                           ("clock_recorded_times", "clock, the run's own recorded times")):
            c = d[key]
            rows.append([what, c["evaluations"], c["spent_ahead"], f"{c['wall_s']:.1f}", f"{c['occupancy']:.1%}",
                         c["best"], f"{c['ratio_real_to_virtual']:.3f}"])
        parts += [f"## One real run{label}: {d['task']}", "",
                  md_table(["", "evaluations", "spent ahead", "wall s", "occupancy", "choice", "real / clock"], rows,
                           "lrrrrlr"), "",
                  f"Mean evaluation time in the real run: {rr['evaluation_s'] / rr['evaluations']:.3f} s. "
                  f"Load average before / after the real run: {fmt_load(rr['loadavg_before'])}; "
                  f"{fmt_load(rr['loadavg_after'])}.", ""]
    return parts


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="adaptive.py clock", description=__doc__.splitlines()[0])
    ap.add_argument("--section", choices=["replay", "measure", "grid", "real", "report"], required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--workers", type=int, nargs="+", default=None)
    ap.add_argument("--duration", default="0.25", help="replay: each evaluation's sleep (a --duration spec)")
    ap.add_argument("--rows", type=int, default=8, help="measure: paired rows per candidate")
    ap.add_argument("--runs", type=int, default=50, help="grid: simulated runs per row of the table")
    ap.add_argument("--tolerance", type=float, default=0.005, help="real: the run's tolerance")
    ap.add_argument("--tag", default="", help="suffix of the result files, e.g. before_ahead (letters, digits, _)")
    args = ap.parse_args(argv)
    if not all(ch.isalnum() or ch == "_" for ch in args.tag):
        ap.error(f"--tag must be letters, digits and _, got {args.tag!r}")
    info = machine_info()
    if args.section == "replay":
        out = replay(args.seeds, args.workers or [2, 4, 8], args.duration)
        write_results(_name("replay", args.tag), {"machine": info, **out}, "See clock.md.")
    elif args.section == "measure":
        out = measure(args.rows, 0)
        write_results(FITS, {"machine": info, **out}, f"cache of {FITS}: see clock.md")
    elif args.section == "grid":
        out = grid(args.runs, args.workers or [4, 16, 64], args.seeds[0])
        write_results(_name("grid", args.tag), {"machine": info, **out}, "See clock.md.")
    elif args.section == "real":
        out = real((args.workers or [4])[0], args.seeds[0], args.tolerance)
        write_results(_name("real", args.tag), {"machine": info, **out}, "See clock.md.")
    md = report()
    (RESULTS / "clock.md").write_text(md + "\n")
    print(md)
