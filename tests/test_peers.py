"""The peers benchmark's harness (benchmarks/peers.py) checked against independent computations."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import wilcoxon

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
pytest.importorskip("optuna")

import peers


def _replay(scores: np.ndarray, name: str = "tiny") -> peers.Bench:
    return peers.Bench(name, [f"m{i}" for i in range(len(scores))], scores, None, scores.mean(axis=1), None,
                       list(range(scores.shape[1])))


def _expected_pruning(trials, scores, p_threshold):
    """WilcoxonPruner's rule recomputed: after each reported row (from the 2nd), a one-sided Wilcoxon
    signed-rank test (zsplit) of the trial's scores minus the best complete trial's on the rows both
    have; prune when p < threshold unless the trial's mean so far is at least the best's mean."""
    done: dict[int, list[int]] = {}      # complete trials: candidate -> rows
    pruned = {}
    for cand, rows in trials:
        best = max(done, key=lambda c: np.mean([scores[c, r] for r in done[c]])) if done else None
        stop = None
        for i in range(len(rows)):
            if best is None or i + 1 < 2:
                continue
            seen = rows[: i + 1]
            common = [r for r in seen if r in done[best]]
            if len(common) < 2:
                continue
            d = np.array([scores[cand, r] - scores[best, r] for r in common])
            p = wilcoxon(d, alternative="less", zero_method="zsplit").pvalue
            mean_best = np.mean([scores[best, r] for r in done[best]])
            mean_cur = np.mean([scores[cand, r] for r in seen])
            if p < p_threshold and not mean_best <= mean_cur:
                stop = i + 1
                break
        if stop is None:
            done[cand] = list(rows)
        else:
            pruned[cand] = stop
    return pruned, done


@pytest.mark.parametrize("seed", [3, 11])
def test_optuna_wilcoxon_peer_prunes_what_scipy_says(seed):
    rng = np.random.default_rng(seed)
    n_rows = 40
    row_effect = rng.normal(0, 0.05, n_rows)                    # rows shared by every model: paired
    means = np.array([0.70, 0.69, 0.66, 0.60, 0.55])
    scores = means[:, None] + row_effect[None, :] + rng.normal(0, 0.01, (len(means), n_rows))
    bench = _replay(scores)
    out = peers.optuna_wilcoxon(bench, seed, steps=12)
    trials = [(t["candidate"], t["rows"]) for t in out["trials"]]
    pruned, done = _expected_pruning(trials, scores, peers.P_THRESHOLD)
    got = {t["candidate"]: len(t["rows"]) for t in out["trials"] if t["state"] == "PRUNED"}
    assert got == pruned
    assert out["fits"] == sum(len(r) for _, r in trials)
    best = max(done, key=lambda c: np.mean([scores[c, r] for r in done[c]]))
    assert out["choice"] == best
    assert pruned, "the constructed case must prune something"


def test_gridsearch_peer_on_a_replay_chooses_the_best_mean_of_its_rows():
    rng = np.random.default_rng(0)
    scores = rng.normal(0.6, 0.05, (6, 50))
    bench = _replay(scores, "grid")
    for seed in range(5):
        out = peers.sk_grid(bench, seed, 1)
        rows = bench.rows_cv(5, np.random.default_rng(peers.derive_seed(seed, 4, 1)), 1)[0]
        assert out["choice"] == int(np.argmax(scores[:, rows].mean(axis=1)))
        assert out["fits"] == 6 * 5


def test_ground_truth_equals_sklearn_cross_val_score(tmp_path):
    from sklearn.model_selection import RepeatedStratifiedKFold, cross_val_score

    cache = peers.FitCache("digits", path=tmp_path / "fits.json")
    task = cache.task
    c = task.names.index("gaussian nb")
    folds = peers.pool_folds(task.y, {"5": (5, 2, 7)})
    mine = np.mean([cache.score(c, f["train"], f["test"]) for f in folds])
    ref = cross_val_score(task.estimator(c), task.X, task.y,
                          cv=RepeatedStratifiedKFold(n_splits=5, n_repeats=2, random_state=7)).mean()
    assert mine == pytest.approx(ref, abs=1e-12)
    cache.save()
    again = peers.FitCache("digits", path=tmp_path / "fits.json")
    assert [again.score(c, f["train"], f["test"]) for f in folds] == [cache.score(c, f["train"], f["test"])
                                                                       for f in folds]
    assert again.new_fits == 0


def test_lemma_grid_scores_equal_the_pipelines():
    from sklearn.base import clone

    from certa.engine.candidates import Candidate, candidates_from_grid
    from certa.learners import knn_grid, knn_pipeline

    X, y = peers.lemma_draw(700)
    train, test = np.arange(560), np.arange(560, 700)
    cands = [Candidate(i, c.name, c.params) for i, c in enumerate(candidates_from_grid(knn_grid())[::7])]
    fast = peers.knn_grid_scores(X[train], y[train], X[test], y[test], cands)
    ref = [clone(knn_pipeline()).set_params(**c.params).fit(X[train], y[train]).score(X[test], y[test])
           for c in cands]
    assert fast == ref
    assert len(set(ref)) > 3   # the settings differ: the check is not vacuous


def test_fast_pruner_pvalues_equal_scipy_on_tied_differences():
    rng = np.random.default_rng(1)
    for _ in range(60):
        n = int(rng.integers(2, 11))
        d = rng.integers(-3, 4, n) / 360.0          # accuracies on a 360-example fold: ties and zeros
        for alt in ("less", "greater"):
            ref = wilcoxon(d, alternative=alt, zero_method="zsplit").pvalue
            assert peers.signed_rank_p_exact(d, alt) == pytest.approx(ref, rel=1e-12, abs=0)
            assert peers._FastWilcoxon.wilcoxon(d, alternative=alt, zero_method="zsplit").pvalue == \
                pytest.approx(ref, rel=1e-12, abs=0)
