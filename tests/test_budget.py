"""Fixed-confidence runs that never surprise (issue 25 items 4-5): a default cap, an early near-tie
warning with a tolerance that fits, and a warning plus a statement in the result when the target is missed."""
from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from certa import BanditSearchCV, NearTieWarning, TargetNotReachedWarning, bandit_select
from certa.cli import main
from certa.planning.lower_bound import bernoulli_kl
from certa.search._budget import EVALS_PER_CANDIDATE, default_max_evals, estimated_cost
from certa.search.bandit import make_strategy

SD = 0.02
# The unpaired top-two rule throughout: the scores below share their noise between candidates with
# the same seed, which a paired run would difference away; the cap and warnings are the same for both.
TT = {"strategy": "top_two"}


def gaussian(mean, train, test, seed):
    return mean + np.random.default_rng(seed).normal(0, SD)


NEAR_TIE = {"a": 0.80, "b": 0.8014}     # issue 25's two logistic-regression settings, 0.0014 apart
CLEAR = {"a": 0.80, "b": 0.86}          # 3 SD apart


def _record(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, caught


# -- item 5: a missed target warns and says so in the result ------------------------------------
def test_bandit_search_missed_target_warns_and_says_so():
    X, y = load_iris(return_X_y=True)
    twins = {"t1": DecisionTreeClassifier(max_depth=3, random_state=0),
             "t2": DecisionTreeClassifier(max_depth=3, random_state=1)}   # the same model: no target reachable
    with pytest.warns(TargetNotReachedWarning, match=r"target confidence 0\.9 not reached \(stopped at max_evals=30\)"):
        s = BanditSearchCV(candidates=twins, **TT, confidence=0.9, tolerance=0.01, max_evals=30, random_state=0).fit(X, y)
    assert s.target_reached_ is False and s.confidence_ < 0.9
    assert s.guarantee_.endswith("; target confidence 0.9 not reached (stopped at max_evals=30)")
    assert s.guarantee_.startswith(s.selection_.result["guarantee"])


def test_bandit_search_reached_target_is_quiet():
    X, y = load_iris(return_X_y=True)
    models = {"stump": DecisionTreeClassifier(max_depth=1), "logreg": LogisticRegression(max_iter=500)}
    s, caught = _record(lambda: BanditSearchCV(candidates=models, confidence=0.9, random_state=0).fit(X, y))
    assert not [w for w in caught if issubclass(w.category, (TargetNotReachedWarning, NearTieWarning))]
    assert s.target_reached_ is True and "not reached" not in s.guarantee_


def test_bandit_select_missed_target_warns():
    with pytest.warns(TargetNotReachedWarning, match="bandit_select: target confidence 0.95 not reached"):
        sel = bandit_select(gaussian, NEAR_TIE, **TT, confidence=0.95, max_evals=40, random_state=0)
    assert sel.result["target_reached"] is False


def test_fixed_budget_has_no_target_to_miss():
    sel, caught = _record(lambda: bandit_select(gaussian, NEAR_TIE, strategy="sequential_halving", budget=20,
                                                random_state=0))
    assert not [w for w in caught if issubclass(w.category, (TargetNotReachedWarning, NearTieWarning))]


# -- item 4: the default cap --------------------------------------------------------------------
def test_default_cap_is_200_per_candidate():
    assert BanditSearchCV().max_evals == "auto"
    assert make_strategy("top_two", confidence=0.95, budget=None, max_evals="auto", n_candidates=7).max_evals == 1400
    assert make_strategy("batch", confidence=0.9, budget=None, max_evals=None, n_candidates=7).max_evals is None
    assert default_max_evals(3) == 3 * EVALS_PER_CANDIDATE == 600
    with pytest.raises(ValueError, match="n_candidates"):
        make_strategy("top_two", confidence=0.95, budget=None, max_evals="auto")
    with pytest.raises(ValueError, match="max_evals"):
        make_strategy("top_two", confidence=0.95, budget=None, max_evals="lots", n_candidates=2)


def test_near_tie_stops_at_the_default_cap():
    # uncapped, this run takes thousands of evaluations (issue 25: 8,829 for a gap of 0.0014)
    sel, caught = _record(lambda: bandit_select(gaussian, NEAR_TIE, **TT, confidence=0.95, random_state=0))
    assert sel.n_evaluations == 2 * EVALS_PER_CANDIDATE and sel.result["stop_reason"] == "max_evals"
    assert any(issubclass(w.category, TargetNotReachedWarning) for w in caught)


def test_near_tie_warns_early_with_a_tolerance_that_fits():
    for seed in range(3):
        sel, caught = _record(lambda: bandit_select(gaussian, NEAR_TIE, **TT, confidence=0.95, random_state=seed))
        near = [str(w.message) for w in caught if issubclass(w.category, NearTieWarning)]
        assert len(near) == 1
        after = int(re.search(r"after (\d+) evaluations", near[0]).group(1))
        assert after <= 60   # early: within the first rows, not at the cap of 400
        assert "max_evals=400" in near[0]
        eps = float(re.search(r"tolerance=([0-9.e-]+)", near[0]).group(1))
        # the suggested tolerance reaches the target within the same cap (a new seed: new data)
        again, caught2 = _record(lambda: bandit_select(gaussian, NEAR_TIE, **TT, confidence=0.95, tolerance=eps,
                                                       random_state=100 + seed))
        assert again.result["target_reached"] and again.n_evaluations < 2 * EVALS_PER_CANDIDATE
        assert not [w for w in caught2 if issubclass(w.category, NearTieWarning)]


def test_no_near_tie_warning_on_a_clear_choice():
    sel, caught = _record(lambda: bandit_select(gaussian, CLEAR, **TT, confidence=0.95, random_state=0))
    assert sel.result["target_reached"]
    assert not [w for w in caught if issubclass(w.category, (NearTieWarning, TargetNotReachedWarning))]


def test_estimated_cost_is_four_times_the_lower_bound():
    # two Gaussian candidates: T* = 2 (s1 + s2)^2 / gap^2 (optimal w proportional to the SDs),
    # and with a tolerance the gap becomes gap + eps (Garivier & Kaufmann 2016 / 2021)
    kl = bernoulli_kl(0.05, 0.95)
    got = estimated_cost(np.array([0.8014, 0.8]), np.array([0.02, 0.03]), 0.95, 0.0)
    assert got == pytest.approx(4 * 2 * (0.05 ** 2) / 0.0014 ** 2 * kl, rel=1e-4)
    got_eps = estimated_cost(np.array([0.8014, 0.8]), np.array([0.02, 0.03]), 0.95, 0.005)
    assert got_eps == pytest.approx(4 * 2 * (0.05 ** 2) / 0.0064 ** 2 * kl, rel=1e-4)


# -- certa select: the same default, the warning as a line ---------------------------------------
EVALUATE = '''
import numpy as np

def evaluate(params, seed):
    return params["mean"] + np.random.default_rng(seed).normal(0, 0.02)
'''


def test_select_cli_default_cap_and_near_tie_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "tieeval.py").write_text(EVALUATE)
    (tmp_path / "cands.toml").write_text("[candidates.a]\nmean = 0.8\n\n[candidates.b]\nmean = 0.8014\n")
    monkeypatch.chdir(tmp_path)
    code = main(["select", "--evaluate", "tieeval:evaluate", "--candidates", "cands.toml", "--json",
                 "--strategy", "top_two", "--store", "run.sqlite"])
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert code == 0 and summary["n_evaluations"] == 400
    assert summary["strategy"]["max_evals"] == 400 and summary["bandit"]["target_reached"] is False
    assert re.search(r"certa select: warning: near tie: after \d+ evaluations", err)
    assert "tolerance=" in err
    code = main(["select", "--evaluate", "tieeval:evaluate", "--candidates", "cands.toml", "--json",
                 "--strategy", "top_two", "--max-evals", "none", "--tolerance", "0.02", "--seed", "1"])
    summary = json.loads(capsys.readouterr().out)
    assert summary["strategy"]["max_evals"] is None and summary["bandit"]["target_reached"] is True


def independent(mean, train, test, seed):
    # noise of its own per candidate, even on a paired row (same seed): pairing cannot remove it
    return mean + np.random.default_rng([seed, int(mean * 1e4)]).normal(0, SD)


def test_paired_default_run_warns_from_the_paired_differences():
    for seed in range(2):
        sel, caught = _record(lambda: bandit_select(independent, NEAR_TIE, confidence=0.95, random_state=seed))
        assert sel.strategy["strategy"] == "PairedElimination"
        near = [str(w.message) for w in caught if issubclass(w.category, NearTieWarning)]
        assert len(near) == 1 and "paired differences' SD" in near[0]
        assert int(re.search(r"after (\d+) evaluations", near[0]).group(1)) <= 80
        eps = float(re.search(r"tolerance=([0-9.e-]+)", near[0]).group(1))
        again, _ = _record(lambda: bandit_select(independent, NEAR_TIE, confidence=0.95, tolerance=eps,
                                                 random_state=200 + seed))
        assert again.result["target_reached"] and again.n_evaluations < 2 * EVALS_PER_CANDIDATE


def test_paired_cost_is_the_one_sample_bound_on_the_differences():
    from certa.engine.callbacks import Evaluation
    from certa.engine.candidates import Candidate
    from certa.engine.draws import Draw, Outcome
    from certa.search._budget import COST_OVER_LOWER_BOUND, NearTieMonitor

    rng = np.random.default_rng(0)
    x = rng.normal(0.8, 0.02, 30)
    d = rng.normal(0.01, 0.005, 30)          # leader minus challenger, row by row
    mon = NearTieMonitor(0.95, 0.002, max_evals=None, paired=True)

    class View:
        candidates = (Candidate(0, "a", {}), Candidate(1, "b", {}))
        n_evaluations = 0

    mon.on_run_start(View)
    for r in range(30):
        for c, v in ((0, x[r]), (1, x[r] - d[r])):
            mon.on_evaluation(View, Evaluation(2 * r + c, Draw(c, "split", (r,), seed=r), Outcome(v),
                                               View.candidates[c], False))
    n = bernoulli_kl(0.05, 0.95) * 2 * np.std(d, ddof=1) ** 2 / (d.mean() + 0.002) ** 2
    assert mon._paired_cost(0)(0.002, False) == pytest.approx(COST_OVER_LOWER_BOUND * 2 * n)
