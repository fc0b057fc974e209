"""The certified tolerance (issue 33's "best for a budget"): what a paired run that stops before its
target has shown, "within eps of the best with confidence 1 - delta", and its calibration."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from _helpers import run_on_rows
from scipy.optimize import brentq

from certa.planning.simulate import simulate
from certa.strategies import PairedElimination
from certa.strategies._guarantee import fmt_tolerance
from certa.strategies._paired import log_e_process_one_sided


def test_two_candidates_certify_the_root_of_their_one_sided_e_process():
    """Two candidates: one pair on all rows with all of delta; the certified tolerance is the eps where
    ``log M+_N(-eps)`` of the differences (mean and ddof=0 variance from numpy) reaches log(1/delta)."""
    rng = np.random.default_rng(3)
    rows = 12
    shared = rng.normal(0, 0.05, rows)
    matrix = np.column_stack([0.70 + shared + rng.normal(0, 0.02, rows), 0.69 + shared + rng.normal(0, 0.02, rows)])
    res = run_on_rows(PairedElimination(0.95, max_evals=2 * rows), matrix, 2)
    assert res["stop_reason"] == "max_evals" and res["best"] == 0 and res["confidence"] < 0.95
    d = matrix[:, 0] - matrix[:, 1]
    floor = 0.01 * 0.5 * (matrix[:, 0].var() + matrix[:, 1].var())   # the rule's variance floor (not binding here)
    n, m, v = d.size, d.mean(), max(d.var(), floor)
    assert d.var() > floor
    f = lambda eps: float(log_e_process_one_sided(n, m, v, -eps)) - math.log(20.0)
    want = brentq(f, 0.0, 1.0, xtol=1e-14)
    assert res["certified_tolerance"] == pytest.approx(want, rel=1e-9)
    assert f(want * 0.99) < 0 < f(want * 1.01)                       # the smallest: below it, not shown
    assert res["guarantee"].startswith(f"within {fmt_tolerance(res['certified_tolerance'])} of the best with "
                                       "confidence 0.95 (the tolerance certified when the run stopped")


def test_a_confident_run_certifies_zero_and_too_few_rows_certify_nothing():
    rng = np.random.default_rng(0)
    far = np.column_stack([rng.normal(0.9, 0.01, 40), rng.normal(0.5, 0.01, 40), rng.normal(0.4, 0.01, 40)])
    res = run_on_rows(PairedElimination(0.95), far, 3)
    assert res["stop_reason"] == "confident" and res["certified_tolerance"] == 0.0
    close = np.column_stack([rng.normal(0.8, 0.05, 40), rng.normal(0.8, 0.05, 40)])
    res = run_on_rows(PairedElimination(0.95, max_evals=4), close, 2)    # two rows: no eps can carry log 20
    assert res["certified_tolerance"] == math.inf
    assert res["guarantee"].startswith("the best with confidence")    # nothing more is claimed
    assert fmt_tolerance(0.0031) == "0.0031" and fmt_tolerance(0.003101) == "0.0032"   # rounded up


@pytest.mark.parametrize("confidence, means, rows", [(0.8, [0.0, 0.1], 20), (0.95, [0.0, -0.1, -0.2, -0.3], 15)])
def test_the_certified_tolerance_is_calibrated(confidence, means, rows):
    """Simulated Gaussian scores (SD 1), runs stopped by a budget of ``rows`` rows: the choice is more
    than the certified tolerance below the best in at most delta of the runs (+ 3 binomial SEs), while a
    claim of 0 (the best itself) would be wrong far more often: the test has power."""
    n = 300
    rep = simulate(PairedElimination(confidence, max_evals=rows * len(means)), means=means, sds=[1.0], n_runs=n,
                   random_state=7)
    d = rep.to_dict()
    delta = 1.0 - confidence
    assert d["certified_wrong_rate"] <= delta + 3 * math.sqrt(delta * (1 - delta) / n)
    assert d["wrong_choice_rate"] > delta + 3 * math.sqrt(delta * (1 - delta) / n)
    assert d["certified_share"] == 1.0 and 0 < d["certified_median"] < 2.0   # it states something, not vacuous
    assert "the certified tolerance (median" in str(rep)


def test_a_screened_default_ends_at_its_budget_without_a_missed_target_warning(tmp_path):
    """bandit_select's default on a screened run: the best for a budget; its planned end is no missed target."""
    from certa import TargetNotReachedWarning, bandit_select

    X = np.arange(300, dtype=float)

    def evaluate(k, train, test, seed):   # simulated: setting k's mean 0.8 - 0.004 k, a little lower on fewer rows
        rng = np.random.default_rng([seed, int(k * 1000)])
        return 0.8 - 0.004 * k - 0.5 / len(train) + rng.normal(0, 0.02)

    cands = {f"k{k}": float(k) for k in range(20)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sel = bandit_select(evaluate, cands, X, screen=True, random_state=0, store=tmp_path / "run.sqlite")
    res = sel.result
    assert res["stop_reason"] == "budget" and res["tolerance"] == 0.0
    assert int(np.sum(sel.evaluations["kind"] == "split")) <= res["race_budget"]
    assert not [w for w in caught if issubclass(w.category, TargetNotReachedWarning)]
    assert res["guarantee"].startswith(f"within {fmt_tolerance(res['certified_tolerance'])} of the best of the "
                                       f"{len(res['finalists'])} finalists at full size with confidence 0.95")
    from certa.reporting.loading import load
    from certa.reporting.summary import summarize

    summary = summarize(load(tmp_path / "run.sqlite"))   # certa show / --json: the planned end, not a missed target
    assert "not reached" not in summary["statement"]
    assert summary["statement"].endswith(f"(the best for a budget: the race stopped at its budget of "
                                         f"{res['race_budget']} evaluations and states the tolerance it certified)")
    assert summary["bandit"]["certified_tolerance"] == pytest.approx(res["certified_tolerance"])
    with pytest.warns(TargetNotReachedWarning, match="within .* of the best of the 3 finalists"):   # a cap the user
        capped = bandit_select(evaluate, cands, X, screen=True, random_state=0, tolerance=0.0, max_evals=30)  # gave
    assert capped.result["stop_reason"] == "max_evals"


def test_budgets_are_part_of_a_runs_identity_and_runs_without_one_keep_theirs():
    """A store's spec rebuilds the strategy exactly (certa load/show/resume); a spec written before the
    budgets existed (no key) still rebuilds to a strategy without one."""
    from certa.reporting.loading import rebuild_strategy
    from certa.strategies import ScreenThenRace

    for strat in (ScreenThenRace(0.95, [20, 60], n_train=180, race_budget=30), PairedElimination(0.9, budget=40)):
        again = rebuild_strategy(strat.spec())
        assert again is not None and again.spec() == strat.spec()
        assert (getattr(again, "race_budget", None) or getattr(again, "budget", None)) in (30, 40)
    old = ScreenThenRace(0.95, [20, 60], n_train=180).spec()
    assert "race_budget" not in old and "budget" not in PairedElimination(0.9).spec()
    assert rebuild_strategy(old).race_budget is None


def test_failed_evaluations_in_a_budgeted_race_are_recorded_and_count_against_the_budget():
    rng = np.random.default_rng(5)
    matrix = rng.normal(0, 0.02, (40, 3)) + np.array([0.80, 0.79, 0.70])
    failed = {(2, 1), (3, 1), (5, 0)}
    strat = PairedElimination(0.95, budget=30)
    res = run_on_rows(strat, matrix, 3, failed=failed)
    assert res["stop_reason"] == "budget" and int(res["evaluations"].sum()) == 30
    assert res["failed"].tolist() == [1, 2, 0] and math.isfinite(res["certified_tolerance"])
