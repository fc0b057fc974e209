"""Tests of certa.planning.paired_bound: the paired Gaussian model's lower bounds (issue 32)."""
from __future__ import annotations

import numpy as np
import pytest

from certa.planning.lower_bound import bernoulli_kl, characteristic_time
from certa.planning.paired_bound import (
    best_allocation_time,
    pair_difference_variances,
    paired_lower_bound,
    pairwise_time,
    uniform_rows_time,
)


def equicorrelated(sd, r):
    sd = np.asarray(sd, dtype=float)
    c = np.full((sd.size, sd.size), r)
    np.fill_diagonal(c, 1.0)
    return c * np.outer(sd, sd)


@pytest.mark.parametrize("r", [0.0, 0.4, 0.9])
def test_uniform_rows_closed_form_and_pairing_gain(r):
    mu = np.array([0.0, -0.5, -1.0, -2.0])
    cov = equicorrelated(np.full(4, 0.7), r)
    rows, evals = uniform_rows_time(mu, cov)
    # V_bj = 2 sigma^2 (1 - r); the closest rival (gap 0.5) decides: rows = 2 V / gap^2
    assert rows == pytest.approx(2 * 2 * 0.49 * (1 - r) / 0.25, rel=1e-12)
    assert evals == pytest.approx(4 * rows, rel=1e-12)
    # the pairing gain: the correlated rows need (1 - r) times the independent ones
    assert evals == pytest.approx((1 - r) * uniform_rows_time(mu, equicorrelated(np.full(4, 0.7), 0.0))[1])


def test_uniform_rows_uses_the_whole_covariance():
    cov = np.array([[1.0, 0.3, 0.8], [0.3, 2.0, 0.1], [0.8, 0.1, 1.5]])
    mu = np.array([1.0, 0.2, 0.5])
    v = pair_difference_variances(cov, 0)
    np.testing.assert_allclose(v, [0.0, 1 + 2 - 0.6, 1 + 1.5 - 1.6])
    rows, _ = uniform_rows_time(mu, cov)
    assert rows == pytest.approx(max(2 * v[1] / 0.8 ** 2, 2 * v[2] / 0.5 ** 2))


def test_pairwise_time_is_the_best_on_every_row_plus_each_rival_on_its_own_rows():
    mu = np.array([1.0, 0.0, -1.0])
    cov = equicorrelated([1.0, 1.0, 1.0], 0.5)
    t = np.array([2 * 1.0 / 1.0, 2 * 1.0 / 4.0])   # V = 2 (1 - 0.5) = 1
    assert pairwise_time(mu, cov) == pytest.approx(t.max() + t.sum())


@pytest.mark.parametrize("r, expected", [(0.5, 4.0), (0.0, 8.0), (-0.5, 8.0), (0.9, 0.8)])
def test_two_candidates_exact(r, expected):
    """Two candidates, SD 1, gap 1: with r >= 0 rows of both (8 (1 - r)), with r <= 0 the singletons (8,
    the unpaired bound): the pair row's information about the difference is 1 / (2 (1 - r)) per 2 evaluations."""
    t = best_allocation_time([1.0, 0.0], equicorrelated([1.0, 1.0], r))
    assert t.lower <= expected * (1 + 1e-9) and t.upper >= expected * (1 - 1e-9)
    assert t.upper == pytest.approx(expected, rel=1e-3)


def test_two_candidates_unequal_sds_match_a_brute_force_grid():
    """Member sets {0}, {1}, {0, 1}: the exact objective on a fine grid of the 2-simplex."""
    mu = np.array([0.4, 0.0])
    cov = np.array([[1.0, 0.5 * 1.0 * 3.0], [0.5 * 1.0 * 3.0, 9.0]])
    t = best_allocation_time(mu, cov)
    step = 1 / 600
    a, b = np.meshgrid(np.arange(0, 601) * step, np.arange(0, 601) * step, indexing="ij")
    keep = a + b <= 1 + 1e-12
    w0, w1, w01 = a[keep], b[keep], 1 - a[keep] - b[keep]
    info = np.zeros((w0.size, 2, 2))
    info[:, 0, 0] += w0 / cov[0, 0]
    info[:, 1, 1] += w1 / cov[1, 1]
    info += w01[:, None, None] * np.linalg.inv(cov)[None] / 2
    ok = np.linalg.det(info) > 1e-12
    inv = np.linalg.inv(info[ok])
    a_vec = np.array([1.0, -1.0])
    values = 2 * np.einsum("i,nij,j->n", a_vec, inv, a_vec) / 0.4 ** 2
    assert t.lower <= values.min() * (1 + 1e-9)
    assert t.upper == pytest.approx(values.min(), rel=2e-3)


@pytest.mark.parametrize("mu, sd", [([1.0, 0.5, 0.2], [1.0, 2.0, 0.5]), ([0.9, 0.88, 0.5, 0.7], [0.02, 0.03, 0.05, 0.01])])
def test_diagonal_covariance_is_the_unpaired_bound(mu, sd):
    t_unpaired, _ = characteristic_time(mu, sd)
    t = best_allocation_time(mu, np.diag(np.square(sd)))
    assert t.lower <= t_unpaired * (1 + 1e-9) <= t.upper * (1 + 1e-9)
    assert t.upper == pytest.approx(t_unpaired, rel=1e-3)


def test_best_allocation_is_below_uniform_and_pairwise_and_certified():
    rng = np.random.default_rng(3)
    for _ in range(3):
        k = 5
        f = rng.normal(size=(k, k + 2))
        cov = f @ f.T / (k + 2) + 0.05 * np.eye(k)
        mu = rng.normal(scale=1.0, size=k)
        t = best_allocation_time(mu, cov)
        assert 0 < t.lower <= t.upper
        assert t.gap <= 1e-3
        assert t.upper <= uniform_rows_time(mu, cov)[1] * (1 + 1e-9)
        assert t.upper <= pairwise_time(mu, cov) * (1 + 1e-9)
        assert sum(t.weights.values()) == pytest.approx(1.0, abs=1e-5)


def test_best_on_every_row_is_not_the_best_allocation():
    """Independent candidates, SD 1, two rivals at gap 1: the pairwise design puts the best on every
    row (4 + 2 * 4 = 12 evaluations per kl); the optimum gives it sqrt(2) times a rival's share:
    T* = 2 (1 / w_b + 1 / w_j) with w_b = sqrt(2) / (2 + sqrt(2)), w_j = 1 / (2 + sqrt(2)): 2 (3 + 2 sqrt(2))."""
    mu, cov = [1.0, 0.0, 0.0 - 1e-12], np.eye(3)
    assert pairwise_time(mu, cov) == pytest.approx(12.0, rel=1e-9)
    t = best_allocation_time(mu, cov)
    exact = 2 * (3 + 2 * np.sqrt(2))
    assert t.lower <= exact * (1 + 1e-9) and t.upper == pytest.approx(exact, rel=1e-3)


def test_paired_lower_bound_scales_with_kl_and_names_errors():
    mu, cov = [1.0, 0.0], np.eye(2)
    assert paired_lower_bound(mu, cov, 0.05) == pytest.approx(8 * bernoulli_kl(0.05, 0.95), rel=1e-3)
    assert paired_lower_bound(mu, cov, 0.05, "uniform") == pytest.approx(8 * bernoulli_kl(0.05, 0.95))
    with pytest.raises(ValueError, match="allocation"):
        paired_lower_bound(mu, cov, 0.05, "other")
    with pytest.raises(ValueError, match="delta"):
        paired_lower_bound(mu, cov, 1.5)
    with pytest.raises(ValueError, match="unique best"):
        uniform_rows_time([1.0, 1.0], np.eye(2))
    with pytest.raises(ValueError, match="cov must have shape"):
        uniform_rows_time([1.0, 0.0], np.eye(3))
    with pytest.raises(ValueError, match="positive definite"):
        f = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        best_allocation_time([1.0, 0.0, 0.5], f @ f.T)
    with pytest.raises(TypeError, match="mu"):
        uniform_rows_time("ab", np.eye(2))
