"""Many simulated top-two runs at once: the calibration driver.

:func:`certa.planning.simulate.simulate` runs a strategy's ask/tell loop once per run (about
0.3 ms of Python per evaluation). Calibrating a stopping rule needs thousands of runs
of thousands of evaluations, so this module advances *all* runs one evaluation at a time
with numpy arrays of shape ``(runs, candidates)``: the same belief (FIESTA's Student-t
posterior with the SD floor, :func:`certa.strategies._posterior.posterior_from_stats`), the same
top-two rule (leader drawn from the posterior; challenger by re-drawing, at most 64 times, until another
candidate wins; ``beta`` a probability or ``"ids"``; with a tolerance EB-TC_eps, the highest mean
against the challenger with the smallest pair statistic, see :func:`certa.strategies._sampling.top_two_sample`)
and the same stopping rule
(:mod:`certa.strategies._glr`, the exact statistic for every run that may stop) as
:class:`certa.strategies.TopTwoThompson` with ``stopping="glr"``. Random draws are
consumed in another order, so a run is not the same run as the strategy's with the same
seed; the *distribution* is the same, which ``tests/test_simulate_batch.py`` checks
against :func:`certa.planning.simulate.simulate` (when 64 re-draws find no challenger, the leader being
nearly certain, both take the challenger that blocks the stop, the smallest pair statistic).

Scores come from a vectorised sampler ``sample(candidates, rng) -> scores``:
:class:`GaussianSampler`, :class:`StudentTSampler`, :class:`AccuracySampler` (bounded
scores: the accuracy on a test set of ``n_test`` items) and :class:`ReplaySampler`
(observed scores drawn with replacement). All are simulations and say so in their names.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..strategies import _glr
from ..strategies._posterior import _ZERO_SD_RTOL, DEFAULT_SD_FLOOR_FRACTION
from ..strategies._validation import check_beta, check_confidence, check_int

__all__ = [
    "AccuracySampler",
    "BatchReport",
    "CorrelatedGaussianRows",
    "GaussianSampler",
    "ReplayRows",
    "ReplaySampler",
    "StudentTSampler",
    "simulate_paired_batch",
    "simulate_top_two_batch",
]


class GaussianSampler:
    """Simulated scores ``Normal(means[i], sds[i])``."""

    def __init__(self, means: Sequence[float], sds: Sequence[float]) -> None:
        self.means = np.asarray(means, dtype=float)
        self.sds = np.broadcast_to(np.asarray(sds, dtype=float), self.means.shape).copy()
        if self.means.ndim != 1 or self.means.size < 2 or not (self.sds > 0).all():
            raise ValueError("means must be 1-D with at least 2 candidates and sds > 0")

    @property
    def true_means(self) -> np.ndarray:
        return self.means

    def __call__(self, arms: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.means[arms] + self.sds[arms] * rng.standard_normal(arms.shape)


class StudentTSampler:
    """Simulated heavy-tailed scores ``means[i] + scales[i] * T_df`` (mean ``means[i]`` for df > 1)."""

    def __init__(self, means: Sequence[float], scales: Sequence[float], df: float = 3.0) -> None:
        self.means = np.asarray(means, dtype=float)
        self.scales = np.broadcast_to(np.asarray(scales, dtype=float), self.means.shape).copy()
        if not df > 1:
            raise ValueError(f"df must be > 1 (a finite mean), got {df!r}")
        self.df = float(df)

    @property
    def true_means(self) -> np.ndarray:
        return self.means

    def __call__(self, arms: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.means[arms] + self.scales[arms] * rng.standard_t(self.df, arms.shape)


class AccuracySampler:
    """Simulated bounded scores: accuracy ``Binomial(n_test, p[i]) / n_test`` of a small test set."""

    def __init__(self, p: Sequence[float], n_test: int) -> None:
        self.p = np.asarray(p, dtype=float)
        self.n_test = check_int("n_test", n_test, 1)
        if not ((self.p >= 0) & (self.p <= 1)).all():
            raise ValueError("p must be probabilities")

    @property
    def true_means(self) -> np.ndarray:
        return self.p

    def __call__(self, arms: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return rng.binomial(self.n_test, self.p[arms]) / self.n_test


class ReplaySampler:
    """Replays observed scores: each evaluation draws one stored score at random (with replacement)."""

    def __init__(self, table: Mapping[str, Sequence[float]]) -> None:
        self.names = list(table)
        lengths = {len(v) for v in table.values()}
        self.table = [np.asarray(table[n], dtype=float) for n in self.names]
        width = max(lengths)
        self._padded = np.full((len(self.names), width), np.nan)
        for i, row in enumerate(self.table):
            self._padded[i, :row.size] = row
        self._sizes = np.array([row.size for row in self.table])

    @property
    def true_means(self) -> np.ndarray:
        return np.array([row.mean() for row in self.table])

    def __call__(self, arms: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        idx = (rng.random(arms.shape) * self._sizes[arms]).astype(int)
        return self._padded[arms, idx]


@dataclass
class BatchReport:
    """Evaluations and choice of every simulated run, and whether it hit ``max_evals``.

    ``forced``: per run, the evaluations not chosen by the top-two rule (the first round of
    ``min_evals`` per candidate and the GLR rule's count-limited evaluations).
    """

    evaluations: np.ndarray
    chosen: np.ndarray
    capped: np.ndarray
    true_means: np.ndarray
    tolerance: float
    counts: np.ndarray | None = None
    means: np.ndarray | None = None
    forced: np.ndarray | None = None

    @property
    def wrong(self) -> np.ndarray:
        """Runs whose choice is more than ``tolerance`` below the best mean."""
        return self.true_means[self.chosen] < self.true_means.max() - self.tolerance

    def to_dict(self) -> dict[str, Any]:
        w = self.wrong
        return {"n_runs": int(self.chosen.size), "wrong": int(w.sum()), "wrong_rate": float(w.mean()),
                "evaluations_mean": float(self.evaluations.mean()),
                "evaluations_se": float(self.evaluations.std(ddof=1) / math.sqrt(max(self.chosen.size, 2) - 1)
                                        if self.chosen.size > 1 else 0.0),
                "evaluations_min": int(self.evaluations.min()), "evaluations_max": int(self.evaluations.max()),
                "capped": int(self.capped.sum()),
                **({} if self.forced is None else {"forced_mean": float(self.forced.mean())})}


def _floored_var(mean: np.ndarray, var: np.ndarray, n: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                 abs_hi: np.ndarray, fraction: float) -> np.ndarray:
    """Per run (rows): the SD floor of ``_posterior.posterior_from_stats`` applied to ``var``."""
    sd = np.sqrt(var)
    varying = sd > _ZERO_SD_RTOL * np.maximum(1.0, np.abs(mean))
    num = np.sum(np.where(varying, n * var, 0.0), axis=1)
    den = np.sum(np.where(varying, n, 0.0), axis=1)
    ref = np.sqrt(np.divide(num, den, out=np.zeros_like(num), where=den > 0))
    spread = hi - lo
    fallback = np.where(spread > _ZERO_SD_RTOL * np.maximum(1.0, abs_hi), spread,
                        np.where(abs_hi > 0, abs_hi, 1.0))
    ref = np.where(den > 0, ref, fallback)
    return np.maximum(var, (fraction * ref[:, None]) ** 2)


def simulate_top_two_batch(sampler: Any, *, confidence: float, beta: float | str = 0.5, tolerance: float = 0.0,
                           n_runs: int = 1000, max_evals: int = 100_000, min_evals: int = 3,
                           random_state: int = 0, max_resamples: int = 64,
                           stop_rule: Any = None) -> BatchReport:
    """Simulate ``n_runs`` runs of ``TopTwoThompson(confidence, beta, stopping="glr", tolerance=...)``.

    Parameters
    ----------
    sampler : callable
        ``sampler(candidates, rng) -> scores`` (vectorised), with a ``true_means`` attribute.
    confidence, beta, tolerance, min_evals, max_evals
        As for :class:`certa.strategies.TopTwoThompson` (``stopping="glr"``); a run that
        reaches ``max_evals`` chooses the highest empirical mean.
    n_runs : int
    random_state : int
        Seed of the one generator every random choice of the simulation comes from.
    stop_rule : callable, optional
        For experiments with other stopping rules (``benchmarks/adaptive.py calibration``'s
        decomposition): ``stop_rule(mean, var, counts, evaluations) -> (stop, best)`` on the
        rows of the runs to check (``var`` the ``ddof=0`` variance, floored as for the
        belief), returning boolean and integer arrays of one entry per row. With a
        ``stop_rule`` the GLR rule's minimum count and forced evaluations are off (the
        sampling rule is otherwise the same).

    Returns
    -------
    BatchReport

    Examples
    --------
    >>> rep = simulate_top_two_batch(GaussianSampler([1.0, 0.0], [1.0, 1.0]), confidence=0.95, n_runs=20)
    >>> bool(rep.wrong.sum() <= 3), bool(rep.evaluations.min() >= 6)
    (True, True)
    """
    conf = check_confidence(confidence)
    beta = check_beta(beta)
    eps = _glr.check_tolerance(tolerance)
    n_runs = check_int("n_runs", n_runs, 1)
    min_evals = check_int("min_evals", min_evals, 3)
    true_means = np.asarray(sampler.true_means, dtype=float)
    k = true_means.size
    rng = np.random.default_rng(random_state)
    limit = _glr._log_threshold(1.0 - conf, k)
    if stop_rule is None:
        min_evals = max(min_evals, _glr.min_count(1.0 - conf, k))   # as the strategy does for "glr"
    max_evals = check_int("max_evals", max_evals, min_evals * k)

    # initial round: min_evals scores of every candidate
    arms0 = np.broadcast_to(np.arange(k), (n_runs, min_evals, k))
    x0 = sampler(np.ascontiguousarray(arms0), rng)
    n = np.full((n_runs, k), float(min_evals))
    mean = x0.mean(axis=1)
    m2 = ((x0 - mean[:, None, :]) ** 2).sum(axis=1)
    lo, hi = x0.min(axis=(1, 2)), x0.max(axis=(1, 2))
    abs_hi = np.abs(x0).max(axis=(1, 2))
    evals = np.full(n_runs, min_evals * k)
    forced_count = np.zeros(n_runs)
    chosen = np.full(n_runs, -1)
    capped = np.zeros(n_runs, dtype=bool)
    active = np.arange(n_runs)
    rows = np.arange(n_runs)

    def check(runs: np.ndarray) -> np.ndarray:
        """Stop decision for ``runs`` (sets ``chosen``); returns the mask of stopped runs."""
        var = m2[runs] / n[runs]
        v = _floored_var(mean[runs], var, n[runs], lo[runs], hi[runs], abs_hi[runs], DEFAULT_SD_FLOOR_FRACTION)
        mr, nr = mean[runs], n[runs]
        if stop_rule is not None:
            stop, best_r = stop_rule(mr, v, nr, evals[runs])
            stop = np.asarray(stop, dtype=bool)
            chosen[runs[stop]] = np.asarray(best_r)[stop]
            return stop
        best = np.argmax(mr, axis=1)
        r = np.arange(runs.size)
        mb, nb, vb = mr[r, best][:, None], nr[r, best][:, None], v[r, best][:, None]
        gap = np.maximum(mb - mr + eps, 0.0)
        wb, wo = nb / vb, nr / v
        ui = mr - eps + gap * (wo / (wb + wo))
        ub = _glr.log_e_process(nb, mb, vb, ui) + _glr.log_e_process(nr, mr, v, ui + eps)
        ub[r, best] = np.inf
        maybe = np.flatnonzero(ub.min(axis=1) > limit)
        stopped = np.zeros(runs.size, dtype=bool)
        for i in maybe.tolist():
            b, z = _glr._screened_min(mr[i], v[i], nr[i], eps, limit)
            if z > limit:
                stopped[i] = True
                chosen[runs[i]] = b
        return stopped

    done = check(active)
    active = active[~done]
    while active.size:
        a = active
        na = n[a]
        sd = np.sqrt(m2[a] / na)
        var_f = _floored_var(mean[a], sd ** 2, na, lo[a], hi[a], abs_hi[a], DEFAULT_SD_FLOOR_FRACTION)
        df = na - 2.0
        scale = np.sqrt(var_f) / np.sqrt(df)
        loc = mean[a]
        if eps == 0.0:
            leader = np.argmax(loc + scale * rng.standard_t(df), axis=1)
        else:   # EB-TC_eps, as the strategy: the highest mean leads
            leader = np.argmax(loc, axis=1)
        r = np.arange(a.size)
        if beta == "ids":
            need = np.ones(a.size, dtype=bool)
        else:
            need = rng.random(a.size) >= beta
        challenger = np.full(a.size, -1)
        todo = np.flatnonzero(need)
        used, block = 0, 1
        while todo.size and used < max_resamples and eps == 0.0:
            size = min(block, max_resamples - used)
            draws = rng.standard_t(df[todo][:, None, :], size=(todo.size, size, k))
            win = np.argmax(loc[todo][:, None, :] + scale[todo][:, None, :] * draws, axis=2)
            other = win != leader[todo][:, None]
            found = other.any(axis=1)
            first = np.argmax(other, axis=1)
            challenger[todo[found]] = win[found, first[found]]
            todo = todo[~found]
            used += size
            block = min(block * 4, 1024)
        if todo.size:   # leader nearly certain, or a tolerance: as the strategy, the challenger blocking the stop
            vt = _floored_var(mean[a][todo], m2[a][todo] / na[todo], na[todo], lo[a][todo], hi[a][todo],
                              abs_hi[a][todo], DEFAULT_SD_FLOOR_FRACTION)
            approx = _glr.approx_pair_statistics(loc[todo], vt, na[todo], leader[todo], eps)
            challenger[todo] = np.argmin(approx, axis=1)
        pick = leader.copy()
        if stop_rule is None:
            slack = _glr.count_limited(na, np.argmax(loc, axis=1), limit)
            forced_arm = np.argmin(slack, axis=1)
            forced = slack[r, forced_arm] <= 0
        else:
            forced_arm, forced = leader, np.zeros(a.size, dtype=bool)
        if beta == "ids":
            h = scale ** 2 * df / (df + 2.0)
            hl, hc = h[r, leader], h[r, challenger]
            p_leader = np.where(hl + hc > 0, hl / np.where(hl + hc > 0, hl + hc, 1.0), 0.5)
            play_c = rng.random(a.size) >= p_leader
            pick[play_c] = challenger[play_c]
        else:
            pick[need] = challenger[need]
        forced_count[a] += forced & (pick != forced_arm)
        pick[forced] = forced_arm[forced]   # as the strategy: too few scores to be ruled out
        x = sampler(pick, rng)
        # Welford update of the picked candidate of every active run
        n_new = n[a, pick] + 1.0
        d = x - mean[a, pick]
        mean[a, pick] += d / n_new
        m2[a, pick] += d * (x - mean[a, pick])
        n[a, pick] = n_new
        lo[a] = np.minimum(lo[a], x)
        hi[a] = np.maximum(hi[a], x)
        abs_hi[a] = np.maximum(abs_hi[a], np.abs(x))
        evals[a] += 1
        stopped = check(a)
        at_cap = ~stopped & (evals[a] >= max_evals)
        if at_cap.any():
            cap_runs = a[at_cap]
            chosen[cap_runs] = np.argmax(mean[cap_runs], axis=1)
            capped[cap_runs] = True
        active = a[~(stopped | at_cap)]
    del rows
    return BatchReport(evaluations=evals, chosen=chosen, capped=capped, true_means=true_means, tolerance=eps,
                       counts=n, means=mean, forced=forced_count + min_evals * k)


# ------------------------------------------------------------------------------------------
# the paired rule (PairedElimination): whole rows of correlated scores
# ------------------------------------------------------------------------------------------
class CorrelatedGaussianRows:
    """Simulated rows: ``means[i] + sds[i] (sqrt(r) z_row + sqrt(1 - r) z_i)``, correlation ``r``
    between every two candidates on a row (``r = 0``: independent candidates)."""

    def __init__(self, means: Sequence[float], sds: Sequence[float] | float, correlation: float) -> None:
        self.means = np.asarray(means, dtype=float)
        self.sds = np.broadcast_to(np.asarray(sds, dtype=float), self.means.shape).copy()
        if not 0.0 <= correlation < 1.0:
            raise ValueError(f"correlation must be in [0, 1), got {correlation!r}")
        self.correlation = float(correlation)

    @property
    def true_means(self) -> np.ndarray:
        return self.means

    def rows(self, n: int, rng: np.random.Generator) -> np.ndarray:
        z = rng.standard_normal((n, self.means.size))
        shared = rng.standard_normal((n, 1))
        r = self.correlation
        return self.means + self.sds * (math.sqrt(r) * shared + math.sqrt(1.0 - r) * z)


class ReplayRows:
    """Replayed rows of a score table: ``paired=True`` draws a whole row of the table (its rows are
    one split and seed for every candidate); ``paired=False`` draws each candidate's score from
    its own random row."""

    def __init__(self, table: Mapping[str, Sequence[float]], paired: bool = True) -> None:
        self.names = list(table)
        self.table = np.array([np.asarray(table[n], dtype=float) for n in self.names]).T   # rows x candidates
        self.paired = bool(paired)

    @property
    def true_means(self) -> np.ndarray:
        return self.table.mean(axis=0)

    def rows(self, n: int, rng: np.random.Generator) -> np.ndarray:
        n_rows, k = self.table.shape
        if self.paired:
            return self.table[rng.integers(n_rows, size=n)]
        return self.table[rng.integers(n_rows, size=(n, k)), np.arange(k)]


def simulate_paired_batch(sampler: Any, *, confidence: float, tolerance: float = 0.0, n_runs: int = 1000,
                          max_evals: int = 100_000, random_state: int = 0,
                          threshold: Any = None, contrast_share: float | None = None,
                          rank_power: float | None = None) -> BatchReport:
    """Many runs of :class:`certa.strategies.PairedElimination` at once, on rows from
    ``sampler.rows(n, rng) -> (n, K)``.

    The same statistic (:func:`certa.strategies._paired.pair_statistics`), running maxima,
    contrast, elimination and stopping as the strategy; ``tests/test_paired.py`` checks that both
    make the same choice after the same evaluations on the same rows. ``threshold`` (for
    calibration of other thresholds): a function ``rows -> log threshold`` per run, replacing
    ``log(1 / delta)`` on the evidence scale. ``contrast_share``: the share of delta on the
    contrast (default :data:`certa.strategies._paired.CONTRAST_SHARE`; 0 turns it off, the rest goes
    to the pairs on all rows); ``rank_power``: how it is spread over the rivals by their rank on the
    first row (default :data:`certa.strategies._paired.RANK_POWER`; ``inf``: all on the first-ranked
    rival, the rule before issue 32).

    Examples
    --------
    >>> rep = simulate_paired_batch(CorrelatedGaussianRows([0.0, -1.0], 1.0, 0.5), confidence=0.95, n_runs=50)
    >>> bool(rep.wrong.mean() <= 0.1)
    True
    """
    from ..strategies._paired import (
        CONTRAST_ROWS,
        contrast_mixture,
        pair_statistics,
        paired_offsets,
        paired_threshold,
        rank_shares,
    )

    confidence = check_confidence(confidence)
    n_runs = check_int("n_runs", n_runs, 1)
    rng = np.random.default_rng(random_state)
    true_means = np.asarray(sampler.true_means, dtype=float)
    k = true_means.size
    limit = paired_threshold(1.0 - confidence, k)
    offset, c_offset = paired_offsets(k, contrast_share)
    pairs_on, contrast_on = np.isfinite(offset), np.isfinite(c_offset)
    with np.errstate(divide="ignore"):
        log_share = np.concatenate([[-np.inf], np.log(rank_shares(k, rank_power))]) - c_offset   # by rank, 0 = none
    R = n_runs
    alive = np.ones((R, k), dtype=bool)
    active = np.ones(R, dtype=bool)
    full = [np.zeros((R, k, k)) for _ in range(3)] + [np.zeros((R, k)) for _ in range(3)]   # n s ss sn s1 s2
    con = [np.zeros((R, k, k)) for _ in range(3)] + [np.zeros((R, k)) for _ in range(3)]    # the contrast's rows
    log_w = np.full((R, k, k), -np.inf)   # [run, rival k, j]: log of the contrast's share of delta on (k, j)
    partner = np.full((R, k), -1)
    # the contrast's mixture per run and column j (contrast_mixture), fixed by the first row
    mix = [(c, np.zeros((R, 1, k))) for c, _ in contrast_mixture(np.zeros(k, dtype=int), 1)]
    run0 = np.full((R, k, k), -np.inf)
    run_eps = np.full((R, k, k), -np.inf)
    c0 = np.full((R, k, k), -np.inf)
    c_eps = np.full((R, k, k), -np.inf)
    evals = np.zeros(R, dtype=int)
    capped = np.zeros(R, dtype=bool)
    chosen = np.zeros(R, dtype=int)
    row = 0

    def add(t: list[np.ndarray], idx: np.ndarray, a: np.ndarray, x: np.ndarray) -> None:
        both = a[:, :, None] & a[:, None, :]
        d = x[:, :, None] - x[:, None, :]
        t[0][idx] += both
        t[1][idx] += np.where(both, d, 0.0)
        t[2][idx] += np.where(both, d * d, 0.0)
        t[3][idx] += a
        t[4][idx] += np.where(a, x, 0.0)
        t[5][idx] += np.where(a, x * x, 0.0)

    def ranks_by(means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``[run, k, j]``: rank of ``k`` among the survivors other than ``j`` (1 = highest mean, ties:
        lowest index; survivors without a mean after), 0 where none (as ``rival_ranks``); and
        ``[run, k]``: the rank of ``k`` among the survivors, 0 for the others (as ``first_row_positions``)."""
        surv = means != -np.inf   # nan: a survivor without a score
        key = np.where(np.isnan(means), -np.inf, means)
        order = np.argsort(-key, axis=1, kind="stable")                       # [run, position] -> candidate
        pos = np.empty_like(order)
        np.put_along_axis(pos, order, np.arange(k)[None, :].repeat(means.shape[0], 0), axis=1)
        # rank of k for j: position of k among survivors, minus one if j (a survivor) is ahead of it
        sv = np.take_along_axis(surv, order, axis=1)
        rank_pos = np.cumsum(sv, axis=1)                                         # 1-based among survivors
        rk = np.take_along_axis(rank_pos, pos, axis=1)                           # [run, k]
        r = rk[:, :, None] - ((pos[:, None, :] < pos[:, :, None]) & surv[:, None, :])
        ok = surv[:, :, None] & ~np.eye(k, dtype=bool)[None]
        return np.where(ok, r, 0), np.where(surv, rk, 0)

    while active.any():
        idx = np.flatnonzero(active)
        a = alive[idx]
        room = max_evals - evals[idx]
        # a row is cut at max_evals (the strategy asks survivors in index order)
        a &= np.cumsum(a, axis=1) <= room[:, None]
        x = sampler.rows(idx.size, rng)
        evals[idx] += a.sum(axis=1)
        add(full, idx, a, x)
        if pairs_on:
            run0[idx] = np.maximum(run0[idx], pair_statistics(*(t[idx] for t in full), 0.0))
            if tolerance > 0:
                run_eps[idx] = np.maximum(run_eps[idx], pair_statistics(*(t[idx] for t in full), tolerance))
            else:
                run_eps[idx] = run0[idx]
        if row >= CONTRAST_ROWS and contrast_on:
            add(con, idx, a, x)
            mix_idx = [(c, w[idx]) for c, w in mix]
            c0[idx] = np.maximum(c0[idx], pair_statistics(*(t[idx] for t in con), 0.0, mix_idx))
            if tolerance > 0:
                c_eps[idx] = np.maximum(c_eps[idx], pair_statistics(*(t[idx] for t in con), tolerance, mix_idx))
            else:
                c_eps[idx] = c0[idx]
        lim = limit if threshold is None else np.asarray(threshold(row + 1), dtype=float)
        against = np.maximum(run0[idx].max(axis=1) - offset, (c0[idx] + log_w[idx]).max(axis=1))
        ruled_out = against > (lim[:, None] if np.ndim(lim) else lim)
        new_alive = alive[idx] & ~ruled_out
        empty = ~new_alive.any(axis=1)
        if empty.any():   # a cycle of eliminations: keep the highest mean (as the strategy does)
            means = np.where(alive[idx], full[4][idx] / np.maximum(full[3][idx], 1), -np.inf)
            new_alive[empty, np.argmax(means[empty], axis=1)] = True
        alive[idx] = new_alive
        if row + 1 == CONTRAST_ROWS and contrast_on:   # fix each pair's share of delta by the rival's rank
            with np.errstate(invalid="ignore", divide="ignore"):
                m = np.where(new_alive, full[4][idx] / full[3][idx], -np.inf)   # nan: a survivor without a score
            rk, position = ranks_by(m)
            log_w[idx] = log_share[rk]
            for (_, w), (_, w_idx) in zip(mix, contrast_mixture(position, (m != -np.inf).sum(axis=1))):
                w[idx] = w_idx
            first = rk == 1
            partner[idx] = np.where(first.any(axis=1), np.argmax(first, axis=1), -1)
        means = np.where(new_alive, full[4][idx] / np.maximum(full[3][idx], 1), -np.inf)
        leader = np.argmax(means, axis=1)
        done = new_alive.sum(axis=1) == 1
        if tolerance > 0:
            r = np.arange(idx.size)
            within = np.maximum(run_eps[idx][r, leader] - offset, (c_eps[idx] + log_w[idx])[r, leader])
            ev = np.maximum(against, within)
            ev[r, leader] = np.inf
            done |= ev.min(axis=1) > lim
        cap = ~done & (evals[idx] >= max_evals)
        chosen[idx] = leader
        capped[idx[cap]] = True
        active[idx[done | cap]] = False
        row += 1
    return BatchReport(evaluations=evals, chosen=chosen, capped=capped, true_means=true_means,
                       tolerance=float(tolerance), counts=full[3].astype(int))
