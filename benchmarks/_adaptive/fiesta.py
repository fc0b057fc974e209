"""Issue 3's acceptance benchmarks: certa's adaptive selection against FIESTA, on the paper's data.

Replays ``/work/shared/data/fiesta-tdsa-test-f1.json`` (12 TDSA models x 500 macro-F1
scores, each evaluation draws one stored score at random, as the FIESTA paper does) and
simulated Gaussian families, through :func:`certa.planning.simulate.simulate` (every run seeded by
``derive_seed(seed, run)``, two processes; results do not depend on the number of
processes). Sections (``--section``, default all):

* ``fixed``: 8 models, confidence 0.95 / 0.9 / 0.8, TopTwoThompson vs UniformUntilConfident
  (both with FIESTA's Bayesian rule), next to the paper and fiesta-nlp's own TTTS
  (``benchmarks/adaptive.py fiesta-nlp`` writes ``results/adaptive_fiesta_nlp_ttts.json``).
* ``batch``: BatchThompson with 4 and 8 workers (rule thompson = the paper's BTS, rule
  top_two) vs UniformUntilConfident with the same workers; every evaluation asked counts,
  including those in flight at the stop.
* ``budget``: 12 models, SequentialHalving(120) and EqualAllocation(228) vs fiesta-nlp's
  sequential_halving / non_adaptive_fb on the same replay.
* ``calibration``: wrong-choice rate of both stopping rules on three Gaussian families at
  delta 0.05 and 0.01, with the lower bound T* kl(delta, 1 - delta).
* ``overhead``: wall time of certa's decisions per evaluation vs fiesta-nlp's.
* ``parallel``: bandit_select with 0.5 s evaluations, 1 vs 2 local workers.

``--report`` merges the section files into ``results/adaptive_fiesta.{json,md}``.

Usage::

    python3 benchmarks/adaptive.py fiesta --section fixed --runs 500 --n-jobs 2
    python3 benchmarks/adaptive.py fiesta --report
"""
from __future__ import annotations

import argparse
import functools
import json
import time
from typing import Any

import numpy as np
from _common import RESULTS, TDSA_MODELS8, import_fiesta, machine_info, md_section, read_result, tdsa_table

from certa.engine.evaluators import FunctionEvaluator
from certa.planning.lower_bound import lower_bound
from certa.planning.simulate import ReplayScores, run_direct, simulate
from certa.search.bandit import bandit_select
from certa.strategies.halving import EqualAllocation, SequentialHalving
from certa.strategies.thompson import (
    BatchThompson,
    TopTwoThompson,
    UniformUntilConfident,
)

MODELS8 = TDSA_MODELS8
CONFIDENCES = (0.95, 0.9, 0.8)
PAPER_TTTS = {0.95: 130, 0.9: 96, 0.8: 65}           # FIESTA paper, Table 2 (TDSA, mean evaluations)
PAPER_BTS = {4: 282, 8: 315}                          # FIESTA paper, Table 3 (mean evaluations at 0.95)
PAPER_FB = {"sequential_halving_120": 0.895, "non_adaptive_228": 0.879}
FAMILIES = {  # sd 1 for every candidate; gaps in SD units
    "two_close (gap 1.0 SD)": [0.0, -1.0],
    "five_spread (gaps 1.5 SD)": [0.0, -1.5, -3.0, -4.5, -6.0],
    "best_plus_9_near_ties (gap 2.0 SD, ties within 0.16 SD)": [0.0] + [-2.0 - 0.02 * k for k in range(9)],
}


def _replay_draw(scores: np.ndarray, train: Any, test: Any) -> float:
    """FIESTA's model function: one of the candidate's observed scores, drawn with the global RNG."""
    return float(scores[np.random.randint(scores.size)])


def summary(rep) -> dict[str, Any]:
    d = rep.to_dict()
    ev = rep.evaluations.astype(float)
    d["evaluations_se"] = float(ev.std(ddof=1) / np.sqrt(ev.size))
    return d


def write(name: str, payload: dict[str, Any]) -> None:
    payload["machine"] = machine_info()
    with open(RESULTS / f"adaptive_{name}.json", "w") as fh:
        json.dump(payload, fh, indent=1, default=float)


def timed(fn, *a, **k):
    t0 = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t0


# ----------------------------------------------------------------------------------------
#: FIESTA's TTTS with information-directed selection instead of beta = 1/2 (You et al. 2023)
TTTS_IDS = 'certa TopTwoThompson beta="ids"'


def section_fixed(runs: int, n_jobs: int, seed: int) -> dict[str, Any]:
    table = tdsa_table(MODELS8)
    rows = []
    for conf in CONFIDENCES:
        for label, strat in [("certa TopTwoThompson", TopTwoThompson(conf, 0.5, stopping="bayes")),
                             (TTTS_IDS, TopTwoThompson(conf, beta="ids", stopping="bayes")),
                             ("certa UniformUntilConfident", UniformUntilConfident(conf, stopping="bayes")),
                             ("certa UniformUntilConfident, checked per round (FIESTA's)",
                              UniformUntilConfident(conf, check="round", stopping="bayes"))]:
            rep, secs = timed(simulate, strat, table=table, n_runs=runs, random_state=seed, n_jobs=n_jobs)
            rows.append({"confidence": conf, "method": label, "seconds": secs, **summary(rep),
                         "evaluations": rep.evaluations.astype(int).tolist()})
            print(f"fixed {conf} {label}: {rep.evaluations.mean():.1f} evals, {rep.p_correct:.3f} correct, "
                  f"{secs:.0f} s", flush=True)
    return {"runs": runs, "seed": seed, "rows": rows, "paper_ttts_mean": PAPER_TTTS}


def section_batch(runs: int, n_jobs: int, seed: int) -> dict[str, Any]:
    table = tdsa_table(MODELS8)
    rows = []
    for conf in CONFIDENCES:
        for w in (4, 8):
            for label, strat in [(f"BatchThompson W={w} rule=thompson", BatchThompson(conf, w, rule="thompson", stopping="bayes")),
                                 (f"BatchThompson W={w} rule=top_two", BatchThompson(conf, w, rule="top_two", beta=0.5, stopping="bayes")),
                                 (f"BatchThompson W={w} rule=top_two beta=ids",
                                  BatchThompson(conf, w, rule="top_two", beta="ids", stopping="bayes")),
                                 (f"UniformUntilConfident W={w}", UniformUntilConfident(conf, n_workers=w, stopping="bayes"))]:
                rep, secs = timed(simulate, strat, table=table, n_runs=runs, random_state=seed, n_jobs=n_jobs)
                rows.append({"confidence": conf, "workers": w, "method": label, "seconds": secs, **summary(rep)})
                print(f"batch {conf} {label}: {rep.evaluations.mean():.1f} evals, {rep.p_correct:.3f}, "
                      f"{secs:.0f} s", flush=True)
    return {"runs": runs, "seed": seed, "rows": rows, "paper_bts_mean_095": PAPER_BTS}


def _fiesta_fb(F, arrays, fn: str, budget: int, runs: int, seed: int) -> dict[str, Any]:
    correct, spent = [], []
    for r in range(runs):
        np.random.seed(seed + r)
        models = [functools.partial(_replay_draw, a) for a in arrays]
        if fn == "sequential_halving":
            best, props, evals = F.sequential_halving([None], models, lambda d: (None, None), budget)
        else:
            best, evals = F.non_adaptive_fb([None], models, lambda d: (None, None), budget)
        correct.append(int(best) == 0)
        spent.append(sum(len(e) for e in evals))
    p = float(np.mean(correct))
    return {"method": f"fiesta-nlp {fn}", "budget": budget, "n_runs": runs, "p_correct": p,
            "se_correct": float(np.sqrt(p * (1 - p) / runs)), "evaluations_mean": float(np.mean(spent)),
            "evaluations_min": int(np.min(spent)), "evaluations_max": int(np.max(spent))}


def section_budget(runs: int, n_jobs: int, seed: int) -> dict[str, Any]:
    full = tdsa_table()
    table = {"tdlstm": full["tdlstm"], **{k: v for k, v in full.items() if k != "tdlstm"}}  # index 0 = true best
    rows = []
    for label, strat in [("certa SequentialHalving", SequentialHalving(120)),
                         ("certa EqualAllocation", EqualAllocation(228))]:
        rep, secs = timed(simulate, strat, table=table, n_runs=runs, random_state=seed, n_jobs=n_jobs)
        rows.append({"method": label, "budget": strat.budget, "seconds": secs, **summary(rep)})
        print(f"budget {label}: {rep.p_correct:.3f} {secs:.0f} s", flush=True)
    F = import_fiesta()
    arrays = [np.asarray(v, dtype=float) for v in table.values()]
    for fn, budget in [("sequential_halving", 120), ("non_adaptive_fb", 228)]:
        out, secs = timed(_fiesta_fb, F, arrays, fn, budget, runs, seed)
        rows.append({**out, "seconds": secs})
        print(f"budget fiesta {fn}: {out['p_correct']:.3f} spent {out['evaluations_mean']:.1f}", flush=True)
    return {"runs": runs, "seed": seed, "models": list(table), "rows": rows, "paper": PAPER_FB}


def section_calibration(runs: int, n_jobs: int, seed: int, tt_glr_runs: int) -> dict[str, Any]:
    rows = []
    for fam, means in FAMILIES.items():
        m = np.asarray(means, dtype=float)
        s = np.ones_like(m)
        for delta in (0.05, 0.01):
            lb = float(lower_bound(m, s, delta))
            for label, strat, n in [("TopTwoThompson bayes", TopTwoThompson(1 - delta, 0.5, stopping="bayes"), runs),
                                    ("UniformUntilConfident glr", UniformUntilConfident(1 - delta, stopping="glr"), runs),
                                    ("TopTwoThompson glr", TopTwoThompson(1 - delta, 0.5, stopping="glr"), tt_glr_runs)]:
                rep, secs = timed(simulate, strat, means=m, sds=s, n_runs=n, random_state=seed, n_jobs=n_jobs)
                d = summary(rep)
                wrong = 1 - rep.p_correct
                rows.append({"family": fam, "means": means, "delta": delta, "method": label, "seconds": secs,
                             "lower_bound": lb, "ratio_to_lower_bound": float(rep.evaluations.mean() / lb),
                             "wrong": wrong, "wrong_se": float(np.sqrt(max(wrong * (1 - wrong), 1e-12) / n)),
                             "within_delta": bool(wrong <= delta), **d})
                print(f"calib {fam} {delta} {label}: wrong {wrong:.4f} evals {rep.evaluations.mean():.1f} "
                      f"(LB {lb:.1f}) {secs:.0f} s", flush=True)
    return {"runs": runs, "tt_glr_runs": tt_glr_runs, "seed": seed, "rows": rows}


BAYES_CLOSE_CAP = 3000


def section_bayes_close(runs: int, n_jobs: int, seed: int) -> dict[str, Any]:
    """FIESTA's Bayesian rule on two close candidates (gaps 0.2 and 0.05 SD), where it exceeds delta.

    Runs are capped at ``BAYES_CLOSE_CAP`` evaluations; a capped run chooses its current
    leader and counts as a wrong choice only if that leader is wrong (``capped`` says how
    many runs hit the cap).
    """
    rows = []
    for gap in (0.2, 0.05):
        m, s = np.array([0.0, -gap]), np.ones(2)
        for delta in (0.05, 0.01):
            lb = float(lower_bound(m, s, delta))
            for label, strat in [("TopTwoThompson bayes", TopTwoThompson(1 - delta, 0.5, stopping="bayes", max_evals=BAYES_CLOSE_CAP)),
                                 ("UniformUntilConfident bayes",
                                  UniformUntilConfident(1 - delta, stopping="bayes", max_evals=BAYES_CLOSE_CAP))]:
                rep, secs = timed(simulate, strat, means=m, sds=s, n_runs=runs, random_state=seed, n_jobs=n_jobs)
                wrong = 1 - rep.p_correct
                capped = int((rep.evaluations >= BAYES_CLOSE_CAP).sum())
                rows.append({"family": f"two_close (gap {gap} SD)", "means": m.tolist(), "delta": delta,
                             "method": label, "seconds": secs, "lower_bound": lb, "cap": BAYES_CLOSE_CAP,
                             "capped": capped,
                             "ratio_to_lower_bound": float(rep.evaluations.mean() / lb), "wrong": wrong,
                             "wrong_se": float(np.sqrt(max(wrong * (1 - wrong), 1e-12) / runs)),
                             "within_delta": bool(wrong <= delta), **summary(rep)})
                print(f"bayes_close gap {gap} delta {delta} {label}: wrong {wrong:.4f} "
                      f"evals {rep.evaluations.mean():.1f} capped {capped}", flush=True)
    return {"runs": runs, "seed": seed, "rows": rows}


def section_overhead(seed: int) -> dict[str, Any]:
    table = tdsa_table(MODELS8)
    ev = FunctionEvaluator(ReplayScores(table))
    strat = TopTwoThompson(0.95, 0.5, stopping="bayes")     # belief history on: P(best) by quadrature after every evaluation
    acc = {"t": 0.0}
    for name in ("ask", "tell", "result", "start"):
        orig = getattr(strat, name)

        def wrapped(*a, _o=orig, **k):
            t0 = time.perf_counter()
            try:
                return _o(*a, **k)
            finally:
                acc["t"] += time.perf_counter() - t0
        setattr(strat, name, wrapped)
    res = run_direct(strat, ev, len(MODELS8), seed)
    n = int(res["evaluations"].sum())
    certa_per_eval = acc["t"] / n
    # fiesta-nlp: its belief_calc + the TTTS choice, at the state certa's run ended in (same problem)
    import_fiesta()
    from fiesta.util import belief_calc
    stats = strat._stats
    np.random.seed(seed)
    t0 = time.perf_counter()
    reps = 5
    for _ in range(reps):
        pi = belief_calc(stats.mean.copy(), stats.var(), stats.n.copy(), 100000 * len(MODELS8))
        m1 = np.random.choice(range(len(MODELS8)), 1, p=pi)[0]
        if np.random.uniform() > 0.5:
            m2 = m1
            while m2 == m1 and max(pi) < 1:
                m2 = np.random.choice(range(len(MODELS8)), 1, p=pi)[0]
    fiesta_step = (time.perf_counter() - t0) / reps
    out = {"certa_evaluations": n, "certa_decision_seconds_per_evaluation": certa_per_eval,
           "fiesta_belief_and_choice_seconds_per_evaluation": fiesta_step,
           "ratio": fiesta_step / certa_per_eval}
    print(f"overhead: certa {certa_per_eval * 1e3:.3f} ms/eval, fiesta {fiesta_step:.3f} s/eval, "
          f"ratio {out['ratio']:.0f}", flush=True)
    return out


_TDSA = None


def slow_evaluate(model: str, train, test, seed: int) -> float:
    """A user evaluate function: 0.5 s of 'training', then a replayed TDSA score."""
    global _TDSA
    if _TDSA is None:
        _TDSA = {k: np.asarray(v) for k, v in tdsa_table(MODELS8[:2]).items()}
    time.sleep(0.5)
    a = _TDSA[model]
    return float(a[np.random.default_rng(seed).integers(a.size)])


def section_parallel(seed: int, n_evals: int) -> dict[str, Any]:
    cands = {m: m for m in MODELS8[:2]}
    rows = []
    # warm-up: start the two loky worker processes (and their imports) before timing; the
    # executor is reused by the timed run, as it is by every later run of a session
    bandit_select(slow_evaluate, cands, strategy=BatchThompson(0.95, n_workers=2, max_evals=6), n_jobs=2,
                  random_state=seed + 1)
    for jobs in (1, 2):
        strat = BatchThompson(0.95, n_workers=jobs, stopping="glr", max_evals=n_evals)
        t0 = time.perf_counter()
        sel = bandit_select(slow_evaluate, cands, strategy=strat, n_jobs=jobs, random_state=seed)
        secs = time.perf_counter() - t0
        n = int(np.sum(sel.result["evaluations"]))
        rows.append({"n_jobs": jobs, "strategy": strat.spec(), "evaluations": n, "seconds": secs,
                     "evaluations_per_second": n / secs, "stop_reason": sel.result["stop_reason"]})
        print(f"parallel n_jobs={jobs}: {n} evals in {secs:.1f} s", flush=True)
    return {"rows": rows, "speedup": rows[1]["evaluations_per_second"] / rows[0]["evaluations_per_second"]}


# ----------------------------------------------------------------------------------------
def _load(name: str) -> dict[str, Any] | None:
    return read_result(f"adaptive_{name}.json")


def _fiesta_level(fn: dict[str, Any] | None, conf: float) -> dict[str, Any] | None:
    """The summary of fiesta-nlp's TTTS runs at ``conf`` (``adaptive.py fiesta-nlp``'s file)."""
    if not fn:
        return None
    for level in fn.get("levels", {}).values():
        if abs(level["confidence"] - conf) < 1e-9:
            return level
    return None


def _fiesta_samples(fn: dict[str, Any]) -> str:
    levels = list(fn.get("levels", {}).values())
    return f"{levels[0]['samples_per_model']:,}" if levels else "?"


def _paper_bts(r: dict[str, Any]) -> Any:
    """FIESTA's Table 3 figure for a batch row where the paper has one (BTS at 0.95), else ''."""
    plain = r["confidence"] == 0.95 and "thompson" in r["method"].split("rule=")[-1] and "top_two" not in r["method"]
    return PAPER_BTS[r["workers"]] if plain else ""


def _wrong_choices(title: str, intro: str, rows: list[dict[str, Any]], more: dict[str, Any]) -> list[str]:
    """A section of wrong-choice rates: family, delta, method, wrong choices (SE), within delta, mean
    evaluations, then one column per entry of ``more`` (header: function of the row)."""
    return md_section(title, intro, ["family", "delta", "method", "wrong choices (SE)", "<= delta", "mean evals",
                                     *more],
                      [[r["family"], r["delta"], r["method"], f"{r['wrong']:.4f} ({r['wrong_se']:.4f})",
                        "yes" if r["within_delta"] else "**no**", f"{r['evaluations_mean']:.1f}",
                        *(cell(r) for cell in more.values())] for r in rows])


def report() -> None:
    secs = {k: _load(k) for k in ("fixed", "batch", "budget", "calibration", "bayes_close", "overhead",
                                   "parallel", "fiesta_nlp_ttts", "fiesta_nlp_nonadaptive")}
    md = ["# certa adaptive selection vs FIESTA (issue 3)", "",
          "Generated by `benchmarks/adaptive.py fiesta --report` from the section files "
          "`benchmarks/results/adaptive_<section>.json` (settings, seeds and machine load inside).", ""]
    f, fn = secs["fixed"], secs["fiesta_nlp_ttts"]
    if f:
        md += ["## Fixed confidence, 8 TDSA models (replay), FIESTA's Bayesian stopping rule", "",
               f"{f['runs']} seeded runs per row. Paper = FIESTA paper Table 2 (TTTS, mean evaluations). "
               "The ratio is to the non-adaptive approach as FIESTA runs it (stopping rule checked after each "
               "complete round) where that row exists.", "",
               "| confidence | method | mean evals (SE) | min | max | % chose tdlstm | ratio to non-adaptive | paper TTTS |",
               "|---|---|---|---|---|---|---|---|"]
        by = {(r["confidence"], r["method"]): r for r in f["rows"]}
        for conf in CONFIDENCES:
            per_round = "certa UniformUntilConfident, checked per round (FIESTA's)"
            uni = by.get((conf, per_round)) or by[(conf, "certa UniformUntilConfident")]
            for meth in ("certa TopTwoThompson", TTTS_IDS, "certa UniformUntilConfident", per_round):
                if (conf, meth) not in by:
                    continue
                r = by[(conf, meth)]
                md.append(f"| {conf} | {meth} | {r['evaluations_mean']:.1f} ({r['evaluations_se']:.1f}) | "
                          f"{r['evaluations_min']} | {r['evaluations_max']} | {100 * r['p_correct']:.1f} | "
                          f"{r['evaluations_mean'] / uni['evaluations_mean']:.2f} | {PAPER_TTTS[conf]} |")
            for label, source in (("non_adaptive_fc", secs["fiesta_nlp_nonadaptive"]), ("TTTS", fn)):
                lvl = _fiesta_level(source, conf)
                if lvl:
                    se = lvl.get("evaluations_se") or float("nan")
                    md.append(f"| {conf} | fiesta-nlp {label} (this replay, {lvl['n_runs']} runs) | "
                              f"{lvl['evaluations_mean']:.1f} ({se:.1f}) | {lvl['evaluations_min']} | "
                              f"{lvl['evaluations_max']} | {100 * lvl['p_correct']:.1f} | "
                              f"{lvl['evaluations_mean'] / uni['evaluations_mean']:.2f} | {PAPER_TTTS[conf]} |")
        if fn:
            md += ["", "certa minus fiesta-nlp TTTS, same replay (mean evaluations; SE of the "
                   "difference from the two independent sets of runs; FIESTA's Monte Carlo belief with "
                   f"{_fiesta_samples(fn)} draws per model):", "",
                   "| confidence | certa method | certa | fiesta-nlp TTTS | difference (SE) | z |",
                   "|---|---|---|---|---|---|"]
            for conf in CONFIDENCES:
                for meth in ("certa TopTwoThompson", TTTS_IDS):
                    fl, c = _fiesta_level(fn, conf), by.get((conf, meth))
                    if fl and c and fl.get("evaluations_se"):
                        d = c["evaluations_mean"] - fl["evaluations_mean"]
                        se = float(np.hypot(c["evaluations_se"], fl["evaluations_se"]))
                        md.append(f"| {conf} | {meth[len('certa '):]} | {c['evaluations_mean']:.1f} | "
                                  f"{fl['evaluations_mean']:.1f} ({fl['n_runs']} runs) | {d:+.1f} ({se:.1f}) | "
                                  f"{d / se:+.2f} |")
        paired = [(conf, by.get((conf, "certa TopTwoThompson")), by.get((conf, TTTS_IDS))) for conf in CONFIDENCES]
        paired = [(conf, a, b) for conf, a, b in paired if a and b and "evaluations" in a and "evaluations" in b]
        if paired:
            md += ["", 'beta="ids" minus beta=0.5, paired: the same run seeds, so the k-th evaluation of a '
                   "candidate replays the same stored score in both (mean difference and its SE over runs):", "",
                   "| confidence | beta=0.5 | beta=\"ids\" | difference (SE) | relative |", "|---|---|---|---|---|"]
            for conf, a, b in paired:
                d = np.asarray(b["evaluations"], float) - np.asarray(a["evaluations"], float)
                md.append(f"| {conf} | {a['evaluations_mean']:.1f} | {b['evaluations_mean']:.1f} | "
                          f"{d.mean():+.1f} ({d.std(ddof=1) / np.sqrt(d.size):.1f}) | "
                          f"{100 * d.mean() / a['evaluations_mean']:+.1f} % |")
        md.append("")
    b = secs["batch"]
    if b:
        md += md_section(
            "Batch (asynchronous workers), 8 TDSA models",
            f"{b['runs']} seeded runs per row; every evaluation asked counts, including those in flight "
            "at the stop. Paper = FIESTA Table 3 (BTS, mean evaluations at 0.95).",
            ["confidence", "workers", "method", "mean evals (SE)", "min", "max", "% chose tdlstm", "paper BTS"],
            [[r["confidence"], r["workers"], r["method"], f"{r['evaluations_mean']:.1f} ({r['evaluations_se']:.1f})",
              r["evaluations_min"], r["evaluations_max"], f"{100 * r['p_correct']:.1f}", _paper_bts(r)]
             for r in b["rows"]])
    bu = secs["budget"]
    if bu:
        md += md_section(
            "Fixed budget, 12 TDSA models (replay)",
            f"{bu['runs']} seeded runs per row. Paper: sequential halving at 120 chose tdlstm with "
            "probability 0.895, non-adaptive at 228: 0.879.",
            ["method", "budget", "P(chose tdlstm) (SE)", "evaluations spent: mean (min-max)"],
            [[r["method"], r["budget"], f"{r['p_correct']:.3f} ({r['se_correct']:.3f})",
              f"{r['evaluations_mean']:.1f} ({r['evaluations_min']}-{r['evaluations_max']})"] for r in bu["rows"]])
    c = secs["calibration"]
    if c:
        md += _wrong_choices(
            "Calibration: wrong-choice rate vs delta (Gaussian candidates, sd 1)",
            f"{c['runs']} seeded runs per row ({c['tt_glr_runs']} for TopTwoThompson glr). Lower bound = "
            "T*(mu) kl(delta, 1 - delta) on the mean evaluations of any delta-correct method.", c["rows"],
            {"lower bound": lambda r: f"{r['lower_bound']:.1f}", "ratio": lambda r: f"{r['ratio_to_lower_bound']:.1f}"})
    bc = secs["bayes_close"]
    if bc:
        cap = bc["rows"][0].get("cap")
        md += _wrong_choices(
            "FIESTA's Bayesian rule on two close candidates (Gaussian, sd 1)",
            f"{bc['runs']} seeded runs per row" + (f", each capped at {cap} evaluations (a capped run chooses its "
                                                   "leader)" if cap else "") + ". The GLR rule is not run here: at "
            "these gaps it needs tens of thousands of evaluations (its calibration is in the table above).", bc["rows"],
            {"runs capped": lambda r: r.get("capped", "-"), "lower bound": lambda r: f"{r['lower_bound']:.1f}"})
    o = secs["overhead"]
    if o:
        md += ["## Decision overhead per evaluation, 8 TDSA models, confidence 0.95", "",
               f"certa (TopTwoThompson, one run of {o['certa_evaluations']} evaluations, ask + tell + result, "
               f"P(best) by quadrature after every evaluation): {o['certa_decision_seconds_per_evaluation'] * 1e3:.3f} ms. "
               f"fiesta-nlp (belief_calc with 100,000 samples per model + the TTTS choice, at the same state): "
               f"{o['fiesta_belief_and_choice_seconds_per_evaluation']:.3f} s, ratio {o['ratio']:.0f}x."]
        if "ratio_full_runs" in o:
            md.append(f"fiesta-nlp full TTTS runs ({o['fiesta_full_runs']} runs, wall time / evaluations; the "
                      f"replayed evaluation itself costs microseconds): "
                      f"{o['fiesta_full_runs_seconds_per_evaluation']:.3f} s per evaluation, "
                      f"ratio {o['ratio_full_runs']:.0f}x.")
        md.append("")
    p = secs["parallel"]
    if p:
        md += md_section("Parallel throughput: bandit_select, evaluations of 0.5 s", None,
                         ["local workers", "strategy", "evaluations", "seconds", "evaluations / s"],
                         [[r["n_jobs"], f"BatchThompson(n_workers={r['n_jobs']}, stopping=glr)", r["evaluations"],
                           f"{r['seconds']:.1f}", f"{r['evaluations_per_second']:.2f}"] for r in p["rows"]])[:-1]
        md += ["", f"Speed-up: {p['speedup']:.2f}x (the two local worker processes are started by a warm-up run "
               "before timing). Both runs stop at max_evals, so the same evaluations are timed. Both runs use the same stopping rule (glr, delta-correct "
               "whatever the number of workers: it is checked on the scores told, in the order asked).", ""]
    with open(RESULTS / "adaptive_fiesta.md", "w") as fh:
        fh.write("\n".join(md) + "\n")
    with open(RESULTS / "adaptive_fiesta.json", "w") as fh:
        json.dump(secs, fh, indent=1, default=float)
    print("\n".join(md))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="adaptive.py fiesta")
    ap.add_argument("--section", default="all",
                    choices=["all", "fixed", "batch", "budget", "calibration", "bayes_close", "overhead",
                             "parallel"])
    ap.add_argument("--runs", type=int, default=None, help="runs per row (default: section's own)")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=2019)
    ap.add_argument("--tt-glr-runs", type=int, default=100)
    ap.add_argument("--report", action="store_true")
    a = ap.parse_args(argv)
    if a.report:
        report()
        return
    todo = ["fixed", "batch", "budget", "calibration", "bayes_close", "overhead", "parallel"] if a.section == "all" else [a.section]
    defaults = {"fixed": 500, "batch": 300, "budget": 2000, "calibration": 1000, "bayes_close": 1000}
    for sec in todo:
        t0 = time.perf_counter()
        runs = a.runs or defaults.get(sec)
        if sec == "fixed":
            out = section_fixed(runs, a.n_jobs, a.seed)
        elif sec == "batch":
            out = section_batch(runs, a.n_jobs, a.seed)
        elif sec == "budget":
            out = section_budget(runs, a.n_jobs, a.seed)
        elif sec == "calibration":
            out = section_calibration(runs, a.n_jobs, a.seed, a.tt_glr_runs)
        elif sec == "bayes_close":
            out = section_bayes_close(runs, a.n_jobs, a.seed)
        elif sec == "overhead":
            out = section_overhead(a.seed)
        else:
            out = section_parallel(a.seed, 40)
        out["section_seconds"] = time.perf_counter() - t0
        write(sec, out)
    report()
