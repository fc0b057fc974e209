"""benchmarks/screen.py (issue 33's acceptance benchmarks): the fit accounting and the tables are right."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))
try:
    import _common  # noqa: F401  (puts this checkout's certa first)
    from _screen import methods, report, tasks, timing
    from _screen import run as run_mod
    from peers import lemma_draw
finally:
    sys.path.remove(str(BENCH))


def _small_data(n=200, seed=0):
    from sklearn.datasets import make_classification

    return make_classification(n_samples=n, n_features=5, random_state=seed)


def test_every_fit_is_one_record_with_its_training_size_and_cpu_time():
    X, y = _small_data()
    est = timing.TimedSVC(C=1.0)
    est.fit(X, y)   # outside a recording: not counted anywhere
    with timing.recording() as log:
        for n in (50, 120, 160):
            est.fit(X[:n], y[:n])
            est.score(X[160:], y[160:])   # score calls predict: charged once, to this fit
    assert log.fits == 3
    assert [r["n"] for r in log.records] == [50, 120, 160]
    assert log.by_size() == {50: 1, 120: 1, 160: 1}
    assert all(r["seconds"] > 0 for r in log.records)
    assert log.seconds == pytest.approx(sum(r["seconds"] for r in log.records))


def test_grid_search_fits_are_counted_as_scikit_learn_makes_them():
    from sklearn.model_selection import GridSearchCV

    X, y = _small_data()
    grid = {"C": [0.1, 1.0, 10.0], "gamma": [0.01, 0.1]}
    with timing.recording() as log:
        s = GridSearchCV(timing.TimedSVC(), grid, cv=4, refit=False).fit(X, y)
    assert log.fits == len(s.cv_results_["params"]) * 4 == 24
    assert set(log.by_size()) == {150}


def test_shared_neighbour_search_gives_the_pipelines_own_scores():
    from sklearn.base import clone

    from certa.engine.candidates import candidates_from_grid
    from certa.learners import knn_grid, knn_pipeline

    X, y = lemma_draw(600)
    tr, te = np.arange(450), np.arange(450, 600)
    cands = candidates_from_grid(knn_grid())
    tasks.clear_shared()
    with timing.recording() as log:
        for c in cands[::31]:
            ours = clone(tasks.lemma_estimator()).set_params(**c.params).fit(X[tr], y[tr]).score(X[te], y[te])
            real = clone(knn_pipeline()).set_params(**c.params).fit(X[tr], y[tr]).score(X[te], y[te])
            assert ours == real, c.name
    searches = {k: v[4] for k, v in tasks._NEIGHBOURS.items()}
    tasks.clear_shared()
    # a fit that reused a search was charged at least that search's recorded time
    assert len(searches) < log.fits
    assert min(r["seconds"] for r in log.records) >= min(searches.values())


def _toy_task(truth):
    X, y = _small_data(150, seed=1)
    grid = {"C": [0.01, 1.0], "gamma": [0.001, 0.1]}
    return tasks.Task("toy", X, y, timing.TimedSVC(), grid, np.asarray(truth), data="toy", truth_note="given")


def test_measure_records_fits_regret_and_right():
    task = _toy_task([0.70, 0.80, 0.79, 0.90])
    rec = methods.measure(task, "grid5", seed=3)
    assert rec["fits"] == 4 * 5
    assert rec["regret"] == pytest.approx(0.90 - task.truth[rec["choice"]])
    assert rec["right"] == (rec["regret"] <= 0.002)
    assert rec["right_exact"] == (rec["choice"] == 3)
    again = methods.measure(task, "grid5", seed=3)
    assert again["choice"] == rec["choice"] and again["fits"] == rec["fits"]   # same seed, same run


def test_report_ratios_are_totals_over_common_seeds_and_flag_the_targets():
    def rec(seed, secs, regret, **kw):
        return {"seed": seed, "fits": 10, "fit_seconds": secs, "regret": regret, "right": regret <= 0.002,
                "right_exact": regret == 0, "wall_seconds": 1.0, "loadavg_start": [1.0], **kw}

    certa = {"miss": False, "wrong_among_finalists": False, "wrong_among_finalists_tol": False, "screened": True,
             "finalists": [1, 2], "confidence": 0.96, "target_reached": True}
    res = {"task": "svc", "truth": [0.9, 0.8], "records": {
        "grid5": {"0": rec(0, 10.0, 0.0), "1": rec(1, 30.0, 0.004), "2": rec(2, 99.0, 0.0)},
        "halving5": {"0": rec(0, 1.0, 0.0), "1": rec(1, 3.0, 0.0)},
        "certa-default": {"0": rec(0, 4.0, 0.0, **certa), "1": rec(1, 12.0, 0.0, **certa)}}}
    s = report.summarize(res, "certa-default")
    assert s["ratio_grid5"] == pytest.approx(16.0 / 40.0)      # seed 2 has no certa run
    assert s["ratio_halving5"] == pytest.approx(16.0 / 4.0)
    assert s["grid_units_mean"] == pytest.approx(0.4)
    assert s["regret_minus_grid"] == pytest.approx(-0.002)
    rows = {r[0]: r[2] for r in report.acceptance(res)}
    assert rows["summed fit time <= 0.5x GridSearchCV(cv=5)"] == "met"
    assert rows["summed fit time <= 3x HalvingGridSearchCV(cv=5) (goal 2x)"] == "**not met**"
    assert rows["mean regret <= GridSearchCV(cv=5)'s + 0.002"] == "met"


def test_report_merges_the_chunks_of_seed_ranges_run_apart(tmp_path, monkeypatch):
    """``run --chunk`` writes ``screen_<task>-<chunk>.json``; the report merges every chunk's records into
    ``screen_<task>.json`` (a chunk's record of a (method, seed) replaces the main file's)."""
    import json

    monkeypatch.setattr(run_mod, "RESULTS", tmp_path)

    def rec(seed, secs):
        return {"seed": seed, "fits": 10, "fit_seconds": secs, "regret": 0.0, "right": True, "right_exact": True,
                "wall_seconds": 1.0, "loadavg_start": [1.0]}

    base = {"task": "svc", "truth": [0.9, 0.8], "settings": ["a", "b"], "true_best": "a"}
    (tmp_path / "screen_svc.json").write_text(json.dumps({**base, "records": {"grid5": {"0": rec(0, 5.0)}}}))
    (tmp_path / "screen_svc-s1.json").write_text(json.dumps(
        {**base, "records": {"grid5": {"1": rec(1, 7.0)}, "halving5": {"1": rec(1, 1.0)}}}))
    (tmp_path / "screen_svc-s2.json").write_text(json.dumps({**base, "records": {"grid5": {"0": rec(0, 6.0)}}}))
    assert [p.name for p in run_mod.chunk_paths("svc")] == ["screen_svc-s1.json", "screen_svc-s2.json"]
    merged = run_mod.merge_chunks("svc")
    assert {m: sorted(r) for m, r in merged["records"].items()} == {"grid5": ["0", "1"], "halving5": ["1"]}
    assert merged["records"]["grid5"]["0"]["fit_seconds"] == 6.0
    assert json.loads((tmp_path / "screen_svc.json").read_text())["records"] == merged["records"]
    assert run_mod.merge_chunks("lemma") is None
