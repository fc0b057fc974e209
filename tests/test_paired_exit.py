"""The paired rule's early exit (issue 32 item 3): a mixture of e-processes over prior precisions
for the contrast against a candidate in the lower part of the first row."""
from __future__ import annotations

import math

import numpy as np
import pytest
from _helpers import run_on_rows
from scipy import stats

from certa.planning.batch import CorrelatedGaussianRows, simulate_paired_batch
from certa.strategies import PairedElimination
from certa.strategies import _paired as paired_rule
from certa.strategies._paired import (
    EXIT_MIXTURE,
    EXIT_RANK_SHARE,
    PRIOR_MIXTURE,
    contrast_mixture,
    first_row_positions,
    log_e_process_mixture,
    log_e_process_one_sided,
    paired_statistic,
    rank_shares,
)

DELTA = 0.05


def test_the_mixture_is_the_weighted_sum_of_its_components_and_takes_weights_per_pair():
    rng = np.random.default_rng(0)
    n = rng.integers(1, 30, size=(4, 5)).astype(float)
    m, v = rng.normal(0.2, 0.5, size=(4, 5)), rng.uniform(0.01, 1.0, size=(4, 5))
    mix = ((1.0, 0.6), (0.01, 0.3), (0.001, 0.1))
    direct = np.log(sum(w * np.exp(log_e_process_one_sided(n, m, v, 0.0, c)) for c, w in mix))
    assert log_e_process_mixture(n, m, v, 0.0, mix) == pytest.approx(direct, rel=1e-12)
    # weights as arrays (one mixture per column): column by column the same as the scalar mixture
    w2 = np.array([0.0, 0.3, 0.0, 0.3, 0.5])[None, :]
    per_pair = log_e_process_mixture(n, m, v, 0.0, ((1.0, 1.0 - w2), (0.01, w2)))
    for col in range(5):
        one = log_e_process_mixture(n[:, col], m[:, col], v[:, col], 0.0, ((1.0, 1.0 - w2[0, col]), (0.01, w2[0, col])))
        assert per_pair[:, col] == pytest.approx(one, rel=1e-12)
    assert per_pair[:, 0] == pytest.approx(log_e_process_one_sided(n[:, 0], m[:, 0], v[:, 0], 0.0, 1.0), rel=1e-12)
    for bad in (((1.0, 0.8), (0.01, 0.3)), ((0.0, 1.0),), ((1.0, -0.1),), (), "c"):
        with pytest.raises(ValueError, match="mixture must be"):
            log_e_process_mixture(3, 0.5, 1.0, 0.0, bad)


def test_contrast_mixture_puts_the_exit_on_the_lower_part_of_the_first_row():
    means = np.array([0.5, 0.9, np.nan, 0.7, 0.1, 0.3])
    pos = first_row_positions(means, [0, 1, 2, 3, 4])   # 5 left: no survivor ranked after candidate 2 (no score)
    assert pos.tolist() == [3, 1, 5, 2, 4, 0]
    weights = dict(contrast_mixture(pos, 5))
    lower = pos > EXIT_RANK_SHARE * 5
    for c, w in EXIT_MIXTURE:
        assert weights[c][0, lower].tolist() == pytest.approx([w] * int(lower.sum()))
    for c, w in PRIOR_MIXTURE:
        assert weights[c][0, ~lower].tolist() == pytest.approx([w] * int((~lower).sum()))
    # every column is one mixture: weights sum to one
    assert sum(weights.values()).ravel().tolist() == pytest.approx([1.0] * 6)
    # runs x candidates (the batch simulation): one mixture per run and column
    stacked = dict(contrast_mixture(np.stack([pos, pos[::-1]]), np.array([5, 5])))
    assert stacked[0.01].shape == (2, 1, 6)


def test_the_mixture_keeps_its_level_under_the_null():
    # sup_N of the exit mixture at the true mean passes log(1 / alpha) with probability at most alpha
    # (Ville). 20,000 null paths of 40 differences (random scale), alpha 0.05: the crossing rate may
    # exceed alpha by at most 3 binomial standard errors (the bound is an inequality, so it is below).
    rng = np.random.default_rng(1)
    paths, horizon, alpha = 20_000, 40, 0.05
    d = rng.normal(0.0, 1.0, size=(paths, horizon)) * rng.uniform(0.01, 3.0, size=(paths, 1))
    n = np.arange(1, horizon + 1)
    s, ss = np.cumsum(d, axis=1), np.cumsum(d * d, axis=1)
    m = s / n
    v = np.maximum(ss / n - m * m, 1e-300)
    for mix in (EXIT_MIXTURE, PRIOR_MIXTURE):
        w = paired_statistic(n[None, 1:], m[:, 1:], v[:, 1:], 0.0, mix)
        rate = float((w.max(axis=1) >= math.log(1 / alpha)).mean())
        assert rate <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / paths)
    # and the mixture's weights matter: weights summing to more than one are refused
    with pytest.raises(ValueError, match="at most 1"):
        paired_statistic(3, 1.0, 1.0, 0.0, ((1.0, 1.0), (0.01, 0.3)))


def _far_loser_rows(seed, n_rows=12, gap_sd=20.0):
    """5 candidates: four close (0.80, 0.795, 0.79, 0.785) and one far below (gap_sd SDs of its
    differences with the best), with a shared row effect."""
    rng = np.random.default_rng(seed)
    sd = 0.01
    means = np.array([0.80, 0.795, 0.79, 0.785, 0.80 - gap_sd * sd * math.sqrt(2)])
    return means + rng.normal(0, 0.05, size=(n_rows, 1)) + rng.normal(0, sd, size=(n_rows, 5))


def test_a_far_loser_leaves_by_row_4_where_the_old_rule_needs_6():
    # The old rule's contrast (c = 1 alone) gathers at most ((N - 1) / 2) log(1 + N) + log 2 from N
    # differences (the rows after the first); the far loser's first-ranked rival gets w_1 of delta, so
    # it cannot leave before ((N - 1) / 2) log(1 + N) + log 2 >= log(1 / (w_1 delta)): N = 5, row 6.
    k = 5
    w1 = float(rank_shares(k)[0])
    need = math.log(1 / (w1 * DELTA))
    bound_old = {n: (n - 1) / 2 * math.log(1 + n) + math.log(2) for n in range(1, 10)}
    n_old = min(n for n, b in bound_old.items() if b > need)
    assert n_old == 5
    # the exit mixture lifts that bound to log(sum_k w_k 2 (1 + N / c_k)^((N - 1) / 2)): 3 differences suffice
    bound_new = {n: math.log(sum(w * 2 * (1 + n / c) ** ((n - 1) / 2) for c, w in EXIT_MIXTURE)) for n in range(1, 10)}
    assert min(n for n, b in bound_new.items() if b > need) <= 3
    shipped = paired_rule.EXIT_MIXTURE
    left_new, left_old = [], []
    for seed in range(20):
        x = _far_loser_rows(seed)
        res = run_on_rows(PairedElimination(1 - DELTA, max_rows=12), x, x.shape[1])
        left_new.append(res["eliminated"][4] + 1)   # rows the far loser was evaluated on
        # the row it leaves at, from the formula: the first N after which its contrast with some
        # rival passes log(1 / (w_r delta)), rivals ranked by the first row
        first = x[0]
        rivals = sorted(range(4), key=lambda c: -first[c])
        expected = None
        for n in range(2, 12):
            later = x[1:n]
            for r, p in enumerate(rivals, start=1):
                d = later[:, p] - later[:, 4]
                fl = 0.01 * 0.5 * (later[:, p].var() + later[:, 4].var())
                stat = math.log(sum(w * math.exp(float(log_e_process_one_sided(n - 1, d.mean(), max(d.var(), fl), 0.0, c)))
                                    for c, w in EXIT_MIXTURE))
                if stat + math.log(rank_shares(k)[r - 1]) > math.log(1 / DELTA):
                    expected = n
                    break
            if expected is not None:
                break
        assert left_new[-1] == expected
        try:
            paired_rule.EXIT_MIXTURE = PRIOR_MIXTURE   # the rule before the exit
            res_old = run_on_rows(PairedElimination(1 - DELTA, max_rows=12), x, x.shape[1])
        finally:
            paired_rule.EXIT_MIXTURE = shipped
        left_old.append(res_old["eliminated"][4] + 1)
    assert max(left_new) <= 4
    assert min(left_old) >= n_old + 1   # N differences after the first row: row N + 1


def test_the_rule_with_the_exit_keeps_its_level():
    # far losers and two close rivals, correlated rows: wrong-choice rate <= delta (one-sided binomial
    # test at level 0.01), and the exit pays: fewer evaluations than without it on the same seeds
    means = [0.0, -0.5, -0.6, -6.0, -8.0, -10.0]
    sampler = CorrelatedGaussianRows(means, 1.0, 0.5)
    rep = simulate_paired_batch(sampler, confidence=1 - DELTA, n_runs=1500, random_state=2)
    wrong = int(rep.wrong.sum())
    assert stats.binomtest(wrong, 1500, DELTA, alternative="greater").pvalue > 0.01
    shipped = paired_rule.EXIT_MIXTURE
    try:
        paired_rule.EXIT_MIXTURE = PRIOR_MIXTURE
        old = simulate_paired_batch(sampler, confidence=1 - DELTA, n_runs=1500, random_state=2)
    finally:
        paired_rule.EXIT_MIXTURE = shipped
    assert rep.counts[:, 3:].mean() < old.counts[:, 3:].mean() - 1.0
