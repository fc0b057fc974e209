"""Sampling rules tried for the fixed-confidence problem of the FIESTA paper (issue 3).

Issue 3 asks `TopTwoThompson` for at most 0.55x the evaluations of FIESTA's non-adaptive approach
at confidence 0.95, 0.9 and 0.8 on the replay of the paper's 8 TDSA models. This script runs the
top-two sampling rules that were tried on that replay, all with FIESTA's belief and Bayesian
stopping rule, on the same run seeds (common random numbers: the k-th evaluation of a candidate
replays the same stored score under every rule), and reports each rule's mean evaluations, its
paired difference to FIESTA's TTTS (beta = 1/2) and its ratio to the non-adaptive approach.

Rules (the ones not in certa are defined here, as subclasses of `TopTwoThompson`):

* ``beta=0.5``: FIESTA's TTTS (certa's default);
* ``ids``: `TopTwoThompson(beta="ids")`, information-directed selection, ``h_i = s_i^2 / N_i``;
* ``ids_t``: IDS with the Student-t posterior's variance of the mean ``scale^2 df / (df - 2)``
  (infinite for df <= 2) instead of ``s^2 / N``;
* ``ids_sq``: ``h_i = s_i^2 / N_i^2`` (not the IDS formula: it balances ``N^3 / s^2``);
* ``beta=0.4``: a fixed beta below 1/2;
* ``t3c``: Thompson leader, transportation-cost challenger (Shang et al. 2020).

Usage::

    python3 benchmarks/adaptive.py sampling-variants --runs 2000 --seed 11 --confidence 0.8
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
from _common import RESULTS, TDSA_MODELS8, machine_info, tdsa_table

from certa.planning.simulate import simulate
from certa.strategies import TopTwoThompson

#: FIESTA's non-adaptive approach on this replay (benchmarks/results/adaptive_fixed.json, 500 runs)
NON_ADAPTIVE = {0.95: 291.1, 0.9: 208.8, 0.8: 129.8}


def _leader(loc, scale, df, gen) -> int:
    return int(np.argmax(loc + scale * gen.standard_t(df, size=loc.shape)))


def _challenger(loc, scale, df, leader, gen, tries=64) -> int:
    for _ in range(tries):
        j = int(np.argmax(loc + scale * gen.standard_t(df, size=loc.shape)))
        if j != leader:
            return j
    m = loc.copy()
    m[leader] = -np.inf
    return int(np.argmax(m))


class _Rule(TopTwoThompson):
    """`TopTwoThompson` with another choice of the next candidate after the first round."""

    def __init__(self, confidence: float) -> None:   # the settings these variants were run with
        super().__init__(confidence, 0.5, stopping="bayes")

    def _pick(self, loc, scale, df) -> int:
        raise NotImplementedError

    def ask(self):
        d = self._initial_ask()
        if d is not None or not self._ready():
            return d
        return self._new_draw(self._pick(*self._posterior()))


class _PairRule(_Rule):
    """Thompson leader and challenger; the leader is played with probability ``_r(...)``."""

    def _r(self, i, j, scale, df) -> float:
        raise NotImplementedError

    def _pick(self, loc, scale, df) -> int:
        i = _leader(loc, scale, df, self._rng)
        j = _challenger(loc, scale, df, i, self._rng)
        return i if self._rng.random() < self._r(i, j, scale, df) else j


class IDSSquared(_PairRule):
    def _r(self, i, j, scale, df):
        h = scale ** 2 * df / (df + 2) ** 2          # s^2 / N^2
        return h[i] / (h[i] + h[j])


class IDSPosteriorVariance(_PairRule):
    def _r(self, i, j, scale, df):
        def h(k):
            return np.inf if df[k] <= 2 else scale[k] ** 2 * df[k] / (df[k] - 2)
        hi, hj = h(i), h(j)
        if np.isinf(hi) and np.isinf(hj):
            return 0.5
        return 1.0 if np.isinf(hi) else 0.0 if np.isinf(hj) else hi / (hi + hj)


class T3C(_Rule):
    def _pick(self, loc, scale, df) -> int:
        i = _leader(loc, scale, df, self._rng)
        if self._rng.random() < self.beta:
            return i
        v = scale ** 2 * df / (df + 2)                # s^2 / N
        cost = np.maximum(loc[i] - loc, 0.0) ** 2 / (v[i] + v)
        cost[i] = np.inf
        return int(np.argmin(cost))


def rules(conf: float) -> dict[str, TopTwoThompson]:
    return {"beta=0.5": TopTwoThompson(conf, 0.5, stopping="bayes"), "ids": TopTwoThompson(conf, beta="ids", stopping="bayes"),
            "ids_t": IDSPosteriorVariance(conf), "ids_sq": IDSSquared(conf),
            "beta=0.4": TopTwoThompson(conf, beta=0.4, stopping="bayes"), "t3c": T3C(conf)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="adaptive.py sampling-variants")
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--confidence", type=float, nargs="+", default=[0.8])
    a = ap.parse_args(argv)
    table = tdsa_table(TDSA_MODELS8)
    out = {"runs": a.runs, "seed": a.seed, "rows": [], "machine": machine_info()}
    md = ["# Top-two sampling rules on the FIESTA replay (8 TDSA models, Bayesian stopping)", "",
          f"{a.runs} runs per row, seed {a.seed}, the same run seeds for every rule (paired). "
          "Ratio: to FIESTA's non-adaptive approach (500 runs, `adaptive_fixed.json`).", "",
          "| confidence | rule | mean evals (SE) | minus beta=0.5 (paired SE) | % chose tdlstm | ratio to non-adaptive |",
          "|---|---|---|---|---|---|"]
    for conf in a.confidence:
        base = None
        for name, strat in rules(conf).items():
            t0 = time.perf_counter()
            rep = simulate(strat, table=table, n_runs=a.runs, random_state=a.seed)
            ev = rep.evaluations.astype(float)
            base = ev if base is None else base
            d = ev - base
            row = {"confidence": conf, "rule": name, "evaluations_mean": float(ev.mean()),
                   "evaluations_se": float(ev.std(ddof=1) / np.sqrt(ev.size)),
                   "paired_difference": float(d.mean()),
                   "paired_se": float(d.std(ddof=1) / np.sqrt(d.size)) if name != "beta=0.5" else 0.0,
                   "p_correct": rep.p_correct, "seconds": time.perf_counter() - t0}
            out["rows"].append(row)
            ratio = f"{row['evaluations_mean'] / NON_ADAPTIVE[conf]:.2f}" if conf in NON_ADAPTIVE else ""
            md.append(f"| {conf} | {name} | {row['evaluations_mean']:.1f} ({row['evaluations_se']:.1f}) | "
                      f"{row['paired_difference']:+.1f} ({row['paired_se']:.1f}) | {100 * row['p_correct']:.1f} | "
                      f"{ratio} |")
            print(md[-1], flush=True)
    with open(RESULTS / "adaptive_sampling_variants.json", "w") as fh:
        json.dump(out, fh, indent=1)
    with open(RESULTS / "adaptive_sampling_variants.md", "w") as fh:
        fh.write("\n".join(md) + "\n")
