"""Paired evaluation (common random numbers) and the paired delta-correct rule (issue 23)."""
from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from _helpers import run_on_rows
from scipy import integrate, stats
from sklearn.datasets import load_iris
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from certa import BanditSearchCV, FunctionEvaluator, bandit_select, run
from certa.engine.draws import derive_seed, row_seed, split_draw
from certa.engine.runner import RunInterrupted
from certa.search.bandit import make_strategy
from certa.strategies import PairedElimination, TopTwoThompson
from certa.strategies._paired import (
    CONTRAST_ROWS,
    EXIT_MIXTURE,
    EXIT_RANK_SHARE,
    PRIOR_MIXTURE,
    PairTable,
    log_e_process_one_sided,
    paired_confidence,
    paired_offsets,
    paired_threshold,
    rank_shares,
    rival_weights,
)


# -- draws ----------------------------------------------------------------------------------
def test_a_paired_draw_depends_on_its_row_only():
    for row in range(5):
        seeds = {split_draw(3, c, row, paired=True).seed for c in range(6)}
        assert seeds == {row_seed(3, row)}
    assert len({row_seed(3, r) for r in range(50)}) == 50
    # unpaired: the candidate's own seed, as before (derive_seed(root, candidate, n))
    assert split_draw(3, 2, 4, paired=False).seed == derive_seed(3, 2, 4)
    assert split_draw(3, 2, 4, paired=True).key == split_draw(3, 2, 4, paired=False).key == "split/c2/4"


def _split_score(candidate, train, test, seed):
    # the split enters the score: equal residuals on a row mean the same split
    return candidate + 0.05 * math.sin(float(np.sum(test)))


def _rows(sel):
    ev = sel.evaluations[sel.evaluations["status"] == "ok"].copy()
    ev["row"] = [i[0] for i in ev["index"]]
    return ev


def _check_rows_share_splits(sel, means):
    ev = _rows(sel)
    ev["resid"] = ev["score"] - [means[n] for n in ev["name"]]
    for _, g in ev.groupby("row"):
        assert g["seed"].nunique() == 1
        assert np.ptp(g["resid"]) < 1e-12
    assert ev.groupby("row")["candidate"].nunique().max() == len(means)


_INTERRUPT: dict = {"calls": 0, "at": None}


def _interrupting(candidate, train, test, seed):
    _INTERRUPT["calls"] += 1
    if _INTERRUPT["calls"] == _INTERRUPT["at"]:
        raise KeyboardInterrupt
    return _split_score(candidate, train, test, seed)


def _split(d, seed):
    idx = np.random.default_rng(seed).permutation(len(d))
    return d[idx[:80]], d[idx[80:]]


def test_bandit_select_paired_gives_every_candidate_the_rows_split():
    means = {"a": 0.50, "b": 0.53, "c": 0.60}
    sel = bandit_select(_split_score, means, np.arange(100), split=_split, confidence=0.95, random_state=2,
                        progress=False)
    assert sel.strategy["strategy"] == "PairedElimination"
    assert sel.best.name == "c" and sel.result["confidence"] >= 0.95
    _check_rows_share_splits(sel, means)
    # the old default, unpaired: the same call draws a fresh split per evaluation
    un = bandit_select(_split_score, means, np.arange(100), split=_split, confidence=0.95, random_state=2,
                       progress=False, paired=False)
    assert un.evaluations["seed"].nunique() == len(un.evaluations)


def test_paired_draws_are_reused_through_the_store_and_after_a_resume(tmp_path):
    means = {"a": 0.50, "b": 0.53, "c": 0.60}
    store = tmp_path / "paired.sqlite"
    _INTERRUPT["calls"], _INTERRUPT["at"] = 0, 7   # in the middle of row 2 (rows of 3)
    try:
        with pytest.raises(RunInterrupted):
            bandit_select(_interrupting, means, np.arange(100), split=_split, confidence=0.95, random_state=4,
                          store=store, progress=False)
    finally:
        _INTERRUPT["at"] = None
    resumed = bandit_select(_interrupting, means, np.arange(100), split=_split, confidence=0.95, random_state=4,
                            store=store, progress=False)
    clean = bandit_select(_interrupting, means, np.arange(100), split=_split, confidence=0.95, random_state=4,
                          progress=False)
    assert resumed.n_reused == 6
    assert resumed.evaluations["key"].tolist() == clean.evaluations["key"].tolist()
    assert resumed.evaluations["seed"].tolist() == clean.evaluations["seed"].tolist()
    assert resumed.best_index == clean.best_index
    _check_rows_share_splits(resumed, means)
    keys = [k for (k,) in sqlite3.connect(store).execute("SELECT draw_key FROM evaluations")]
    assert sorted(set(keys)) == sorted(clean.evaluations["key"])


SHARED = textwrap.dedent('''
    import json, sys, time
    import numpy as np
    from certa import bandit_select

    def split(d, seed):
        idx = np.random.default_rng(seed).permutation(len(d))
        return d[idx[:80]], d[idx[80:]]

    def evaluate(candidate, train, test, seed):
        time.sleep(0.05)
        return candidate + 0.05 * np.sin(float(np.sum(test))) + np.random.default_rng(seed).normal(0, 0.01)

    if __name__ == "__main__":
        sel = bandit_select(evaluate, {"a": 0.50, "b": 0.52, "c": 0.56}, np.arange(100), split=split,
                            confidence=0.95, random_state=5, store=sys.argv[1], progress=False)
        ev = sel.evaluations
        print(json.dumps({"best": sel.best_index, "keys": ev["key"].tolist(), "seeds": ev["seed"].tolist(),
                          "reused": sel.n_reused}))
''')


def test_two_processes_sharing_a_store_see_the_same_paired_rows(tmp_path):
    from certa.engine.store import SQLiteStore

    script = tmp_path / "job.py"
    script.write_text(SHARED)
    store = tmp_path / "run.sqlite"
    SQLiteStore(store).close()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    procs = [subprocess.Popen([sys.executable, str(script), str(store)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs]
    a, b = (json.loads(o[0].strip().splitlines()[-1]) for o in outs)
    assert a["keys"] == b["keys"] and a["seeds"] == b["seeds"] and a["best"] == b["best"] == 2
    keys = [k for (k,) in sqlite3.connect(store).execute("SELECT draw_key FROM evaluations")]
    assert len(keys) == len(set(keys)) == len(a["keys"]), "every paired draw evaluated exactly once"
    assert a["reused"] + b["reused"] == len(keys)
    rows: dict[str, set] = {}
    for key, seed in zip(a["keys"], a["seeds"]):
        rows.setdefault(key.rsplit("/", 1)[1], set()).add(seed)
    assert all(len(s) == 1 for s in rows.values())


def test_bandit_search_cv_paired_by_default_on_real_data():
    X, y = load_iris(return_X_y=True)
    s = BanditSearchCV(candidates={"majority": DummyClassifier(), "stump": DecisionTreeClassifier(max_depth=1),
                                   "logreg": LogisticRegression(max_iter=500)},
                       confidence=0.95, random_state=0, n_jobs=2).fit(X, y)
    assert s.best_name_ == "logreg" and s.confidence_ >= 0.95
    assert "paired differences" in s.guarantee_
    ev = _rows(s.selection_)
    assert (ev.groupby("row")["seed"].nunique() == 1).all()
    # same seed, same result on one worker
    one = BanditSearchCV(candidates={"majority": DummyClassifier(), "stump": DecisionTreeClassifier(max_depth=1),
                                     "logreg": LogisticRegression(max_iter=500)},
                         confidence=0.95, random_state=0, n_jobs=1).fit(X, y)
    assert one.selection_.evaluations["score"].tolist() == s.selection_.evaluations["score"].tolist()


def test_paired_choice_is_validated():
    with pytest.raises(ValueError, match="paired=True needs the paired strategy"):
        make_strategy("top_two", confidence=0.9, budget=None, paired=True)
    with pytest.raises(ValueError, match="with paired=False"):
        make_strategy("paired", confidence=0.9, budget=None, paired=False)
    with pytest.raises(TypeError, match="paired must be True, False or None"):
        make_strategy("auto", confidence=0.9, budget=None, paired="yes")
    assert isinstance(make_strategy("auto", confidence=0.9, budget=None), PairedElimination)
    assert isinstance(make_strategy("auto", confidence=0.9, budget=None, paired=False), TopTwoThompson)
    assert isinstance(make_strategy("auto", confidence=0.9, budget=None, stopping="bayes"), TopTwoThompson)
    with pytest.raises(ValueError, match="applies to the unpaired strategies"):
        make_strategy("paired", confidence=0.9, budget=None, beta=0.5)


# -- the statistic --------------------------------------------------------------------------
def _one_sided_by_integration(d, u, c=1.0):
    """M+ from its definition: the likelihood ratio of the scale-invariant statistic, mixed over a
    half-normal effect theta > 0 (precision c) and the right Haar measure dsd/sd."""
    x = np.asarray(d, float) - u
    n = x.size
    V, S = float(x @ x), float(x.sum())

    def inner(w, theta):   # w = 1/sd; likelihood of the scaled data, up to the factor shared with the null
        return w ** (n - 1) * math.exp(-0.5 * V * w * w + theta * S * w - 0.5 * n * theta * theta)

    def null(w):
        return w ** (n - 1) * math.exp(-0.5 * V * w * w)

    prior = lambda t: 2 * math.sqrt(c / (2 * math.pi)) * math.exp(-0.5 * c * t * t)
    wmax = 12.0 * math.sqrt(n / V)
    num = integrate.dblquad(lambda w, t: inner(w, t) * prior(t), 0, 12 / math.sqrt(c), 0, wmax,
                            epsabs=0, epsrel=1e-9)[0]
    den = integrate.quad(null, 0, wmax, epsabs=0, epsrel=1e-10)[0]
    return num / den


@pytest.mark.parametrize("seed,n,shift", [(0, 4, 0.3), (1, 9, 0.8), (2, 15, -0.2)])
def test_one_sided_e_process_matches_its_defining_integral(seed, n, shift):
    d = np.random.default_rng(seed).normal(shift, 1.0, n)
    m, v = d.mean(), d.var()
    for u in (0.0, -0.4):
        closed = float(np.exp(log_e_process_one_sided(n, m, v, u)))
        assert closed == pytest.approx(_one_sided_by_integration(d, u), rel=1e-5)


def test_paired_statistic_from_the_table_equals_a_direct_computation():
    rng = np.random.default_rng(3)
    rows = rng.normal([0.7, 0.65, 0.6], 0.05, size=(40, 3)) + rng.normal(0, 0.05, size=(40, 1))
    table = PairTable(3)
    for r in rows:
        table.add_row({0: r[0], 1: r[1], 2: r[2]})
    w = table.statistics(0.01)
    for i, j in ((0, 1), (0, 2), (1, 2)):
        d = rows[:, i] - rows[:, j]
        # independent: the closed form with scipy's Student-t CDF, at u = -tolerance
        n, e = d.size, d.mean() + 0.01
        v = d.var()
        rho = 1 / (n + 1)
        two_sided = 0.5 * math.log(rho) + 0.5 * n * math.log1p((1 - rho) * e * e / (v + rho * e * e))
        arg = n * e / math.sqrt((v + rho * e * e) * (n + 1))
        assert w[i, j] == pytest.approx(two_sided + math.log(2 * stats.t.cdf(arg, n)), rel=1e-10)
        assert w[j, i] == -np.inf   # j's mean is below i's by more than the tolerance: no evidence
    # delta split: (1 - a) delta over the K - 1 pairs on all rows, a delta on the contrast; evidence = W - offset
    assert paired_threshold(0.05, 3) == pytest.approx(math.log(1 / 0.05))
    assert paired_offsets(3) == (math.inf, 0.0)   # the default: all of delta on the contrast (a = 1)
    assert paired_offsets(3, 0.5) == pytest.approx((math.log(2 / 0.5), math.log(2)))   # the rule before issue 32
    assert paired_offsets(2) == (0.0, math.inf)   # one pair: all of delta on it, as before the contrast
    assert paired_confidence(math.log(1 / 0.05)) == pytest.approx(0.95)


def test_rank_shares_spread_delta_over_the_rivals_by_their_first_row_rank():
    # s_r = r^-2 / sum_{s<K} s^-2: the K - 1 shares of one candidate's delta sum to 1 (what makes the rule valid)
    for k in (3, 8, 250):
        s = rank_shares(k)
        h = sum(1 / r**2 for r in range(1, k))
        assert s.tolist() == pytest.approx([1 / r**2 / h for r in range(1, k)], rel=1e-12)
        assert s.sum() == pytest.approx(1.0)
    assert rank_shares(5, math.inf).tolist() == [1.0, 0.0, 0.0, 0.0]   # one partner (the rule before issue 32)
    # every column of the weights is one candidate's delta: at most 1, exactly 1 when all survive
    rng = np.random.default_rng(3)
    for _ in range(50):
        k = int(rng.integers(3, 12))
        means = rng.normal(size=k)
        means[rng.random(k) < 0.2] = np.nan   # survivors without a first-row score rank last
        surv = sorted(set(rng.choice(k, size=int(rng.integers(2, k + 1)), replace=False).tolist()))
        w = rival_weights(means, surv)
        assert (w.sum(axis=0) <= 1 + 1e-12).all() and (np.diag(w) == 0).all()
        if len(surv) == k:
            assert w.sum(axis=0) == pytest.approx(np.ones(k))
        assert (w[[c for c in range(k) if c not in surv]] == 0).all()   # no share on a candidate that left


def test_contrast_weights_and_statistics_equal_a_direct_computation():
    # 6 close candidates, stopped by max_evals before any elimination: every row has all six
    rng = np.random.default_rng(11)
    k, n_rows = 6, 12
    matrix = rng.normal(np.linspace(0.0, -0.1, k), 1.0, size=(n_rows, k)) + rng.normal(0, 1.0, size=(n_rows, 1))
    strat = PairedElimination(0.95, max_evals=k * n_rows)
    strat.start(k, 0)
    res = run_on_rows(strat, matrix)
    assert res["eliminated"] == {} and res["rows"] == n_rows
    first = matrix[:CONTRAST_ROWS].mean(axis=0)
    h = sum(1 / r**2 for r in range(1, k))
    later = matrix[CONTRAST_ROWS:]
    evidence = strat._contrast_evidence()
    position = {c: r for r, c in enumerate(sorted(range(k), key=lambda c: -first[c]), start=1)}

    def mixture_stat(n, m, v, mix):   # log sum_k w_k M+(c_k), from the components' closed form
        return math.log(sum(w * math.exp(float(log_e_process_one_sided(n, m, v, 0.0, c))) for c, w in mix))

    for j in range(k):
        rivals = sorted((c for c in range(k) if c != j), key=lambda c: -first[c])   # by first-row score
        assert res["partners"][j] == rivals[0]
        # the early exit: against a candidate in the lower part of the first row, the exit mixture
        mix = EXIT_MIXTURE if position[j] > EXIT_RANK_SHARE * k else PRIOR_MIXTURE
        for rank, p in enumerate(rivals, start=1):
            d = later[:, p] - later[:, j]
            floor = 0.01 * 0.5 * (later[:, p].var() + later[:, j].var())
            stat = mixture_stat(d.size, d.mean(), max(d.var(), floor), mix) if d.mean() > 0 else -np.inf
            # the running max over the rows after the first: recompute it row by row
            run_max = -np.inf
            for n in range(2, d.size + 1):
                dn = d[:n]
                fl = 0.01 * 0.5 * (later[:n, p].var() + later[:n, j].var())
                if dn.mean() > 0:
                    run_max = max(run_max, mixture_stat(n, dn.mean(), max(dn.var(), fl), mix))
            assert run_max >= float(stat) - 1e-12
            assert evidence[p, j] == pytest.approx(run_max + math.log(1 / rank**2 / h), rel=1e-12, abs=1e-12)


def test_contrast_stops_earlier_with_many_candidates_and_keeps_its_level():
    from certa.planning.batch import CorrelatedGaussianRows, simulate_paired_batch

    # 8 candidates: two close to the best, five far below it (the shape of FIESTA's TDSA table)
    means = [0.0, -0.55, -0.6, -1.6, -1.5, -2.1, -2.2, -3.0]
    sampler = CorrelatedGaussianRows(means, 1.0, 0.5)
    with_contrast = simulate_paired_batch(sampler, confidence=0.95, n_runs=600, random_state=1)
    without = simulate_paired_batch(sampler, confidence=0.95, n_runs=600, random_state=1, contrast_share=0.0)
    one_partner = simulate_paired_batch(sampler, confidence=0.95, n_runs=600, random_state=1, contrast_share=0.5,
                                        rank_power=math.inf)   # the rule before issue 32
    assert with_contrast.evaluations.mean() < 0.98 * without.evaluations.mean()
    # the rivals weighted by rank need fewer evaluations than one partner from the first row
    assert with_contrast.evaluations.mean() < 0.97 * one_partner.evaluations.mean()
    # wrong-choice rate <= delta: one-sided binomial test at level 0.01 does not reject
    wrong = int(with_contrast.wrong.sum())
    assert stats.binomtest(wrong, 600, 0.05, alternative="greater").pvalue > 0.01


def test_one_sided_e_process_is_a_test_martingale_at_the_true_mean():
    # E[M+_N(true mean)] = 1 for every N (a nonnegative martingale from 1): Monte Carlo,
    # 200,000 sequences; tolerance 4 standard errors of the mean of M+.
    rng = np.random.default_rng(7)
    d = rng.normal(0.3, 2.0, size=(200_000, 8))
    for n in (2, 5, 8):
        x = d[:, :n]
        m = np.exp(log_e_process_one_sided(n, x.mean(1), x.var(1), 0.3))
        assert abs(m.mean() - 1) < 4 * m.std() / math.sqrt(m.size)


# -- the rule -------------------------------------------------------------------------------
def test_pairing_stops_earlier_than_unpaired_on_correlated_scores():
    # two candidates 0.02 apart whose scores share a row effect of SD 0.05 (correlation 0.96):
    # the differences have SD 0.014, the scores 0.051. Paired rows: the paired rule stops after a
    # few rows; the unpaired GLR rule on the same candidates needs far more evaluations.
    def score(params, seed):
        shared = np.random.default_rng(seed).normal(0, 0.05)
        own = np.random.default_rng([seed, params["m"] > 0.5]).normal(0, 0.01)
        return params["m"] + shared + own

    grid = [{"m": 0.5}, {"m": 0.52}]
    paired = run(PairedElimination(0.95), FunctionEvaluator(score), grid, random_state=0, progress=False)
    unpaired = run(TopTwoThompson(0.95), FunctionEvaluator(score), grid, random_state=0, progress=False)
    assert paired.best_index == unpaired.best_index == 1
    assert paired.n_evaluations <= 40
    assert unpaired.n_evaluations >= 3 * paired.n_evaluations


def test_paired_rule_eliminates_in_rows_and_reports_its_confidence():
    sel = run(PairedElimination(0.95), FunctionEvaluator(lambda p, s: p["m"] + np.random.default_rng(s).normal(0, 1)),
              [{"m": 0.0}, {"m": 3.0}, {"m": 0.1}], random_state=1, progress=False)
    ev = _rows(sel)
    counts = ev.groupby("row")["candidate"].nunique()
    assert counts.is_monotonic_decreasing and counts.iloc[0] == 3
    res = sel.result
    assert sel.best_index == 1 and res["stop_reason"] == "confident"
    assert res["confidence"] >= 0.95 and res["confidence_history"][-1] == res["confidence"]
    assert set(res["eliminated"]) == {0, 2}


def test_tolerance_stops_between_near_ties():
    f = FunctionEvaluator(lambda p, s: p["m"] + np.random.default_rng([s, int(p["m"] * 100)]).normal(0, 0.01))
    cands = [{"m": 0.50}, {"m": 0.5001}, {"m": 0.40}]
    tol = run(PairedElimination(0.95, tolerance=0.02, max_evals=3000), f, cands, random_state=0, progress=False)
    assert tol.result["stop_reason"] == "confident" and tol.best_index in (0, 1)
    assert "within 0.02 of the best" in tol.result["guarantee"]
    plain = run(PairedElimination(0.95, max_evals=300), f, cands, random_state=0, progress=False)
    assert plain.result["stop_reason"] == "max_evals"   # without a tolerance the near tie is not separated


class _FixedRows:
    """One run's rows, in order (for comparing the vectorised driver with the strategy)."""

    def __init__(self, matrix):
        self.matrix, self.next = matrix, 0
        self.true_means = matrix.mean(axis=0)

    def rows(self, n, rng):
        out = self.matrix[self.next:self.next + n]
        self.next += n
        return out


@pytest.mark.parametrize("tolerance", [0.0, 0.05])
def test_vectorised_driver_decides_as_the_strategy_on_the_same_rows(tolerance):
    from certa.planning.batch import simulate_paired_batch

    tdsa_like = [0.0, -0.55, -0.6, -1.6, -1.5, -2.1, -2.2, -3.0]   # ranks 1-7 all carry a share of delta
    for seed in range(8):
        means = [0.0, -0.3, -0.35, -1.0] if seed < 4 else tdsa_like
        k = len(means)
        rng = np.random.default_rng(seed)
        matrix = rng.normal(means, 1.0, size=(3000, k)) + rng.normal(0, 1.0, size=(3000, 1))
        strat = PairedElimination(0.9, tolerance=tolerance)
        strat.start(k, 0)
        res = run_on_rows(strat, matrix)
        rep = simulate_paired_batch(_FixedRows(matrix), confidence=0.9, tolerance=tolerance, n_runs=1)
        assert int(rep.evaluations[0]) == int(res["evaluations"].sum())
        assert int(rep.chosen[0]) == res["best"]
        assert rep.counts[0].tolist() == res["evaluations"].tolist()   # every candidate's rows, not only the sum


PAIRED_EVALUATE = """
import numpy as np

def evaluate(params, seed):
    shared = np.random.default_rng(seed).normal(0, 0.05)
    return params["mu"] + shared + np.random.default_rng([seed, int(params["mu"] * 100)]).normal(0, 0.01)
"""


def test_select_cli_is_paired_by_default_and_show_states_the_paired_guarantee(tmp_path, monkeypatch, capsys):
    from certa.cli import main
    from certa.reporting.loading import load

    (tmp_path / "pev.py").write_text(PAIRED_EVALUATE)
    (tmp_path / "c.toml").write_text("[candidates.low]\nmu = 0.5\n\n[candidates.high]\nmu = 0.55\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["select", "--evaluate", "pev:evaluate", "--candidates", "c.toml", "--store", "p.sqlite"]) == 0
    capsys.readouterr()
    assert main(["show", "p.sqlite"]) == 0
    text = capsys.readouterr().out
    assert "bandit run (PairedElimination" in text and "from paired differences on common rows" in text
    sel = load("p.sqlite")
    ev = _rows(sel)
    assert (ev.groupby("row")["seed"].nunique() == 1).all() and sel.best.name == "high"
    assert main(["select", "--evaluate", "pev:evaluate", "--candidates", "c.toml", "--store", "u.sqlite",
                 "--no-paired"]) == 0
    assert load("u.sqlite").evaluations["seed"].nunique() == load("u.sqlite").n_evaluations


def test_a_candidate_that_failed_on_the_first_row_still_rules_the_others_out():
    # the best fails on row 0, so it has no first-row score: it is ranked last against every rival
    # (a share of delta all the same) and the run still ends on it, confident
    rng = np.random.default_rng(5)
    k = 4
    matrix = rng.normal([0.0, -1.0, -1.2, -1.5], 0.3, size=(400, k)) + rng.normal(0, 1.0, size=(400, 1))
    strat = PairedElimination(0.95)
    res = run_on_rows(strat, matrix, k, failed={(0, 0)})
    assert res["best"] == 0 and res["stop_reason"] == "confident" and res["failed"][0] == 1
    h = sum(1 / r**2 for r in range(1, k))
    for j in (1, 2, 3):   # ranked last (3rd) by every rival: log of its share, 1/9 of the first's
        assert strat._log_w[0, j] == pytest.approx(math.log(1 / 9 / h))
