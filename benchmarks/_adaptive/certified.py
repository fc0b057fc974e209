"""Issue 33: the certified tolerance of the best for a budget, calibrated by simulation.

A paired run that stops at a budget before its target states the tolerance it has certified: "the
choice is within eps of the best with confidence 1 - delta" (:mod:`certa.strategies._paired`, "The
certified tolerance"; the screened default's claim, ``docs/screen.md``). Measured here: how often that
claim is wrong (the choice more than eps below the best, of the finalists for a screen) against
``delta``, with the median eps, the share of runs that stated one and how often the choice was the
best itself.

Cases (:func:`certa.planning.simulate.simulate`):

* Gaussian families, simulated (scores of SD 1; means in SD units): two candidates 0.1 and 0.5 SD
  apart, a flat top of 10 (steps of 0.05 SD), three candidates 0.2 SD apart; and ``lemma top 10``,
  the real truth of the lemma grid's 10 best settings (``results/screen_lemma.json``) with
  simulated scores of SD 0.012 (a test split of 1,200 forms);
* the TDSA replay (8 models, FIESTA's 500 rows of real scores, rows replayed whole: the paired
  correlation is the data's; truth = the table's means);
* the budgets: 10 and 25 rows per candidate (the screened default races 10 finalists for 25 rows on the
  lemma grid, 3 for about 21 on the text grid), at confidence 0.95 and 0.8;
* screen then race with the default race budget (:func:`certa.search._screen.race_budget`) on the
  64- and 250-candidate score models of ``screen_calibration.py`` (simulated learning curves).

Usage::

    flock /tmp/certa-cpu.lock nice -n 5 python benchmarks/adaptive.py certified --runs 1000

-> ``results/certified_calibration.{json,md}``.
"""
from __future__ import annotations

import argparse
import json
import math
import time
from typing import Any

from _common import (
    RESULTS,
    TDSA_MODELS8,
    binom_greater_p,
    fmt_load,
    loadavg,
    machine_info,
    md_table,
    save,
    tdsa_table,
)

CONFIDENCES = (0.95, 0.8)
ROWS = (10, 25)


def families() -> dict[str, tuple[list[float], float]]:
    """name -> (means, SD of an evaluation)."""
    out = {"two, 0.1 SD apart": ([0.0, -0.1], 1.0), "two, 0.5 SD apart": ([0.0, -0.5], 1.0),
           "flat top of 10 (steps 0.05 SD)": ([-0.05 * i for i in range(10)], 1.0),
           "three, 0.2 SD apart": ([0.0, -0.2, -0.4], 1.0)}
    lemma = RESULTS / "screen_lemma.json"
    if lemma.exists():
        top = sorted((float(v) for v in json.loads(lemma.read_text())["truth"]), reverse=True)[:10]
        out["lemma top 10 (real truth, SD 0.012)"] = (top, 0.012)
    return out


def _row(case: str, k: int, rows: Any, conf: float, d: dict[str, Any], runs: int, seconds: float) -> dict[str, Any]:
    delta = 1.0 - conf
    wrong = int(round(d["certified_wrong_rate"] * runs))
    return {"case": case, "candidates": k, "rows": rows, "confidence": conf, "runs": runs,
            "certified_wrong_rate": d["certified_wrong_rate"], "certified_wrong": wrong,
            "p_above_delta": binom_greater_p(wrong, runs, delta) if wrong else 1.0,
            "certified_median": d["certified_median"], "certified_share": d["certified_share"],
            "exact_best": d.get("p_correct"), "evaluations_mean": d["evaluations_mean"],
            "finalists_mean": d.get("finalists_mean"), "screen_miss_rate": d.get("screen_miss_rate"),
            "seconds": seconds}


def run_cases(runs: int, screen_runs: int) -> list[dict[str, Any]]:
    from certa.planning.simulate import simulate
    from certa.search._screen import race_budget
    from certa.strategies import PairedElimination, ScreenThenRace
    from certa.strategies.screen import rung_counts, screen_sizes

    out = []
    for conf in CONFIDENCES:
        for rows in ROWS:
            for name, (means, sd) in families().items():
                k = len(means)
                t0 = time.perf_counter()
                rep = simulate(PairedElimination(conf, max_evals=rows * k), means=means, sds=[sd], n_runs=runs,
                               random_state=33)
                out.append(_row(name, k, rows, conf, rep.to_dict(), runs, time.perf_counter() - t0))
                print(out[-1], flush=True)
            t0 = time.perf_counter()
            table = tdsa_table(TDSA_MODELS8)
            rep = simulate(PairedElimination(conf, max_evals=rows * len(table)), table=table, paired_rows=True,
                           n_runs=runs, random_state=33)
            out.append(_row("TDSA replay (8 models, real rows)", len(table), rows, conf, rep.to_dict(), runs,
                            time.perf_counter() - t0))
            print(out[-1], flush=True)
    from _adaptive.screen_calibration import model

    for k, n_train, b_max in ((64, 1200, 0.03), (250, 4800, 0.1)):
        sizes = screen_sizes(k, n_train)
        full, b = model("flat top", b_max, k=k)
        rung_means = [full - b * ((s / n_train) ** -0.5 - 1) for s in sizes]
        budget = race_budget(k, max(rung_counts(k, len(sizes))[-1], 2))
        t0 = time.perf_counter()
        rep = simulate(ScreenThenRace(0.95, sizes, n_train=n_train, race_budget=budget), means=full, sds=[0.02],
                       rung_means=rung_means, n_runs=screen_runs, random_state=33)
        out.append(_row(f"screen then race, {k} candidates (flat top, learning-curve spread {b_max:g})", k,
                        f"budget {budget}", 0.95, rep.to_dict(), screen_runs, time.perf_counter() - t0))
        print(out[-1], flush=True)
    return out


def markdown(rows: list[dict[str, Any]], load: Any) -> str:
    body = []
    for r in rows:
        body.append([r["case"], r["candidates"], r["rows"], f"{r['confidence']:g}",
                     f"{r['certified_wrong_rate']:.1%} ({r['certified_wrong']} of {r['runs']}, p {r['p_above_delta']:.2g})",
                     f"{1 - r['confidence']:.0%}", f"{r['certified_median']:.3g}", f"{r['certified_share']:.0%}",
                     "-" if r["exact_best"] is None else f"{r['exact_best']:.0%}",
                     f"{r['evaluations_mean']:.0f}"])
    return "\n".join([
        "# The certified tolerance of the best for a budget, calibrated by simulation (issue 33)", "",
        "Simulated scores (Gaussian families, and the lemma truth with simulated evaluations) and the TDSA replay "
        "(FIESTA's real rows). A run stops at its budget (rows per candidate, or the screened default's race "
        "budget) and states: the choice is within eps of the best (of the finalists, for a screen) with the "
        "confidence. Wrong claim: the choice more than eps below that best; p: one-sided binomial p-value of "
        f"the count against delta. Load {fmt_load(load)}.", "",
        md_table(["case", "candidates", "rows per candidate", "confidence", "wrong claims (count, p)", "delta",
                  "certified eps (median)", "runs stating one", "chose the best itself", "evaluations (mean)"],
                 body, align="lrrrrrrrrr"), ""])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="adaptive.py certified", description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1000, help="runs per row (default 1000)")
    ap.add_argument("--screen-runs", type=int, default=200, help="runs per screen-then-race row (default 200)")
    args = ap.parse_args(argv)
    load0 = loadavg()
    rows = run_cases(args.runs, args.screen_runs)
    load = loadavg()
    worst = max(r["certified_wrong_rate"] - (1 - r["confidence"]) for r in rows)
    save("certified_calibration", {"machine": machine_info(), "load_start": load0, "load_end": load, "rows": rows,
                                   "worst_excess_over_delta": worst if math.isfinite(worst) else None},
         markdown(rows, load))


if __name__ == "__main__":
    main()
