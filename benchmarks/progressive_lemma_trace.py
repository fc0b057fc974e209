"""Where does the race drop the settings that rank in the exhaustive top 5? (diagnostic for docs/progressive.md)

Reruns ``ProgressiveSearchCV(survival="race")`` for one draw and learner of
``progressive_lemma.py`` (same seed, data, grid and baseline) and prints, for every
setting in the exhaustive top 5 (ranking from ``progressive_lemma_exhaustive.json``), the
round that dropped it, its score against the leader's, its Bonferroni-adjusted p-value and
whether the cap cut it (and the cap's count that round), then the exhaustive ranks of the final round's
settings and the verdict against the default. Runs the front's defaults (since issue 14's rerun: cap='budget',
budget 2, 5-fold confirmation). Run: ``python benchmarks/progressive_lemma_trace.py lookup2 tree psearch paramsearch``.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from progressive_lemma import CACHE, DEFAULT_LOOKUP, LEARNERS, cache_key, load_draw

from certa.engine.candidates import candidates_from_grid
from certa.search._common import rank_scores
from certa.search.progressive import ProgressiveSearchCV


def main(draw: str, learner: str, schedules: list[str], n: int = 20000, seed: int = 0) -> None:
    make, grid_fn, default_fn = LEARNERS[learner]
    X, y = load_draw(draw, n, seed, DEFAULT_LOOKUP)
    entry = json.loads(CACHE.read_text())[cache_key(draw, learner, n, seed, False, True)]
    rank = rank_scores(np.array(entry["scores"]))
    watch = [c.index for c in candidates_from_grid(grid_fn(False)) if rank[c.index] <= 5]
    for schedule in schedules:
        s = ProgressiveSearchCV(make(), grid_fn(False), schedule=schedule, survival="race", random_state=seed,
                                n_jobs=1, refit=False, cache_transformers=True, baseline=default_fn(),
                                progress=False).fit(X, y)
        print(f"== {draw}/{learner}/{schedule}+race: rounds {[r['n_evaluated'] for r in s.selection_.result['rounds']]}")
        for r in s.selection_.result["rounds"][:-1]:
            for i in watch:
                if i in r["candidates"] and not r["survived"][r["candidates"].index(i)]:
                    j = r["candidates"].index(i)
                    print(f"round {r['round']} (size {r['size']}, {r['n_evaluated']} settings, cap {r.get('cap')}): "
                          f"exhaustive rank {rank[i]} dropped: score {r['scores'][j]:.4f} (leader "
                          f"{max(r['scores']):.4f}), adjusted p {r['pvalues_adjusted'][j]:.3g}, cut by cap "
                          f"{r['cut_by_cap'][j]}")
        last = s.selection_.result["rounds"][-1]
        print(f"final round (size {last['size']}): exhaustive ranks of its settings "
              f"{sorted(int(rank[c]) for c in last['candidates'])}; verdict: {s.vs_baseline_}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
