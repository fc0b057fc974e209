"""The opt-in stopping="gk16" rule: the anchors' heuristic threshold (issue 24, decision on 12)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from certa import FunctionEvaluator, run
from certa.search.bandit import make_strategy
from certa.strategies import TopTwoThompson
from certa.strategies._gk16 import gk16_confidence, gk16_statistic, gk16_threshold


def _brute_force(m, v, n, eps):
    """min_j inf_u of the unknown-variance GLR on a fine grid (independent of the library's refinement)."""
    b = int(np.argmax(m))
    out = math.inf
    for j in range(m.size):
        if j == b:
            continue
        if m[j] + eps >= m[b]:
            out = min(out, 0.0)
            continue
        u = np.linspace(m[j] - eps, m[b], 200_001)
        f = 0.5 * n[b] * np.log1p((m[b] - u) ** 2 / v[b]) + 0.5 * n[j] * np.log1p((m[j] - eps - u) ** 2 / v[j])
        out = min(out, float(f.min()))
    return b, out


def test_statistic_matches_a_brute_force_minimum():
    rng = np.random.default_rng(0)
    for _ in range(100):
        k = int(rng.integers(2, 6))
        m, v = rng.normal(0, 1, k), rng.uniform(0.2, 2.0, k)
        n = rng.integers(3, 60, k).astype(float)
        eps = float(rng.choice([0.0, 0.1]))
        best, g = gk16_statistic(m, v, n, eps)
        ref_best, ref = _brute_force(m, v, n, eps)
        assert best == ref_best and g == pytest.approx(ref, rel=1e-7, abs=1e-9)


def test_threshold_and_confidence_are_garivier_kaufmanns():
    assert gk16_threshold(0.05, 1) == pytest.approx(math.log(1 / 0.05))
    assert gk16_threshold(0.01, 500) == pytest.approx(math.log((1 + math.log(500)) / 0.01))
    assert gk16_confidence(gk16_threshold(0.05, 500), 500) == pytest.approx(0.95)
    assert gk16_confidence(0.0, 500) == 0.0


def _score(p, s):
    return p["m"] + np.random.default_rng(s).normal(0, 1)


def test_gk16_stops_when_its_statistic_passes_the_threshold_and_says_it_is_not_proven():
    cands = [{"m": 0.0}, {"m": 0.8}, {"m": 0.3}]
    sel = run(TopTwoThompson(0.95, stopping="gk16"), FunctionEvaluator(_score), cands, random_state=0,
              progress=False)
    res = sel.result
    assert res["stop_reason"] == "confident" and sel.best_index == 1
    assert "calibrated by simulation, not proven" in res["guarantee"]
    ev = sel.evaluations
    scores = [ev.loc[ev["candidate"] == c, "score"].to_numpy() for c in range(3)]
    m = np.array([s.mean() for s in scores])
    v = np.array([s.var() for s in scores])
    n = np.array([s.size for s in scores], dtype=float)
    t = int(n.sum())
    _, g = gk16_statistic(m, np.maximum(v, 1e-12), n)
    assert g > gk16_threshold(0.05, t)                           # the stop is the rule's
    assert res["confidence"] == pytest.approx(gk16_confidence(g, t), abs=1e-9)
    # one evaluation earlier the rule did not stop
    ev1 = ev.iloc[:-1]
    s1 = [ev1.loc[ev1["candidate"] == c, "score"].to_numpy() for c in range(3)]
    _, g1 = gk16_statistic(np.array([s.mean() for s in s1]), np.array([s.var() for s in s1]),
                           np.array([s.size for s in s1], dtype=float))
    assert g1 <= gk16_threshold(0.05, t - 1)


def test_gk16_is_opt_in_and_cheaper_than_the_proven_rule():
    assert make_strategy("auto", confidence=0.95, budget=None).stopping == "paired"
    assert make_strategy("auto", confidence=0.95, budget=None, paired=False).stopping == "glr"
    cands = [{"m": 0.0}, {"m": 0.5}]
    gk = run(TopTwoThompson(0.95, stopping="gk16"), FunctionEvaluator(_score), cands, random_state=1, progress=False)
    glr = run(TopTwoThompson(0.95), FunctionEvaluator(_score), cands, random_state=1, progress=False)
    assert gk.n_evaluations < glr.n_evaluations


def test_cli_help_says_gk16_is_calibrated_by_simulation(capsys):
    from certa.cli import main

    with pytest.raises(SystemExit):
        main(["select", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "gk16" in out and "calibrated by simulation, not proven" in out
