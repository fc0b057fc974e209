"""Issue 23 acceptance: certa's paired default against Optuna's pruner on FIESTA's TDSA replay.

One run, the same replay for every method: the 8-model fixed-confidence problem of the FIESTA
paper ({tdlstm, atae, ian, lstm} x {full, _50}, ``/work/shared/data/fiesta-tdsa-test-f1.json``;
row i of the table is one split and seed for every model). Each replay run draws rows at random
with replacement; the true best is the model with the highest mean over all 500 rows (tdlstm).

* certa, paired default: ``certa simulate --table T --paired`` (the real strategy, the
  ask/tell loop of :func:`certa.planning.simulate.simulate` with ``paired_rows=True``), confidence 0.95;
* certa, the same strategy without pairing (each score from its own random row), and the
  unpaired top-two GLR rule (the previous default);
* Optuna 5: ``GridSampler`` over the 8 models (one trial per model, in the sampler's order),
  each trial reporting one row's score per step (the run's rows, shared by every trial, so the
  Wilcoxon test is paired), ``WilcoxonPruner(p_threshold=0.1)``, at most 30 (and 20) rows per
  model; the choice is the completed trial with the highest mean.

Writes ``benchmarks/results/paired_tdsa.json`` and ``.md``. Usage::

    flock /tmp/certa-cpu.lock python benchmarks/adaptive.py paired-tdsa --runs 300
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
from _common import TDSA_MODELS8, loadavg, machine_info, save, tdsa_table

from certa.planning.simulate import simulate
from certa.search.bandit import make_strategy

MODELS = TDSA_MODELS8


def optuna_runs(tab: dict[str, list[float]], runs: int, steps: int, seed: int) -> dict:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    scores = np.array([tab[m] for m in MODELS]).T
    best_true = int(np.argmax(scores.mean(axis=0)))
    evals, chosen = [], []
    for r in range(runs):
        rng = np.random.default_rng([seed, r])
        rows = rng.integers(scores.shape[0], size=steps)   # with replacement, as certa's replay
        count = [0]

        def objective(trial):
            m = trial.suggest_categorical("model", list(range(len(MODELS))))
            seen = []
            for step in range(steps):
                v = float(scores[rows[step], m])
                count[0] += 1
                seen.append(v)
                trial.report(v, step)
                if trial.should_prune():
                    raise optuna.TrialPruned()
            return float(np.mean(seen))

        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # WilcoxonPruner is marked experimental
            study = optuna.create_study(direction="maximize",
                                        sampler=optuna.samplers.GridSampler({"model": list(range(len(MODELS)))},
                                                                            seed=int(rng.integers(2**31))),
                                        pruner=optuna.pruners.WilcoxonPruner(p_threshold=0.1))
            study.optimize(objective, n_trials=len(MODELS))
        done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
        chosen.append(max(done, key=lambda t: t.value).params["model"])
        evals.append(count[0])
    evals_a, chosen_a = np.array(evals), np.array(chosen)
    return {"method": f"Optuna GridSampler + WilcoxonPruner(0.1), at most {steps} rows",
            "evaluations_mean": float(evals_a.mean()), "evaluations_se": float(evals_a.std(ddof=1) / np.sqrt(runs)),
            "correct": float((chosen_a == best_true).mean()), "runs": runs, "optuna": optuna.__version__}


def certa_runs(tab, runs: int, seed: int, label: str, paired_rows: bool, **kw) -> dict:
    # the cap `certa select` and the fronts apply by default (200 evaluations per candidate): without
    # it a run that wrongly ruled out the best (at most delta of runs) goes on between the two
    # near-tied runners-up (atae and ian differ by 0.0004) for tens of thousands of evaluations
    strategy = make_strategy(kw.pop("strategy", "auto"), confidence=0.95, budget=None, max_evals="auto",
                             n_candidates=len(tab), **kw)
    cap = strategy.max_evals
    t0 = time.process_time()
    rep = simulate(strategy, table=tab, n_runs=runs, random_state=seed, paired_rows=paired_rows)
    ok = rep.chosen == rep.true_best
    return {"method": label, "evaluations_mean": float(rep.evaluations.mean()),
            "evaluations_se": float(rep.evaluations.std(ddof=1) / np.sqrt(runs)), "correct": float(ok.mean()),
            "runs": runs, "confidence_reached_min": float(np.nanmin(rep.confidence_reached)),
            "max_evals": cap, "runs_at_cap": int((rep.evaluations >= cap).sum()) if cap else 0,
            "cpu_s": time.process_time() - t0}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="adaptive.py paired-tdsa", description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-top-two", action="store_true", help="leave out the slow unpaired top-two rows")
    args = ap.parse_args(argv)
    tab = tdsa_table(MODELS)
    out = {"machine": machine_info(), "runs": args.runs, "seed": args.seed, "confidence": 0.95, "rows": []}
    rows = out["rows"]
    rows.append(certa_runs(tab, args.runs, args.seed, "certa default, paired rows (simulate --paired)", True))
    print(json.dumps(rows[-1]), flush=True)
    for steps in (30, 20):
        rows.append(optuna_runs(tab, args.runs, steps, args.seed))
        print(json.dumps(rows[-1]), flush=True)
    rows.append(certa_runs(tab, args.runs, args.seed, "certa paired strategy, rows not paired", False))
    if not args.skip_top_two:
        rows.append(certa_runs(tab, args.runs, args.seed, "certa top-two GLR, unpaired (previous default)", False,
                               paired=False))
    for r in rows:
        print(json.dumps(r), flush=True)
    ref = rows[1]["evaluations_mean"]
    for r in rows:
        r["ratio_to_optuna_30"] = r["evaluations_mean"] / ref
    out["loadavg_at_end"] = loadavg()
    lines = ["| TDSA replay, 8 models, confidence 0.95 | evaluations (mean ± SE) | x Optuna (30 rows) | correct "
             "| runs at the cap |", "|---|---|---|---|---|"]
    for r in rows:
        cap = f"{r['runs_at_cap']} (cap {r['max_evals']})" if r.get("max_evals") else "-"
        lines.append(f"| {r['method']} | {r['evaluations_mean']:.1f} ± {r['evaluations_se']:.1f} | "
                     f"{r['ratio_to_optuna_30']:.2f} | {100 * r['correct']:.1f} % | {cap} |")
    lines.append("")
    lines.append(f"{args.runs} replay runs each (seed {args.seed}); generated by benchmarks/adaptive.py paired-tdsa.")
    save("paired_tdsa", out, lines)
    print("\n".join(lines))
