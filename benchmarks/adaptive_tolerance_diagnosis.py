"""Where the evaluations go on the tolerance family with the plain top-two rule (issue 12).

Runs ``TopTwoThompson(0.95, "ids", stopping="glr", tolerance=0.2, max_evals=20000)`` itself
(``certa.planning.simulate.run_direct``) on the issue's family (SD 1; means 0, -0.02, ..., -0.18 and
five at -1), once with the shipped EB-TC_eps sampling (``--rule eb-tc``) and once with the
sampling rule used before it (``--rule plain``: the Thompson leader and the plain top-two
challenger, which ignores the tolerance; the stopping rule and the fallback challenger are the
same). Per run it prints the evaluations, the share on the two best candidates, how often the
Thompson-sampled leader and the highest mean changed, and the candidate with the smallest pair
statistic at the end (the one blocking the stop) with its count.

Usage::

    python benchmarks/adaptive_tolerance_diagnosis.py --rule plain --runs 3
"""
from __future__ import annotations

import argparse
import copy

import numpy as np
from _common import ROOT  # noqa: F401  (puts the repository on sys.path)

from certa.engine.evaluators import FunctionEvaluator
from certa.planning.simulate import GaussianScores, run_direct
from certa.strategies import _fast, _glr, thompson

MEANS = [-0.02 * k for k in range(10)] + [-1.0] * 5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rule", choices=["plain", "eb-tc"], default="plain")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    shipped = _fast.top_two_sample_fast
    log: list[tuple[int, int]] = []

    def recorded(loc, scale, df, beta, gen, max_resamples=64, fallback=None, tolerance=0.0):
        # the Thompson leader the plain rule draws, read off a copy of the generator
        thompson_leader = int(np.argmax(loc + scale * copy.deepcopy(gen).standard_t(df, size=loc.shape)))
        log.append((thompson_leader, int(np.argmax(loc))))
        return shipped(loc, scale, df, beta, gen, max_resamples, fallback,
                       0.0 if a.rule == "plain" else tolerance)

    thompson.top_two_sample_fast = recorded
    ev = FunctionEvaluator(GaussianScores(MEANS, [1.0] * len(MEANS)))
    for seed in range(a.runs):
        log.clear()
        s = thompson.TopTwoThompson(0.95, "ids", stopping="glr", tolerance=0.2, max_evals=20_000)
        r = run_direct(s, ev, len(MEANS), seed=seed)
        counts, lead = r["evaluations"], np.array(log)
        st = s._stats
        _, z = _glr.glr_pairwise_from_stats(st.mean, st.var(), st.n, tolerance=0.2)
        j = int(np.argmin(z))
        print(f"{a.rule} seed {seed}: {int(counts.sum())} evaluations ({r['stop_reason']}), best {r['best']}, "
              f"{counts[:2].sum() / counts.sum():.2f} on the two best, Thompson leader changed at "
              f"{(np.diff(lead[:, 0]) != 0).mean():.2f} of the steps, highest mean {(np.diff(lead[:, 1]) != 0).sum()} "
              f"times; blocking candidate {j} (mean {MEANS[j] + 0.0:g}, {int(counts[j])} evaluations, "
              f"Z {float(np.min(z)):.2f} vs threshold {_glr._log_threshold(0.05, len(MEANS)):.2f})")
        print("   evaluations per candidate:", counts.tolist())


if __name__ == "__main__":
    main()
