"""FIESTA's own TTTS (fiesta-nlp 0.0.1) replayed on the paper's 8-model TDSA problem.

Each run is seeded (``np.random.seed(seed + run)``; FIESTA draws from numpy's global
state) and replays the stored macro-F1 scores of ``fiesta-tdsa-test-f1.json`` exactly as
the FIESTA paper's notebook and certa's simulation do (one stored score drawn at random per
evaluation). FIESTA's code is called unmodified; its belief is a Monte Carlo estimate with
``samples`` draws per model after every evaluation (default here 10,000, the minimum its
docstring recommends; FIESTA's own default, 100,000, costs 0.5 s per evaluation on this
machine, i.e. days for 500 runs at three confidence levels). With 80,000 draws in all the
Monte Carlo SD of a P(best) near 0.95 is 0.0008, far below anything that moves the mean
number of evaluations; ``--samples 100000`` runs the default for a check.

Runs cycle through the confidence levels in blocks of ``--block`` runs so that a job
stopped early still has runs at every level; the results file is rewritten after every
run (mean evaluations with its SE, % correct, the wall time of FIESTA's decisions per
evaluation: a replayed evaluation itself costs microseconds).

Usage (two jobs with their own seeds, one per core, then pooled)::

    python3 benchmarks/adaptive.py fiesta-nlp --seed 0 --out a.json
    python3 benchmarks/adaptive.py fiesta-nlp --seed 100000 --out b.json
    python3 benchmarks/adaptive.py fiesta-nlp --merge a.json b.json
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
from _common import RESULTS, TDSA_MODELS8, TDSA_PATH, import_fiesta, machine_info, tdsa_table

DATA = TDSA_PATH
MODELS8 = TDSA_MODELS8


def summarise(runs: list[dict], confidence: float, samples: int) -> dict:
    ev = np.array([x["evaluations"] for x in runs], dtype=float)
    return {"confidence": confidence, "samples_per_model": samples, "models": MODELS8, "n_runs": len(runs),
            "evaluations_mean": float(ev.mean()),
            "evaluations_se": float(ev.std(ddof=1) / np.sqrt(ev.size)) if ev.size > 1 else None,
            "evaluations_min": int(ev.min()), "evaluations_max": int(ev.max()),
            "p_correct": float(np.mean([x["chosen"] == "tdlstm" for x in runs])),
            "seconds_per_evaluation_mean": float(np.mean([x["seconds_per_evaluation"] for x in runs])),
            "runs": runs}


def merge(paths: list[str], out: str) -> None:
    """Pool the runs of several result files (jobs started with different ``--seed``) into ``out``."""
    pooled: dict[str, list[dict]] = {}
    samples, machine, elapsed, tool = None, None, 0.0, None
    for path in paths:
        with open(path) as fh:
            part = json.load(fh)
        elapsed += part.get("elapsed_seconds", 0.0)
        if tool is not None and part.get("tool") != tool:
            raise ValueError(f"{path} replays {part.get('tool')}, not {tool}")
        tool = part.get("tool")
        machine = part.get("machine")
        for key, level in part["levels"].items():
            if samples is not None and level["samples_per_model"] != samples:
                raise ValueError(f"{path} used {level['samples_per_model']} samples per model, not {samples}")
            samples = level["samples_per_model"]
            pooled.setdefault(key, []).extend(level["runs"])
    seeds = [r["seed"] for runs in pooled.values() for r in runs]
    levels = {}
    for key, runs in pooled.items():
        if len({r["seed"] for r in runs}) != len(runs):
            raise ValueError(f"the files share seeds at confidence {key}: start each job with its own --seed")
        levels[key] = summarise(runs, float(key), samples)
    with open(out, "w") as fh:
        json.dump({"tool": tool, "replay": DATA, "merged_from": paths,
                   "elapsed_seconds": elapsed, "n_seeds": len(set(seeds)), "levels": levels, "machine": machine},
                  fh, indent=1)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="adaptive.py fiesta-nlp")
    ap.add_argument("--merge", nargs="+", help="pool these result files into --out and stop")
    ap.add_argument("--method", choices=["TTTS", "non_adaptive_fc"], default="TTTS",
                    help="FIESTA's function to replay (non_adaptive_fc: evaluate every model each round)")
    ap.add_argument("--runs", type=int, default=500, help="runs per confidence level")
    ap.add_argument("--confidence", type=float, nargs="+", default=[0.95, 0.9, 0.8])
    ap.add_argument("--samples", type=int, default=10_000, help="FIESTA's Monte Carlo draws per model")
    ap.add_argument("--block", type=int, default=25)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(RESULTS / "adaptive_fiesta_nlp_ttts.json"))
    a = ap.parse_args(argv)
    if a.merge:
        merge(a.merge, a.out)
        return
    F = import_fiesta()
    table = tdsa_table(MODELS8)
    arrays = [np.asarray(table[n], dtype=float) for n in MODELS8]

    def model(i):
        # FIESTA's model_function(train, test); the replay draws one stored score
        return lambda train, test: float(arrays[i][np.random.randint(arrays[i].size)])

    runs: dict[float, list[dict]] = {c: [] for c in a.confidence}
    t_start = time.time()
    for start in range(0, a.runs, a.block):
        for conf in a.confidence:
            for r in range(start, min(start + a.block, a.runs)):
                np.random.seed(a.seed + r)
                t0 = time.perf_counter()
                pi, props, num, ev = getattr(F, a.method)([None], [model(i) for i in range(8)],
                                                          lambda d: (None, None), 1.0 - conf, samples=a.samples)
                secs = time.perf_counter() - t0
                runs[conf].append({"seed": a.seed + r, "evaluations": int(num), "chosen": MODELS8[int(np.argmax(pi))],
                                   "seconds": secs, "seconds_per_evaluation": secs / num})
                out = {"tool": f"fiesta-nlp 0.0.1, fiesta.{a.method}, unmodified", "replay": DATA,
                       "elapsed_seconds": time.time() - t_start,
                       "levels": {str(c): summarise(v, c, a.samples) for c, v in runs.items() if v},
                       "machine": machine_info()}
                with open(a.out, "w") as fh:
                    json.dump(out, fh, indent=1)
            s = summarise(runs[conf], conf, a.samples)
            print(f"confidence {conf}: {s['n_runs']} runs, mean {s['evaluations_mean']:.1f} "
                  f"(SE {s['evaluations_se']}), correct {s['p_correct']:.3f}", flush=True)
