"""Issue 32 item 3: how the paired rule spreads delta over each candidate's rivals.

The first row ranks, for each candidate ``j``, the other survivors by their score on it; the rule
puts ``a w_r delta`` on "the rival ranked ``r`` is better than ``j``", tested on the rows after the
first (``w_r = r^-p / sum_{s<K} s^-p``), and ``(1 - a) delta`` on the ``K - 1`` pairs over all rows
(:mod:`certa.strategies._paired`). Variants (``a``, ``p``):

* ``issue 23 (0.5, inf)``: half of delta on the first-ranked rival alone, the rule before issue 32;
* ``ranks (1, p)`` for ``p`` in 1.5, 2 (shipped), 3; ``ranks (0.5, 2)``;
* ``oracle partner``: a diagnostic, **not a valid rule**: the first row replaced by the true means,
  so each candidate's first-ranked rival is the true best (the best's, the second best), all of
  delta on it (``a = 1``, ``p = inf``). It shows what any choice of partners can gain at most in
  this family of tests (with two candidates there is no partner to choose: the rule itself);
* ``no contrast (0, -)``: every pair on all rows with ``delta / (K - 1)``.

Families: the 12 correlated Gaussian families of ``adaptive.py calibration paired`` and the
replays of TDSA (8 models, its 500 rows), Debian (11) and digits (6) (the 100 folds of their cached
20x5 CV pools, ``benchmarks/peers.py``). :func:`certa.planning.batch.simulate_paired_batch`, delta
0.05, the same seeds for every variant, cap 200 evaluations per candidate. Usage::

    flock /tmp/certa-cpu.lock nice -n 5 python benchmarks/adaptive.py paired-ranks --runs 1000

``paired_ranks.{json,md}`` were measured before the early exit (``adaptive.py early-exit``); the same
command with ``--out paired_ranks_exit`` measures the rule with it (same seeds).
"""
from __future__ import annotations

import argparse
import json
import math
import time
from typing import Any

import numpy as np
from _common import RESULTS, loadavg, machine_info

from certa.planning.batch import ReplayRows, simulate_paired_batch

DELTA = 0.05
#: (label, contrast share a, rank power p); ``oracle`` rows replace the first row by the true means.
VARIANTS = (("issue 23 (0.5, inf)", 0.5, math.inf), ("ranks (1, 2), shipped", 1.0, 2.0),
            ("ranks (1, 1.5)", 1.0, 1.5), ("ranks (1, 3)", 1.0, 3.0), ("ranks (0.5, 2)", 0.5, 2.0),
            ("no contrast (0, -)", 0.0, 2.0), ("oracle partner (diagnostic, not valid)", 1.0, math.inf))


class OracleFirstRow:
    """A sampler whose first row is the true means (so the first-row ranks are the true ones); the
    rows after it are the wrapped sampler's. A diagnostic: a real first row is noisy."""

    def __init__(self, sampler: Any) -> None:
        self.sampler = sampler
        self.first = True

    @property
    def true_means(self) -> np.ndarray:
        return np.asarray(self.sampler.true_means, dtype=float)

    def rows(self, n: int, rng: np.random.Generator) -> np.ndarray:
        x = self.sampler.rows(n, rng)
        if self.first:
            self.first = False
            x = np.broadcast_to(self.true_means, x.shape).copy()
        return x


def families() -> dict[str, Any]:
    from _adaptive.calibration import paired_families
    from _adaptive.oracle_ratio import task_rows

    out = {n: f["sampler"] for n, f in paired_families().items() if "TDSA" not in n}
    for task in ("tdsa", "debian", "digits"):
        names, x = task_rows(task)
        out[f"{task} replay"] = ReplayRows({n: x[:, c] for c, n in enumerate(names)}, paired=True)
    return out


def markdown(out: dict[str, Any]) -> str:
    fams = list(out["families"])

    def short(f: str) -> str:
        s = f.split(" (")[0].replace("best_plus_9_near_ties", "near ties").replace("variances 4x", "4x var")
        return s + (" r " + f.split("correlation ")[1] if "correlation" in f else "")

    head = ["variant (a, p)"] + [short(f) for f in fams] + ["geometric mean, Gaussian", "geometric mean, replays"]
    base = out["variants"][VARIANTS[0][0]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
             "| issue 23: evaluations | " + " | ".join(f"{base[f]['evaluations_mean']:.1f}" for f in fams) + " | | |"]
    for label, res in out["variants"].items():
        ratio = {f: res[f]["evaluations_mean"] / base[f]["evaluations_mean"] for f in fams}
        gau = [ratio[f] for f in fams if "replay" not in f]
        rep = [ratio[f] for f in fams if "replay" in f]
        lines.append(f"| {label} | " + " | ".join(f"{ratio[f]:.3f}" for f in fams)
                     + f" | **{math.exp(np.mean(np.log(gau))):.3f}** | **{math.exp(np.mean(np.log(rep))):.3f}** |")
    wrong = {label: sum(res[f]["wrong"] for f in fams) for label, res in out["variants"].items()}
    lines += ["", f"Evaluations relative to the issue-23 rule, same seeds, {out['runs']} runs per cell, delta "
              f"{out['delta']}, cap 200 evaluations per candidate; r = correlation between candidates. Wrong "
              "choices over all cells: " + ", ".join(f"{k} {v}" for k, v in wrong.items())
              + f" (of {out['runs'] * len(fams)}). Generated by benchmarks/adaptive.py paired-ranks."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="adaptive.py paired-ranks", description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="paired_ranks", help="results/OUT.{json,md} (paired_ranks_exit: the rule with its early exit)")
    args = ap.parse_args(argv)
    t0 = time.time()
    fams = families()
    out: dict[str, Any] = {"delta": DELTA, "runs": args.runs, "seed": args.seed, "families": list(fams),
                           "variants": {}}
    for label, share, power in VARIANTS:
        res = out["variants"][label] = {}
        for i, (name, sampler) in enumerate(fams.items()):
            k = np.asarray(sampler.true_means).size
            # two candidates: one pair on all rows, no ranks, nothing for an oracle to choose
            smp = OracleFirstRow(sampler) if label.startswith("oracle") and k > 2 else sampler
            rep = simulate_paired_batch(smp, confidence=1 - DELTA, n_runs=args.runs, max_evals=200 * k,
                                        random_state=[args.seed, i], contrast_share=share, rank_power=power)
            ev = rep.evaluations
            res[name] = {"evaluations_mean": float(ev.mean()), "evaluations_se": float(ev.std(ddof=1) / math.sqrt(ev.size)),
                         "wrong": int(rep.wrong.sum()), "capped": int(rep.capped.sum()),
                         "rows_per_candidate": rep.counts.mean(axis=0).round(2).tolist()}
        print(label, json.dumps({n: round(r["evaluations_mean"], 1) for n, r in res.items()}), flush=True)
    out.update(machine=machine_info(), wall_s=time.time() - t0, load_end=loadavg())
    (RESULTS / f"{args.out}.json").write_text(json.dumps(out, indent=1))
    (RESULTS / f"{args.out}.md").write_text(markdown(out))
    print(markdown(out))
